"""Fusing the word side and the vector side (hybrid), or ranking one of them alone.

A weighted sum of per-query min-max-normalised scores beat reciprocal-rank fusion on every
set tried (SciFact train, bench/tune.py: .718 vs .629 nDCG@10 at the chosen settings); the
dense weight and the candidate count were tuned there too. A hit only one side found keeps
its share. How much say the vector side gets per query is `weight_at` (ranking.py measures
the strength it reads).
"""

from __future__ import annotations

from collections.abc import Hashable, MutableMapping, Sequence
from typing import TypeVar

from memo_core.tuning import Tuning
from memo_core.values import ModeName

K = TypeVar("K", bound=Hashable)
Ranked = list[tuple[K, float, tuple[str, ...]]]  # (key, score, which sides found it)
Scored = list[tuple[int, float]]  # (chunk id, score), best first
# Where fusion records each candidate's normalised (lex, vec) sides as it fuses (explain).
Norms = MutableMapping[K, tuple[float, float]]


def minmax(scores: Sequence[tuple[K, float]]) -> dict[K, float]:
    """Scores rescaled to [0, 1] within this one list; a lone or flat list scores 1."""
    if not scores:
        return {}
    values = [s for _, s in scores]
    lo, hi = min(values), max(values)
    span = hi - lo
    return {key: (s - lo) / span if span > 0 else 1.0 for key, s in scores}


def fuse(
    lex: Sequence[tuple[K, float]],
    vec: Sequence[tuple[K, float]],
    dense_weight: float,
    norms: Norms[K] | None = None,
) -> Ranked[K]:
    """(key, fused score, which sides found it), best first; each side normalised, a side
    that did not find a key counting 0. `norms`: filled with each key's normalised sides."""
    lex_n, vec_n = minmax(lex), minmax(vec)
    fused = []
    for key in lex_n.keys() | vec_n.keys():
        sides_n = (lex_n.get(key, 0.0), vec_n.get(key, 0.0))
        score = (1 - dense_weight) * sides_n[0] + dense_weight * sides_n[1]
        sides = tuple(name for name, side in (("lex", lex_n), ("vec", vec_n)) if key in side)
        fused.append((key, score, sides))
        if norms is not None:
            norms[key] = sides_n
    fused.sort(key=lambda t: (-t[1], t[0]))
    return fused


def weight_at(strength: float, tuning: Tuning) -> float:
    """The vector side's weight for a query whose best word score is `strength` times its
    IDF mass: `tuning.dense_weight` from `lex_full_strength` on, rising to `dense_top` at 0."""
    full = min(1.0, strength / tuning.lex_full_strength)
    top, base = tuning.dense_top, tuning.dense_weight
    return base + (top - base) * (1 - full**tuning.lex_strength_power)


def rank(
    lex: Sequence[tuple[K, float]],
    vec: Sequence[tuple[K, float]],
    mode: ModeName,
    k: int,
    dense_weight: float,
    norms: Norms[K] | None = None,
) -> Ranked[K]:
    """The k best of pooled candidates: one side's raw scores, or both fused (`norms`: as
    in `fuse`)."""
    if mode == "hybrid":
        return fuse(lex, vec, dense_weight, norms)[:k]
    side = lex if mode == "lex" else vec
    ordered = sorted(side, key=lambda t: (-t[1], t[0]))
    return [(key, score, (mode,)) for key, score in ordered[:k]]
