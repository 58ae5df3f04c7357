"""How sqlite-vec 0.1 lays out a vec0 table's vectors, read a storage chunk at a time.

vec0 is the record of an index's vectors (`Store`), but reading them through its cursor
costs a call per row (175k vectors: 4.9 s, 85x reading the bytes). Its shadow tables hold
them as storage chunks of contiguous slots: `vec_chunks` says which slot holds which chunk
id (`VectorSlots`), `vec_vector_chunks00` holds the slots' vectors as one blob. Read here
when the layout checks out against vec0's own row count; through the cursor otherwise, so a
sqlite-vec that lays them out another way is slower, never wrong.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

_CURSOR_BLOCK = 1024  # vectors a block read through vec0's cursor (`blocks`)


@dataclass(frozen=True)
class VectorSlots:
    """One storage chunk of sqlite-vec's vec0 table (`vec_chunks`, read as sqlite-vec 0.1
    lays it out): a run of slots, each empty or holding one chunk's vector, whose vectors
    lie contiguous in `vec_vector_chunks00` under the same id. vec0 appends to its last
    storage chunk, reusing that chunk's emptied slots, and never moves a vector."""

    chunk_id: int
    live: np.ndarray  # bool per slot: holds a vector
    ids: np.ndarray  # int64 per slot: the chunk id whose vector it holds (where live)
    raw: bytes  # validity and ids as stored: equal bytes, same slots

    @property
    def count(self) -> int:
        return int(self.live.sum())

    @classmethod
    def parse(cls, chunk_id: int, size: int, validity: bytes, rowids: bytes) -> VectorSlots:
        bits = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")
        ids = np.frombuffer(rowids, np.int64)
        if len(ids) != size or len(bits) < size:
            raise ValueError(f"vec0 storage chunk {chunk_id}: not sqlite-vec 0.1's layout")
        return cls(chunk_id, bits[:size].astype(bool), ids, validity + rowids)


def blocks(db: apsw.Connection, dim: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every vector, a block at a time: (chunk ids, float32 [n, dim]), so that a reader
    that keeps them in another form never holds them all as float32 (call inside a
    snapshot). In vec0's storage order: one block per storage chunk, its live slots in
    order; through vec0's own cursor when the storage is not laid out as this reads."""
    slots = _readable_slots(db, dim)
    if slots is not None:
        for s in slots:
            # Up to its last live slot only: a small index fills the first hundred of a
            # chunk's 1024 slots, and 500 such read whole were 750 MB and most of a second.
            end = int(np.flatnonzero(s.live)[-1]) + 1 if s.live.any() else 0
            live = s.live[:end]
            yield s.ids[:end][live], _leading_vectors(db, s.chunk_id, dim, end)[live]
        return
    rows = iter(db.execute("SELECT rowid, embedding FROM vec"))
    while batch := list(itertools.islice(rows, _CURSOR_BLOCK)):
        ids = np.array([r[0] for r in batch], np.int64)
        yield ids, np.frombuffer(b"".join(r[1] for r in batch), np.float32).reshape(-1, dim)


def storage_slots(
    db: apsw.Connection, chunk_ids: Sequence[int] | None = None
) -> list[VectorSlots] | None:
    """vec0's storage chunks (all, or these), as they lie: which slot holds which
    chunk's vector. None: the table is not laid out as this reads (see `VectorSlots`)."""
    where = f"WHERE chunk_id IN ({','.join('?' * len(chunk_ids))})" if chunk_ids else ""
    try:
        sql = f"SELECT chunk_id, size, validity, rowids FROM vec_chunks {where} ORDER BY 1"
        rows = db.execute(sql, tuple(chunk_ids or ()))
        return [VectorSlots.parse(*row) for row in rows]
    except (apsw.SQLError, ValueError):
        return None


def slot_vectors(
    db: apsw.Connection, chunk_id: int, dim: int, slots: np.ndarray | None = None
) -> np.ndarray:
    """The vectors in these slots of one vec0 storage chunk, or in every slot (an empty
    one's: whatever is there, zeros as sqlite-vec 0.1 leaves it): [slot, dim]."""
    if slots is None:
        blob = _scalar(db, "SELECT vectors FROM vec_vector_chunks00 WHERE rowid = ?", (chunk_id,))
        return np.frombuffer(blob, np.float32).reshape(-1, dim)
    # A few slots (a change's) read from the blob in place: the whole chunk is 1024
    # vectors (1.5 MB at 384 dimensions), 4 ms to read for one edit's vector.
    out = np.empty((len(slots), dim), np.float32)
    with db.blob_open("main", "vec_vector_chunks00", "vectors", chunk_id, False) as blob:
        for row, slot in zip(out, slots, strict=True):
            blob.seek(int(slot) * row.nbytes)
            row[:] = np.frombuffer(blob.read(row.nbytes), np.float32)
    return out


def _leading_vectors(db: apsw.Connection, chunk_id: int, dim: int, n: int) -> np.ndarray:
    """The vectors in the first `n` slots of one vec0 storage chunk: [n, dim]."""
    if not n:
        return np.empty((0, dim), np.float32)
    with db.blob_open("main", "vec_vector_chunks00", "vectors", chunk_id, False) as blob:
        raw = blob.read(n * dim * 4)
    return np.frombuffer(raw, np.float32).reshape(n, dim)


def _readable_slots(db: apsw.Connection, dim: int) -> list[VectorSlots] | None:
    # vec0 read through its own cursor costs a call per row (175k vectors: 4.9 s, 85x
    # reading the bytes); its storage holds them as chunks of contiguous slots, read a
    # chunk at a time when the layout checks out: slots against the row count vec0
    # keeps, each storage chunk's vector blob against its slots. Else None.
    try:
        count = int(_scalar(db, "SELECT count(*) FROM vec_rowids"))
        slots = storage_slots(db)
        if slots is None or sum(s.count for s in slots) != count:
            return None
        sql = "SELECT rowid, length(vectors) FROM vec_vector_chunks00"
        sizes = dict(db.execute(sql))
        if any(sizes.get(s.chunk_id) != len(s.live) * dim * 4 for s in slots):
            return None
        return slots
    except (apsw.SQLError, ValueError, TypeError):
        return None


def _scalar(db: apsw.Connection, sql: str, params: Sequence[object] = ()) -> Any:
    row = db.execute(sql, params).fetchone()
    return row[0] if row else None
