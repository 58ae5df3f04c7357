"""memo_core.index.vecstorage: sqlite-vec's vec0 storage read a storage chunk at a time,
and through vec0's cursor when it is not laid out as read here."""

from __future__ import annotations

from collections.abc import Iterator

import apsw
import numpy as np
import pytest
import sqlite_vec

from memo_core.index import vecstorage
from memo_core.index.schema import create_vectors_table
from memo_core.index.vecstorage import VectorSlots

DIM = 4


@pytest.fixture
def db() -> Iterator[apsw.Connection]:
    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    create_vectors_table(conn, DIM)
    yield conn
    conn.close()


def _vector(i: int) -> np.ndarray:
    return np.array([i, i + 0.5, -i, 1.0], np.float32)


def _insert(db: apsw.Connection, ids) -> None:
    db.executemany(
        "INSERT INTO vec(rowid, embedding) VALUES (?, ?)", [(i, _vector(i).tobytes()) for i in ids]
    )


def _all(db: apsw.Connection) -> tuple[np.ndarray, np.ndarray]:
    blocks = list(vecstorage.blocks(db, DIM))
    if not blocks:
        return np.empty(0, np.int64), np.empty((0, DIM), np.float32)
    return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


def test_an_empty_table_has_no_vectors(db: apsw.Connection) -> None:
    ids, vecs = _all(db)
    assert len(ids) == 0 and vecs.shape == (0, DIM)


def test_every_vector_is_read_with_its_chunk_id_in_storage_order(db: apsw.Connection) -> None:
    _insert(db, [7, 3, 11, 5])
    ids, vecs = _all(db)
    assert ids.tolist() == [7, 3, 11, 5]  # as inserted: vec0 appends
    assert vecs.dtype == np.float32
    for i, v in zip(ids, vecs, strict=True):
        np.testing.assert_array_equal(v, _vector(int(i)))


def test_deleted_vectors_are_left_out_and_their_slots_reused(db: apsw.Connection) -> None:
    _insert(db, range(1, 6))
    db.execute("DELETE FROM vec WHERE rowid IN (2, 5)")
    ids, vecs = _all(db)
    assert sorted(ids.tolist()) == [1, 3, 4]
    for i, v in zip(ids, vecs, strict=True):
        np.testing.assert_array_equal(v, _vector(int(i)))
    _insert(db, [9])
    ids, _ = _all(db)
    assert sorted(ids.tolist()) == [1, 3, 4, 9]


def test_more_vectors_than_a_storage_chunk_holds_come_in_a_block_each(
    db: apsw.Connection,
) -> None:
    _insert(db, range(1, 1101))
    blocks = list(vecstorage.blocks(db, DIM))
    assert len(blocks) == 2
    assert [len(b[0]) for b in blocks] == [1024, 1100 - 1024]
    ids = np.concatenate([b[0] for b in blocks])
    assert ids.tolist() == list(range(1, 1101))
    np.testing.assert_array_equal(blocks[1][1][-1], _vector(1100))


def test_storage_slots_say_which_slot_holds_which_chunks_vector(db: apsw.Connection) -> None:
    _insert(db, [10, 20, 30])
    db.execute("DELETE FROM vec WHERE rowid = 20")
    slots = vecstorage.storage_slots(db)
    assert slots is not None and len(slots) == 1
    (s,) = slots
    assert s.count == 2
    assert s.live[:3].tolist() == [True, False, True]
    assert s.ids[s.live].tolist() == [10, 30]
    (again,) = vecstorage.storage_slots(db, [s.chunk_id]) or []
    assert (again.chunk_id, again.raw) == (s.chunk_id, s.raw)
    assert vecstorage.storage_slots(db, [s.chunk_id + 99]) == []


def test_equal_raw_bytes_mean_the_same_slots(db: apsw.Connection) -> None:
    _insert(db, [1, 2])
    (before,) = vecstorage.storage_slots(db) or []
    db.execute("UPDATE vec SET embedding = ? WHERE rowid = 1", (_vector(5).tobytes(),))
    (same,) = vecstorage.storage_slots(db) or []
    assert same.raw == before.raw  # a vector changed in place: the slots did not
    _insert(db, [3])
    (grown,) = vecstorage.storage_slots(db) or []
    assert grown.raw != before.raw


def test_slot_vectors_reads_a_chunks_slots_whole_or_some(db: apsw.Connection) -> None:
    _insert(db, [1, 2, 3])
    (s,) = vecstorage.storage_slots(db) or []
    whole = vecstorage.slot_vectors(db, s.chunk_id, DIM)
    assert whole.shape == (len(s.live), DIM)
    np.testing.assert_array_equal(whole[:3], np.stack([_vector(i) for i in (1, 2, 3)]))
    some = vecstorage.slot_vectors(db, s.chunk_id, DIM, np.array([2, 0]))
    np.testing.assert_array_equal(some, np.stack([_vector(3), _vector(1)]))
    assert vecstorage.slot_vectors(db, s.chunk_id, DIM, np.array([], int)).shape == (0, DIM)


@pytest.mark.parametrize(
    ("size", "validity", "rowids"),
    [
        (4, b"\x0f", np.arange(3, dtype=np.int64).tobytes()),  # fewer ids than slots
        (16, b"\xff", np.arange(16, dtype=np.int64).tobytes()),  # fewer validity bits
    ],
)
def test_a_storage_chunk_not_laid_out_as_sqlite_vec_0_1_does_is_refused(
    size: int, validity: bytes, rowids: bytes
) -> None:
    with pytest.raises(ValueError):
        VectorSlots.parse(1, size, validity, rowids)


def test_a_storage_chunk_is_parsed_bit_by_bit() -> None:
    ids = np.array([5, 6, 7, 8, 9], np.int64)
    s = VectorSlots.parse(3, 5, bytes([0b10101]), ids.tobytes())
    assert s.chunk_id == 3
    assert s.live.tolist() == [True, False, True, False, True]
    assert s.count == 3
    assert s.ids.tolist() == ids.tolist()


def test_a_table_not_laid_out_as_vec0_is_read_through_its_cursor() -> None:
    db = apsw.Connection(":memory:")
    try:
        db.execute("CREATE TABLE vec(embedding BLOB)")  # no shadow tables to read
        db.executemany(
            "INSERT INTO vec(rowid, embedding) VALUES (?, ?)",
            [(i, _vector(i).tobytes()) for i in range(1, 1500)],
        )
        assert vecstorage.storage_slots(db) is None
        blocks = list(vecstorage.blocks(db, DIM))
        assert [len(b[0]) for b in blocks] == [1024, 1499 - 1024]
        ids, vecs = np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])
        assert ids.tolist() == list(range(1, 1500))
        np.testing.assert_array_equal(vecs[41], _vector(42))
    finally:
        db.close()


def test_storage_whose_count_does_not_check_out_is_read_through_the_cursor(
    db: apsw.Connection,
) -> None:
    _insert(db, [1, 2, 3])
    db.execute("DELETE FROM vec_rowids WHERE rowid = 2")  # vec0's count no longer the slots'
    ids, vecs = _all(db)
    assert sorted(ids.tolist()) == [1, 3]  # what vec0's own cursor reads
    for i, v in zip(ids, vecs, strict=True):
        np.testing.assert_array_equal(v, _vector(int(i)))
