"""A collection left unused gives its vector matrix back, and gets it again when next
searched (a bounded memory budget).

Real engines, real indexes and a real (tiny) embedding model; the matrix each collection
holds is read from its vector cache.
"""

from __future__ import annotations

import time
from pathlib import Path

from conftest import write_notes

from memo_core import Embedder, Engine, ModelSource
from memo_core.collection import Collection


def _vectors_held(c: Collection) -> int:
    """How many vectors the collection holds in memory now."""
    cache = c._vectors
    return 0 if cache is None else len(cache.live()[0])


def _folder(root: Path, word: str) -> Path:
    return write_notes(root, {"a.md": f"# A\n\n{word} beets cabbage\n", "b.md": "# B\n\nbowl\n"})


def _found(e: Engine, folder: Path) -> list[tuple[str, float]]:
    return [(h.relpath, round(h.score, 5)) for h in e.search(folder, "beets", mode="vec")]


def test_an_idle_collection_gives_its_vectors_back_by_itself(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    folder = _folder(tmp_path / "notes", "sings")
    with Engine(models=ModelSource(tiny_embedder), idle_s=0.3) as e:
        first = _found(e, folder)
        (c,) = e._collections.values()
        assert first and _vectors_held(c) == 2
        # No call comes: the engine releases it on its own once it stayed unused (a server
        # at rest gives the memory back). Waited for with a bound, not a fixed sleep.
        deadline = time.monotonic() + 10
        while _vectors_held(c) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _vectors_held(c) == 0 and c._reader is None
        assert _found(e, folder) == first  # the next search loads them again
        assert _vectors_held(c) == 2


def test_a_collection_beyond_the_budget_releases_its_vectors_not_the_one_in_use(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    one, two = _folder(tmp_path / "one", "sings"), _folder(tmp_path / "two", "restic")
    with Engine(models=ModelSource(tiny_embedder), max_open=1) as e:
        first = _found(e, one)
        _found(e, two)
        _found(e, two)  # a call releases what earlier calls left beyond the budget
        held = {c.root.name: _vectors_held(c) for c in e._collections.values()}
        assert held == {"one": 0, "two": 2}
        assert _found(e, one) == first
        assert _vectors_held(e._collections[one.resolve()]) == 2
