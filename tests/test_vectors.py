"""The in-memory vector copy follows the index exactly and agrees with vec0's own KNN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import write_notes

from memo_core import Searcher
from memo_core.embedder import Embedder
from memo_core.store import Store
from memo_core.vectors import VectorCache


def _vec0_knn(store: Store, q: np.ndarray, k: int) -> list[int]:
    rows = store.db.execute(
        "SELECT rowid FROM vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (q.astype(np.float32).tobytes(), k),
    )
    return [r[0] for r in rows]


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
    for text in ["cat", "bird sun sun", "soup recipe", "restore backup"]:
        q = tiny_embedder.embed([text], query=True)[0]
        ours = [cid for cid, _ in cache.nearest(q, 10)]
        assert ours == _vec0_knn(store, q, 10)
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
    matrix = cache.matrix
    cache.sync(store)
    assert cache.matrix is matrix and len(cache.ids) == 5
    store.close()
