"""Ranking once, across every collection of a search: the word side, the vector side, or
both fused (hybrid).

Candidates from all collections are pooled first, then normalised and fused together, so
several collections rank as if they were one (a per-collection normalisation would give
each collection's best hit 1.0 and interleave them regardless of relevance).

A weighted sum of per-query min-max-normalised scores beat reciprocal-rank fusion on every
set tried (SciFact train, bench/tune.py: .718 vs .629 nDCG@10 at the chosen settings); the
dense weight and the candidate count were tuned there too. A hit only one side found keeps
its share.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from memo_core.values import ModeName, Notice

if TYPE_CHECKING:
    from memo_core.index.store import Store
    from memo_core.tuning import Tuning

K = TypeVar("K", bound=Hashable)
C = TypeVar("C")  # whoever made the candidates (a Collection, which search sits below)
Key = tuple[int, int]  # (collection's place in the search, chunk id)
Ranked = list[tuple[K, float, tuple[str, ...]]]
Scored = list[tuple[int, float]]  # (chunk id, score), best first


@dataclass
class Candidates(Generic[C]):
    """What one collection found for a query, before any ranking: raw scores per side,
    from one snapshot (`store`, valid while `Collection.snapshot` is open)."""

    collection: C  # the engine asks it for the hits of the ranked chunks
    store: Store
    lex: Scored = field(default_factory=list)
    vec: Scored = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    chunks: int = 0  # chunks in the collection, and in how many each query word occurs:
    term_docs: dict[str, int] = field(default_factory=dict)  # for fusion.dense_weight


def minmax(scores: Sequence[tuple[K, float]]) -> dict[K, float]:
    """Scores rescaled to [0, 1] within this one list; a lone or flat list scores 1."""
    if not scores:
        return {}
    values = [s for _, s in scores]
    lo, hi = min(values), max(values)
    span = hi - lo
    return {key: (s - lo) / span if span > 0 else 1.0 for key, s in scores}


def fuse(
    lex: Sequence[tuple[K, float]], vec: Sequence[tuple[K, float]], dense_weight: float
) -> Ranked[K]:
    """(key, fused score, which sides found it), best first."""
    lex_n, vec_n = minmax(lex), minmax(vec)
    fused = []
    for key in lex_n.keys() | vec_n.keys():
        score = (1 - dense_weight) * lex_n.get(key, 0.0) + dense_weight * vec_n.get(key, 0.0)
        sides = tuple(name for name, side in (("lex", lex_n), ("vec", vec_n)) if key in side)
        fused.append((key, score, sides))
    fused.sort(key=lambda t: (-t[1], t[0]))
    return fused


def _idf(chunks: int, docs: int) -> float:
    """FTS5's own IDF of a word in `docs` of `chunks` chunks (never below 1e-6)."""
    return max(1e-6, math.log((chunks - docs + 0.5) / (docs + 0.5)))


def pooled_lex(found: Sequence[Candidates], terms: Sequence[str]) -> list[tuple[Key, float]]:
    """Every collection's word candidates, keyed (collection, chunk), on one scale.

    BM25 weighs each word by its IDF in its own collection, so the same passage scores
    differently in a small sub-folder than in the whole. Each collection's scores are scaled
    by the query's IDF over all the collections against its IDF in that collection (the
    words it holds): exact for a passage with all the query's words, and the collections of
    a folder rank together as if they were one.
    """
    if len(found) < 2:
        return [((i, cid), s) for i, f in enumerate(found) for cid, s in f.lex]
    chunks = sum(f.chunks for f in found)
    docs = {t: sum(f.term_docs.get(t, 0) for f in found) for t in terms}
    pooled = []
    for i, f in enumerate(found):
        held = [t for t in terms if f.term_docs.get(t, 0)]
        own = sum(_idf(f.chunks, f.term_docs[t]) for t in held)
        scale = sum(_idf(chunks, docs[t]) for t in held) / own if own > 0 else 1.0
        pooled += [((i, cid), s * scale) for cid, s in f.lex]
    return pooled


def dense_weight(
    found: Sequence[Candidates],
    lex: Sequence[tuple[Key, float]],
    terms: Sequence[str],
    tuning: Tuning,
) -> float:
    """How much say the vector side gets for this query: `tuning.dense_weight` when its
    words match the notes well, up to 1 when they match nothing.

    The measure is the best word score over the query's IDF mass: FTS5's BM25 is a sum of
    IDF-weighted term scores, so a passage that holds the query's words (a query in the
    notes' language) scores about its IDF mass or more, while stray matches of a query in
    another language (a product name, a number) or of words the notes do not use score a
    small share of it. On the train sets (BENCHMARKS.md) this beat a fixed weight, gating by
    the share of the query's words present, and the languages' scripts.
    """
    if not tuning.adaptive_fusion:
        return tuning.dense_weight
    chunks = sum(f.chunks for f in found)
    mass = sum(_idf(chunks, sum(f.term_docs.get(t, 0) for f in found)) for t in terms)
    best = max((score for _, score in lex), default=0.0)
    return weight_at(best / mass if mass > 0 else 0.0, tuning)


def weight_at(strength: float, tuning: Tuning) -> float:
    """The vector side's weight for a query whose best word score is `strength` times its
    IDF mass: `tuning.dense_weight` from `lex_full_strength` on, rising to 1 at 0."""
    full = min(1.0, strength / tuning.lex_full_strength)
    return 1 - (1 - tuning.dense_weight) * full**tuning.lex_strength_power


def rank(
    lex: Sequence[tuple[K, float]],
    vec: Sequence[tuple[K, float]],
    mode: ModeName,
    k: int,
    dense_weight: float,
) -> Ranked[K]:
    """The k best of pooled candidates: one side's raw scores, or both fused."""
    if mode == "hybrid":
        return fuse(lex, vec, dense_weight)[:k]
    side = lex if mode == "lex" else vec
    ordered = sorted(side, key=lambda t: (-t[1], t[0]))
    return [(key, score, (mode,)) for key, score in ordered[:k]]
