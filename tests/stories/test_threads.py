"""Objects that several threads use at once: MCP progress of collections refreshed side by
side, the stemmers, and the vector cache across a reconnect of the reader."""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import Stemmer
from conftest import NOTES, write_notes
from mcp import Client
from test_vector_updates import assert_held_as_int8, row_by_row

from memo_core import Embedder, Engine, ModelSource, Searcher, Tuning
from memo_core.index.store import Store
from memo_core.index.vectors import VectorCache
from memo_core.text import textnorm
from memo_mcp import server as memo_server

# -- MCP progress -------------------------------------------------------------------------


class SlowEmbedder(Embedder):
    """A real (tiny) model that takes a moment per batch, so refreshes running side by side
    take turns reporting their progress."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id, self.dim, self.batch_size = inner.model_id, inner.dim, inner.batch_size

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            time.sleep(0.01)
        return self.inner.embed_batch(texts, query=query)


async def test_collections_refreshed_side_by_side_report_the_real_total(
    tmp_path: Path, tiny_embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three collections (as many as a search indexes anew), each 20 notes of 3 chunks,
    indexed in small batches at once: the progress ends at their files and chunks together,
    and never goes past it."""
    monkeypatch.setattr(memo_server, "PROGRESS_INTERVAL_S", 0.0)  # every report is sent
    base = tmp_path / "all"
    for c in range(3):
        write_notes(
            base / f"c{c}",
            {
                f"n{i:02}.md": f"# Заметка {i}\n\nтоматы {i}\n\n## Малина\n\nмалина {i}\n\n"
                f"## Backup\n\nrestic {i}\n"
                for i in range(20)
            },
        )
    real_total = 3 * 20 + 3 * 20 * 3  # files indexed, then chunks embedded
    engine = Engine(
        models=ModelSource(SlowEmbedder(tiny_embedder)),
        tuning=Tuning(batch_chunks=6),
        refresh_budget_s=60.0,  # waited for whole, side by side (None would refresh in turn)
    )
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with Client(memo_server.build_server(engine=engine), mode="legacy") as c:
        r = await c.call_tool(
            "memo_search", {"path": str(base), "query": "малина 7"}, progress_callback=on_progress
        )
    engine.close()
    assert not r.is_error
    values = [p for p, _ in seen]
    assert values == sorted(set(values))  # strictly increasing
    assert all(total is not None and p <= total <= real_total for p, total in seen), seen
    assert seen[-1] == (real_total, real_total)


# -- stemmers -----------------------------------------------------------------------------

REAL_STEMMER = Stemmer.Stemmer  # as the tests below replace it


class SpyStemmer:
    """A real stemmer that notes when two threads are inside the same instance at once
    (PyStemmer's documentation forbids that), and which threads used it."""

    def __init__(self, language: str) -> None:
        self.inner = REAL_STEMMER(language)
        self.threads: set[int] = set()
        self.inside = 0
        self.overlaps = 0
        self._lock = threading.Lock()

    def stemWord(self, word: str) -> str:  # noqa: N802 (PyStemmer's name)
        with self._lock:
            self.inside += 1
            self.overlaps += self.inside > 1
            self.threads.add(threading.get_ident())
        time.sleep(0.0005)  # a window for another thread to come in
        try:
            return self.inner.stemWord(word)
        finally:
            with self._lock:
                self.inside -= 1


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[SpyStemmer]]:
    """textnorm loaded afresh (its word cache empty) with every stemmer it makes spied on."""
    made: list[SpyStemmer] = []

    def spy(language: str) -> SpyStemmer:
        made.append(SpyStemmer(language))
        return made[-1]

    with monkeypatch.context() as m:
        m.setattr(Stemmer, "Stemmer", spy)
        importlib.reload(textnorm)
        yield made
    importlib.reload(textnorm)  # the real stemmers again


def test_threads_stem_at_once_with_stemmers_of_their_own(spied: list[SpyStemmer]) -> None:
    ru = "малина томаты полив грядки кабачки огурцы яблони смородина".split()
    en = "gardening watering backups restoring cabbages running dogs birds".split()
    texts = [f"{r}{i} {e}{i}" for i in range(4) for r, e in zip(ru, en, strict=True)]
    russian, english = REAL_STEMMER("russian"), REAL_STEMMER("english")
    alone = [f"{russian.stemWord(t.split()[0])} {english.stemWord(t.split()[1])}" for t in texts]
    start = threading.Barrier(8)
    got: dict[int, list[str]] = {}

    def stem(n: int) -> None:
        start.wait()
        got[n] = [textnorm.normalize(t) for t in texts[n::8]]

    threads = [threading.Thread(target=stem, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[i % 8][i // 8] for i in range(len(texts))] == alone
    used = [s for s in spied if s.threads]
    assert used and all(len(s.threads) == 1 for s in used)  # no instance shared
    assert sum(s.overlaps for s in spied) == 0


# -- the vector cache across a reconnect --------------------------------------------------


def test_a_reopened_reader_never_gets_a_stale_matrix(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """`PRAGMA data_version` counts per connection, and a new one starts afresh: a reader
    closed and opened again (idle collections released, say) may say the very number the
    cache last saw, while another connection changed the vectors in between."""
    notes = write_notes(tmp_path / "notes", NOTES)
    with Searcher(notes, embedder=tiny_embedder) as s:
        s.refresh()
    index = notes / ".memo" / "index.db"
    cache = VectorCache()
    reader = Store.open_existing(index)
    assert reader is not None
    cache.sync(reader)
    then = reader.data_version()
    reader.close()
    write_notes(notes, {"weather.md": "# Weather\n\nrain sun weather\n"})
    (notes / "pets.md").unlink()
    with Searcher(notes, embedder=tiny_embedder) as s:
        s.refresh()  # another connection: new vectors in, old ones out
    again = Store.open_existing(index)
    assert again is not None
    try:
        assert again.data_version() == then  # what let the old cache pass the stale copy
        cache.sync(again)
        ids, matrix = cache.live()
        want_ids, want = row_by_row(again)
        assert sorted(ids) == sorted(want_ids)
        at = {int(cid): i for i, cid in enumerate(want_ids)}
        assert_held_as_int8(matrix, want[[at[int(cid)] for cid in ids]])
    finally:
        again.close()
