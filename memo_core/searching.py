"""One search over the collections a path holds, after their refresh: each read from a
snapshot of its own, their candidates gathered, ranked once together (`search.ranking`),
and the hits of the page asked for read back from their collections."""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from memo_core.collection import Collection
from memo_core.errors import ResourceLimitError
from memo_core.index.store import Store
from memo_core.model.embedder import Embedder
from memo_core.results import Hit, SearchResults
from memo_core.search import ranking
from memo_core.search.query import Query
from memo_core.search.ranking import Candidates, Placed
from memo_core.tuning import Tuning
from memo_core.values import Notice, NoticeKind


def search(
    base: Path,
    collections: list[Collection],
    query: Query,
    model: Embedder | None,
    tuning: Tuning,
    notices: list[Notice],
) -> SearchResults:
    """The page `query` asks for, of the collections found under `base` (refreshed as the
    caller wanted), ranked together as one, and where the next page starts (None: no more
    hits). `model`: the query's embedding (None: words only); `notices`: what the answer
    says already."""
    qvec = model.embed([query.text], query=True)[0] if model is not None else None
    # Word statistics: to put several collections' word scores on one scale, and to weigh
    # the word side of a hybrid search by how well the query's words match.
    stats = len(collections) > 1 or (query.mode == "hybrid" and tuning.adaptive_fusion)
    notices = list(notices)
    with ExitStack() as stack:  # every collection read from one snapshot of its own
        found: list[Candidates[Collection]] = []
        for c, store in _snapshots(collections, stack, notices):
            if store is not None:
                found.append(
                    c.candidates(
                        store,
                        query,
                        qvec=qvec,
                        model_id=model.model_id if model is not None else None,
                        wanted=query.wanted(tuning),
                        stats=stats,
                        below=_below(base, c) if query.scope else "",
                    )
                )
                notices += found[-1].notices
        placed = _ranked(found, query, qvec, model, tuning)
        hits = _hits(found, placed[query.offset : query.offset + query.k], query.terms)
    more = len(placed) > query.offset + query.k
    next_offset = query.offset + len(hits) if more else None
    return SearchResults(hits, query.mode, notices, offset=query.offset, next_offset=next_offset)


def _below(base: Path, c: Collection) -> str:
    """The collection's folder relative to the path searched ('/'-separated, "" for the path
    itself), where a scope's `under` is read from (discovery finds them at or below it)."""
    return "/".join(c.root.relative_to(base).parts)


def _ranked(
    found: list[Candidates[Collection]],
    query: Query,
    qvec: np.ndarray | None,
    model: Embedder | None,
    tuning: Tuning,
) -> list[Placed]:
    """Every collection's candidates ranked once: the `query.deep` best."""
    floor = model.relevance_floor(qvec) if model is not None and qvec is not None else None
    # A model may bring its own weight policy (chosen for it on train sets).
    tuning = tuning.with_fusion(model.fusion) if model is not None else tuning
    return ranking.ranked(
        found, query.terms, query.mode, query.deep, tuning, floor, explain=query.explain
    )


def _hits(found: list[Candidates[Collection]], placed: list[Placed], terms: list[str]) -> list[Hit]:
    """The hits of ranked passages, in their order, read from each one's collection."""
    got = [
        f.collection.hits(f.store, [p for p in placed if p.at == i], terms)
        for i, f in enumerate(found)
    ]
    return [got[p.at][p.chunk] for p in placed if p.chunk in got[p.at]]


def _snapshots(
    collections: list[Collection], stack: ExitStack, notices: list[Notice]
) -> list[tuple[Collection, Store | None]]:
    """Each collection with the snapshot it is read from (entered on `stack`). One that
    cannot be opened for want of a resource (descriptors, memory) is left out and the
    answer names it: what could be read answers; none at all is the error."""
    opened: list[tuple[Collection, Store | None]] = []
    left: list[Collection] = []
    first: ResourceLimitError | None = None
    for c in collections:
        try:
            opened.append((c, stack.enter_context(c.snapshot())))
        except ResourceLimitError as e:
            left.append(c)
            first = first or e
    if first is not None:
        if not opened:
            raise first
        where = os.path.commonpath([str(c.root) for c in left])
        folders = tuple(os.path.relpath(c.root, where) for c in left[:5])
        notices.append(
            Notice(NoticeKind.NOT_SEARCHED, where, first.message, total=len(left), folders=folders)
        )
    return opened
