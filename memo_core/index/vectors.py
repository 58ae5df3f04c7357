"""Nearest-neighbour search over a collection's vectors, held in memory as one int8 matrix.

The vectors live in the index's vec0 table (the record, written with everything else in one
transaction). Searching them there is a brute-force scan through SQLite pages, measured at
4-7x slower than one numpy matrix product over the same vectors (BENCHMARKS.md), so the
reader keeps a copy in memory and follows the file's changes: `PRAGMA data_version` says
whether anyone committed since the last look; then only added and removed vectors move.
`data_version` is a count of one connection's own, and a new connection starts it afresh,
so it is only compared with what the same connection said: after a reconnect (idle
collections released, a replaced index reopened) vec0's storage is compared, always.

What changed is read from vec0's storage (`Store.vector_slots`): a few bytes per vector say
which slot holds which chunk's vector, and a slot whose bytes are as last seen holds the same
vector. That is exact because a chunk id never changes its vector while the store's vector
key (generation, model, dimension) stays: ids come from AUTOINCREMENT (never reused), and a
rebuild or a model change sets a new key, which reloads everything.

A change costs what changed: new vectors are appended into spare rows (the matrix grows by
half when full), removed ones leave a tombstone (id -1, never scored), and the rows are
compacted once tombstones pass a quarter of them, so no change copies the whole matrix but
the few that follow many removals.

The copy is compact: each vector as int8 codes times one float32 scale (its largest component
is ±127), a quarter of float32's memory (100k vectors of 384 dimensions: 39 MB, not 154), and
the codes are what is scored (a cosine off by under 0.002, measured). Measured side by side with
float32 (BENCHMARKS.md): nDCG@10 within 0.001 on SciFact and the four office-dev directions,
vec and hybrid alike. Rescoring the best candidates with their exact vectors from vec0's
storage made the answers float32's exactly, but each such read walks the storage chunk's
overflow pages up to its slot (6 µs for a chunk's first slot, 150 µs for its last): +60-90 ms
a hybrid search at 50k notes, for no measurable gain. float16 would halve the memory only,
and numpy converts it five times slower than int8 for the product.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from contextlib import nullcontext

import numpy as np

from memo_core.index.store import Store
from memo_core.index.vecstorage import VectorSlots

# Compact when this share of the rows are tombstones: each compaction (one copy of the
# live rows) follows at least that many removals, so it is amortised over them.
COMPACT_SHARE = 0.25
SPARE = 4096  # rows left spare after a load or compaction: an edit's vectors fit
GROWTH = 1.5  # spare rows: the matrix grows by this factor when an append does not fit
# Rows of codes converted to float32 at a time for the product: the block stays in the CPU's
# cache (150k rows: 17-23 ms at 256-1024 rows, 55-70 ms at 2048-4096, float32 whole: 9 ms).
BLOCK = 512


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 codes, float32 scale per row): a row is about scale * codes, its largest
    component mapped to ±127 (a zero row: zero codes)."""
    top = np.maximum(vectors.max(axis=1, initial=0.0), -vectors.min(axis=1, initial=0.0))
    scales = np.where(top > 0, top / 127, 1).astype(np.float32)
    # In place, few temporaries: a load quantizes every vector.
    scaled = vectors * (1 / scales)[:, None]
    np.rint(scaled, out=scaled)
    return scaled.astype(np.int8), scales


def pack(vectors: np.ndarray) -> bytes:
    """Vectors (rows) as a blob: their int8 codes, then a float32 scale a row (`quantize`)."""
    codes, scales = quantize(np.asarray(vectors, np.float32))
    return codes.tobytes() + scales.tobytes()


def pack_rows(vectors: np.ndarray) -> list[bytes]:
    """Each row as `pack` makes a blob of it alone (each row is quantized on its own, so
    `join_rows` of some of them is `pack` of those rows)."""
    codes, scales = quantize(np.asarray(vectors, np.float32))
    return [c.tobytes() + s.tobytes() for c, s in zip(codes, scales, strict=True)]


def join_rows(rows: Sequence[bytes]) -> bytes:
    """The blob `pack` makes of the rows `pack_rows` gave, in this order."""
    return b"".join(r[:-4] for r in rows) + b"".join(r[-4:] for r in rows)


def unpack(blob: bytes, dim: int) -> np.ndarray:
    """The rows `pack` made of `dim`-dimensional vectors (float32, within half a step of
    the codes); ValueError for a blob that cannot be such rows."""
    if dim < 1 or not blob or len(blob) % (dim + 4):
        raise ValueError(f"{len(blob)} bytes are not rows of {dim} int8 codes and a scale each")
    n = len(blob) // (dim + 4)
    codes = np.frombuffer(blob, np.int8, n * dim).reshape(n, dim)
    scales = np.frombuffer(blob, np.float32, n, offset=n * dim)
    return codes * scales[:, None]


class VectorCache:
    def __init__(self) -> None:
        # The store (connection) whose data_version `_version` is; weak, so that a closed
        # reader is not kept, and a new one never passes for it.
        self._store: weakref.ref[Store] | None = None
        self._version: int | None = None
        self._key: tuple[str | None, str | None, int] | None = None
        # Rows [0, _n) are in use: a chunk id, or -1 (a tombstone); rows beyond, spare.
        # A row's vector is about _scales[row] * _codes[row] (`quantize`).
        self._ids = np.empty(0, np.int64)
        self._codes = np.empty((0, 0), np.int8)
        self._scales = np.empty(0, np.float32)
        self._n = 0
        self._dead = 0
        # vec0's storage as last read, by its chunk id: the slots, and the row of each
        # slot's vector here (-1: none). None: storage not readable so, reload on change.
        self._slots: dict[int, tuple[VectorSlots, np.ndarray]] | None = {}

    @property
    def model(self) -> str | None:
        """The model whose vectors these are (as of the last sync)."""
        return self._key[1] if self._key else None

    @property
    def rows_in_use(self) -> int:
        """The rows of the matrix in use: a live vector's each, and each tombstone of a
        deleted one not yet compacted away (compacted past COMPACT_SHARE of the rows)."""
        return self._n

    def live(self) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, their vectors as held now: within half a step of the int8 codes),
        in the cache's row order."""
        keep = np.flatnonzero(self._ids[: self._n] >= 0)
        return self._ids[keep], self._codes[keep] * self._scales[keep, None]

    def sync(self, store: Store) -> None:
        """Bring the copy up to date with `store` (cheap when nothing was committed)."""
        version = store.data_version()
        same = self._store is not None and self._store() is store
        if same and version == self._version:
            return
        with nullcontext() if store.db.in_transaction else store.snapshot():
            key = store.vector_key()
            slots = store.vector_slots()
            if key != self._key or slots is None or self._slots is None:
                self._load(store, key[2], slots)
            else:
                self._apply(store, key[2], slots)
        self._store, self._version, self._key = weakref.ref(store), version, key

    def _load(self, store: Store, dim: int, slots: list[VectorSlots] | None) -> None:
        capacity = sum(s.count for s in slots or ()) + SPARE
        self._ids = np.full(capacity, -1, np.int64)
        self._codes = np.empty((capacity, dim), np.int8)
        self._scales = np.ones(capacity, np.float32)
        self._n = self._dead = 0
        for ids, block in store.vector_blocks(dim):  # a storage chunk at a time
            self._append(ids, block)
        ids = self._ids[: self._n]
        # `vector_blocks` reads the storage in slot order, so row i is the i-th live slot; if
        # it read otherwise (through vec0's cursor), the map is not trusted: reload on change.
        if slots is None or (
            slots and not np.array_equal(np.concatenate([s.ids[s.live] for s in slots]), ids)
        ):
            self._slots = None
            return
        self._slots, at = {}, 0
        for s in slots:
            rows = np.full(len(s.live), -1, np.int64)
            rows[s.live] = np.arange(at, at + s.count)
            at += s.count
            self._slots[s.chunk_id] = (s, rows)

    def _apply(self, store: Store, dim: int, slots: list[VectorSlots]) -> None:
        """Move what changed in vec0's storage since `_slots` was read: per storage chunk,
        slots whose bytes differ (a vector removed, added, or a slot reused)."""
        seen = self._slots or {}
        removed: list[np.ndarray] = []
        now: dict[int, tuple[VectorSlots, np.ndarray]] = {}
        for s in slots:
            old, rows = seen.get(s.chunk_id, (None, np.empty(0, np.int64)))
            if old is not None and old.raw == s.raw:
                now[s.chunk_id] = (old, rows)
                continue
            kept = np.zeros(len(s.live), bool)
            if old is not None and len(old.live) == len(s.live):
                kept = old.live & s.live & (old.ids == s.ids)
            if old is not None:
                removed.append(rows[old.live & ~kept])
            new_rows = np.where(kept, rows, -1) if kept.any() else np.full(len(kept), -1)
            fresh = np.flatnonzero(s.live & ~kept)
            if len(fresh):
                vectors = store.slot_vectors(s.chunk_id, dim, fresh)
                new_rows[fresh] = self._append(s.ids[fresh], vectors)
            now[s.chunk_id] = (s, new_rows)
        # Storage chunks gone altogether (sqlite-vec 0.1 keeps even empty ones).
        removed += [rows[old.live] for cid, (old, rows) in seen.items() if cid not in now]
        for rows in removed:
            self._ids[rows] = -1  # a tombstone: never scored (`nearest` skips ids < 0)
            self._dead += len(rows)
        self._slots = now
        if self._dead > COMPACT_SHARE * self._n:
            self._compact()

    def _append(self, ids: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """Rows for these vectors at the end, growing the matrix geometrically if full."""
        end = self._n + len(ids)
        if end > len(self._ids):
            self._move_to(max(end, int(len(self._ids) * GROWTH)))
        rows = np.arange(self._n, end)
        self._ids[rows] = ids
        self._codes[rows], self._scales[rows] = quantize(vectors)
        self._n = end
        return rows

    def _compact(self) -> None:
        keep = self._ids[: self._n] >= 0
        renumber = np.cumsum(keep) - 1  # a live row's row after
        self._move_to(int(renumber[-1]) + 1 + SPARE, keep)
        self._n, self._dead = int(renumber[-1]) + 1, 0
        for _, rows in (self._slots or {}).values():
            held = rows >= 0
            rows[held] = renumber[rows[held]]

    def _move_to(self, capacity: int, keep: np.ndarray | None = None) -> None:
        """New arrays of `capacity` rows, the rows in use (those in `keep`) copied to their
        start, straight from the old ones (no copy in between)."""
        old: list[np.ndarray] = [self._ids, self._codes, self._scales]
        new = [np.empty((capacity, *a.shape[1:]), a.dtype) for a in old]
        new[0][:] = -1  # spare rows: no chunk
        n = self._n if keep is None else int(keep.sum())
        for a, b in zip(old, new, strict=True):
            if keep is None:
                b[:n] = a[:n]
            else:
                np.compress(keep, a[: self._n], axis=0, out=b[:n])
        self._ids, self._codes, self._scales = new

    def nearest(
        self,
        vector: np.ndarray,
        k: int,
        among: np.ndarray | None = None,
        above: float = -math.inf,
    ) -> list[tuple[int, float]]:
        """Chunk ids and cosine similarities (vectors are unit length; scored by their int8
        codes), best first; `among`: of these chunk ids only (a search's scope), chosen among
        them before the k are cut; `above`: only those scoring more."""
        n = self._n
        if n == self._dead or not np.any(vector) or self._codes.shape[1] != len(vector):
            return []  # nothing indexed, a query the model maps to zero, or another model
        ids = self._ids[:n]
        # The whole matrix times the query, then the rows in scope: one pass, not a copy of
        # the rows in scope first. Tombstones (id -1) are in no scope.
        scores = self._scores(np.asarray(vector, np.float32))
        if among is not None:
            rows = np.flatnonzero(np.isin(ids, among))
        else:
            rows = np.flatnonzero(ids >= 0) if self._dead else np.arange(n)
        if above > -math.inf:
            rows = rows[scores[rows] > above]
        k = min(k, len(rows))
        if not k:
            return []
        top = rows[np.argpartition(-scores[rows], k - 1)[:k]]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(ids[i]), float(scores[i])) for i in top]

    def _scores(self, query: np.ndarray) -> np.ndarray:
        """Every row's score by its codes, a block of rows converted to float32 at a time."""
        out = np.empty(self._n, np.float32)
        buf = np.empty((BLOCK, len(query)), np.float32)
        for start in range(0, self._n, BLOCK):
            part = buf[: min(BLOCK, self._n - start)]
            part[:] = self._codes[start : start + len(part)]
            np.matmul(part, query, out=out[start : start + len(part)])
        out *= self._scales[: self._n]
        return out
