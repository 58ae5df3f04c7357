"""A passage's word score in one collection, in three parts: FTS5's BM25 over its heading and
body; × a naming factor when the query names the passage; + a proximity share where the
query's adjacent words stand close together in it. `WordScore.score` is the one rule that
joins them.

Naming: a passage whose heading path, note path or note's names (front matter `title` and
`aliases`) hold every word of the query ("Свойство name (ADOX)", "sourdough starter") is
what a title query asks for, yet BM25 ranks a long page that repeats the words above the
short page titled with them. So its word score is raised,
and more the more exactly a title of it is the query: "Recordset object (ADO)" answers the
query "Recordset object (ADO)" better than "Recordset object (ADO) reference" does. Chosen on
the train sets (BENCHMARKS.md); SciFact's claims almost never name a passage, so it
does not move.

Proximity: a share of the BM25 of the query's adjacent word pairs where the passage has them
close together ("sleep deprivation" as a phrase, not two words a page apart), the proximity
part of a sequential-dependence model. Chosen on the train sets (BENCHMARKS.md):
pairs within 3 words, weight 0.1, lifted nDCG@10 in every set, words alone and hybrid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memo_core.index.rows import ChunkRow
from memo_core.index.store import Store
from memo_core.text import textnorm
from memo_core.text.passagelang import ENGLISH
from memo_core.text.textnorm import Group
from memo_core.tuning import Tuning

# Pair matches are read for this many times the word candidates: a candidate near the cut
# by its words alone may rank lower by its pairs, and is still given its share.
NEAR_CANDIDATES_FACTOR = 2


@dataclass(frozen=True, slots=True)
class WordScore:
    """One word candidate's score and its parts, as ranking uses them (and explains them)."""

    chunk: int
    bm25: float  # FTS5's BM25 (higher is better), heading and body weighted, in its collection
    naming: float = 1.0  # × for a passage the query names (1: not named)
    proximity: float = 0.0  # + `proximity_weight` × the BM25 of its close adjacent pairs

    @property
    def score(self) -> float:
        return self.bm25 * self.naming + self.proximity


def exactness(
    terms: set[str], heading: str, rel: str, names: Sequence[str] = (), lang: str = ENGLISH
) -> float:
    """The largest share of a title's words that are query words (`terms`: any stem of
    one), over the passage's own heading, its note's first heading, its file name and its
    note's names (front matter title and aliases; 0 when none has words), its words
    stemmed as the passage's (`lang`)."""
    parts = heading.split(" > ") if heading else []
    name = textnorm.path_text(rel.rsplit("/", 1)[-1], whole=False)
    best = 0.0
    for title in [*parts[-1:], *parts[:1], name, *names]:
        # Only the words as written: "wi-fi" joined or "MessageBox" whole would be words the
        # title holds twice, and no query could cover them all.
        words = set(textnorm.query_terms(title, joined=False, lang=lang))
        if words:
            best = max(best, sum(w in terms for w in words) / len(words))
    return best


def naming_factor(
    row: ChunkRow, terms: set[str], tuning: Tuning, names: Sequence[str] = ()
) -> float:
    """What a passage the query names is multiplied by: 1 + `heading_match_boost` +
    `title_exact_boost` × its exactness (`terms`: the query words' stems; `names`: its
    note's front matter names)."""
    exact = exactness(terms, row.heading, row.path, names, row.lang)
    return 1 + tuning.heading_match_boost + tuning.title_exact_boost * exact


def word_candidates(
    store: Store, groups: Sequence[Group], n: int, tuning: Tuning, *, scoped: bool = False
) -> list[WordScore]:
    """The n best passages by BM25 holding any of the query's words (`groups`: each
    word's stems, `Query.groups`), each with its naming factor and proximity share, best
    word score first; `scoped`: of the passages in scope only (`Store.scope_to`), chosen
    among them before the n are cut."""
    weights = (tuning.heading_weight, tuning.body_weight)
    bm25 = store.lex(groups, n, weights, scoped=scoped)
    naming: dict[int, float] = {}
    if bm25 and (tuning.heading_match_boost or tuning.title_exact_boost):
        rows = store.chunk_rows(store.named(groups, [cid for cid, _ in bm25]))
        query = set(textnorm.group_stems(groups))
        names = store.names_of(list(rows))
        naming = {
            cid: naming_factor(row, query, tuning, names.get(cid, ())) for cid, row in rows.items()
        }
    near: dict[int, float] = {}
    if bm25 and tuning.proximity_weight and len(groups) > 1:
        window = tuning.proximity_window
        near = store.near(groups, NEAR_CANDIDATES_FACTOR * n, weights, window, scoped=scoped)
    words = [
        WordScore(
            cid,
            score,
            naming.get(cid, 1.0),
            tuning.proximity_weight * near[cid] if cid in near else 0.0,
        )
        for cid, score in bm25
    ]
    return sorted(words, key=lambda w: (-w.score, w.chunk))
