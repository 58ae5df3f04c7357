"""The index reached through the collection's descriptor (`index.directory`): with SQLite's
files named through /proc/self/fd (Linux), and by name with the file SQLite holds compared
afterwards (systems without /proc). Either way a collection folder swapped for a symlink
to another collection gives a clean error, and nothing of the other one is read or written."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_notes
from race_helpers import tree_state

from memo_core import Engine, FolderChangedError
from memo_core.collection import Collection
from memo_core.index import directory as indexdir_module


@pytest.fixture(params=["proc", "by-name"])
def naming(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "proc" and not os.path.isdir(indexdir_module.PROC_FD):
        pytest.skip("no /proc here")
    if request.param == "by-name":
        monkeypatch.setattr(indexdir_module, "PROC_FD", "/nonexistent/proc/self/fd")
    yield request.param


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    """Our collection, indexed, and another memo collection beside it."""
    base = Path(os.path.realpath(tmp_path))
    ours = write_notes(base / "ours", {"a.md": "# A\n\nours alpha\n"})
    other = write_notes(base / "other", {"b.md": "# B\n\nOTHER-SECRET beta\n"})
    with Engine() as e:
        e.search(ours, "alpha", mode="lex")
        e.search(other, "beta", mode="lex")
    return ours, other


def _swap_for_link(ours: Path, other: Path) -> Path:
    """`ours` becomes a symlink to `other`; where the real folder went."""
    moved = ours.with_name("ours-real")
    ours.rename(moved)
    ours.symlink_to(other)
    return moved


@pytest.mark.parametrize("op", ["search", "refresh", "rebuild", "status"])
def test_a_collection_swapped_for_another_is_refused_and_left_alone(
    naming: str, two: tuple[Path, Path], op: str
) -> None:
    ours, other = two
    with Engine() as engine:
        [c] = engine.collections(ours)  # resolved before the swap, as in a race
        assert engine.search(ours, "alpha", mode="lex")[0].relpath == "a.md"
        before = tree_state(other)
        _swap_for_link(ours, other)
        with pytest.raises(FolderChangedError, match="symbolic link"):
            _run(c, op)
        assert tree_state(other) == before


def _run(c: Collection, op: str) -> object:
    if op == "search":
        with c.snapshot() as s:
            return s.counts() if s else None
    if op == "refresh":
        return c.refresh(None, None)
    if op == "rebuild":
        return c.rebuild(None, None)
    return c.status()


def test_a_kept_connection_follows_the_index_that_lies_there_now(
    naming: str, two: tuple[Path, Path]
) -> None:
    """A connection kept across calls holds the file it got: when `.memo` is replaced
    (here by the other collection's index), it is dropped and the one there now is read."""
    ours, other = two
    with Engine() as engine:
        [c] = engine.collections(ours)
        with c.snapshot() as s:
            assert s is not None and s.file_stats().keys() == {"a.md"}
        shutil.move(ours / ".memo", ours.with_name("old-memo"))
        shutil.copytree(other / ".memo", ours / ".memo")
        with c.snapshot() as s:
            assert s is not None and s.file_stats().keys() == {"b.md"}


def test_a_writer_busy_elsewhere_does_not_stall_other_threads(naming: str, tmp_path: Path) -> None:
    """SQLite waits for a locked index in the VFS's sleep: other threads must run meanwhile."""
    import apsw

    notes = write_notes(tmp_path / "n", {"a.md": "# A\n\nalpha\n"})
    with Engine() as engine:
        engine.search(notes, "alpha", mode="lex")
        other = apsw.Connection(str(notes / ".memo" / "index.db"))
        other.execute("BEGIN EXCLUSIVE")
        try:
            t = threading.Thread(target=lambda: engine.refresh(notes), daemon=True)
            t.start()
            ticks = 0
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline:
                ticks += 1
                time.sleep(0.001)
            assert ticks > 100  # this thread kept running while the refresh waited
        finally:
            other.execute("ROLLBACK")
            other.close()
        t.join(30)
        assert not t.is_alive()
