"""Passages the query names: their heading path or their note's path holds every word of
the query ("Свойство name (ADOX)", "sourdough starter").

Such a passage is what a title query asks for, yet BM25 ranks a long page that repeats the
words above the short page titled with them. So its word score is raised, and more the more
exactly a title of it is the query: "Recordset object (ADO)" answers the query "Recordset
object (ADO)" better than "Recordset object (ADO) reference" does. Chosen on the train sets
(BENCHMARKS.md, issue 12); SciFact's claims almost never name a passage, so it does not move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memo_core.index.rows import ChunkRow
from memo_core.search.fusion import Scored
from memo_core.text import textnorm
from memo_core.tuning import Tuning


def exactness(terms: set[str], heading: str, rel: str) -> float:
    """The largest share of a title's words that are query words, over the passage's own
    heading, its note's first heading and its file name (0 when none has words)."""
    parts = heading.split(" > ") if heading else []
    name = textnorm.path_text(rel.rsplit("/", 1)[-1], whole=False)
    best = 0.0
    for title in [*parts[-1:], *parts[:1], name]:
        # Only the words as written: "wi-fi" joined or "MessageBox" whole would be words the
        # title holds twice, and no query could cover them all.
        words = set(textnorm.query_terms(title, joined=False))
        if words:
            best = max(best, sum(w in terms for w in words) / len(words))
    return best


def boost(
    lex: Scored, named: Mapping[int, ChunkRow], terms: Sequence[str], tuning: Tuning
) -> Scored:
    """`lex` with each named passage's score × (1 + `heading_match_boost` +
    `title_exact_boost` × its exactness), best first again."""
    if not named:
        return lex
    query = set(terms)

    def factor(row: ChunkRow) -> float:
        exact = exactness(query, row.heading, row.path)
        return 1 + tuning.heading_match_boost + tuning.title_exact_boost * exact

    raised = [(cid, s * factor(named[cid]) if cid in named else s) for cid, s in lex]
    return sorted(raised, key=lambda t: (-t[1], t[0]))
