"""What makes a file memo's index: opening it, recognising it as memo's (read only, before
anything is written to it), and its schema as numbered migrations applied on open.

Schema 2 (this memo): chunk ids come from AUTOINCREMENT, so an id is never given to another
chunk while the database lives (a reader's vector cache keys on ids); skip notes are codes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec

from .errors import IndexLocationError, IndexStoreError

BUSY_TIMEOUT_MS = 10_000

SCHEMA_VERSION = 2
APP_ID = "memo"  # stored in meta: how memo recognises its own index
APPLICATION_ID = 0x6D656D6F  # 'memo', in the SQLite header too


def _schema_v1(db: apsw.Connection) -> None:
    db.execute(
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files(
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,      -- relative to the collection, '/'-separated
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            hash TEXT NOT NULL,
            note TEXT                       -- why the file was skipped or cut, if it was
        );
        CREATE TABLE chunks(
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id),
            seq INTEGER NOT NULL,
            line INTEGER NOT NULL,
            heading TEXT NOT NULL,
            text TEXT NOT NULL,
            hash TEXT NOT NULL,             -- of what is embedded: heading + text
            has_vec INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX chunks_file ON chunks(file_id, seq);
        CREATE INDEX chunks_hash ON chunks(hash);
        CREATE INDEX chunks_novec ON chunks(id) WHERE has_vec = 0;
        -- Contentless: the text lives in `chunks`; FTS5 holds only the stems memo feeds it.
        CREATE VIRTUAL TABLE fts USING fts5(
            heading, body, content='', contentless_delete=1,
            tokenize='unicode61 remove_diacritics 0'
        );
        """
    )
    db.execute("INSERT INTO meta(key, value) VALUES ('app', ?)", (APP_ID,))


def _v1_to_v2(db: apsw.Connection) -> None:
    # Ids of schema 1 were reused after a delete: a long-lived reader could then serve a
    # deleted chunk's vector for a new chunk. The same rows, now under AUTOINCREMENT.
    db.execute(
        """
        CREATE TABLE chunks2(
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            file_id INTEGER NOT NULL REFERENCES files(id),
            seq INTEGER NOT NULL,
            line INTEGER NOT NULL,
            heading TEXT NOT NULL,
            text TEXT NOT NULL,
            hash TEXT NOT NULL,
            has_vec INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO chunks2 SELECT id, file_id, seq, line, heading, text, hash, has_vec
            FROM chunks;
        DROP TABLE chunks;
        ALTER TABLE chunks2 RENAME TO chunks;
        CREATE INDEX chunks_file ON chunks(file_id, seq);
        CREATE INDEX chunks_hash ON chunks(hash);
        CREATE INDEX chunks_novec ON chunks(id) WHERE has_vec = 0;
        UPDATE files SET note = CASE
            WHEN note LIKE 'skipped: empty%' THEN 'empty'
            WHEN note LIKE 'skipped: binary%' THEN 'binary'
            WHEN note LIKE 'skipped: unreadable%' THEN 'unreadable'
            WHEN note LIKE 'cut%' THEN 'cut'
            ELSE note END
        WHERE note IS NOT NULL;
        """
    )
    db.execute(f"PRAGMA application_id={APPLICATION_ID}")
    # Tells a reader's vector cache that ids may mean other chunks now (see VectorCache).
    db.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('generation', ?)", (new_generation(),)
    )


def new_generation() -> str:
    return os.urandom(8).hex()


# Numbered migrations: MIGRATIONS[i] takes a database from version i to i + 1.
MIGRATIONS = [_schema_v1, _v1_to_v2]


# -- opening ------------------------------------------------------------------------------


def open_for_writing(path: Path) -> apsw.Connection:
    """The index at `path`, created and migrated as needed, in WAL mode."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise IndexLocationError(f"cannot create {path.parent}: {e.strerror or e}") from e
    db = _connect(path, apsw.SQLITE_OPEN_CREATE)
    with _closed_on_error(db, path, writing=True):
        # Whose file this is, read before anything is written to it (WAL included).
        _check_owner(db, path)
        if _scalar(db, "PRAGMA journal_mode=WAL") != "wal":
            raise IndexLocationError(f"WAL journaling does not work in {path.parent}")
        db.execute("PRAGMA synchronous=NORMAL")
        _migrate(db, path)
    return db


def open_for_reading(path: Path) -> apsw.Connection | None:
    """The index at `path` as it is (nothing is written), or None when there is none yet."""
    if not path.is_file():
        return None
    db = _connect(path, 0)
    with _closed_on_error(db, path, writing=False):
        if _check_owner(db, path) == 0:
            db.close()  # empty: a writer is creating it right now, nothing to read yet
            return None
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


def get_meta(db: apsw.Connection, key: str) -> str | None:
    if not _scalar(db, "SELECT 1 FROM sqlite_master WHERE name = 'meta'"):
        return None
    value: str | None = _scalar(db, "SELECT value FROM meta WHERE key = ?", (key,))
    return value


def _scalar(db: apsw.Connection, sql: str, params: tuple[object, ...] = ()) -> Any:
    row = db.execute(sql, params).fetchone()
    return row[0] if row else None


def _connect(path: Path, create_flag: int) -> apsw.Connection:
    try:
        db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE | create_flag)
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


def _check_owner(db: apsw.Connection, path: Path) -> int:
    """The schema version of memo's index at `path` (0: an empty file); an error naming
    what is there for anything else."""
    version: int = _scalar(db, "PRAGMA user_version")
    if version == 0:
        if _scalar(db, "SELECT count(*) FROM sqlite_master"):
            raise _foreign(path)
        return 0
    if version > SCHEMA_VERSION:
        raise IndexStoreError(
            f"{path} was made by a newer memo (schema {version} > {SCHEMA_VERSION}); "
            f"upgrade memo, or move {path.parent} away to rebuild it with this one"
        )
    if get_meta(db, "app") != APP_ID:
        raise _foreign(path)
    return version


def _migrate(db: apsw.Connection, path: Path) -> None:
    if _scalar(db, "PRAGMA user_version") == SCHEMA_VERSION:
        return  # the common case, without taking the write lock
    # Checked again under the write lock: two processes may create the index at once.
    db.execute("BEGIN IMMEDIATE")
    try:
        version = _check_owner(db, path)
        for v in range(version, SCHEMA_VERSION):
            MIGRATIONS[v](db)
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _foreign(path: Path) -> IndexStoreError:
    return IndexStoreError(
        f"{path} is not a memo index; memo leaves it alone: move it away and retry"
    )


def _damaged(path: Path, e: Exception) -> IndexStoreError:
    return IndexStoreError(
        f"cannot open the index {path}: {e}; it is damaged or not memo's: "
        f"move {path.parent} away and search again to rebuild it"
    )
