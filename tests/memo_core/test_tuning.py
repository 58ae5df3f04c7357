"""memo_core.tuning: the settings that shape an index and its ranking, checked when made;
what decides an index's content (its identity) apart from what only ranks."""

from __future__ import annotations

import dataclasses

import pytest

from memo_core.tuning import Tuning


def test_defaults_are_valid_and_frozen() -> None:
    t = Tuning()
    assert 0.0 <= t.dense_weight <= t.dense_top <= 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.dense_weight = 0.5  # type: ignore[misc]


@pytest.mark.parametrize(
    "bad",
    [
        {"chunk_max_chars": 0},
        {"embed_max_chars": -1},
        {"max_file_bytes": 0},
        {"dense_weight": -0.1},
        {"dense_top": 1.1},
        {"dense_weight": 0.6, "dense_top": 0.5},  # the weight above the top
        {"lex_full_strength": 0.0},
        {"lex_strength_power": -1.0},
    ],
)
def test_bad_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Tuning(**bad)


@pytest.mark.parametrize(
    "edge", [{"dense_weight": 0.0, "dense_top": 0.0}, {"dense_weight": 1.0, "dense_top": 1.0}]
)
def test_bounds_are_allowed(edge: dict[str, float]) -> None:
    assert Tuning(**edge).dense_weight == edge["dense_weight"]


def test_with_no_fusion_policy_is_the_same_settings() -> None:
    t = Tuning(dense_weight=0.3)
    assert t.with_fusion({}) is t


def test_with_fusion_takes_a_models_policy_and_keeps_the_rest() -> None:
    t = Tuning(dense_weight=0.1, dense_top=0.9, proximity_weight=0.2)
    got = t.with_fusion({"dense_weight": 0.4, "lex_full_strength": 3.0, "unrelated": 7.0})
    assert (got.dense_weight, got.lex_full_strength) == (0.4, 3.0)
    assert (got.dense_top, got.lex_strength_power) == (0.9, t.lex_strength_power)
    assert got.proximity_weight == 0.2  # not a fusion setting: untouched
    assert t.dense_weight == 0.1  # the original is unchanged


def test_with_fusion_checks_the_result() -> None:
    with pytest.raises(ValueError):
        Tuning(dense_top=0.5).with_fusion({"dense_weight": 0.8})


@pytest.mark.parametrize(
    ("field", "value"),
    [("chunk_max_chars", 600), ("embed_max_chars", 500), ("max_file_bytes", 1024)],
)
def test_what_an_index_holds_changes_its_identity(field: str, value: int) -> None:
    changed = Tuning(**{field: value})
    assert changed.identity() != Tuning().identity()
    assert changed.identity()[field] == value


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("dense_weight", 0.5),
        ("heading_weight", 3.0),
        ("proximity_weight", 0.0),
        ("fusion_candidates", 50),
        ("adaptive_fusion", False),
        ("batch_chunks", 8),
    ],
)
def test_what_only_ranks_or_batches_leaves_the_identity(field: str, value: object) -> None:
    assert Tuning(**{field: value}).identity() == Tuning().identity()


def test_identity_names_the_text_pipeline_versions() -> None:
    identity = Tuning().identity()
    for part in ("chunker", "embedded", "front_matter", "words", "stemmer"):
        assert identity[part] not in (None, "")
