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

from collections.abc import Hashable, Sequence
from typing import TypeVar

from .values import ModeName

K = TypeVar("K", bound=Hashable)
Ranked = list[tuple[K, float, tuple[str, ...]]]


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
