"""The vector cache applies each change in place and stays exact.

A long-lived reader's `VectorCache` follows writers that add, change (a new chunk id for a
new vector) and delete vectors, in this process and in another, in random order, through
its tombstones, compactions and growth: its answers must equal a brute force over what the
index holds, read through vec0 row by row (as the cache holds it: int8 codes, each within
half a step of the vector, and scores within the codes' error of float32's). And the fast
read of vec0's storage must equal that row-by-row read exactly.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memo_core.index.store import Store
from memo_core.index.vectors import COMPACT_SHARE, VectorCache

DIM = 8


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def row_by_row(store: Store) -> tuple[np.ndarray, np.ndarray]:
    """What vec0 holds, through its own cursor (the slow, plain read): ids, vectors."""
    rows = list(store.db.execute("SELECT rowid, embedding FROM vec"))
    ids = np.array([r[0] for r in rows], np.int64)
    vectors = [np.frombuffer(r[1], np.float32) for r in rows]
    return ids, np.array(vectors) if vectors else np.empty((0, 0), np.float32)


class Writer:
    """Changes vectors as the indexer does: ids from a counter, never reused, but a vector
    may come late (embedded after chunks with higher ids got theirs) or go at any time."""

    def __init__(self, store: Store, seed: int) -> None:
        self.store, self.rng = store, np.random.default_rng(seed)
        self.next_id = 1 + int(max(row_by_row(store)[0], default=0))
        self.waiting: list[int] = []  # ids given out whose vector comes later

    def step(self, adds: int, deletes: int) -> None:
        held = row_by_row(self.store)[0]
        with self.store.write():
            gone = self.rng.choice(held, min(deletes, len(held)), replace=False)
            self.store.delete_chunks(int(i) for i in gone)
            ids = list(range(self.next_id, self.next_id + adds))
            self.next_id += adds
            late, self.waiting = self.waiting, [i for i in ids if self.rng.random() < 0.2]
            ready = [i for i in ids if i not in self.waiting] + late
            for cid, vector in zip(ready, _unit(self.rng, len(ready)), strict=True):
                self.store.set_vector(cid, vector)


def assert_held_as_int8(held: np.ndarray, exact: np.ndarray) -> None:
    """The cache holds each vector as int8 codes times a scale (its largest component is
    ±127): within half a step of the vector."""
    step = np.abs(exact).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(held - exact) <= step / 2 + 1e-7)


def _assert_exact(cache: VectorCache, reader: Store, rng: np.random.Generator) -> None:
    cache.sync(reader)
    ids, matrix = row_by_row(reader)
    got_ids, got = cache.live()
    order, got_order = np.argsort(ids), np.argsort(got_ids)
    assert np.array_equal(got_ids[got_order], ids[order])
    assert_held_as_int8(got[got_order], matrix[order])
    held = np.empty_like(matrix)  # what the cache holds, in vec0's order
    held[order] = got[got_order]
    step = np.abs(matrix).max(axis=1, initial=0.0) / 127
    for q in _unit(rng, 3):
        scores = held @ q
        for among in (None, rng.choice(ids, max(1, len(ids) // 3), replace=False)):
            rows = np.arange(len(ids)) if among is None else np.flatnonzero(np.isin(ids, among))
            best = rows[np.argsort(-scores[rows], kind="stable")[:10]]
            found = cache.nearest(q, 10, among)
            assert [cid for cid, _ in found] == [int(ids[i]) for i in best]
            got_scores = np.array([s for _, s in found])
            assert got_scores == pytest.approx(scores[best], abs=1e-5)
            # Each code is within half a step of the vector: the score, within that much
            # times the query's length along every dimension.
            assert np.all(np.abs(got_scores - matrix[best] @ q) <= step[best] / 2 * np.abs(q).sum())


def _new_index(tmp_path: Path) -> Path:
    path = tmp_path / ".memo" / "index.db"
    store = Store.create(path)
    store.use_model("test-model", DIM)
    store.close()
    return path


def test_random_adds_changes_and_deletes_stay_exact(tmp_path: Path) -> None:
    path = _new_index(tmp_path)
    writer, reader = Store.create(path), Store.open_existing(path)
    assert reader is not None
    cache, rng, w = VectorCache(), np.random.default_rng(7), Writer(writer, 1)
    w.step(adds=3000, deletes=0)  # three of vec0's storage chunks
    _assert_exact(cache, reader, rng)
    steps = [(5, 0), (3, 3), (0, 4), (40, 40), (1, 0), (0, 700), (6000, 10), (2, 5000)]
    steps += [(int(rng.integers(0, 30)), int(rng.integers(0, 30))) for _ in range(25)]
    for adds, deletes in steps:
        w.step(adds, deletes)
        _assert_exact(cache, reader, rng)
    # The deletes above went past a quarter of the rows, and the adds past the spare rows:
    # both compacted and grew, yet the rows held stay within the live ones and a quarter.
    assert cache.rows_in_use <= len(cache.live()[0]) / (1 - COMPACT_SHARE) + 1
    writer.close()
    reader.close()


def test_a_writer_in_another_process(tmp_path: Path) -> None:
    """memo watch, say, commits while this process's reader keeps its copy."""
    path = _new_index(tmp_path)
    reader = Store.open_existing(path)
    assert reader is not None
    cache, rng = VectorCache(), np.random.default_rng(3)
    code = (
        "import sys\n"
        f"sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parents[1])!r}]\n"
        "from test_vector_updates import Writer\n"
        "from memo_core.index.store import Store\n"
        "w = Writer(Store.create(__import__('pathlib').Path(sys.argv[1])), int(sys.argv[2]))\n"
        "w.step(int(sys.argv[3]), int(sys.argv[4]))\n"
    )
    for seed, (adds, deletes) in enumerate([(1500, 0), (20, 10), (0, 900), (30, 0), (4, 4)]):
        cmd = [sys.executable, "-c", code, str(path), str(seed), str(adds), str(deletes)]
        subprocess.run(cmd, check=True, capture_output=True)
        _assert_exact(cache, reader, rng)
    reader.close()


def test_the_fast_read_equals_the_row_by_row_read(tmp_path: Path) -> None:
    path = _new_index(tmp_path)
    store = Store.create(path)
    w = Writer(store, 5)
    for adds, deletes in [(2500, 0), (10, 300), (700, 1200), (3, 1)]:
        w.step(adds, deletes)  # slots emptied across chunks, some of the last one reused
        ids, matrix = store.vectors(DIM)
        want_ids, want = row_by_row(store)
        assert np.array_equal(ids, want_ids) and np.array_equal(matrix, want)
    store.close()
