"""A call's refresh of the collections it reads: those known whole are left alone (no
thread, lock or writer for each), the others refresh side by side, each on a thread of its
own, while the call waits at most its budget in all; what they say comes back as notices,
work still under way summed in one line, failures for want of a resource in one for all."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from memo_core.collection import Collection
from memo_core.errors import MemoError, ResourceLimitError
from memo_core.index.indexer import ProgressFn
from memo_core.index.jobs import SmallWork, wait_within
from memo_core.model.embedder import Embedder
from memo_core.values import Notice, NoticeKind

T = TypeVar("T")


def refresh_collections(
    collections: list[Collection],
    embedder: Embedder | None,
    progress: ProgressFn | None,
    *,
    budget: float | None,
    small: SmallWork,
    open_budget: int,
) -> list[Notice]:
    """Refresh the collections of a call, waiting for them at most `budget` seconds in all
    (None: until done; `small`: the work waited for whole past it); the notices. Past
    `open_budget` collections, each lets go of its connections once done with."""
    called = time.monotonic()
    # Those known whole (the OS reported nothing since, or a walk finds nothing to do)
    # need no refresh: no thread, no lock, no connection to write with for each. Past
    # the budget, each lets go of what it opened to look before the next one looks.
    alone = len(collections) == 1
    must = each_within(collections, open_budget, partial(_must_refresh, embedder, alone))
    due = [c for c, m in zip(collections, must, strict=True) if m]
    many = len(collections) > open_budget
    # A background refresh that failed with no one waiting is said in this answer, once,
    # unless this call's refresh (a new try) has succeeded by then.
    failed = {c: c.unreported_failure() for c in due}
    # Every refresh starts before any is waited for; each one waited for is the one
    # started here, even when it has ended by then (starting another would walk again).
    jobs = (
        {c: c.start_refresh(embedder, progress, let_go=many) for c in due}
        if budget is not None
        else {}
    )
    notices: list[Notice] = []
    short: list[tuple[str, ResourceLimitError]] = []  # said once for them all
    for c in due:
        try:
            if budget is None:
                stats = c.refresh(embedder, progress, wait=False)
            else:
                start = partial(c.start_refresh, embedder, progress, let_go=many)
                stats = wait_within(
                    start,
                    progress,
                    budget,
                    called,
                    model=embedder is not None,
                    small=small,
                    started=jobs[c],
                )
        except ResourceLimitError as e:  # out of files, a full disk: what is saved answers
            short.append((str(c.root), e))
            continue
        finally:
            if many:  # the descriptors go to the search's readers
                c.close_connections()
        told = failed[c]
        if told is not None and c.refresh_error is not None:
            notices.append(told)
        notices += c.untold() + stats.notices  # why it was rebuilt, then how far it got
    if len(short) == 1:
        notices.append(Notice(NoticeKind.REFRESH_FAILED, short[0][0], short[0][1].message))
    elif short:
        roots = [root for root, _ in short]
        notices.append(Notice.of_folders(NoticeKind.REFRESH_FAILED, roots, short[0][1].message))
    return one_activity_line(notices)


def each_within(
    collections: Sequence[Collection], budget: int, read: Callable[[Collection], T]
) -> list[T]:
    """`read` of each collection in turn, those past the first `budget` letting go of their
    connections once read: a call over more collections than the engine keeps open."""
    out = []
    for i, c in enumerate(collections):
        try:
            out.append(read(c))
        finally:
            if i >= budget:
                c.close_connections()
    return out


_ACTIVITY = (NoticeKind.INDEXING, NoticeKind.EMBEDDING, NoticeKind.SENTENCES)


def one_activity_line(notices: list[Notice]) -> list[Notice]:
    """Indexing still under way in several collections, said once, at the folder they all
    share: files while any is still indexing words, else chunks waiting for vectors, else
    for their sentences', summed over those at that stage."""
    busy = [n for n in notices if n.kind in _ACTIVITY]
    if len(busy) < 2:
        return notices
    kind = next(k for k in _ACTIVITY if any(n.kind is k for n in busy))
    same = [n for n in busy if n.kind is kind]
    # Every busy collection is where work is under way, not only those at the earliest stage.
    where = os.path.commonpath([n.collection or "" for n in busy])
    line = Notice(kind, where, done=sum(n.done for n in same), total=sum(n.total for n in same))
    return [n for n in notices if n not in busy] + [line]


def _must_refresh(embedder: Embedder | None, alone: bool, c: Collection) -> bool:
    """`Collection.needs_refresh`, where the index can be read for it; one that cannot (busy
    being made by another process, damaged, out of descriptors) is refreshed, which waits
    its turn, mends or says why, as it would have anyway. A call's only collection that the
    OS does not report on is refreshed without looking first: its refresh walks the folder
    anyway, and a look that finds a change would walk it twice."""
    if alone and not c.reported:
        return True
    try:
        return c.needs_refresh(embedder)
    except MemoError:
        return True
