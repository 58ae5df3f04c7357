"""memo_core.model.sources: the models memo can install, pinned and calibrated."""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest

from memo_core import settings
from memo_core.errors import ModelInstallError
from memo_core.model.sources import (
    DEFAULT_SOURCE,
    E5_SMALL_SOURCE,
    E5_USE_SOURCE,
    MODELS,
    USE_SOURCE,
    WHEELS,
    PairSource,
    WheelSource,
    calibration,
    chosen_source,
    default_model_dir,
    install_command,
    model_dir_of,
    model_dirs_of,
    parts_of,
    source_named,
)

SHA256 = re.compile("[0-9a-f]{64}")


@pytest.mark.parametrize("source", WHEELS, ids=lambda s: s.name)
def test_every_wheel_is_pinned_by_its_hashes(source: WheelSource) -> None:
    assert SHA256.fullmatch(source.wheel_sha256)
    assert SHA256.fullmatch(source.member_sha256)
    assert source.member_size > 0
    # the wheel's file name is the package's at the pinned version (PEP 427 spells "-" "_")
    assert source.wheel.startswith(f"{source.package.replace('-', '_')}-{source.version}-")
    assert source.wheel.endswith(".whl")
    assert source.fmt in ("onnx", "q4bin")
    if source.platform:  # a platform wheel is fetched for that platform
        assert source.platform in source.wheel


def test_models_are_found_by_their_names() -> None:
    assert set(MODELS) == {"e5-small", "use-m3", "e5-small+use-m3"}
    for name, source in MODELS.items():
        assert source.name == name
        assert source_named(name) is source
    every_part = {p.model_id for s in MODELS.values() for p in parts_of(s)}
    assert {s.model_id for s in WHEELS} == every_part


def test_model_ids_are_distinct() -> None:
    """Each is installed in a folder of its id: two alike would share one."""
    assert len({s.model_id for s in WHEELS}) == len(WHEELS)


@pytest.mark.parametrize("name", ["e5", "E5-small", "", "e5-small ", "use-m3+e5-small"])
def test_an_unknown_name_is_a_keyed_error_listing_the_names(name: str) -> None:
    with pytest.raises(ModelInstallError) as e:
        source_named(name)
    assert e.value.message.key == "model.unknown"
    assert e.value.message.params["name"] == name
    listed = e.value.message.params["models"].split(", ")
    assert listed == list(MODELS)


def test_a_pair_installs_and_loads_its_two_models_a_wheel_itself() -> None:
    assert parts_of(E5_USE_SOURCE) == (E5_SMALL_SOURCE, USE_SOURCE) == E5_USE_SOURCE.parts
    assert parts_of(USE_SOURCE) == (USE_SOURCE,)
    assert 0 < E5_USE_SOURCE.share < 1


def test_the_default_is_the_pair() -> None:
    assert DEFAULT_SOURCE is E5_USE_SOURCE
    assert isinstance(DEFAULT_SOURCE, PairSource)


@pytest.mark.parametrize(
    ("source", "command"),
    [
        (DEFAULT_SOURCE, "memo model install"),
        (E5_SMALL_SOURCE, "memo model install e5-small"),
        (USE_SOURCE, "memo model install use-m3"),
    ],
)
def test_install_command_names_all_but_the_default(source, command: str) -> None:
    assert install_command(source) == command


@pytest.mark.parametrize("source", WHEELS, ids=lambda s: s.name)
def test_calibration_records_the_sources_own_values(source: WheelSource) -> None:
    assert calibration(source) == {
        "min_similarity": source.min_similarity,
        "min_margin": source.min_margin,
        "fusion": dict(source.fusion),
    }


def test_calibration_of_a_source_without_one_is_none_and_no_fusion() -> None:
    bare = replace(USE_SOURCE, min_margin=None, fusion=())
    assert calibration(bare) == {"min_similarity": None, "min_margin": None, "fusion": {}}


def test_sources_are_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        USE_SOURCE.version = "9"  # type: ignore[misc]


def test_chosen_source_is_the_default_unless_memo_model_names_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMO_MODEL", raising=False)
    assert chosen_source() is DEFAULT_SOURCE
    monkeypatch.setenv("MEMO_MODEL", "use-m3")
    assert chosen_source() is USE_SOURCE
    monkeypatch.setenv("MEMO_MODEL", "")  # empty: as if not set
    assert chosen_source() is DEFAULT_SOURCE
    monkeypatch.setenv("MEMO_MODEL", "nope")
    with pytest.raises(ModelInstallError) as e:
        chosen_source()
    assert e.value.message.key == "model.unknown"


def test_models_live_in_the_cache_folder_by_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMO_MODEL", raising=False)
    models = settings.cache_dir() / "models"
    assert model_dir_of(USE_SOURCE) == models / USE_SOURCE.model_id
    assert model_dir_of(E5_USE_SOURCE) == models / E5_SMALL_SOURCE.model_id  # a pair: its first
    assert model_dirs_of(E5_USE_SOURCE) == [
        models / E5_SMALL_SOURCE.model_id,
        models / USE_SOURCE.model_id,
    ]
    assert model_dirs_of(USE_SOURCE) == [models / USE_SOURCE.model_id]
    assert default_model_dir() == models / E5_SMALL_SOURCE.model_id
    monkeypatch.setenv("MEMO_MODEL", "use-m3")
    assert default_model_dir() == models / USE_SOURCE.model_id


def test_the_cache_folder_follows_memo_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMO_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert model_dir_of(USE_SOURCE) == tmp_path / "elsewhere" / "models" / USE_SOURCE.model_id
