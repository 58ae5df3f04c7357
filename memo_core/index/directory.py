"""Reaching a collection's index files through the root's descriptor, SQLite included.

memo's own operations on `<root>/.memo/` (making the folder, creating, locking and removing
its files) go through the root's descriptor, with `.memo` opened without following a
symlink. SQLite opens files by name, and more than once (the WAL and its -shm later, by
the database's name plus a suffix), so a folder swapped for a symlink in between could hand
it another collection's files. So on Linux memo gives SQLite a name that goes through a
descriptor instead of through folders: `/proc/self/fd/N/index.db`, N being `.memo` opened
from the root's descriptor and kept open as long as the connection. SQLite would resolve
that name back into the folder's path; a VFS that is SQLite's own but for taking names as
given (`_AsGiven`) stops that, so every file SQLite opens lies in the folder memo checked.

Where /proc is missing, SQLite opens by name, and memo asks it which file it holds
(SQLITE_FCNTL_FILE_POINTER gives the unix VFS's file object, whose descriptor follows its
first three pointers; SQLITE_FCNTL_JOURNAL_POINTER the same for the WAL) and compares its
device and inode with what the root's descriptor leads to, before it is used.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Literal

import apsw

from memo_core.errors import FolderChangedError, IndexLocationError, MemoError
from memo_core.files.fsafe import (
    DIR_FLAGS,
    Folder,
    Identity,
    disk_full,
    identity,
    no_room,
    out_of_files,
    too_many_files,
)
from memo_core.files.indexes import INDEX_DIR
from memo_core.index.dbfiles import odd, owned, side_files, sqlite_uri
from memo_core.messages import Message
from memo_core.settings import cache_dir

PROC_FD = "/proc/self/fd"  # a folder's descriptor, as a name the kernel resolves
VFS_NAME = "memo-as-given"


class _AsGiven(apsw.VFS):
    """SQLite's unix VFS, but for taking a file's name as given (it would resolve
    /proc/self/fd/N back into the folder's path, whose folders can be swapped)."""

    def __init__(self) -> None:
        super().__init__(VFS_NAME, "unix")

    def xFullPathname(self, name: str) -> str:  # noqa: N802 - SQLite's name
        return name

    def xSleep(self, microseconds: int) -> int:  # noqa: N802 - SQLite's name
        # SQLite waits for a busy index here: without the GIL, so other threads go on.
        time.sleep(microseconds / 1e6)
        return microseconds


@lru_cache(maxsize=1)
def _registered() -> _AsGiven:
    """The VFS, registered with SQLite once per process (on first need), and kept alive."""
    return _AsGiven()


def _as_given() -> str:
    _registered()
    return VFS_NAME


class HeldConnection(apsw.Connection):
    """A connection whose files are named through the folder descriptor it keeps open
    (closed with it: a number reused meanwhile would name another folder)."""

    def __init__(self, name: str, flags: int, dir_fd: int) -> None:
        super().__init__(name, flags=flags, vfs=_as_given())
        self.dir_fd = dir_fd

    def close(self, force: bool = False) -> None:
        super().close(force)
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1


def connect(
    path: Path, flags: int, options: tuple[str, ...], root: Folder | None
) -> apsw.Connection:
    """A connection to the database at `path` (SQLite's `flags`, URI `options`): for a file
    in `<root>/.memo`, every file SQLite opens for it lies in the `.memo` reached through
    the root's descriptor (FolderChangedError where that cannot be made sure of)."""
    if root is None or not below(path, root):
        return apsw.Connection(_name(str(path), options), flags=_flags(flags, options))
    if os.path.isdir(PROC_FD):
        held = _open_index_dir(path, root)  # kept by the connection
        try:
            name = _name(f"{PROC_FD}/{held}/{path.name}", options)
            return HeldConnection(name, _flags(flags, options), held)
        except BaseException:
            os.close(held)
            raise
    db = apsw.Connection(_name(str(path), options), flags=_flags(flags, options))
    try:
        check_held(db, path, root)
    except BaseException:
        db.close()
        raise
    return db


def _name(path: str, options: tuple[str, ...]) -> str:
    return sqlite_uri(Path(path), *options) if options else path


def _flags(flags: int, options: tuple[str, ...]) -> int:
    return flags | apsw.SQLITE_OPEN_NOFOLLOW | (apsw.SQLITE_OPEN_URI if options else 0)


class _UnixFile(ctypes.Structure):
    """The head of SQLite's `unixFile` (os_unix.c): method table, VFS, inode info, fd."""

    _fields_ = [
        ("methods", ctypes.c_void_p),
        ("vfs", ctypes.c_void_p),
        ("inode", ctypes.c_void_p),
        ("fd", ctypes.c_int),
    ]


def held(db: apsw.Connection, *, wal: bool = False) -> Identity | None:
    """(device, inode) of the database file `db` holds open (`wal`: of its WAL); None when
    it holds none (a WAL not opened yet)."""
    if not (db.vfsname("main") or "").startswith("unix"):
        raise FolderChangedError("index.unix_vfs")
    op = apsw.SQLITE_FCNTL_JOURNAL_POINTER if wal else apsw.SQLITE_FCNTL_FILE_POINTER
    pointer = ctypes.c_void_p()
    db.file_control("main", op, ctypes.addressof(pointer))
    if not pointer.value:
        return None
    file = _UnixFile.from_address(pointer.value)
    if not file.methods or file.fd < 0:
        return None  # not open (SQLite clears the method table of a closed file)
    return identity(os.fstat(file.fd))


def placed(root: Folder, name: str) -> Identity | None:
    """(device, inode) of the regular file `<root>/.memo/<name>`, reached from the root's
    descriptor without following any symlink; None when there is none."""
    try:
        memo = os.open(INDEX_DIR, DIR_FLAGS, dir_fd=root.fd)
    except FileNotFoundError:
        return None
    try:
        st = os.stat(name, dir_fd=memo, follow_symlinks=False)
    except FileNotFoundError:
        return None
    finally:
        os.close(memo)
    return identity(st) if stat.S_ISREG(st.st_mode) else None


def below(path: Path, root: Folder | None) -> bool:
    """Whether `path` names a file in `<root>/.memo/` (else: memo's own cache dir)."""
    # Strings, not Paths: a search over hundreds of collections asks this of each.
    return root is not None and os.path.dirname(path) == os.path.join(root.path, INDEX_DIR)


@contextmanager
def reach(path: Path, root: Folder | None) -> Iterator[tuple[int | None, str]]:
    """How to open the file at `path`: (descriptor of `<root>/.memo`, its name) when it lies
    there, `.memo` opened from the root's descriptor without following a symlink; else
    (None, the path) — memo's cache dir, which no notes folder's writer reaches."""
    if root is None or not below(path, root):
        yield None, str(path)
        return
    fd = _open_index_dir(path, root)
    try:
        yield fd, path.name
    finally:
        os.close(fd)


def _open_index_dir(path: Path, root: Folder) -> int:
    try:
        return os.open(INDEX_DIR, DIR_FLAGS, dir_fd=root.fd)
    except OSError as e:
        raise _cannot("open", path.parent, e) from e


def _cannot(what: Literal["create", "open"], path: Path, e: OSError) -> MemoError:
    """Why memo cannot `what` (create, open) its file at `path`: a place that cannot hold
    the index (the caller keeps it in the cache dir), or a limit that is no reason to."""
    if out_of_files(e):
        return too_many_files(str(path))
    if disk_full(e):  # no room here now is no reason to keep the index elsewhere for good
        return no_room(str(path))
    key = "index.cannot_create" if what == "create" else "index.cannot_open"
    return IndexLocationError(key, path=path, reason=e)


def check_held(db: apsw.Connection, path: Path, root: Folder | None) -> None:
    """FolderChangedError unless `db` (opened on `path`) holds the index that lies at
    `<root>/.memo/` now, and its WAL (once open) the one beside it. An index kept in the
    cache dir (not below the root) is memo's own place: nothing to compare."""
    if root is None or not below(path, root):
        return
    if isinstance(db, HeldConnection):  # its files lie in the `.memo` it holds: that one?
        try:
            same = identity(os.fstat(db.dir_fd)) == identity(
                os.stat(INDEX_DIR, dir_fd=root.fd, follow_symlinks=False)
            )
        except OSError:
            same = False
        if not same:
            raise _changed(path)
        return
    try:
        ours = held(db) == placed(root, path.name)
        wal = held(db, wal=True)
        ours = ours and (wal is None or wal == placed(root, path.name + "-wal"))
    except OSError as e:
        raise _changed(path) from e
    if not ours:
        raise _changed(path)


def _changed(path: Path) -> FolderChangedError:
    return FolderChangedError("index.changed_opening", path=path.parent.parent)


# -- files memo makes in it ----------------------------------------------------------------


def make_private_dir(folder: Path, root: Folder | None = None) -> None:
    """`folder` as a real directory (made if missing; its parents too); never a symlink.
    `<root>/.memo` is made and checked through the root's descriptor."""
    if root is not None and folder == Path(root.path, INDEX_DIR):
        _made(INDEX_DIR, root.fd, folder)
        return
    # Below the cache folder every level is memo's to make (`indexes/`, then one a
    # collection): none may be a link that leads memo to write elsewhere. The cache folder
    # itself, and what holds it, are the user's (a ~/.cache on another disk is common).
    cache = cache_dir()
    below = folder.relative_to(cache).parts if folder.is_relative_to(cache) else ()
    levels = [cache.joinpath(*below[: i + 1]) for i in range(len(below))] or [folder]
    try:
        levels[0].parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _cannot("create", folder, e) from e
    for level in levels:
        _made(str(level), None, level)


def _made(name: str, where: int | None, folder: Path) -> None:
    """The directory `name` (relative to `where`, a descriptor; None: a path) made if
    missing, and found a real directory, not a link to one."""
    try:
        os.mkdir(name, 0o755, dir_fd=where)
    except FileExistsError:
        pass
    except OSError as e:
        raise _cannot("create", folder, e) from e
    st = os.stat(name, dir_fd=where, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        what = Message("file.symlink" if stat.S_ISLNK(st.st_mode) else "file.not_folder")
        raise IndexLocationError("place.through", path=folder, what=what)


def make_private_file(path: Path, root: Folder | None = None) -> None:
    """A new, empty regular file at `path`, unless something is there already."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with reach(path, root) as (where, name):
        try:
            os.close(os.open(name, flags, 0o644, dir_fd=where))
        except FileExistsError:
            pass  # made meanwhile: inspected again when opened
        except OSError as e:
            raise _cannot("create", path, e) from e


def remove_files(path: Path, root: Folder | None = None) -> None:
    """Remove the database at `path` and its side files, when they are memo's (its mark, or
    nothing in it at all); IndexLocationError, and nothing removed, when any is not.

    The side files go first and the database last: until it goes, it still shows whose side
    files they are, should this be cut short."""
    owned(path)
    with reach(path, root) as (where, _):
        for p in [*side_files(path), os.fspath(path)]:
            try:
                os.unlink(os.path.basename(p) if where is not None else p, dir_fd=where)
            except FileNotFoundError:
                pass


def open_lock_file(path: Path, root: Folder | None = None) -> int:
    """A descriptor of the lock file at `path` (made if missing), never through a symlink,
    never one with other names."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with reach(path, root) as (where, name):
        try:
            fd = os.open(name, flags, 0o644, dir_fd=where)
        except OSError as e:
            if e.errno in (errno.EROFS, errno.ENOSPC, errno.EDQUOT):  # nothing can be written
                raise no_room(str(path)) from e
            raise _cannot("open", path, e) from e
    if what := odd(os.fstat(fd)):
        os.close(fd)
        raise IndexLocationError("place.no_lock", path=path, what=what)
    return fd
