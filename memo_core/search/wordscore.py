"""A passage's word score, as ranking uses it: FTS5's BM25 over its heading and body; more
for a passage the query names (naming.py); and a share of the BM25 of the query's adjacent
word pairs where the passage has them close together ("sleep deprivation" as a phrase, not
two words a page apart), the proximity part of a sequential-dependence model.

Proximity was chosen on the train sets (BENCHMARKS.md, issue 12): pairs within 3 words,
weight 0.1, lifted nDCG@10 in every set, words alone and hybrid.
"""

from __future__ import annotations

from memo_core.index.store import Store
from memo_core.search import naming
from memo_core.search.fusion import Scored
from memo_core.tuning import Tuning


def word_candidates(store: Store, terms: list[str], n: int, tuning: Tuning) -> Scored:
    """The n best passages holding any of `terms`, with their word scores, best first."""
    weights = (tuning.heading_weight, tuning.body_weight)
    lex = store.lex(terms, n, weights)
    if tuning.heading_match_boost or tuning.title_exact_boost:
        named = store.named(terms, [cid for cid, _ in lex])
        lex = naming.boost(lex, store.chunk_rows(named), terms, tuning)
    if tuning.proximity_weight and len(terms) > 1 and lex:
        # Twice the candidates, so a passage near the cut still gets its share.
        near = store.near(terms, 2 * n, weights, tuning.proximity_window)
        lex = [(cid, s + tuning.proximity_weight * near.get(cid, 0.0)) for cid, s in lex]
        lex.sort(key=lambda t: (-t[1], t[0]))
    return lex
