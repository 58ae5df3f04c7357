"""OnnxEmbedder against tiny real ONNX graphs (onnxruntime, no mocks) and their numpy twins."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from tinymodels import (
    bert_graph,
    build_vocab,
    make_tiny_model_dir,
    make_tokenizer,
    ref_bert,
    ref_siglip,
    siglip_graph,
    token_table,
    write_model_dir,
)
from tokenizers import normalizers

from memo_core import ModelSource, settings
from memo_core.errors import ModelUnavailableError
from memo_core.model.embedder import Embedder
from memo_core.model.facts import FACTS_FILE
from memo_core.model.onnx_embedder import (
    FEW_PASSAGES,
    LEAN_BATCH_CHARS,
    OnnxEmbedder,
    Sessions,
    load_model_dir,
)

DIM = 8
TEXTS = [
    "how to configure backup",
    "linux server",
    "the cat and the dog and the bird in the rain",
    "как настроить бэкап",
    "",
]


def _bert_dir(tmp_path: Path, *, types: bool = False, **cfg) -> tuple[Path, dict]:
    vocab = build_vocab()
    rng = np.random.default_rng(1)
    parts = {
        "tok": make_tokenizer(vocab, bert=True),
        "table": token_table(len(vocab), DIM, seed=2),  # [PAD] row is non-zero on purpose
        "mask_vec": rng.standard_normal(DIM).astype(np.float32),
        "type_table": rng.standard_normal((2, DIM)).astype(np.float32) if types else None,
    }
    model = bert_graph(parts["table"], mask_vec=parts["mask_vec"], type_table=parts["type_table"])
    config = {"format": 1, "kind": "bert", "onnx": "model.onnx", "dim": DIM, **cfg}
    return write_model_dir(tmp_path / "bert", model, config, parts["tok"]), parts


@pytest.mark.parametrize("pooling", ["mean", "cls"])
@pytest.mark.parametrize("types", [False, True])
def test_bert_matches_numpy(tmp_path, pooling, types):
    path, p = _bert_dir(tmp_path, types=types, pooling=pooling)
    emb = load_model_dir(path)
    assert isinstance(emb, Embedder) and emb.dim == DIM and emb.kind == "bert"
    got = emb.embed_batch(TEXTS)
    want = ref_bert(
        p["tok"],
        TEXTS,
        p["table"],
        pooling=pooling,
        mask_vec=p["mask_vec"],
        type_table=p["type_table"],
    )
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), DIM)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_padding_does_not_change_a_vector(tmp_path, pooling):
    emb = load_model_dir(_bert_dir(tmp_path, pooling=pooling)[0])
    alone = emb.embed_batch(["linux server"])[0]
    padded = emb.embed_batch(["linux server", TEXTS[2]])[0]  # padded to the longer text
    np.testing.assert_allclose(alone, padded, atol=1e-6)


def test_two_d_output_is_used_as_is(tmp_path):
    vocab = build_vocab()
    table = token_table(len(vocab), DIM, seed=3)
    tok = make_tokenizer(vocab)
    cfg = {"kind": "bert", "output": "sentence_embedding", "pooling": "cls"}
    emb = load_model_dir(write_model_dir(tmp_path, bert_graph(table, output_2d=True), cfg, tok))
    ctx = [table[tok.encode(t).ids].mean(axis=0) for t in TEXTS[:3]]
    want = np.array(ctx) / np.linalg.norm(ctx, axis=1, keepdims=True)
    np.testing.assert_allclose(emb.embed_batch(TEXTS[:3]), want, atol=1e-5)


def test_truncation_to_max_length(tmp_path):
    emb = load_model_dir(_bert_dir(tmp_path, max_length=4)[0])
    # [CLS] cat dog [SEP] (the post-processor's tokens are kept when truncating)
    np.testing.assert_allclose(
        emb.embed_batch(["cat dog bird fish apple"]), emb.embed_batch(["cat dog"]), atol=1e-6
    )


@pytest.mark.parametrize("pool", ["mean", "first"])
def test_siglip_fixed_length_and_pad_id(tmp_path, pool):
    vocab = build_vocab()
    table = token_table(len(vocab), DIM, seed=4)
    tok = make_tokenizer(vocab, bert=False)
    cfg = {"format": 1, "kind": "siglip", "max_length": 12, "dim": DIM}
    path = write_model_dir(tmp_path, siglip_graph(table, 12, pool=pool), cfg, tok)
    emb = load_model_dir(path)
    assert emb.pad_id == vocab["[PAD]"]
    texts = [*TEXTS, "a b " + "cat " * 40]  # the last one is longer than max_length
    want = ref_siglip(tok, texts, table, 12, vocab["[PAD]"], pool=pool)
    np.testing.assert_allclose(emb.embed_batch(texts), want, atol=1e-5)
    # pad_id in memo-model.json wins over the tokenizer's
    (path / "memo-model.json").write_text(json.dumps({**cfg, "pad_id": vocab["cat"]}))
    got = load_model_dir(path).embed_batch(TEXTS[:2])
    want = ref_siglip(tok, TEXTS[:2], table, 12, vocab["cat"], pool)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_prefixes_for_query_and_passage(tmp_path):
    path, p = _bert_dir(tmp_path, query_prefix="query: ", passage_prefix="passage: ")
    emb = load_model_dir(path)
    q, d = emb.embed(["backup"], query=True)[0], emb.embed(["backup"])[0]
    assert not np.allclose(q, d)
    np.testing.assert_allclose(
        q, ref_bert(p["tok"], ["query: backup"], p["table"], mask_vec=p["mask_vec"])[0], atol=1e-5
    )
    np.testing.assert_allclose(
        d, ref_bert(p["tok"], ["passage: backup"], p["table"], mask_vec=p["mask_vec"])[0], atol=1e-5
    )


def test_normalize_false_keeps_raw_vectors(tmp_path):
    path, p = _bert_dir(tmp_path, normalize=False)
    got = load_model_dir(path).embed_batch(["cat dog"])
    h = p["table"][p["tok"].encode("cat dog").ids] + p["mask_vec"]
    np.testing.assert_allclose(got[0], 2 * h.mean(axis=0), atol=1e-5)


def test_zero_vector_stays_finite(tmp_path):
    path = make_tiny_model_dir(tmp_path, dim=DIM)
    got = load_model_dir(path).embed(["zzz qqq", "", "cat"])  # unknown words embed to zero
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got[0], 0.0)
    assert np.linalg.norm(got[2]) == pytest.approx(1.0, abs=1e-5)


def test_embed_batches_and_keeps_order(tmp_path):
    emb = load_model_dir(_bert_dir(tmp_path, batch_size=2)[0])
    assert emb.batch_size == 2
    one_by_one = np.vstack([emb.embed_batch([t]) for t in TEXTS])
    np.testing.assert_allclose(emb.embed(TEXTS), one_by_one, atol=1e-6)
    assert emb.embed([]).shape == (0, DIM)


def test_model_id_tracks_the_onnx_file(tmp_path):
    path, _ = _bert_dir(tmp_path, id="tiny")
    first = load_model_dir(path).model_id
    assert first.startswith("tiny-") and load_model_dir(path).model_id == first
    vocab = build_vocab()
    write_model_dir(
        path,
        bert_graph(token_table(len(vocab), DIM, seed=99)),
        json.loads((path / "memo-model.json").read_text()),
        None,
    )
    assert load_model_dir(path).model_id != first
    cfg = json.loads((path / "memo-model.json").read_text())
    del cfg["id"]
    (path / "memo-model.json").write_text(json.dumps(cfg))
    assert load_model_dir(path).model_id.startswith("bert-")  # the directory's name


def test_tiny_model_dir_is_meaningful(tmp_path):
    for kind in ("bert", "siglip"):
        emb = load_model_dir(make_tiny_model_dir(tmp_path / kind, kind=kind, words=["zebra"]))
        assert emb.dim == 16
        a, b, c = emb.embed(["configure backup server zebra", "backup server", "borscht recipe"])
        assert a @ b > a @ c + 0.2


def _broken(tmp_path: Path, problem: str) -> Path:
    path, _ = _bert_dir(tmp_path)
    cfg_file = path / "memo-model.json"
    cfg = json.loads(cfg_file.read_text())
    if problem == "no config":
        cfg_file.unlink()
    elif problem == "bad json":
        cfg_file.write_text("{not json")
    elif problem == "not an object":
        cfg_file.write_text("[1, 2]")
    elif problem == "no onnx":
        (path / "model.onnx").unlink()
    elif problem == "no tokenizer":
        (path / "tokenizer.json").unlink()
    elif problem == "bad tokenizer":
        (path / "tokenizer.json").write_text('{"model": 1}')
    elif problem == "bad onnx":
        (path / "model.onnx").write_bytes(b"not an onnx file")
    else:
        cfg_file.write_text(json.dumps({**cfg, **json.loads(problem)}))
    return path


@pytest.mark.parametrize(
    "problem, words",
    [
        ("no config", "memo-model.json is missing"),
        ("bad json", "cannot be read as JSON"),
        ("not an object", "JSON object"),
        ("no onnx", "'model.onnx' is missing"),
        ("no tokenizer", "'tokenizer.json' is missing"),
        ("bad tokenizer", "tokenizer.json cannot be loaded"),
        ("bad onnx", "onnxruntime cannot load model.onnx"),
        ('{"dim": 9}', '"dim" is 9'),
        ('{"kind": "gpt"}', '"kind" must be one of'),
        ('{"format": 2}', '"format" 2'),
        ('{"pooling": "max"}', '"pooling" must be one of'),
        ('{"max_length": "long"}', '"max_length" must be int'),
        ('{"output": "nope"}', "output 'nope' is not in the graph"),
        ('{"inputs": {"attention_mask": "mask"}}', "inputs ['attention_mask']"),
        ('{"kind": "text"}', "inputs ['attention_mask', 'input_ids']"),
    ],
)
@pytest.mark.parametrize("ready", [True, False], ids=["loaded", "loading"])
def test_errors_name_the_path_and_the_problem(tmp_path, problem, words, ready):
    """Whether the graph loads before `load_model_dir` returns or on a thread of its own
    (ready=False), what is wrong is said the same way: at the latest by `ready()`, and by
    every embedding after it."""
    path = _broken(tmp_path, problem)
    with pytest.raises(ModelUnavailableError) as info:
        load_model_dir(path, ready=ready).ready()
    msg = str(info.value)
    assert str(path) in msg and words in msg and "MEMO_MODEL_DIR" in msg


@pytest.mark.parametrize("problem", ["bad onnx", '{"dim": 9}', '{"output": "nope"}'])
def test_a_graph_that_fails_on_its_thread_fails_every_embedding(tmp_path, problem):
    model = load_model_dir(_broken(tmp_path, problem), ready=False)
    assert model.dim  # the folder names it: known before the graph
    for _ in range(2):
        with pytest.raises(ModelUnavailableError, match=str(tmp_path)):
            model.embed(["cat"], query=True)


def test_a_model_loading_on_its_thread_embeds_as_a_loaded_one(tiny_model_dir: Path) -> None:
    loaded = load_model_dir(tiny_model_dir)
    loading = load_model_dir(tiny_model_dir, ready=False)
    assert (loading.model_id, loading.dim) == (loaded.model_id, loaded.dim)
    np.testing.assert_allclose(
        loading.embed(TEXTS, query=True), loaded.embed(TEXTS, query=True), atol=1e-6
    )


def test_missing_directory(tmp_path):
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        OnnxEmbedder(tmp_path / "nowhere")


def test_lowercase_option(tmp_path):
    vocab = build_vocab()
    tok = make_tokenizer(vocab)
    tok.normalizer = normalizers.Sequence([])  # case-sensitive: "CAT" is [UNK]
    table = token_table(len(vocab), DIM, seed=5)
    cfg = {"kind": "bert", "pooling": "mean"}
    plain = load_model_dir(write_model_dir(tmp_path / "a", bert_graph(table), cfg, tok))
    lower = load_model_dir(
        write_model_dir(tmp_path / "b", bert_graph(table), {**cfg, "lowercase": True}, tok)
    )
    np.testing.assert_allclose(lower.embed(["CAT"]), plain.embed(["cat"]), atol=1e-6)
    assert not np.allclose(plain.embed(["CAT"]), plain.embed(["cat"]))


def test_batches_stop_at_max_chars(tmp_path) -> None:
    from tinymodels import make_tiny_model_dir

    from memo_core.model.onnx_embedder import load_model_dir

    emb = load_model_dir(make_tiny_model_dir(tmp_path / "m"))
    seen: list[int] = []
    inner = emb.embed_batch

    def spy(texts, *, query=False):
        seen.append(sum(len(t) for t in texts))
        return inner(texts, query=query)

    emb.embed_batch = spy  # type: ignore[method-assign]
    emb.max_batch_chars = 100
    texts = ["cat " * 10] * 7 + ["dog " * 40]  # 40 chars each, then one of 160
    together = load_model_dir(make_tiny_model_dir(tmp_path / "m")).embed(texts)
    assert np.allclose(emb.embed(texts), together, atol=1e-6)  # same vectors, other batches
    assert seen == [80, 80, 80, 40, 160]


def test_a_search_loads_the_model_once_and_indexing_gets_a_session_of_its_own(
    tiny_model_dir: Path,
) -> None:
    e = load_model_dir(tiny_model_dir)
    first = e.sessions
    assert first == Sessions(queries=0, indexing=None, runs_at_once=1, loaded=1)
    texts = ["restic backup", "кошка и собака"]
    # A query and a few passages (a one-shot search's refresh): on the one session loaded.
    as_queries = e.embed(texts, query=True)
    few = e.embed(texts)
    assert e.sessions == first
    # Indexing in earnest: passages get a session of their own (it spins), the query's
    # stays (a query used it); the vectors are the same on either.
    many = e.embed(["cabbage bowl"] * FEW_PASSAGES + texts)
    assert e.sessions == Sessions(queries=0, indexing=0, runs_at_once=1, loaded=2)
    np.testing.assert_allclose(many[-2:], few, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(as_queries, e.embed(texts, query=True), rtol=1e-5, atol=1e-6)


def test_a_lean_model_indexes_on_the_queries_session_in_small_batches(
    tiny_model_dir: Path,
) -> None:
    """A pair's second model: a server asked while it indexes holds it once (memo-mcp with
    the default pair peaked at 815 MB with two sessions of use-m3, 608 MB with one, 511 MB
    with batches of 2,000 characters)."""
    e = load_model_dir(tiny_model_dir, lean=True)
    assert e.max_batch_chars == LEAN_BATCH_CHARS < load_model_dir(tiny_model_dir).max_batch_chars
    first = e.sessions
    assert first == Sessions(queries=0, indexing=None, runs_at_once=1, loaded=1)
    texts = ["restic backup", "кошка и собака"]
    as_queries = e.embed(texts, query=True)
    many = e.embed(["cabbage bowl"] * (FEW_PASSAGES + 1) + texts)
    assert e.sessions == first
    both = load_model_dir(tiny_model_dir)  # the same vectors as on two sessions
    np.testing.assert_allclose(many, both.embed(["cabbage bowl"] * (FEW_PASSAGES + 1) + texts),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(as_queries, both.embed(texts, query=True), rtol=1e-5, atol=1e-6)


def test_indexing_runs_texts_two_at_once_only_where_none_is_padded(
    tiny_model_dir: Path, tiny_e5_installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model never padded (e5's: a run per text) indexes two texts at once, each run on
    half the cores, with the vectors of one at a time; a padded model (a batch a run) and
    a text graph keep one run at a time on every core (half of them halved its speed)."""
    _cores(monkeypatch, 4)
    texts = [f"the server back up {'при вет ' * i}" for i in range(40)]
    e5 = load_model_dir(tiny_e5_installed)
    alone = np.stack([e5.embed([t])[0] for t in texts])
    e5.embed(["the note"] * (FEW_PASSAGES + 1))  # indexing's session from here on
    assert e5.sessions.runs_at_once == 2 and e5.sessions.indexing == 2  # threads a run
    np.testing.assert_allclose(e5.embed(texts), alone, rtol=1e-5, atol=1e-6)
    padded = load_model_dir(tiny_model_dir)
    padded.embed(["cabbage bowl"] * (FEW_PASSAGES + 1))
    assert padded.sessions.runs_at_once == 1
    assert padded.sessions.indexing == 0  # every core


@pytest.mark.parametrize("cores", [1, 2])
def test_a_model_never_padded_on_few_cores_serves_queries_and_indexing_on_one_session(
    tiny_e5_installed: Path, monkeypatch: pytest.MonkeyPatch, cores: int
) -> None:
    """On 2 cores each of e5's runs has one thread whichever session it is on: a second
    session would only hold the model twice (memo-mcp indexing 300 pages: 435 MB peak)."""
    _cores(monkeypatch, cores)
    texts = [f"the server back up {'при вет ' * i}" for i in range(12)]
    e5 = load_model_dir(tiny_e5_installed)
    query = e5.embed(["restic backup"], query=True)
    alone = np.stack([e5.embed([t])[0] for t in texts])
    e5.embed(["the note"] * (FEW_PASSAGES + 1))
    assert e5.sessions == Sessions(queries=1, indexing=None, runs_at_once=cores, loaded=1)
    # (two texts at once where two cores are)
    np.testing.assert_allclose(e5.embed(texts), alone, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(e5.embed(["restic backup"], query=True), query, atol=1e-6)


def test_a_model_for_indexing_loads_on_the_calling_thread(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime

    made_on: list[threading.Thread] = []  # the thread each onnxruntime session is made on
    real = onnxruntime.InferenceSession

    def session(*args: object, **kwargs: object) -> object:
        made_on.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", session)
    here = threading.current_thread()
    load_model_dir(tiny_model_dir)
    assert made_on == [here]
    ModelSource(model_dir=tiny_model_dir).get()
    assert made_on == [here, here]
    ModelSource(model_dir=tiny_model_dir).get(ready=False).ready()  # a search's: on its own
    assert len(made_on) == 3 and made_on[2] is not here


def test_indexing_alone_holds_one_session(tiny_model_dir: Path) -> None:
    e = load_model_dir(tiny_model_dir)
    texts = ["restic backup", "кошка и собака"]
    before = e.embed(texts, query=True)
    e = load_model_dir(tiny_model_dir)
    e.embed(["cabbage bowl"] * (FEW_PASSAGES + 1))
    # No query used the first: it went before indexing's was loaded.
    assert e.sessions == Sessions(queries=None, indexing=0, runs_at_once=1, loaded=2)
    np.testing.assert_allclose(e.embed(texts, query=True), before, rtol=1e-5, atol=1e-6)
    assert e.sessions.queries is not None and e.sessions.loaded == 3  # loaded again by it


def test_a_server_that_indexed_holds_one_session_again(tiny_model_dir: Path) -> None:
    e = load_model_dir(tiny_model_dir)
    query = e.embed(["restic backup"], query=True)
    e.embed(["cabbage bowl"] * (FEW_PASSAGES + 1))
    assert e.sessions.indexing is not None
    e.rest()  # indexing is done: its session goes, the queries' stays
    rested = e.sessions
    assert rested.indexing is None and rested.queries is not None
    np.testing.assert_allclose(e.embed(["restic backup"], query=True), query, atol=1e-6)
    e.embed(["cabbage bowl"] * 3)  # a few passages later: on the queries' session
    assert e.sessions == rested


def _cores(monkeypatch: pytest.MonkeyPatch, cores: int) -> None:
    """As on a machine where this process may run on `cores` cores (what the OS says)."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)))


def test_a_start_reuses_the_model_digest_until_a_file_is_rewritten(tmp_path: Path) -> None:
    model = make_tiny_model_dir(tmp_path / "m")
    first = load_model_dir(model).model_id
    facts_file = settings.cache_dir() / FACTS_FILE
    facts = json.loads(facts_file.read_text())
    (key,) = facts["digests"]
    facts["digests"][key] = "f" * 64  # as if the files' digest were this: the next start
    facts_file.write_text(json.dumps(facts))  # believes it (it does not read 72 MB again)
    assert load_model_dir(model).model_id.endswith("-" + "f" * 12)
    onnx = model / "model.onnx"
    onnx.write_bytes(onnx.read_bytes())  # rewritten in place, the same bytes: read again
    assert load_model_dir(model).model_id == first


def test_where_nonsense_lands_is_kept_between_starts(tiny_model_dir: Path) -> None:
    first = load_model_dir(tiny_model_dir).nonsense_centroid()
    facts_file = settings.cache_dir() / FACTS_FILE
    facts = json.loads(facts_file.read_text())
    (key,) = facts["centroids"]
    assert facts["centroids"][key] == first.tolist()
    facts["centroids"][key] = first[::-1].tolist()  # as if it were there: the next start
    facts_file.write_text(json.dumps(facts))  # believes it (64 queries fewer)
    np.testing.assert_array_equal(load_model_dir(tiny_model_dir).nonsense_centroid(), first[::-1])
