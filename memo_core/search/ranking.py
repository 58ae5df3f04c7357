"""Ranking once, across every collection of a search: the stages after each collection's
candidates, in the order the package docstring lists them, in `ranked`.

Candidates from all collections are pooled first, then normalised and fused together, so
several collections rank as if they were one (a per-collection normalisation would give
each collection's best hit 1.0 and interleave them regardless of relevance).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from memo_core.results import Explain
from memo_core.search.fusion import Scored, rank, weight_at
from memo_core.search.wordscore import WordScore
from memo_core.text.textnorm import Group
from memo_core.tuning import Tuning
from memo_core.values import ModeName, Notice

if TYPE_CHECKING:
    from memo_core.index.store import Store

C = TypeVar("C")  # whoever found the candidates (a Collection: the ranking reads nothing of it)
Key = tuple[int, int]  # (collection's place in the search, chunk id)

# FTS5's own floor: its bm25() counts a word that occurs in over half the chunks with this
# IDF, not a negative one, so the IDF mass below sums what BM25 sums.
IDF_FLOOR = 1e-6


@dataclass
class Candidates(Generic[C]):
    """What one collection found for a query, before any ranking: word and vector scores,
    from one snapshot (`store`, valid while `Collection.snapshot` is open)."""

    collection: C  # the engine asks it for the hits of the ranked chunks
    store: Store
    words: list[WordScore] = field(default_factory=list)  # best word score first
    vec: Scored = field(default_factory=list)  # cosine similarities, best first
    notices: list[Notice] = field(default_factory=list)
    chunks: int = 0  # chunks in the collection, and in how many each query word occurs:
    term_docs: dict[str, int] = field(default_factory=dict)  # for `scales` and `word_strength`
    # The query's words as this collection's languages stem them (`Query.groups`).
    groups: list[Group] = field(default_factory=list)

    @property
    def lex(self) -> Scored:
        """(chunk id, word score), best first."""
        return [(w.chunk, w.score) for w in self.words]


@dataclass(frozen=True, slots=True)
class Placed:
    """One ranked passage: its collection's place in the search, its chunk, its score, the
    sides that found it, and (where asked) why it ranks there."""

    at: int
    chunk: int
    score: float
    found_by: tuple[str, ...]
    explain: Explain | None = None


def idf(chunks: int, docs: int) -> float:
    """FTS5's own IDF of a word in `docs` of `chunks` chunks."""
    return max(IDF_FLOOR, math.log((chunks - docs + 0.5) / (docs + 0.5)))


def scales(found: Sequence[Candidates], terms: Sequence[str]) -> list[float]:
    """Each collection's factor that puts its word scores on the scale of all of them.

    BM25 weighs each word by its IDF in its own collection, so the same passage scores
    differently in a small sub-folder than in the whole. Each collection's scores are scaled
    by the query's IDF over all the collections against its IDF in that collection (the
    words it holds): exact for a passage with all the query's words, and the collections of
    a folder rank together as if they were one.
    """
    if len(found) < 2:
        return [1.0] * len(found)
    chunks = sum(f.chunks for f in found)
    docs = {t: sum(f.term_docs.get(t, 0) for f in found) for t in terms}
    out = []
    for f in found:
        held = [t for t in terms if f.term_docs.get(t, 0)]
        own = sum(idf(f.chunks, f.term_docs[t]) for t in held)
        out.append(sum(idf(chunks, docs[t]) for t in held) / own if own > 0 else 1.0)
    return out


def word_strength(
    found: Sequence[Candidates], scale: Sequence[float], terms: Sequence[str]
) -> float:
    """How well the query's words match the notes: the best BM25 (scaled) over the query's
    IDF mass.

    FTS5's BM25 is a sum of IDF-weighted term scores, so a passage that holds the query's
    words (a query in the notes' language) scores about its IDF mass or more, while stray
    matches of a query in another language (a product name, a number) or of words the notes
    do not use score a small share of it. On the train sets (BENCHMARKS.md) this beat
    gating by the share of the query's words present, and the languages' scripts. It reads
    BM25 before the naming factor and proximity, so that their settings (a title boost up
    to ×3) do not change how much say the vectors get.
    """
    chunks = sum(f.chunks for f in found)
    mass = sum(idf(chunks, sum(f.term_docs.get(t, 0) for f in found)) for t in terms)
    scaled = (w.bm25 * s for f, s in zip(found, scale, strict=True) for w in f.words)
    best = max(scaled, default=0.0)
    return best / mass if mass > 0 else 0.0


class VectorBar:
    """The score a vector candidate must beat to matter, as collections are read one after
    another: the `size`-th best so far among those the relevance `floor` keeps (-inf until
    `size` are in). `ranked` pools each side's best `size` of all the collections together,
    so one at or below the bar set by those read before it never makes the pool (it loses
    a tie to them too): a collection need not hand it over."""

    def __init__(self, size: int, floor: float | None) -> None:
        self.size, self.floor = size, floor
        self._best: list[float] = []  # a min-heap of the `size` best scores

    @property
    def score(self) -> float:
        return self._best[0] if len(self._best) >= self.size else -math.inf

    def add(self, scored: Sequence[tuple[int, float]]) -> None:
        for _, s in scored:
            if self.floor is not None and s < self.floor:
                continue  # dropped by the floor unless its words found it: sets no bar
            if len(self._best) < self.size:
                heapq.heappush(self._best, s)
            elif s > self._best[0]:
                heapq.heapreplace(self._best, s)


def ranked(
    found: Sequence[Candidates],
    terms: Sequence[str],
    mode: ModeName,
    k: int,
    tuning: Tuning,
    floor: float | None = None,
    *,
    explain: bool = False,
    pool: int | None = None,
) -> list[Placed]:
    """The k best of every collection's candidates, ranked once; `floor`: the cosine a
    passage found by meaning alone needs (Embedder.relevance_floor); `explain`: each with
    the figures that placed it, read from this ranking as it ranks; `pool`: how many of
    each side's candidates, the best of all collections together, are fused (None: all)."""
    scale = scales(found, terms)
    lex = [((i, w.chunk), w.score * scale[i]) for i, f in enumerate(found) for w in f.words]
    vec = [((i, cid), s) for i, f in enumerate(found) for cid, s in f.vec]
    if floor is not None:  # a query with no word match and nothing close in meaning: nothing
        worded = {key for key, _ in lex}
        vec = [(key, s) for key, s in vec if s >= floor or key in worded]
    if pool is not None and len(found) > 1:
        # Each collection gave its best `pool`; one collection holding them all would give
        # the best `pool` of them all: so do many (and fusing 500 x 200 costs seconds).
        lex = heapq.nlargest(pool, lex, key=_best_first)
        vec = heapq.nlargest(pool, vec, key=_best_first)
    # The vector side's say in hybrid: `tuning.dense_weight` for a query whose words match
    # the notes well, up to `tuning.dense_top` for one whose words match nothing
    # (`tuning.adaptive_fusion`).
    strength: float | None = None
    weight: float | None = None
    if mode == "hybrid":
        strength = word_strength(found, scale, terms) if tuning.adaptive_fusion else None
        weight = tuning.dense_weight if strength is None else weight_at(strength, tuning)
    norms: dict[Key, tuple[float, float]] | None = {} if explain and mode == "hybrid" else None
    top = rank(lex, vec, mode, k, weight or 0.0, norms)
    if not explain:
        return [Placed(i, cid, score, sides) for (i, cid), score, sides in top]
    words = {(i, w.chunk): w for i, f in enumerate(found) for w in f.words}
    lex_of, vec_of = dict(lex), dict(vec)
    placed = []
    for key, score, sides in top:
        w = words.get(key)
        n = norms.get(key) if norms is not None else None
        why = Explain(
            bm25=w.bm25 if w else None,
            naming=w.naming if w else None,
            proximity=w.proximity if w else None,
            scale=scale[key[0]],
            lex=lex_of.get(key),
            vec=vec_of.get(key),
            lex_norm=n[0] if n else None,
            vec_norm=n[1] if n else None,
            strength=strength,
            dense_weight=weight,
        )
        placed.append(Placed(key[0], key[1], score, sides, why))
    return placed


def _best_first(scored: tuple[tuple[int, int], float]) -> tuple[float, int, int]:
    """Higher scores first, ties to the lower (collection, chunk), as fusion breaks them."""
    (at, chunk), score = scored
    return score, -at, -chunk
