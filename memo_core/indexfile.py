"""memo's index file on disk: recognising it as memo's (read only, before anything is written
to it), and opening, creating and removing its files without ever following a symlink.

memo's mark is SQLite's `application_id` ('memo') in the file header, plus an `app` row in
its `meta` table written when the index is made (indexes of memo 0.1 have only the row).
Whatever else lies at an index path (another program's database, a symlink, a FIFO) is
never opened for writing, changed, replaced or deleted: the caller keeps its index elsewhere.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec

from . import schema
from .errors import IndexLocationError, IndexStoreError

BUSY_TIMEOUT_MS = 10_000
SQLITE_MAGIC = b"SQLite format 3\x00"
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")  # SQLite's own files beside a database
LOCK_FILE = "refresh.lock"


class Mark(Enum):
    NONE = "none"  # nothing there yet (no file, or an empty one): memo may make its index
    MEMO = "memo"
    FOREIGN = "foreign"


def inspect(path: Path) -> tuple[Mark, str]:
    """Whose file is at `path`, found without writing anything; for a foreign one, what it is."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return Mark.NONE, ""
    if stat.S_ISLNK(st.st_mode):
        return Mark.FOREIGN, "a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return Mark.FOREIGN, "not a regular file"
    header = _read_header(path)
    if header is None:
        return Mark.FOREIGN, "not a regular file"
    if header and not header.startswith(SQLITE_MAGIC):
        return Mark.FOREIGN, "not a SQLite database"
    app_id = int.from_bytes(header[68:72], "big") if len(header) >= 72 else 0
    if app_id == schema.APPLICATION_ID:
        return Mark.MEMO, ""
    if app_id:
        return Mark.FOREIGN, "a SQLite database of another program"
    if not header and not Path(f"{path}-wal").exists():
        return Mark.NONE, ""
    return _ask_sqlite(path)  # memo 0.1, or a new index whose header is still in its WAL


def _read_header(path: Path) -> bytes | None:
    """The first 100 bytes (SQLite's header); None when it is no regular file after all."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise IndexStoreError(f"cannot read {path}: {e.strerror or e}") from e
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # swapped since the lstat
        return os.read(fd, 100)
    finally:
        os.close(fd)


def _ask_sqlite(path: Path) -> tuple[Mark, str]:
    """The mark as SQLite sees it, through a read-only connection."""
    try:
        db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_NOFOLLOW)
    except apsw.Error as e:
        raise _damaged(path, e) from e
    try:
        db.setbusytimeout(BUSY_TIMEOUT_MS)  # a writer may be making it at this very moment
        if _scalar(db, "PRAGMA application_id") == schema.APPLICATION_ID:
            return Mark.MEMO, ""
        if not _scalar(db, "SELECT count(*) FROM sqlite_master"):
            return Mark.NONE, ""
        if _scalar(db, "PRAGMA application_id") == 0 and get_meta(db, "app") == schema.APP_ID:
            return Mark.MEMO, ""  # made by memo 0.1, before the header carried the mark
        return Mark.FOREIGN, "a SQLite database of another program"
    except apsw.NotADBError:
        return Mark.FOREIGN, "not a SQLite database"
    except apsw.Error as e:
        raise _damaged(path, e) from e
    finally:
        db.close()


# -- opening ------------------------------------------------------------------------------


def open_for_writing(path: Path) -> apsw.Connection:
    """memo's index at `path`, created and migrated as needed, in WAL mode.

    IndexLocationError when the place cannot hold it: a foreign file there, a symlink or odd
    file among its side files, a folder memo cannot write (the caller keeps it elsewhere).
    """
    make_private_dir(path.parent)
    mark, what = inspect(path)
    if mark is Mark.FOREIGN:
        raise IndexLocationError(f"{path} is not a memo index ({what}); memo leaves it alone")
    check_side_files(path)
    if mark is Mark.NONE:
        make_private_file(path)
    db = _connect(path)
    with _closed_on_error(db, path, writing=True):
        _check_owner(db, path)
        if _scalar(db, "PRAGMA journal_mode=WAL") != "wal":
            raise IndexLocationError(f"WAL journaling does not work in {path.parent}")
        db.execute("PRAGMA synchronous=NORMAL")
        _migrate(db, path)
    return db


def open_for_reading(path: Path) -> apsw.Connection | None:
    """memo's index at `path` as it is (nothing is written), or None when there is none yet."""
    mark, what = inspect(path)
    if mark is Mark.NONE:
        return None
    if mark is Mark.FOREIGN:
        raise IndexStoreError(f"{path} is not a memo index ({what}); memo leaves it alone")
    check_side_files(path)
    db = _connect(path)
    with _closed_on_error(db, path, writing=False):
        if _check_owner(db, path) == 0:
            db.close()  # empty: a writer is creating it right now, nothing to read yet
            return None
    return db


def get_meta(db: apsw.Connection, key: str) -> str | None:
    if not _scalar(db, "SELECT 1 FROM sqlite_master WHERE name = 'meta'"):
        return None
    value: str | None = _scalar(db, "SELECT value FROM meta WHERE key = ?", (key,))
    return value


# -- files memo makes -----------------------------------------------------------------------


def make_private_dir(folder: Path) -> None:
    """`folder` as a real directory (made if missing; its parents too); never a symlink."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(folder)
    except FileExistsError:
        pass
    except OSError as e:
        raise IndexLocationError(f"cannot create {folder}: {e.strerror or e}") from e
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a folder"
        raise IndexLocationError(f"{folder} is {kind}: memo does not write through it")


def make_private_file(path: Path) -> None:
    """A new, empty regular file at `path`, unless something is there already."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(path, flags, 0o644))
    except FileExistsError:
        pass  # made meanwhile: inspected again when opened
    except OSError as e:
        raise IndexLocationError(f"cannot create {path}: {e.strerror or e}") from e


def check_side_files(path: Path) -> None:
    """SQLite opens a database's side files by name (following links): refuse odd ones."""
    for side in [Path(f"{path}{s}") for s in SIDE_SUFFIXES] + [path.parent / LOCK_FILE]:
        try:
            st = os.lstat(side)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            raise IndexLocationError(f"{side} is {kind}: memo does not write through it")


def remove_files(path: Path) -> None:
    """Remove a database memo made and its side files; anything but a regular file there is
    left alone and refused."""
    check_side_files(path)
    for p in [path] + [Path(f"{path}{s}") for s in SIDE_SUFFIXES]:
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            raise IndexLocationError(f"{p} is not a regular file: memo does not remove it")
        p.unlink(missing_ok=True)


def open_lock_file(path: Path) -> int:
    """A descriptor of the lock file at `path` (made if missing), never through a symlink."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        raise IndexLocationError(f"cannot open {path}: {e.strerror or e}") from e
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise IndexLocationError(f"{path} is not a regular file: memo does not lock it")
    return fd


# -- SQLite -------------------------------------------------------------------------------


def _scalar(db: apsw.Connection, sql: str, params: tuple[object, ...] = ()) -> Any:
    row = db.execute(sql, params).fetchone()
    return row[0] if row else None


def _connect(path: Path) -> apsw.Connection:
    flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_NOFOLLOW
    try:
        db = apsw.Connection(str(path), flags=flags)
    except apsw.Error as e:
        raise IndexLocationError(f"cannot open {path}: {e}") from e
    try:
        db.enable_load_extension(True)
        sqlite_vec.load(db)
        db.enable_load_extension(False)
        db.setbusytimeout(BUSY_TIMEOUT_MS)
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
        db.close()
        cannot_write = (apsw.ReadOnlyError, apsw.CantOpenError, apsw.IOError)
        if writing and isinstance(e, cannot_write):
            raise IndexLocationError(f"cannot write {path}: {e}") from e
        if isinstance(e, apsw.Error):
            raise _damaged(path, e) from e
        raise


def _check_owner(db: apsw.Connection, path: Path) -> int:
    """The schema version of memo's index at `path` (0: nothing in it yet)."""
    version: int = _scalar(db, "PRAGMA user_version")
    if version == 0:
        if _scalar(db, "SELECT count(*) FROM sqlite_master"):
            raise _foreign(path)
        return 0
    if version > schema.SCHEMA_VERSION:
        raise IndexStoreError(
            f"{path} was made by a newer memo (schema {version} > {schema.SCHEMA_VERSION}); "
            f"upgrade memo, or move {path.parent} away to rebuild it with this one"
        )
    if get_meta(db, "app") != schema.APP_ID:
        raise _foreign(path)
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
    return IndexStoreError(f"{path} is not a memo index; memo leaves it alone")


def _damaged(path: Path, e: Exception) -> IndexStoreError:
    return IndexStoreError(
        f"cannot open the index {path}: {e}; it is damaged or not memo's: "
        f"move {path.parent} away and search again to rebuild it"
    )
