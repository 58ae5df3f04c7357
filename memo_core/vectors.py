"""Nearest-neighbour search over a collection's vectors, held in memory as one matrix.

The vectors live in the index's vec0 table (the record, written with everything else in one
transaction). Searching them there is a brute-force scan through SQLite pages, measured at
4-7x slower than one numpy matrix product over the same vectors (BENCHMARKS.md), so the
reader keeps a copy in memory and follows the file's changes: `PRAGMA data_version` says
whether anyone committed since the last look; then only added and removed rows move.
"""

from __future__ import annotations

import numpy as np

from .store import Store


class VectorCache:
    def __init__(self) -> None:
        self._version: int | None = None
        self._key: tuple[str | None, str | None] | None = None
        self.ids = np.empty(0, np.int64)
        self.matrix = np.empty((0, 0), np.float32)

    def sync(self, store: Store) -> None:
        """Bring the copy up to date with `store` (cheap when nothing was committed)."""
        version = store.data_version()
        if version == self._version:
            return
        key = (store.get_meta("generation"), store.get_meta("vec_model"))
        dim = int(store.get_meta("vec_dim") or 0)
        if key != self._key or self.matrix.shape[1] != dim:
            # Another database (rebuilt) or another model: ids may mean other texts now.
            self.ids, self.matrix = _all_vectors(store, dim)
        else:
            now = _vector_ids(store)
            keep = np.isin(self.ids, now)
            added = np.setdiff1d(now, self.ids, assume_unique=True)
            if not keep.all() or len(added):
                self.ids = np.concatenate([self.ids[keep], added])
                self.matrix = np.vstack([self.matrix[keep], _vectors(store, added, dim)])
        self._version, self._key = version, key

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Chunk ids and cosine similarities (vectors are unit length), best first."""
        if not len(self.ids) or not np.any(vector):
            return []  # nothing indexed, or a query the model maps to zero
        scores = self.matrix @ np.asarray(vector, np.float32)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in top]


def _vector_ids(store: Store) -> np.ndarray:
    if not store.has_vec_table():
        return np.empty(0, np.int64)
    return np.fromiter((r[0] for r in store.db.execute("SELECT rowid FROM vec")), np.int64)


def _all_vectors(store: Store, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(chunk ids, float32 matrix of their vectors), one row each."""
    if not store.has_vec_table():
        return np.empty(0, np.int64), np.empty((0, dim), np.float32)
    ids: list[int] = []
    blobs: list[bytes] = []
    for cid, blob in store.db.execute("SELECT rowid, embedding FROM vec"):
        ids.append(cid)
        blobs.append(blob)
    return np.array(ids, np.int64), np.frombuffer(b"".join(blobs), np.float32).reshape(-1, dim)


def _vectors(store: Store, ids: np.ndarray, dim: int) -> np.ndarray:
    """The stored vectors of these chunk ids, in that order (vec0 point lookups)."""
    blobs = [
        store.db.execute("SELECT embedding FROM vec WHERE rowid = ?", (int(i),)).fetchone()[0]
        for i in ids
    ]
    return np.frombuffer(b"".join(blobs), np.float32).reshape(len(ids), dim)
