"""Which passages of one index a search's scope keeps: a temporary table of the reader's, kept
while the index stays as it was."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from memo_core.files.scope import Scope
from memo_core.index.store import Store

if TYPE_CHECKING:
    import numpy as np


class ScopedChunks:
    """The last scope's chunks of one collection, for the connection that put them in scope
    (weak: a closed reader is not kept). A temporary table is the connection's own: the next
    page, or another query in the same scope, costs no second look at the notes (on
    office-dev-en, 20-200 ms on a busy machine)."""

    def __init__(self) -> None:
        self._kept: tuple[weakref.ref[Store], tuple[object, ...], np.ndarray | None] | None = None

    def among(self, store: Store, scope: Scope, below: str) -> np.ndarray | None:
        """The ids of the chunks in `scope`, put in scope for the word side too
        (`Store.scope_to`); None when it leaves none of them out. The notes are judged by
        their paths from the path searched, where this index's folder is `below`
        ('/'-separated; "": the path itself)."""
        # The reader writes nothing but its temporary tables: the index changed when another
        # connection committed, which `data_version` says.
        key = (scope, below, store.data_version())
        kept, self._kept = self._kept, None  # until the temporary table is this scope's
        if kept is not None and kept[0]() is store and kept[1] == key:
            self._kept = kept
            return kept[2]
        files = store.files_changed_within(scope.after_ns, scope.before_ns)
        test = scope.path_test()
        prefix = f"{below}/" if below else ""
        ids = {fid for fid, path in files if test is None or test(prefix + path)}
        if scope.tags and ids:
            ids &= store.files_tagged(scope.tags)
        # Every note in scope: the search costs what an unscoped one does.
        among = None if len(ids) == store.file_count() else store.scope_to(sorted(ids))
        self._kept = (weakref.ref(store), key, among)
        return among
