"""memo_core.model.onnx_embedder: a model directory's settings checked and run by
onnxruntime (the tiny models of tests/tinymodels.py; more in
tests/memo_core/model/test_embedder.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tinymodels import make_tiny_model_dir

from memo_core.errors import ModelUnavailableError
from memo_core.model.embedder import CHECK_QUERIES
from memo_core.model.nonsense import nonsense
from memo_core.model.onnx_embedder import CONFIG_NAME, FUSION_KEYS, OnnxEmbedder, load_model_dir
from memo_core.model.sources import E5_SMALL_SOURCE, USE_SOURCE

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    return make_tiny_model_dir(tmp_path / "m", words=WORDS)


def _set(folder: Path, **changes: Any) -> Path:
    cfg = json.loads((folder / CONFIG_NAME).read_text())
    cfg.update(changes)
    cfg = {k: v for k, v in cfg.items() if v is not ...}
    (folder / CONFIG_NAME).write_text(json.dumps(cfg))
    return folder


def _problem(folder: Path) -> tuple[str, dict]:
    with pytest.raises(ModelUnavailableError) as e:
        load_model_dir(folder)
    assert e.value.message.key == "modeldir.broken"
    assert e.value.message.params["path"] == folder
    problem = e.value.message.params["problem"]
    return problem.key, dict(problem.params)


def test_a_model_folder_embeds_unit_vectors_of_its_dimension(model_dir: Path) -> None:
    e = load_model_dir(model_dir)
    assert isinstance(e, OnnxEmbedder) and e.dim == 16 and e.path == model_dir
    v = e.embed_batch(["alpha beta", "gamma", "cat dog"], query=True)
    assert v.shape == (3, 16) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert e.embed_batch([]).shape == (0, 16)


def test_a_path_with_a_tilde_is_the_users_home(model_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(model_dir.parent))
    assert load_model_dir("~/m").path == model_dir


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"kind": "gpt"}, "modeldir.kind"),
        ({"kind": ...}, "modeldir.kind"),
        ({"format": 2}, "modeldir.format"),
        ({"inputs": ["input_ids"]}, "modeldir.inputs"),
        ({"inputs": {"input_ids": 1}}, "modeldir.inputs"),
        ({"pooling": "max"}, "modeldir.one_of"),
        ({"padding": "right"}, "modeldir.one_of"),
        ({"long_text": "drop"}, "modeldir.one_of"),
        ({"max_length": "long"}, "modeldir.type"),
        ({"dim": True}, "modeldir.type"),  # a bool is no number here
        ({"normalize": 1}, "modeldir.type"),
        ({"query_prefix": 5}, "modeldir.type"),
        ({"max_length": 0}, "modeldir.sizes"),
        ({"batch_size": 0}, "modeldir.sizes"),
        ({"min_similarity": 1.5}, "modeldir.number"),
        ({"min_margin": "low"}, "modeldir.number"),
        ({"min_margin": False}, "modeldir.number"),
        ({"fusion": {"weight": 0.5}}, "modeldir.fusion_keys"),
        ({"fusion": [0.5]}, "modeldir.fusion_keys"),
        ({"fusion": {"dense_weight": 20}}, "modeldir.number"),
        ({"fusion": {"dense_weight": 1.5}}, "modeldir.fusion"),  # the engine's own check
        ({"long_text": "window", "pooling": "cls"}, "modeldir.window_kind"),
        ({"long_text": "window", "max_length": 2}, "modeldir.window_length"),
        ({"onnx": "other.onnx"}, "modeldir.no_onnx"),
        ({"tokenizer": "other.json"}, "modeldir.no_tokenizer"),
        ({"dim": 8}, "modeldir.dim"),  # the graph says 16
    ],
    ids=lambda v: v if isinstance(v, str) else json.dumps(v, default=str),
)
def test_a_setting_memo_cannot_use_is_a_keyed_error(
    model_dir: Path, changes: dict[str, Any], key: str
) -> None:
    got, _params = _problem(_set(model_dir, **changes))
    assert got == key


def test_an_error_names_the_key_what_it_takes_and_what_it_got(model_dir: Path) -> None:
    key, params = _problem(_set(model_dir, pooling="max"))
    assert key == "modeldir.one_of"
    assert params["key"] == "pooling" and params["got"] == "max"
    assert params["allowed"] == ["mean", "cls", "pooled"]


def test_a_folder_that_is_not_there_or_not_a_folder(tmp_path: Path) -> None:
    assert _problem(tmp_path / "none")[0] == "modeldir.missing"
    (tmp_path / "file").write_text("")
    assert _problem(tmp_path / "file")[0] == "modeldir.missing"


def test_the_config_must_be_a_json_object(model_dir: Path) -> None:
    (model_dir / CONFIG_NAME).write_text("[]")
    assert _problem(model_dir)[0] == "modeldir.config_object"
    (model_dir / CONFIG_NAME).write_text("{")
    assert _problem(model_dir)[0] == "modeldir.config_json"
    (model_dir / CONFIG_NAME).unlink()
    assert _problem(model_dir)[0] == "modeldir.no_config"


def test_settings_that_do_not_change_the_vectors_keep_the_model_id(model_dir: Path) -> None:
    first = load_model_dir(model_dir).model_id
    assert first.startswith("tiny-bert-16-")
    fusion = {"dense_weight": 0.3}
    _set(model_dir, batch_size=3, min_similarity=0.2, min_margin=-0.1, fusion=fusion)
    e = load_model_dir(model_dir)
    assert e.model_id == first
    assert (e.batch_size, e.min_similarity, e.min_margin) == (3, 0.2, -0.1)
    assert e.fusion == fusion


@pytest.mark.parametrize(
    "changes", [{"query_prefix": "q: "}, {"max_length": 64}, {"lowercase": True}]
)
def test_settings_that_change_the_vectors_change_the_model_id(
    model_dir: Path, changes: dict[str, Any]
) -> None:
    first = load_model_dir(model_dir).model_id
    assert load_model_dir(_set(model_dir, **changes)).model_id != first


def test_the_id_is_the_folders_name_when_the_config_names_none(model_dir: Path) -> None:
    assert load_model_dir(_set(model_dir, id=...)).model_id.startswith("m-")


@pytest.mark.parametrize("source", [E5_SMALL_SOURCE, USE_SOURCE], ids=lambda s: s.name)
def test_a_model_memo_knows_searches_with_memos_calibration(model_dir: Path, source) -> None:
    """Whatever an older install wrote in its config."""
    _set(model_dir, id=source.model_id, min_similarity=0.9, min_margin=0.5, fusion={})
    e = load_model_dir(model_dir)
    assert (e.min_similarity, e.min_margin) == (source.min_similarity, source.min_margin)
    assert dict(e.fusion) == dict(source.fusion)
    assert set(e.fusion) <= set(FUSION_KEYS)


def test_queries_and_passages_get_their_prefixes(model_dir: Path) -> None:
    _set(model_dir, query_prefix="alpha ", passage_prefix="beta ")
    e = load_model_dir(model_dir)
    plain = load_model_dir(_set(Path(model_dir), query_prefix="", passage_prefix=""))
    assert np.allclose(e.embed(["gamma"], query=True), plain.embed(["alpha gamma"]), atol=1e-6)
    assert np.allclose(e.embed(["gamma"]), plain.embed(["beta gamma"]), atol=1e-6)


def test_a_long_text_in_windows_is_the_mean_of_its_windows(tmp_path: Path) -> None:
    """Each run of max_length - 2 words between the special tokens, their pooled states
    averaged weighted by their words: a long text is read whole, not cut."""
    windowed = load_model_dir(
        make_tiny_model_dir(tmp_path / "w", words=WORDS, long_text="window", max_length=5)
    )
    raw = load_model_dir(make_tiny_model_dir(tmp_path / "r", words=WORDS, normalize=False))
    text = " ".join(WORDS[:7])  # windows of 3, 3 and 1 words
    windows = [" ".join(WORDS[0:3]), " ".join(WORDS[3:6]), WORDS[6]]
    parts = raw.embed(windows)
    want = (parts * np.array([[3.0], [3.0], [1.0]])).sum(axis=0)
    want /= np.linalg.norm(want)
    assert np.allclose(windowed.embed([text])[0], want, atol=1e-5)
    cut = load_model_dir(make_tiny_model_dir(tmp_path / "c", words=WORDS, max_length=5))
    assert np.allclose(cut.embed([text]), cut.embed([windows[0]]), atol=1e-6)  # the first 3


def test_a_text_gets_the_same_vector_alone_and_among_others(model_dir: Path) -> None:
    e = load_model_dir(model_dir)
    texts = ["alpha", "beta gamma delta epsilon zeta eta", "iota kappa"]
    together = e.embed(texts)
    for i, t in enumerate(texts):
        assert np.allclose(e.embed([t])[0], together[i], atol=1e-6)


def test_where_nonsense_lands_is_a_unit_vector_kept_for_the_next_start(tmp_path: Path) -> None:
    # The model knows the words of the made-up strings a kept centroid is checked against
    # (the others embed to 0): where it puts them all lies where it puts those.
    made_up = {w for s in nonsense(CHECK_QUERIES) for w in s.split()}
    folder = make_tiny_model_dir(tmp_path / "n", words=sorted(made_up))
    e = load_model_dir(folder)
    c = e.nonsense_centroid()
    assert c.shape == (16,) and abs(float(np.linalg.norm(c)) - 1.0) < 1e-5
    assert e.fits_nonsense(c.tolist()) and not e.fits_nonsense((-c).tolist())
    again = load_model_dir(folder)  # a later start reads the one kept: the same floats
    assert np.array_equal(again.nonsense_centroid(), c)
