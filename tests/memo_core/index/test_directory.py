"""memo_core.index.directory: `.memo` and every file in it (SQLite's included) reached
through the collection's descriptor, never through a symlink."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import apsw
import pytest

from memo_core.errors import FolderChangedError, IndexLocationError
from memo_core.files.fsafe import Folder, identity
from memo_core.files.indexes import INDEX_DIR
from memo_core.index import directory
from memo_core.index.opening import open_for_writing
from memo_core.settings import cache_dir

RW = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE


@pytest.fixture
def root(tmp_path: Path):
    (tmp_path / "notes").mkdir()
    with Folder(tmp_path / "notes") as folder:
        yield folder


def _memo(root: Folder) -> Path:
    return Path(root.path, INDEX_DIR)


def test_below_is_true_only_for_a_file_right_in_the_roots_memo(root: Folder) -> None:
    assert directory.below(_memo(root) / "index.db", root)
    assert not directory.below(_memo(root) / "sub" / "index.db", root)
    assert not directory.below(Path(root.path, "index.db"), root)
    assert not directory.below(_memo(root) / "index.db", None)


def test_reach_gives_memos_folder_descriptor_and_the_files_name(root: Folder) -> None:
    _memo(root).mkdir()
    path = _memo(root) / "index.db"
    with directory.reach(path, root) as (fd, name):
        assert fd is not None and name == "index.db"
        assert identity(os.fstat(fd)) == identity(os.stat(_memo(root)))
    with directory.reach(Path("/elsewhere/index.db"), root) as (fd, name):
        assert (fd, name) == (None, "/elsewhere/index.db")


def test_reach_refuses_a_memo_folder_that_is_a_symlink(root: Folder, tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    _memo(root).symlink_to(tmp_path / "other")
    with pytest.raises(IndexLocationError) as caught:
        with directory.reach(_memo(root) / "index.db", root):
            pass
    assert caught.value.message.key == "index.cannot_open"


# -- folders and files memo makes ----------------------------------------------------------


def test_memo_folder_is_made_through_the_root(root: Folder) -> None:
    directory.make_private_dir(_memo(root), root)
    assert stat.S_ISDIR(os.lstat(_memo(root)).st_mode)
    directory.make_private_dir(_memo(root), root)  # made already: fine


@pytest.mark.parametrize(("link", "what"), [(True, "file.symlink"), (False, "file.not_folder")])
def test_memo_folder_that_is_no_real_folder_is_refused(
    root: Folder, tmp_path: Path, link: bool, what: str
) -> None:
    if link:
        (tmp_path / "other").mkdir()
        _memo(root).symlink_to(tmp_path / "other")
    else:
        _memo(root).write_text("a file")
    with pytest.raises(IndexLocationError) as caught:
        directory.make_private_dir(_memo(root), root)
    assert caught.value.message.key == "place.through"
    assert caught.value.message.params["what"].key == what  # type: ignore[attr-defined]


def test_every_level_below_the_cache_folder_is_made(tmp_path: Path) -> None:
    folder = cache_dir() / "indexes" / "notes-1234"
    directory.make_private_dir(folder)
    assert folder.is_dir()


def test_a_symlink_at_a_level_below_the_cache_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    cache_dir().mkdir(parents=True, exist_ok=True)
    (cache_dir() / "indexes").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(IndexLocationError) as caught:
        directory.make_private_dir(cache_dir() / "indexes" / "notes-1234")
    assert caught.value.message.key == "place.through"
    assert not (tmp_path / "elsewhere" / "notes-1234").exists()


def test_a_private_file_is_made_empty_and_one_there_is_kept(root: Folder) -> None:
    directory.make_private_dir(_memo(root), root)
    path = _memo(root) / "index.db"
    directory.make_private_file(path, root)
    assert path.is_file() and path.stat().st_size == 0
    path.write_bytes(b"kept")
    directory.make_private_file(path, root)
    assert path.read_bytes() == b"kept"


def test_a_private_file_is_never_made_through_a_symlink(tmp_path: Path) -> None:
    link = tmp_path / "index.db"
    link.symlink_to(tmp_path / "target.db")
    directory.make_private_file(link)
    assert not (tmp_path / "target.db").exists()
    assert link.is_symlink()


def test_a_private_file_in_a_missing_folder_cannot_be_created(tmp_path: Path) -> None:
    with pytest.raises(IndexLocationError) as caught:
        directory.make_private_file(tmp_path / "missing" / "index.db")
    assert caught.value.message.key == "index.cannot_create"


# -- removing ------------------------------------------------------------------------------


def test_remove_files_takes_memos_database_and_its_side_files(root: Folder) -> None:
    path = _memo(root) / "index.db"
    open_for_writing(path, root).close()
    Path(f"{path}-wal").write_bytes(b"")
    Path(f"{path}-shm").write_bytes(b"")
    directory.remove_files(path, root)
    assert sorted(os.listdir(_memo(root))) == []


def test_remove_files_of_nothing_is_fine(tmp_path: Path) -> None:
    directory.remove_files(tmp_path / "index.db")
    assert list(tmp_path.iterdir()) == []


def test_remove_files_removes_nothing_when_any_is_not_memos(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    open_for_writing(path).close()
    Path(f"{path}-wal").write_bytes(b"someone else's bytes, not a WAL header")
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(IndexLocationError):
        directory.remove_files(path)
    assert sorted(os.listdir(tmp_path)) == before


# -- lock files ----------------------------------------------------------------------------


def test_a_lock_file_is_opened_made_if_missing(root: Folder) -> None:
    directory.make_private_dir(_memo(root), root)
    path = _memo(root) / "refresh.lock"
    fd = directory.open_lock_file(path, root)
    try:
        assert identity(os.fstat(fd)) == identity(os.stat(path))
    finally:
        os.close(fd)


def test_a_lock_file_is_never_opened_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "refresh.lock").symlink_to(tmp_path / "target")
    with pytest.raises(IndexLocationError) as caught:
        directory.open_lock_file(tmp_path / "refresh.lock")
    assert caught.value.message.key == "index.cannot_open"
    assert not (tmp_path / "target").exists()


def test_a_lock_file_with_another_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "refresh.lock").write_text("")
    os.link(tmp_path / "refresh.lock", tmp_path / "second")
    with pytest.raises(IndexLocationError) as caught:
        directory.open_lock_file(tmp_path / "refresh.lock")
    assert caught.value.message.key == "place.no_lock"
    assert caught.value.message.params["what"].key == "file.hard_links"  # type: ignore[attr-defined]


# -- SQLite's files ------------------------------------------------------------------------


def test_a_connection_outside_the_root_opens_by_name(tmp_path: Path, root: Folder) -> None:
    db = directory.connect(tmp_path / "plain.db", RW, (), root)
    try:
        assert not isinstance(db, directory.HeldConnection)
        db.execute("CREATE TABLE t(x)")
    finally:
        db.close()
    assert (tmp_path / "plain.db").is_file()


@pytest.mark.skipif(not os.path.isdir(directory.PROC_FD), reason="no /proc")
def test_a_connection_in_memo_is_held_through_the_folders_descriptor(root: Folder) -> None:
    directory.make_private_dir(_memo(root), root)
    path = _memo(root) / "index.db"
    db = directory.connect(path, RW, (), root)
    assert isinstance(db, directory.HeldConnection)
    try:
        db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        directory.check_held(db, path, root)  # the `.memo` there now: fine
        held_fd = db.dir_fd
        assert identity(os.fstat(held_fd)) == identity(os.stat(_memo(root)))
    finally:
        db.close()
    assert db.dir_fd == -1  # the descriptor went with the connection
    assert sqlite3.connect(path).execute("SELECT x FROM t").fetchall() == [(1,)]


def test_a_memo_folder_swapped_after_opening_is_found_out(root: Folder) -> None:
    directory.make_private_dir(_memo(root), root)
    path = _memo(root) / "index.db"
    db = directory.connect(path, RW, (), root)
    try:
        db.execute("CREATE TABLE t(x)")
        os.rename(_memo(root), Path(root.path, "moved"))
        os.mkdir(_memo(root))
        Path(root.path, "moved", "index.db").rename(path)  # even the same file, moved back
        with pytest.raises(FolderChangedError) as caught:
            directory.check_held(db, path, root)
        assert caught.value.message.key == "index.changed_opening"
    finally:
        db.close()


def test_check_held_has_nothing_to_compare_outside_the_root(tmp_path: Path, root: Folder) -> None:
    db = apsw.Connection(str(tmp_path / "plain.db"))
    try:
        directory.check_held(db, tmp_path / "plain.db", root)
        directory.check_held(db, tmp_path / "plain.db", None)
    finally:
        db.close()


def test_held_and_placed_name_the_same_file(root: Folder) -> None:
    directory.make_private_dir(_memo(root), root)
    path = _memo(root) / "index.db"
    assert directory.placed(root, "index.db") is None
    db = apsw.Connection(str(path))  # SQLite's unix VFS, by name
    try:
        db.execute("PRAGMA journal_mode=WAL; CREATE TABLE t(x)")
        assert directory.held(db) == directory.placed(root, "index.db")
        assert directory.held(db) == identity(os.stat(path))
        assert directory.held(db, wal=True) == directory.placed(root, "index.db-wal")
        directory.check_held(db, path, root)  # by name, where no descriptor is held
    finally:
        db.close()


def test_placed_follows_no_symlink_and_names_only_regular_files(root: Folder) -> None:
    directory.make_private_dir(_memo(root), root)
    (_memo(root) / "target").write_text("")
    (_memo(root) / "link").symlink_to(_memo(root) / "target")
    (_memo(root) / "folder").mkdir()
    assert directory.placed(root, "target") == identity(os.stat(_memo(root) / "target"))
    assert directory.placed(root, "link") is None
    assert directory.placed(root, "folder") is None
    assert directory.placed(root, "missing") is None


def test_placed_with_no_memo_folder_is_none(root: Folder) -> None:
    assert directory.placed(root, "index.db") is None
