"""One collection's part of a search (stages 1-5 of `pipeline`): its word and vector
candidates for a query, read from the snapshot the collection lends, with the word
statistics the ranking across collections needs."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from memo_core.collection import Collection
from memo_core.index.store import Store
from memo_core.search.query import Query
from memo_core.search.ranking import Candidates
from memo_core.search.wordscore import word_candidates
from memo_core.values import Notice, NoticeKind

if TYPE_CHECKING:
    import numpy as np


def candidates(
    c: Collection,
    store: Store,
    query: Query,
    *,
    qvec: np.ndarray | None,
    model_id: str | None,
    wanted: int,
    stats: bool = False,
    below: str = "",
    vec_above: float = -math.inf,
) -> Candidates[Collection]:
    """Up to `wanted` word and as many vector candidates of `c` for `query` (`qvec`: its
    embedding by the model `model_id`), with their scores (`store`: `c`'s snapshot);
    `stats`: with the counts of the query's words, for the ranking; `vec_above`: vector
    candidates scoring more only (`ranking.VectorBar`). Its scope's `under` is read from
    the path searched, where `c` is the folder `below` ('/'-separated; "": the path
    itself)."""
    # Each query word as any language of this collection's passages stems it.
    found = Candidates(c, store, groups=query.groups(store.languages()))
    mode = query.mode
    among = c.in_scope(store, query.scope, below) if query.scope else None
    # `among` None: every chunk (no scope, or one that leaves nothing out here).
    searched = among is None or len(among) > 0
    if mode != "vec" and searched:
        found.words = word_candidates(
            store, found.groups, wanted, c.tuning, scoped=among is not None
        )
    if stats and mode != "vec":
        # The word statistics stay the whole collection's, as FTS5's BM25 weighs the words
        # by, even where nothing here is in scope: a passage scores the same in a scoped
        # search as in any other. Where no passage at all holds a query word, each word's
        # count is 0 without counting it in FTS5 (most of the collections a selective
        # query meets: a search over hundreds of them).
        if among is None and not found.words:
            found.chunks, found.term_docs = store.count_chunks(), {}
        else:
            found.chunks, found.term_docs = store.term_stats(found.groups)
    if not searched:
        return found  # nothing here is in scope
    if qvec is not None and mode != "lex":
        vectors = c.vectors(store)
        if vectors.model in (None, model_id):
            found.vec = vectors.nearest(qvec, wanted, among, vec_above)
        else:
            found.notices.append(Notice(NoticeKind.OTHER_MODEL, str(c.root)))
    return found
