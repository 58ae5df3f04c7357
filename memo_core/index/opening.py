"""memo's index file on disk: opening it to write, to read, or only to look at, never
following a symlink and never touching a file that is not memo's (`dbfiles` says whose a
file is, before SQLite opens it; `directory` reaches the files through the root's descriptor).

Whatever lies at an index path that is not memo's (another program's database, a symlink, a
FIFO, a hard link, a journal memo did not leave) is never opened for writing, changed,
replaced or deleted: the caller keeps its index elsewhere. What only reads never writes the
index or its WAL and never checkpoints; `look`, for a status, writes nothing at all.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import apsw

from memo_core.errors import IndexBusyError, IndexLocationError, IndexStoreError, MemoError
from memo_core.files.fsafe import (
    Folder,
    no_room,
    out_of_files,
    out_of_room,
    too_many_files,
)
from memo_core.index import schema
from memo_core.index.dbfiles import Mark, owned, side_files, unexpected
from memo_core.index.directory import check_held, connect, make_private_dir, make_private_file
from memo_core.messages import Message

BUSY_TIMEOUT_MS = 10_000
BUSY_RETRY_S = 0.02  # between tries at an index another process is making
LOOK_PAUSES = (0.0, 0.01, 0.05, 0.2)  # seconds before each try of `look`
T = TypeVar("T")


class _PerFile:
    """A lock per index file, for this process.

    SQLite keeps one shared-memory index (-shm) per file per process, made read-only for
    every connection when the first to map it was `look`'s: a writer attaching meanwhile
    would fail with "attempt to write a readonly database" for as long as it lives. So no
    connection to an index is opened while a `look` at it is open. One lock per file:
    opening one index, which may wait for another process's lock, holds up no other."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}

    def __call__(self, path: Path) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(str(path), threading.RLock())


_opening = _PerFile()


# -- opening --------------------------------------------------------------------------------


def open_for_writing(path: Path, root: Folder | None = None) -> apsw.Connection:
    """memo's index at `path`, created and migrated as needed, in WAL mode; `root`: the
    collection's folder, when `path` lies in its `.memo` (reached through its descriptor,
    and SQLite's file checked to be the one there: `directory`).

    IndexLocationError when the place cannot hold it: a foreign file there, a symlink or odd
    file among its side files, a folder memo cannot write (the caller keeps it elsewhere).
    """
    make_private_dir(path.parent, root)
    mark = owned(path, with_schema=False)  # `_check_owner` reads the schema it opens
    if mark is Mark.NONE:
        make_private_file(path, root)
    # Two processes making the index at once: SQLite says busy without waiting where one
    # switches the new file to WAL while the other reads it; the next try finds it made.
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return _open_for_writing(path, root)
        except IndexBusyError:
            if time.monotonic() > deadline:
                raise
            time.sleep(BUSY_RETRY_S)


def _open_for_writing(path: Path, root: Folder | None) -> apsw.Connection:
    with _opening(path):
        db = _open_sqlite(path, apsw.SQLITE_OPEN_READWRITE, root=root)
        with _closed_on_error(db, path, writing=True):
            _check_owner(db, path)
            if _scalar(db, "PRAGMA journal_mode=WAL") != "wal":
                raise IndexLocationError("index.no_wal", folder=path.parent)
            check_held(db, path, root)  # the WAL too, now open
            db.execute("PRAGMA synchronous=NORMAL")
            _migrate(db, path)
    return db


def open_for_reading(path: Path, root: Folder | None = None) -> apsw.Connection | None:
    """memo's index at `path` as it is, or None when there is none yet; read-only: it never
    writes the database or its WAL, never checkpoints, never deletes a file (SQLite's shared
    memory, -shm, is kept up to date by it as by every reader of a WAL). `root`: as for
    `open_for_writing`."""
    if owned(path, with_schema=False) is Mark.NONE:  # `_check_owner` reads the schema
        return None
    with _opening(path):
        db = _open_sqlite(path, apsw.SQLITE_OPEN_READONLY, root=root)
        with _closed_on_error(db, path, writing=False):
            if _check_owner(db, path) == 0:
                db.close()  # empty: a writer is creating it right now, nothing to read yet
                return None
            check_held(db, path, root)
    return db


def look(path: Path, read: Callable[[apsw.Connection | None], T], root: Folder | None = None) -> T:
    """What `read` finds in memo's index at `path` as last committed (None: no index yet),
    read without writing a byte, not even to SQLite's -shm: for a status, which must change
    nothing. `read` runs again when a writer moved on while it read.

    With no WAL beside it (or an empty one) the file holds everything committed, read
    `immutable`: no lock, no WAL, so a checkpoint into it meanwhile is noticed by its time.
    With a WAL, SQLite reads it through a read-only -shm. A WAL without its -shm is a writer
    closing (SQLite removes the -shm, then the WAL), or one killed just then: that WAL
    cannot be read without making a -shm, and that is said.
    """
    for pause in LOOK_PAUSES:
        time.sleep(pause)
        try:
            return _look_once(path, read, root)
        except _MovedOn:
            continue
    wal, shm, _ = side_files(path)
    if _size(wal) and not os.path.lexists(shm):
        raise IndexStoreError("index.wal_unreadable", path=path)
    raise IndexBusyError("index.kept_changing", path=path)


def open_without_writing(path: Path, root: Folder | None = None) -> apsw.Connection | None:
    """memo's index at `path` for reading, as `look` reads it (immutable, or through a
    read-only -shm): for a search on a file system with no room left, where a reader cannot
    extend the -shm it needs. None: no index there. No retry: nothing can write there now."""
    if owned(path, with_schema=False) is Mark.NONE:  # `_check_owner` reads the schema
        return None
    wal, shm, _ = side_files(path)
    with _opening(path):
        if not _size(wal):
            option = "immutable=1"
        elif os.path.lexists(shm):
            option = "readonly_shm=1"
        else:
            raise IndexStoreError("index.wal_unreadable", path=path)
        db = _open_sqlite(path, apsw.SQLITE_OPEN_READONLY, option, root=root)
        with _closed_on_error(db, path, writing=False):
            version = _check_owner(db, path)
            check_held(db, path, root)
        if not version:
            db.close()
            return None
        return db


class _MovedOn(Exception):
    """A writer changed what `look` was reading."""


def _look_once(path: Path, read: Callable[[apsw.Connection | None], T], root: Folder | None) -> T:
    if owned(path, with_schema=False) is Mark.NONE:  # `_check_owner` reads the schema
        return read(None)
    wal, shm, _ = side_files(path)
    with _opening(path):
        if not _size(wal):
            option, before = "immutable=1", _version(path)
        elif os.path.lexists(shm):
            option, before = "readonly_shm=1", None
        else:
            raise _MovedOn
        try:
            db = _open_sqlite(path, apsw.SQLITE_OPEN_READONLY, option, root=root)
            try:
                with _closed_on_error(db, path, writing=False):
                    version = _check_owner(db, path)
                    check_held(db, path, root)
                found = read(db if version else None)
            finally:
                db.close()
        except (apsw.Error, IndexStoreError) as e:
            if _moved_on(path, before):
                raise _MovedOn from e
            raise
        if before is not None and _moved_on(path, before):
            raise _MovedOn
        return found


def _size(path: str | Path) -> int:
    try:
        return os.lstat(path).st_size
    except FileNotFoundError:
        return 0


def _version(path: Path) -> tuple[int, int, int] | None:
    """Which file is at `path` and when it last changed (None: none is)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _moved_on(path: Path, before: tuple[int, int, int] | None) -> bool:
    """Whether `look` may not have read what it chose to: the file read `immutable` (its
    version then: `before`) was written since, or the WAL it read is gone (its last writer
    closed, checkpointing it into the file: SQLite then left an empty one, or none)."""
    if before is None:
        return not _size(side_files(path)[0])
    return _version(path) != before


META_VALUE = "SELECT value FROM meta WHERE key = ?"


def get_meta(db: apsw.Connection, key: str) -> str | None:
    if not _scalar(db, "SELECT 1 FROM sqlite_master WHERE name = 'meta'"):
        return None
    value: str | None = _scalar(db, META_VALUE, (key,))
    return value


# -- SQLite -------------------------------------------------------------------------------


def _scalar(db: apsw.Connection, sql: str, params: tuple[object, ...] = ()) -> Any:
    row = db.execute(sql, params).fetchone()
    return row[0] if row else None


def _open_sqlite(
    path: Path, access: int, *options: str, root: Folder | None = None
) -> apsw.Connection:
    """A connection to the database at `path` with sqlite-vec, never through a symlink, with
    SQLite's URI `options`; one that only reads never checkpoints the WAL when it closes.
    For a file in `<root>/.memo`, the files SQLite opens are the ones there (`directory`)."""
    try:
        db = connect(path, access, options, root)
    except apsw.Error as e:
        if out_of_files():
            raise too_many_files(str(path)) from e
        if _full(path, e):
            raise no_room(str(path)) from e
        raise IndexLocationError("index.cannot_open", path=path, reason=e) from e
    try:
        if access & apsw.SQLITE_OPEN_READONLY:
            db.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        schema.load_sqlite_vec(db)
        db.setbusytimeout(BUSY_TIMEOUT_MS)
        # What a schema holds does not run with memo's rights: no function with side
        # effects in a trigger or view, no writing SQLite's own tables (defensive).
        db.execute("PRAGMA trusted_schema=OFF")
        db.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
        db.execute("PRAGMA mmap_size=268435456")
    except apsw.Error as e:
        db.close()
        raise _damaged(path, e) from e
    return db


@contextmanager
def _closed_on_error(db: apsw.Connection, path: Path, *, writing: bool) -> Iterator[None]:
    """Close `db` when what follows fails, and say in memo's terms what SQLite found."""
    try:
        yield
    except BaseException as e:
        # SQLite's own errno first: a probe later can miss descriptors freed meanwhile.
        limit = isinstance(e, apsw.Error) and (_out_of_files(db) or out_of_files())
        db.close()
        if limit:  # a limit, not a place that cannot hold the index: no reason to move it
            raise too_many_files(str(path)) from e
        if _full(path, e):  # the disk, not the index: rebuilding cannot help
            raise no_room(str(path)) from e
        if isinstance(e, apsw.BusyError):  # another process at work on it: not damage
            raise IndexBusyError("index.busy", path=path) from e
        cannot_write = (apsw.ReadOnlyError, apsw.CantOpenError, apsw.IOError)
        if writing and isinstance(e, cannot_write):
            raise IndexLocationError("index.cannot_write", path=path, reason=e) from e
        if isinstance(e, apsw.Error):
            raise _damaged(path, e) from e
        raise


def _check_owner(db: apsw.Connection, path: Path) -> int:
    """The schema version of memo's index at `path` (0: nothing in it yet)."""
    # Both read by one statement, from one snapshot: another process may be making it now.
    sql = "SELECT user_version, (SELECT count(*) FROM sqlite_master) FROM pragma_user_version"
    row = db.execute(sql).fetchone()
    assert row is not None  # the pragma has its one row
    version, tables = row
    if version == 0:
        if tables:
            raise _foreign(path)
        return 0
    if version > schema.SCHEMA_VERSION:
        raise IndexStoreError(
            "index.newer",
            path=path,
            version=version,
            ours=schema.SCHEMA_VERSION,
            folder=path.parent,
        )
    if get_meta(db, "app") != schema.APP_ID:
        raise _foreign(path)
    if extra := unexpected(db):  # planted since `owned` looked (in the WAL, say)
        what = Message("file.not_memos_schema", extra=extra)
        why = Message("file.is", path=path, what=what)
        raise IndexLocationError(Message("file.left_alone", why=why))
    return version


def _migrate(db: apsw.Connection, path: Path) -> None:
    if _scalar(db, "PRAGMA user_version") == schema.SCHEMA_VERSION:
        return  # the common case, without taking the write lock
    # Checked again under the write lock: two processes may create the index at once.
    db.execute("BEGIN IMMEDIATE")
    try:
        version = _check_owner(db, path)
        for v in range(version, schema.SCHEMA_VERSION):
            schema.MIGRATIONS[v](db)
        db.execute(f"PRAGMA user_version={schema.SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _foreign(path: Path) -> IndexStoreError:
    return IndexStoreError("index.foreign", path=path)


def _out_of_files(db: apsw.Connection) -> bool:
    return db.system_errno in (errno.EMFILE, errno.ENFILE)


def _full(path: Path, e: BaseException) -> bool:
    """Whether SQLite failed for want of room: it says so (SQLITE_FULL), or an I/O error on
    a file system that has none left (a WAL or shared memory it could not extend)."""
    if isinstance(e, apsw.FullError):
        return True
    return isinstance(e, apsw.IOError | apsw.CantOpenError) and out_of_room(path.parent)


def _damaged(path: Path, e: Exception) -> MemoError:
    if _full(path, e):  # the disk, not the index: rebuilding cannot help
        return no_room(str(path))
    return IndexStoreError("index.damaged", path=path, reason=e, folder=path.parent)
