"""A collection left unused gives its vector matrix back, and gets it again when next
searched (a bounded memory budget).

Real engines, real indexes and a real (tiny) embedding model; the matrix each collection
holds is what it says it holds (`Collection.vectors_held`).
"""

from __future__ import annotations

import time
from pathlib import Path

from conftest import write_notes

from memo_core import Embedder, Engine, ModelSource


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
        (c,) = e.held_collections().values()
        assert first and c.vectors_held == 2
        # No call comes: the engine releases it on its own once it stayed unused (a server
        # at rest gives the memory back). Waited for with a bound, not a fixed sleep.
        deadline = time.monotonic() + 10
        while c.vectors_held and time.monotonic() < deadline:
            time.sleep(0.02)
        assert c.vectors_held == 0 and not c.is_open
        assert _found(e, folder) == first  # the next search loads them again
        assert c.vectors_held == 2


def test_a_collection_beyond_the_budget_releases_its_vectors_not_the_one_in_use(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    one, two = _folder(tmp_path / "one", "sings"), _folder(tmp_path / "two", "restic")
    with Engine(models=ModelSource(tiny_embedder), max_open=1) as e:
        first = _found(e, one)
        _found(e, two)
        _found(e, two)  # a call releases what earlier calls left beyond the budget
        held = {c.root.name: c.vectors_held for c in e.held_collections().values()}
        assert held == {"one": 0, "two": 2}
        assert _found(e, one) == first
        assert e.held_collections()[one.resolve()].vectors_held == 2
