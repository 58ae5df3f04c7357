"""Hostile folders: memo never touches what it did not make, never writes outside, never
hangs or crashes. Each case is something another program, a sync client or an unpacked
archive can leave in a notes folder."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
from conftest import write_notes

from memo_core import Engine, MemoError, ModelSource

NOTES = {"a.md": "# A\n\ncat and dog\n", "sub/b.md": "# B\n\nbird\n"}


def engine() -> Engine:
    return Engine(models=ModelSource(enabled=False))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def within(seconds: float, fn: Callable[[], object]) -> object:
    """fn() in a thread; fails the test (instead of hanging it) if it takes longer."""
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s"
    return out[0] if out else None


def foreign_db(path: Path, user_version: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = apsw.Connection(str(path))
    db.execute(f"PRAGMA user_version={user_version}; CREATE TABLE precious(x);")
    db.execute("INSERT INTO precious VALUES ('keep me')")
    db.close()
    return path


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


# -- what lies at memo's own paths ----------------------------------------------------------


@pytest.mark.parametrize("user_version", [0, 1, 2, 7])
def test_another_programs_database_is_never_modified(notes: Path, user_version: int) -> None:
    index = foreign_db(notes / ".memo" / "index.db", user_version)
    before = digest(index)
    with engine() as e:
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
        assert e.reindex(notes) == 2
        assert "not a memo index" in (e.status(notes)[0].location_note or "")
    assert digest(index) == before
    assert sorted(p.name for p in index.parent.iterdir()) == ["index.db"]  # no WAL beside it


@pytest.mark.parametrize("dangling", [False, True])
def test_an_index_symlink_is_never_followed(notes: Path, tmp_path: Path, dangling: bool) -> None:
    target = tmp_path / "app" / "app.db"
    if not dangling:
        foreign_db(target)
    (notes / ".memo").mkdir()
    os.symlink(target, notes / ".memo" / "index.db")
    before = digest(target) if not dangling else None
    with engine() as e:
        e.search(notes, "cat", mode="lex")
        e.reindex(notes)
        note = e.status(notes)[0].location_note or ""
    assert "index.db is not a memo index (a symbolic link)" in note
    if dangling:
        assert not target.parent.exists()
    else:
        assert digest(target) == before
        assert sorted(p.name for p in target.parent.iterdir()) == ["app.db"]


@pytest.mark.parametrize("name", ["refresh.lock", "index.db-wal", "index.db-shm"])
def test_side_file_symlinks_are_never_written_through(
    notes: Path, tmp_path: Path, name: str
) -> None:
    target = tmp_path / "outside" / "target"
    target.parent.mkdir()
    (notes / ".memo").mkdir()
    os.symlink(target, notes / ".memo" / name)
    with engine() as e:
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
        assert f"{name} is a symbolic link" in (e.status(notes)[0].location_note or "")
    assert not target.exists()


def test_a_rebuild_scratch_symlink_is_refused_not_followed(notes: Path, tmp_path: Path) -> None:
    target = tmp_path / "outside.db"
    with engine() as e:
        e.refresh(notes)
        os.symlink(target, notes / ".memo" / "index.db.rebuild")
        with pytest.raises(MemoError, match="index.db.rebuild is not a regular file"):
            e.reindex(notes)
        assert e.search(notes, "cat", mode="lex")  # the live index still answers
    assert not target.exists() and (notes / ".memo" / "index.db.rebuild").is_symlink()


@pytest.mark.parametrize("kind", ["symlink inside", "symlink outside", "file"])
def test_dot_memo_must_be_a_real_folder(notes: Path, tmp_path: Path, kind: str) -> None:
    memo = notes / ".memo"
    if kind == "file":
        memo.write_text("not a folder")
    else:
        target = notes / "sub" if kind == "symlink inside" else tmp_path / "elsewhere"
        target.mkdir(exist_ok=True)
        os.symlink(target, memo)
    with engine() as e:
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
        assert Path(e.status(notes)[0].index_path).is_relative_to(os.environ["MEMO_CACHE_DIR"])
    assert not (notes / "sub" / "index.db").exists()
    assert not (tmp_path / "elsewhere" / "index.db").exists()


def test_a_fifo_at_the_index_path_never_blocks(notes: Path) -> None:
    (notes / ".memo").mkdir()
    os.mkfifo(notes / ".memo" / "index.db")
    with engine() as e:
        hits = within(20, lambda: e.search(notes, "cat", mode="lex"))
        assert hits and "not a regular file" in (e.status(notes)[0].location_note or "")


def test_a_killed_rebuilds_leftovers_are_cleared_by_the_next_refresh(notes: Path) -> None:
    with engine() as e:
        e.refresh(notes)
        for suffix in ("", "-wal", "-shm"):  # what `kill -9` during a reindex leaves
            (notes / ".memo" / f"index.db.rebuild{suffix}").write_bytes(b"x" * 4096)
        e.search(notes, "cat", mode="lex")
    assert sorted(p.name for p in (notes / ".memo").iterdir() if "rebuild" in p.name) == []
