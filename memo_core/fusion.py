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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from .values import ModeName, Notice

if TYPE_CHECKING:  # only named in annotations: a collection makes its candidates
    from .collection import Collection
    from .store import Store

K = TypeVar("K", bound=Hashable)
Ranked = list[tuple[K, float, tuple[str, ...]]]
Scored = list[tuple[int, float]]  # (chunk id, score), best first


@dataclass
class Candidates:
    """What one collection found for a query, before any ranking: raw scores per side,
    from one snapshot (`store`, valid while `Collection.snapshot` is open)."""

    collection: Collection
    store: Store
    lex: Scored = field(default_factory=list)
    vec: Scored = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)


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
