"""Fusing the word ranking and the vector ranking into one (hybrid search).

A weighted sum of per-query min-max-normalised scores beat reciprocal-rank fusion on every
set tried (SciFact train, bench/tune.py: .718 vs .629 nDCG@10 at the chosen settings); the
dense weight and the candidate count were tuned there too. A hit only one side found keeps
its share.
"""

from __future__ import annotations

from collections.abc import Sequence

DENSE_WEIGHT = 0.2  # tuned on SciFact train (bench/tune.py); 0.2-0.3 within noise
# Hybrid fuses this many candidates from each side (at least k).
FUSION_CANDIDATES = 200


def minmax(scores: Sequence[tuple[int, float]]) -> dict[int, float]:
    """Scores rescaled to [0, 1] within this one list; a lone or flat list scores 1."""
    if not scores:
        return {}
    values = [s for _, s in scores]
    lo, hi = min(values), max(values)
    span = hi - lo
    return {cid: (s - lo) / span if span > 0 else 1.0 for cid, s in scores}


def fuse(
    lex: Sequence[tuple[int, float]],
    vec: Sequence[tuple[int, float]],
    dense_weight: float | None = None,
) -> list[tuple[int, float, tuple[str, ...]]]:
    """(chunk id, fused score, which sides found it), best first; the weight defaults to
    DENSE_WEIGHT as it is at call time, so a tuning script can set it."""
    if dense_weight is None:
        dense_weight = DENSE_WEIGHT
    lex_n, vec_n = minmax(lex), minmax(vec)
    fused = []
    for cid in lex_n.keys() | vec_n.keys():
        score = (1 - dense_weight) * lex_n.get(cid, 0.0) + dense_weight * vec_n.get(cid, 0.0)
        sides = tuple(name for name, side in (("lex", lex_n), ("vec", vec_n)) if cid in side)
        fused.append((cid, score, sides))
    fused.sort(key=lambda t: (-t[1], t[0]))
    return fused
