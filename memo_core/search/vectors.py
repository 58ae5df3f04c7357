"""Nearest-neighbour search over a collection's vectors, held in memory as one matrix.

The vectors live in the index's vec0 table (the record, written with everything else in one
transaction). Searching them there is a brute-force scan through SQLite pages, measured at
4-7x slower than one numpy matrix product over the same vectors (BENCHMARKS.md), so the
reader keeps a copy in memory and follows the file's changes: `PRAGMA data_version` says
whether anyone committed since the last look; then only added and removed rows move.
`data_version` is a count of one connection's own, and a new connection starts it afresh,
so it is only compared with what the same connection said: after a reconnect (idle
collections released, a replaced index reopened) the ids are compared, always.

That is exact because a chunk id never changes its vector while the store's vector key
(generation, model, dimension) stays: ids come from AUTOINCREMENT (never reused), and a
rebuild or a model change sets a new key, which reloads everything.
"""

from __future__ import annotations

import weakref

import numpy as np

from memo_core.index.store import Store


class VectorCache:
    def __init__(self) -> None:
        # The store (connection) whose data_version `_version` is; weak, so that a closed
        # reader is not kept, and a new one never passes for it.
        self._store: weakref.ref[Store] | None = None
        self._version: int | None = None
        self._key: tuple[str | None, str | None, int] | None = None
        self.ids = np.empty(0, np.int64)
        self.matrix = np.empty((0, 0), np.float32)

    @property
    def model(self) -> str | None:
        """The model whose vectors these are (as of the last sync)."""
        return self._key[1] if self._key else None

    def sync(self, store: Store) -> None:
        """Bring the copy up to date with `store` (cheap when nothing was committed)."""
        version = store.data_version()
        same = self._store is not None and self._store() is store
        if same and version == self._version:
            return
        key = store.vector_key()
        dim = key[2]
        if key != self._key:
            self.ids, self.matrix = store.vectors(None, dim)
        else:
            now = store.vector_ids()
            keep = np.isin(self.ids, now)
            added = np.setdiff1d(now, self.ids, assume_unique=True)
            if not keep.all() or len(added):
                _, new = store.vectors(added, dim)
                self.ids = np.concatenate([self.ids[keep], added])
                self.matrix = np.vstack([self.matrix[keep], new])
        self._store, self._version, self._key = weakref.ref(store), version, key

    def nearest(
        self, vector: np.ndarray, k: int, among: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Chunk ids and cosine similarities (vectors are unit length), best first; `among`:
        of these chunk ids only (a search's scope), chosen among them before the k are cut."""
        if not len(self.ids) or not np.any(vector) or self.matrix.shape[1] != len(vector):
            return []  # nothing indexed, a query the model maps to zero, or another model
        # The whole matrix times the query, then the rows in scope: one product, not a copy
        # of the rows in scope first.
        scores = self.matrix @ np.asarray(vector, np.float32)
        rows = np.arange(len(scores)) if among is None else np.flatnonzero(np.isin(self.ids, among))
        k = min(k, len(rows))
        if not k:
            return []
        top = rows[np.argpartition(-scores[rows], k - 1)[:k]]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in top]
