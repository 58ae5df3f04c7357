"""memo_core.index.opening: memo's index opened to write (made and migrated), to read, or
only to look at, never touching a file that is not memo's."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest
from conftest import HANG_S, as_schema_2

from memo_core.errors import IndexLocationError, IndexStoreError
from memo_core.files.fsafe import Folder
from memo_core.index import opening, schema


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _index(path: Path, *rows: str) -> Path:
    """memo's index at `path`, with these keys in its meta table, closed (no WAL left)."""
    db = opening.open_for_writing(path)
    for key in rows:
        db.execute("INSERT INTO meta(key, value) VALUES (?, 'v')", (key,))
    db.close()
    return path


def _version(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


# A writer in another process: one in this process would share its -shm with a reader
# here (SQLite keeps one per file per process), and a reader's marks would land in it.
WRITER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA wal_autocheckpoint = 0")
db.execute("INSERT INTO meta(key, value) VALUES ('seen', 'in the wal')")
print("ready", flush=True)
sys.stdin.readline()
db.close()
"""


@contextmanager
def writer_elsewhere(path: Path) -> Iterator[None]:
    """memo's index at `path` with a row committed to its WAL by a writer, open meanwhile in
    another process; closed (its WAL folded into the file) after."""
    opening.open_for_writing(path).close()
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        yield
    finally:
        child.communicate("\n", timeout=HANG_S)
    assert child.returncode == 0


# -- writing -------------------------------------------------------------------------------


def test_a_new_index_is_made_in_wal_mode_at_this_schema(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "index.db"
    db = opening.open_for_writing(path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
        assert opening.get_meta(db, "app") == schema.APP_ID
        assert opening.get_meta(db, "no such key") is None
        assert schema.listed(db) == schema.objects(schema.SCHEMA_VERSION)[0]
    finally:
        db.close()


def test_opening_memos_index_again_keeps_what_it_holds(tmp_path: Path) -> None:
    path = _index(tmp_path / "index.db", "mine")
    db = opening.open_for_writing(path)
    try:
        assert opening.get_meta(db, "mine") == "v"
    finally:
        db.close()


def test_an_index_in_memo_folder_is_opened_through_the_root(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    path = tmp_path / "notes" / ".memo" / "index.db"
    with Folder(tmp_path / "notes") as root:
        opening.open_for_writing(path, root).close()
        db = opening.open_for_reading(path, root)
        assert db is not None
        db.close()
    assert path.is_file()


def test_an_older_schema_is_migrated_with_its_rows(tmp_path: Path) -> None:
    path = _index(tmp_path / "index.db", "mine")
    as_schema_2(path)
    assert _version(path) == 2
    db = opening.open_for_writing(path)
    try:
        assert db.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
        assert opening.get_meta(db, "mine") == "v"
        assert schema.listed(db) == schema.objects(schema.SCHEMA_VERSION)[0]
    finally:
        db.close()


def test_another_programs_database_is_never_opened_for_writing(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    theirs = sqlite3.connect(path)
    theirs.execute("CREATE TABLE theirs(x)")
    theirs.commit()
    theirs.close()
    before = _files(tmp_path)
    with pytest.raises(IndexLocationError) as caught:
        opening.open_for_writing(path)
    assert caught.value.message.key == "file.left_alone"
    assert _files(tmp_path) == before
    with pytest.raises(IndexLocationError):
        opening.open_for_reading(path)


def _newer(path: Path) -> Path:
    _index(path)
    db = apsw.Connection(str(path))
    db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    db.close()
    return path


@pytest.mark.parametrize(
    "how",
    [
        opening.open_for_writing,
        opening.open_for_reading,
        opening.open_without_writing,
        lambda p: opening.look(p, lambda db: db),
    ],
)
def test_an_index_of_a_newer_memo_is_refused_and_left_as_it_is(tmp_path: Path, how) -> None:
    path = _newer(tmp_path / "index.db")
    before = _files(tmp_path)
    with pytest.raises(IndexStoreError) as caught:
        how(path)
    assert caught.value.message.key == "index.newer"
    assert caught.value.message.params["version"] == schema.SCHEMA_VERSION + 1
    after = _files(tmp_path)
    if how is opening.open_for_reading:  # a WAL's reader: SQLite's empty -wal and -shm
        assert after.pop("index.db-wal") == b""
        after.pop("index.db-shm")
    assert after == before


def test_memos_mark_on_a_damaged_file_is_said_damaged(tmp_path: Path) -> None:
    path = _index(tmp_path / "index.db")
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\xa5" * (len(data) - 100))  # header kept, pages garbled
    with pytest.raises(IndexStoreError) as caught:
        opening.open_for_writing(path)
    assert caught.value.message.key == "index.damaged"


def test_a_writer_opens_an_index_another_connection_is_writing(tmp_path: Path) -> None:
    path = _index(tmp_path / "index.db")
    busy = opening.open_for_writing(path)
    busy.execute("BEGIN IMMEDIATE")
    try:
        db = opening.open_for_writing(path)  # at this schema: no write lock needed to open
        db.close()
    finally:
        busy.execute("ROLLBACK")
        busy.close()


# -- reading -------------------------------------------------------------------------------


@pytest.mark.parametrize("empty_file", [False, True])
def test_no_index_yet_reads_as_none(tmp_path: Path, empty_file: bool) -> None:
    path = tmp_path / "index.db"
    if empty_file:
        path.write_bytes(b"")
    assert opening.open_for_reading(path) is None
    assert opening.open_without_writing(path) is None
    assert opening.look(path, lambda db: ("read", db)) == ("read", None)
    assert [p.name for p in tmp_path.iterdir()] == (["index.db"] if empty_file else [])


def test_a_reader_sees_what_is_committed_and_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    writer = opening.open_for_writing(path)
    try:
        writer.execute("INSERT INTO meta(key, value) VALUES ('seen', 'yes')")
        reader = opening.open_for_reading(path)
        assert reader is not None
        try:
            assert opening.get_meta(reader, "seen") == "yes"
            with pytest.raises(apsw.ReadOnlyError):
                reader.execute("INSERT INTO meta(key, value) VALUES ('no', 'no')")
        finally:
            reader.close()
        wal = Path(f"{path}-wal").read_bytes()
        database = path.read_bytes()
        reader = opening.open_for_reading(path)
        assert reader is not None
        reader.close()  # closing checkpoints nothing
        assert Path(f"{path}-wal").read_bytes() == wal
        assert path.read_bytes() == database
    finally:
        writer.close()


def test_look_reads_the_last_commit_and_writes_nothing_at_all(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    with writer_elsewhere(path):
        before = _files(tmp_path)
        assert {"index.db-wal", "index.db-shm"} <= before.keys()
        assert opening.look(path, lambda db: opening.get_meta(db, "seen")) == "in the wal"
        assert _files(tmp_path) == before
    before = _files(tmp_path)  # closed: all of it in the file
    assert "index.db-wal" not in before
    assert opening.look(path, lambda db: opening.get_meta(db, "seen")) == "in the wal"
    assert _files(tmp_path) == before


def _copy_without_shm(path: Path, to: Path) -> Path:
    """A copy of an index whose commits are still in its WAL, without the -shm: a writer
    killed while closing."""
    to.mkdir()
    shutil.copyfile(path, to / path.name)
    shutil.copyfile(f"{path}-wal", to / f"{path.name}-wal")
    return to / path.name


def test_a_wal_without_its_shm_cannot_be_read_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    writer = opening.open_for_writing(path)
    try:
        writer.execute("INSERT INTO meta(key, value) VALUES ('seen', 'in the wal')")
        copy = _copy_without_shm(path, tmp_path / "copy")
    finally:
        writer.close()
    before = _files(copy.parent)
    with pytest.raises(IndexStoreError) as caught:
        opening.look(copy, lambda db: db)
    assert caught.value.message.key == "index.wal_unreadable"
    with pytest.raises(IndexStoreError) as caught:
        opening.open_without_writing(copy)
    assert caught.value.message.key == "index.wal_unreadable"
    assert _files(copy.parent) == before


@pytest.mark.parametrize("writer_open", [True, False])
def test_open_without_writing_reads_committed_rows_and_writes_nothing(
    tmp_path: Path, writer_open: bool
) -> None:
    path = tmp_path / "index.db"

    def read() -> None:
        before = _files(tmp_path)
        db = opening.open_without_writing(path)
        assert db is not None
        try:
            assert opening.get_meta(db, "seen") == "in the wal"
            with pytest.raises(apsw.ReadOnlyError):
                db.execute("DELETE FROM meta")
        finally:
            db.close()
        assert _files(tmp_path) == before

    with writer_elsewhere(path):
        if writer_open:
            read()
    if not writer_open:
        read()


def test_get_meta_of_a_database_with_no_meta_table_is_none() -> None:
    db = apsw.Connection(":memory:")
    try:
        assert opening.get_meta(db, "app") is None
    finally:
        db.close()
