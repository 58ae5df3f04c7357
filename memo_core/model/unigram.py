"""A SentencePiece-style unigram tokenizer that gives `tokenizers`' token ids in a tenth of
its memory.

`tokenizers` holds an XLM-R vocabulary (250k pieces) as a byte trie with a hash map per node:
about 280 MB resident for e5-small. This is the same pipeline as the tokenizer.json that
`spm_json` describes (which `tokenizers` runs), in plain Python over one dict of pieces
(about 25 MB):

1. the normaliser: each code point through the model's map (SentencePiece's precompiled
   charsmap, whose keys are single code points here), with `tokenizers`' quirk kept: a
   grapheme cluster under 6 bytes whose first code point the map names is replaced whole by
   that code point's replacement (its combining marks go with it); then runs of spaces
   become one;
2. `▁` for every space, one prepended, and a word per `▁`;
3. per word, the best segmentation by the pieces' scores, found exactly as `tokenizers`'
   `encode_optimized` finds it (the same float64 sums in the same order, the first of equal
   paths kept), a run of unknown characters as one `<unk>`;
4. `<s> … </s>` around the ids.

The file (`write`; `UnigramTokenizer.load`, or `from_bytes` of its bytes) holds the pieces,
their scores, the special ids and the normaliser's map; every length is checked on reading,
so a damaged file is a clear `ValueError`, never a wrong tokenizer.
tests/memo_core/model/test_unigram.py holds it to `tokenizers`' ids.
"""

from __future__ import annotations

import re
import struct
import sys
import unicodedata
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

MAGIC = b"MEMOUNI1"
META = "▁"
UNK_PENALTY = 10.0  # tokenizers' K_UNK_PENALTY: an unknown character scores min - 10
CACHE_WORDS = 100_000  # words kept with their ids (the common ones repeat in every note)
_HEADER = struct.Struct("<8s4iI")
_SPACES = re.compile(" {2,}")
_WORDS = re.compile(f"{META}[^{META}]*")
# Grapheme clusters (UAX #29) matter only where a cluster starts with a code point the map
# names: these are the code points that join the one before them.
_JOINING_CATEGORIES = {"Mn", "Me", "Mc"}
_ZWJ, _ZWNJ = "\u200d", "\u200c"
_PREPEND = {
    *range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x0D4E, 0x110BD, 0x110CD,
    0x111C2, 0x111C3, 0x1193F, 0x11941, 0x11A3A, *range(0x11A84, 0x11A8A), 0x11D46, 0x11F02,
}  # fmt: skip
# Letters that join as marks do in UAX #29: SpacingMark (Lo), and halfwidth sound marks (Lm).
_EXTEND_EXTRA = {0x0E33, 0x0EB3, 0xFF9E, 0xFF9F}


class Vocabulary(NamedTuple):
    """A tokenizer file's contents."""

    pieces: list[str]
    scores: Sequence[float]
    norm_map: dict[int, tuple[int, ...]]
    bos: int
    eos: int
    pad: int
    unk: int


def write(
    path: Path,
    pieces: Sequence[str],
    scores: Sequence[float],
    norm_map: Mapping[int, Sequence[int]],
    *,
    bos: int,
    eos: int,
    pad: int,
    unk: int,
) -> None:
    """The tokenizer file for this vocabulary and normaliser map."""
    offsets = [0]
    for p in pieces:  # in code points: the reader slices one decoded string
        offsets.append(offsets[-1] + len(p))
    blob = "".join(pieces).encode("utf-8")
    norm = bytearray()
    for cp, out in sorted(norm_map.items()):
        norm += struct.pack(f"<IB{len(out)}I", cp, len(out), *out)
    with open(path, "wb") as f:
        f.write(_HEADER.pack(MAGIC, bos, eos, pad, unk, len(pieces)))
        f.write(struct.pack(f"<{len(offsets)}I", *offsets))
        f.write(struct.pack(f"<{len(scores)}f", *scores))
        f.write(struct.pack("<I", len(blob)) + blob)
        f.write(struct.pack("<II", len(norm_map), len(norm)) + bytes(norm))


def read(path: Path) -> Vocabulary:
    """What a file `write` made holds; ValueError says what is wrong with it."""
    return parse(Path(path).read_bytes())


def parse(raw: bytes) -> Vocabulary:
    """What the bytes of a file `write` made hold; ValueError says what is wrong with them."""
    data = memoryview(raw)
    at = _HEADER.size
    if len(data) < at or bytes(data[:8]) != MAGIC:
        raise ValueError("not a memo unigram tokenizer file")
    _magic, bos, eos, pad, unk, n = _HEADER.unpack(data[:at])

    def take(size: int) -> memoryview:
        nonlocal at
        if size < 0 or at + size > len(data):
            raise ValueError("the tokenizer file is truncated")
        at += size
        return data[at - size : at]

    # Arrays, not tuples: a Python number per entry, freed among the pieces, would leave
    # the memory they lie in fragmented.
    offsets = _little("I", take(4 * (n + 1)))
    scores = _little("f", take(4 * n))
    (size,) = struct.unpack("<I", take(4))
    try:
        text = bytes(take(size)).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"the tokenizer file's pieces are not UTF-8 ({e})") from None
    if (
        offsets[0] != 0
        or offsets[-1] != len(text)
        or any(b < a for a, b in zip(offsets, offsets[1:], strict=False))
    ):
        raise ValueError("the tokenizer file's piece offsets do not fit its pieces")
    # Slices of one decoded string: the pieces lie together in memory (parsed one by one
    # among a parser's garbage, as from tokenizer.json, they held three times as much).
    pieces = [text[a:b] for a, b in zip(offsets, offsets[1:], strict=False)]
    count, size = struct.unpack("<II", take(8))
    norm = take(size)
    norm_map: dict[int, tuple[int, ...]] = {}
    pos = 0
    for _ in range(count):
        if pos + 5 > len(norm):
            raise ValueError("the tokenizer file's normaliser map is truncated")
        cp, k = struct.unpack_from("<IB", norm, pos)
        if pos + 5 + 4 * k > len(norm):
            raise ValueError("the tokenizer file's normaliser map is truncated")
        norm_map[cp] = struct.unpack_from(f"<{k}I", norm, pos + 5)
        pos += 5 + 4 * k
    if pos != len(norm) or at != len(data):
        raise ValueError("the tokenizer file has bytes past its end")
    if any(
        c > 0x10FFFF or 0xD800 <= c < 0xE000 for cp, out in norm_map.items() for c in (cp, *out)
    ):
        raise ValueError("the tokenizer file's normaliser map names no character")
    return Vocabulary(pieces, scores, norm_map, bos, eos, pad, unk)


class UnigramTokenizer:
    """Token ids of texts, `<s>` and `</s>` included, as `tokenizers` gives them."""

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        norm_map: Mapping[int, Sequence[int]],
        *,
        bos: int,
        eos: int,
        pad: int,
        unk: int,
    ) -> None:
        n = len(pieces)
        if len(scores) != n or not all(0 <= i < n for i in (bos, eos, pad, unk)):
            raise ValueError("the special ids or the scores do not fit the pieces")
        self.bos, self.eos, self.pad, self.unk = bos, eos, pad, unk
        self.ids: dict[str, int] = {}
        longest: dict[str, int] = {}  # per first character, its longest piece
        for i, p in enumerate(pieces):
            self.ids[p] = i  # a later duplicate wins, as in tokenizers
            if p and len(p) > longest.get(p[0], 0):
                longest[p[0]] = len(p)
        self._longest = longest
        self._scores = array("d", scores)
        self._unk_score = min(self._scores) - UNK_PENALTY
        self._map = {cp: "".join(map(chr, out)) for cp, out in norm_map.items()}
        self._table = str.maketrans(self._map)
        self._named = frozenset(chr(cp) for cp in self._map)
        self._cache: dict[str, list[int]] = {}

    @classmethod
    def load(cls, path: Path) -> UnigramTokenizer:
        """The tokenizer in a file `write` made; ValueError says what is wrong with it."""
        return cls.from_bytes(Path(path).read_bytes())

    @classmethod
    def from_bytes(cls, data: bytes) -> UnigramTokenizer:
        """The tokenizer in the bytes of a file `write` made (read by a caller that checked
        what it read them from); ValueError says what is wrong with them."""
        v = parse(data)
        return cls(v.pieces, v.scores, v.norm_map, bos=v.bos, eos=v.eos, pad=v.pad, unk=v.unk)

    # -- normalising -----------------------------------------------------------------------
    def normalize(self, text: str) -> str:
        """The text as the model's normaliser leaves it (before `▁`)."""
        out = text.translate(self._table)
        if not text.isascii() or "\r\n" in text:
            out = self._whole_clusters(text, out)  # clusters of several code points
        return _SPACES.sub(" ", out)

    def _whole_clusters(self, text: str, translated: str) -> str:
        """`translated` (every code point mapped alone), except where a cluster under 6 bytes
        starts with a code point the map names: that cluster becomes its replacement."""
        parts: list[str] = []
        last = 0
        named = self._named
        # A loop over the characters: a regular expression of the map's 5,000 code points
        # scanned a note 40 times slower (sre tries a large class one by one).
        for i, ch in enumerate(text):
            if ch not in named or i < last or (i and _joins(text[i - 1], ch)):
                continue
            j, size = i + 1, len(text[i].encode("utf-8"))
            while j < len(text) and _joins(text[j - 1], text[j]) and size < 6:
                size += len(text[j].encode("utf-8"))
                j += 1
            if j > i + 1 and size < 6:  # the loop stopped at the cluster's end
                parts += [text[last:i].translate(self._table), self._map[ord(text[i])]]
                last = j
        if not parts:
            return translated
        parts.append(text[last:].translate(self._table))
        return "".join(parts)

    # -- segmenting ------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        s = self.normalize(text).replace(" ", META)
        if not s:  # nothing left to prepend `▁` to: no words
            return [self.bos, self.eos]
        if not s.startswith(META):
            s = META + s
        ids = [self.bos]
        cache = self._cache
        for word in _WORDS.findall(s):
            got = cache.get(word)
            if got is None:
                got = self._segment(word)
                if len(cache) < CACHE_WORDS:
                    cache[word] = got
            ids += got
        ids.append(self.eos)
        return ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def _segment(self, word: str) -> list[int]:
        """The best path through `word`'s pieces (tokenizers' `encode_optimized`)."""
        ids, scores, longest = self.ids, self._scores, self._longest
        n = len(word)
        best = [0.0] * (n + 1)
        start = [-1] * (n + 1)
        piece = [0] * (n + 1)
        for i in range(n):
            here = best[i]
            single = False
            for length in range(1, min(longest.get(word[i], 0), n - i) + 1):
                t = ids.get(word[i : i + length])
                if t is not None:
                    end = i + length
                    score = scores[t] + here
                    if start[end] < 0 or score > best[end]:
                        best[end], start[end], piece[end] = score, i, t
                    single = single or length == 1
            if not single:
                score = self._unk_score + here
                if start[i + 1] < 0 or score > best[i + 1]:
                    best[i + 1], start[i + 1], piece[i + 1] = score, i, self.unk
        out: list[int] = []
        end = n
        unk_end = -1  # where the run of unknown characters being collected ends
        while end > 0:
            begin = start[end]
            if piece[end] == self.unk:
                unk_end = end if unk_end < 0 else unk_end
            else:
                if unk_end >= 0:
                    out.append(ids.get(word[end:unk_end], self.unk))
                    unk_end = -1
                out.append(piece[end])
            end = begin
        if unk_end >= 0:
            out.append(ids.get(word[:unk_end], self.unk))
        out.reverse()
        return out


def _little(code: str, data: memoryview) -> array:
    """An array of 4-byte values ("I" or "f") read from little-endian bytes."""
    if code == "I" and array("I").itemsize != 4:
        code = "L"  # "I" is 4 bytes wherever memo runs; "L" where it is not
    values = array(code)
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _joins(before: str, c: str) -> bool:
    """Whether `c` stays in the grapheme cluster of `before` (UAX #29's pair rules; the
    emoji and regional-indicator rules join only clusters of 6 bytes or more)."""
    b, o = ord(before), ord(c)
    if before == "\r":
        return c == "\n"
    if _control(before) or _control(c):
        return False
    if b in _PREPEND:
        return True
    if (
        c in (_ZWJ, _ZWNJ)
        or o in _EXTEND_EXTRA
        or 0x1F3FB <= o <= 0x1F3FF
        or 0xE0020 <= o <= 0xE007F
    ):
        return True
    if unicodedata.category(c) in _JOINING_CATEGORIES:
        return True
    return _hangul_joins(b, o)


def _control(c: str) -> bool:
    cat = unicodedata.category(c)
    if cat in ("Cc", "Zl", "Zp"):
        return True
    return (
        cat == "Cf"
        and c not in (_ZWJ, _ZWNJ)
        and ord(c) not in _PREPEND
        and not 0xE0020 <= ord(c) <= 0xE007F
    )


def _hangul(o: int) -> str:
    if 0x1100 <= o <= 0x115F or 0xA960 <= o <= 0xA97C:
        return "L"
    if 0x1160 <= o <= 0x11A7 or 0xD7B0 <= o <= 0xD7C6:
        return "V"
    if 0x11A8 <= o <= 0x11FF or 0xD7CB <= o <= 0xD7FB:
        return "T"
    if 0xAC00 <= o <= 0xD7A3:
        return "LV" if (o - 0xAC00) % 28 == 0 else "LVT"
    return ""


def _hangul_joins(b: int, o: int) -> bool:
    first, then = _hangul(b), _hangul(o)
    return bool(first and then) and (
        (first == "L" and then in ("L", "V", "LV", "LVT"))
        or (first in ("LV", "V") and then in ("V", "T"))
        or (first in ("LVT", "T") and then == "T")
    )
