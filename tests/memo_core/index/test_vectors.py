"""The in-memory vector copy follows the index exactly and agrees with vec0's own KNN."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import write_notes

from memo_core import Embedder, Engine, ModelSource, Searcher
from memo_core.index.store import Store
from memo_core.index.vectors import VectorCache, join_rows, pack, pack_rows


def _vec0_knn(store: Store, q: np.ndarray, k: int) -> list[tuple[int, float]]:
    """vec0's own k nearest: (chunk id, cosine), best first."""
    rows = store.db.execute(
        "SELECT rowid, distance FROM vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (q.astype(np.float32).tobytes(), k),
    )
    return [(r[0], 1.0 - r[1]) for r in rows]


def test_nearest_matches_vec0(notes: Path, tiny_embedder: Embedder) -> None:
    write_notes(
        notes, {f"more/n{i}.md": f"# N{i}\n\ncat dog bird {'sun ' * i}\n" for i in range(40)}
    )
    with Searcher(notes, embedder=tiny_embedder) as s:
        s.refresh()
    store = Store.open_existing(notes / ".memo" / "index.db")
    assert store is not None
    cache = VectorCache()
    cache.sync(store)
    n = store.counts()[1]
    for text in ["cat", "bird sun sun", "soup recipe", "restore backup"]:
        q = tiny_embedder.embed([text], query=True)[0]
        # vec0's exact cosine of every chunk: the cache scores int8 codes, a cosine off by
        # under 0.002, so near-ties may swap, but each rank holds a vector as near as
        # vec0's at that rank, and each score is the exact one within that error.
        exact = dict(_vec0_knn(store, q, n))
        ours = cache.nearest(q, 10)
        best = sorted(exact.values(), reverse=True)[:10]
        assert len(ours) == 10
        for (cid, score), want in zip(ours, best, strict=True):
            assert abs(score - exact[cid]) < 0.002
            assert exact[cid] > want - 0.004
    store.close()


def test_cache_follows_edits_deletes_and_rebuilds(notes: Path, tiny_embedder: Embedder) -> None:
    with Searcher(notes, embedder=tiny_embedder) as s:
        assert s.search("borscht soup", mode="vec", k=1)[0].relpath == "cooking/soup.md"
        write_notes(notes, {"weather.md": "# Weather\n\nrain sun weather\n"})
        assert s.search("weather rain", mode="vec", k=1)[0].relpath == "weather.md"
        (notes / "weather.md").unlink()
        assert all(h.relpath != "weather.md" for h in s.search("weather rain", mode="vec"))
        s.reindex()  # another database under the same ids: reloaded, not patched
        hits = s.search("borscht soup", mode="vec", k=5)
        assert hits[0].relpath == "cooking/soup.md"
        assert len({(h.relpath, h.line) for h in hits}) == len(hits) == 5  # no stale rows


def test_sync_without_commits_reads_nothing(notes: Path, tiny_embedder: Embedder) -> None:
    with Searcher(notes, embedder=tiny_embedder) as s:
        s.refresh()
    store = Store.open_existing(notes / ".memo" / "index.db")
    assert store is not None
    cache = VectorCache()
    cache.sync(store)
    statements: list[str] = []
    store.db.exec_trace = lambda _cursor, sql, _bindings: statements.append(sql) or True
    cache.sync(store)
    assert statements == ["PRAGMA data_version"] and len(cache.live()[0]) == 5
    store.close()


def test_a_long_lived_reader_equals_a_fresh_one_after_another_process_edits(
    tmp_path: Path, tiny_embedder: Embedder, tiny_model_dir: Path
) -> None:
    """Another process (memo watch, say) deletes the newest note and adds one: the reader
    that kept its vectors in memory must never score the new note with the old vector."""
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat dog\n", "b.md": "# B\n\nsoup\n"})
    with Engine(models=ModelSource(tiny_embedder)) as reader:
        reader.refresh(notes)
        write_notes(notes, {"last.md": "# Last\n\nbeets cabbage\n"})  # the highest chunk id
        assert reader.search(notes, "beets cabbage", mode="vec")[0].relpath == "last.md"
        (notes / "last.md").unlink()
        _index_in_another_process(notes, tiny_model_dir)
        write_notes(notes, {"new.md": "# New\n\nrestic проверка\n"})
        _index_in_another_process(notes, tiny_model_dir)
        got = reader.search(notes, "beets cabbage", k=5, mode="vec", refresh=False)
    with Engine(models=ModelSource(tiny_embedder)) as fresh:
        want = fresh.search(notes, "beets cabbage", k=5, mode="vec", refresh=False)
    assert [(h.relpath, h.line) for h in got] == [(h.relpath, h.line) for h in want]
    assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-6)


def _index_in_another_process(notes: Path, model_dir: Path) -> None:
    env = {**os.environ, "MEMO_MODEL_DIR": str(model_dir)}
    cmd = [sys.executable, "-m", "memo_cli.main", "index", str(notes)]
    subprocess.run(cmd, check=True, env=env, capture_output=True)


@pytest.mark.parametrize("picked", [[0], [2, 0], [1, 1, 3], [3, 2, 1, 0]])
def test_rows_packed_alone_join_into_the_blob_pack_makes(picked: list[int]) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((4, 16)).astype(np.float32)
    vectors[1] = 0  # a zero row: zero codes, scale 1
    rows = pack_rows(vectors)
    assert join_rows([rows[i] for i in picked]) == pack(vectors[picked])
