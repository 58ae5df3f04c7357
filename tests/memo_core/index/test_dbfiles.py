"""memo_core.index.dbfiles: whose database lies at a path, read from its files' bytes
without writing anything (the mark, the schema, the side files)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import apsw
import pytest

from memo_core.errors import IndexLocationError
from memo_core.index import dbfiles, schema
from memo_core.index.dbfiles import Mark, inspect, odd, owned, side_files, sqlite_uri, unexpected
from memo_core.index.opening import open_for_writing
from memo_core.messages import Message


def _memo_index(path: Path) -> Path:
    open_for_writing(path).close()
    return path


def _sqlite(path: Path, *sql: str) -> Path:
    db = sqlite3.connect(path)
    for s in sql:
        db.execute(s)
    db.commit()
    db.close()
    return path


def _files(tmp_path: Path) -> dict[str, bytes]:
    """Every file in the folder and its bytes: what inspecting must leave as it was."""
    return {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir()) if p.is_file()}


def _what(why: Message | None) -> str:
    """The key of what a `file.left_alone` says is wrong (`file.is`'s predicate, or its own)."""
    assert why is not None and why.key == "file.left_alone"
    inner = why.params["why"]
    assert isinstance(inner, Message)
    if inner.key == "file.is":
        what = inner.params["what"]
        assert isinstance(what, Message)
        return what.key
    return inner.key


# -- the database itself -------------------------------------------------------------------


def test_nothing_there_or_an_empty_file_is_no_ones(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    assert inspect(db) == (Mark.NONE, None)
    db.write_bytes(b"")
    assert inspect(db) == (Mark.NONE, None)
    assert owned(db) is Mark.NONE


def test_a_database_that_never_had_a_table_is_no_ones(tmp_path: Path) -> None:
    db = _sqlite(tmp_path / "index.db", "PRAGMA user_version = 7")
    assert db.stat().st_size > 0
    assert inspect(db) == (Mark.NONE, None)


def test_memos_index_is_memos_and_inspecting_it_writes_nothing(tmp_path: Path) -> None:
    db = _memo_index(tmp_path / "index.db")
    before = _files(tmp_path)
    assert inspect(db) == (Mark.MEMO, None)
    assert owned(db) is Mark.MEMO
    assert _files(tmp_path) == before


def test_memo_0_1s_index_is_known_by_its_meta_row(tmp_path: Path) -> None:
    db = _sqlite(
        tmp_path / "index.db",
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        f"INSERT INTO meta VALUES ('app', '{schema.APP_ID}')",
    )
    assert inspect(db) == (Mark.MEMO, None)


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        (["CREATE TABLE theirs(x)"], "file.another_programs"),
        (
            ["CREATE TABLE meta(key, value)", "INSERT INTO meta VALUES ('app', 'other')"],
            "file.another_programs",
        ),
        (["PRAGMA application_id = 42", "CREATE TABLE theirs(x)"], "file.another_programs"),
    ],
)
def test_another_programs_database_is_foreign(tmp_path: Path, sql: list[str], what: str) -> None:
    db = _sqlite(tmp_path / "index.db", *sql)
    before = _files(tmp_path)
    mark, why = inspect(db)
    assert mark is Mark.FOREIGN
    assert _what(why) == what
    assert _files(tmp_path) == before
    with pytest.raises(IndexLocationError) as caught:
        owned(db)
    assert caught.value.message.key == "file.left_alone"


def test_a_file_that_is_no_sqlite_database_is_foreign(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    db.write_bytes(b"# my notes on databases\n" * 10)
    mark, why = inspect(db)
    assert mark is Mark.FOREIGN and _what(why) == "file.not_sqlite"


@pytest.mark.parametrize(
    ("plant", "named"),
    [
        ("CREATE TRIGGER t AFTER INSERT ON files BEGIN SELECT 1; END", "trigger t"),
        ("CREATE VIEW v AS SELECT 1", "view v"),
        ("CREATE TABLE extra(x)", "table extra"),
        ("DROP TABLE tags", "table tags"),  # less than memo makes is not memo's either
    ],
)
def test_memos_mark_on_a_schema_memo_does_not_make_is_foreign(
    tmp_path: Path, plant: str, named: str
) -> None:
    db = _memo_index(tmp_path / "index.db")
    conn = apsw.Connection(str(db))
    conn.execute(plant)
    conn.close()
    mark, why = inspect(db)
    assert mark is Mark.FOREIGN
    assert _what(why) == "file.not_memos_schema"
    assert why is not None and named in str(why)


def _wal_only(path: Path, app_id: int) -> None:
    """A database whose mark and tables are only in its WAL (killed before a checkpoint):
    made in a folder of its own and its files copied while the writer is still open."""
    work = path.parent / "work"
    work.mkdir()
    db = sqlite3.connect(work / path.name)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    db.execute(f"PRAGMA application_id = {app_id}")
    db.execute("CREATE TABLE t(x)")
    db.commit()
    for name in (path.name, f"{path.name}-wal"):
        shutil.copyfile(work / name, path.parent / name)
    db.close()


def test_the_mark_is_found_in_the_wal_of_an_index_killed_before_its_first_checkpoint(
    tmp_path: Path,
) -> None:
    db = tmp_path / "index.db"
    _wal_only(db, schema.APPLICATION_ID)
    assert int.from_bytes(db.read_bytes()[68:72], "big") == 0  # not in the file itself
    assert inspect(db) == (Mark.MEMO, None)


def test_another_programs_mark_in_the_wal_is_foreign(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    _wal_only(db, 42)
    mark, why = inspect(db)
    assert mark is Mark.FOREIGN and _what(why) == "file.another_programs"


# -- odd files at memo's names -------------------------------------------------------------


def test_a_symlink_to_memos_own_index_is_foreign(tmp_path: Path) -> None:
    real = _memo_index(tmp_path / "real.db")
    link = tmp_path / "index.db"
    link.symlink_to(real)
    mark, why = inspect(link)
    assert mark is Mark.FOREIGN and _what(why) == "file.symlink"


def test_a_hard_linked_index_is_foreign(tmp_path: Path) -> None:
    db = _memo_index(tmp_path / "index.db")
    os.link(db, tmp_path / "copy.db")
    mark, why = inspect(db)
    assert mark is Mark.FOREIGN and _what(why) == "file.hard_links"


def test_a_fifo_at_the_index_name_is_foreign_and_never_blocks(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    os.mkfifo(db)
    mark, why = inspect(db)
    assert mark is Mark.FOREIGN and _what(why) == "file.not_regular"


def test_odd_names_what_memo_never_writes(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    assert odd(os.lstat(plain)) is None
    (tmp_path / "link").symlink_to(plain)
    assert odd(os.lstat(tmp_path / "link")).key == "file.symlink"  # type: ignore[union-attr]
    assert odd(os.lstat(tmp_path)).key == "file.not_regular"  # type: ignore[union-attr]
    os.link(plain, tmp_path / "second")
    assert odd(os.lstat(plain)).key == "file.hard_links"  # type: ignore[union-attr]


# -- side files ----------------------------------------------------------------------------


def test_side_files_are_sqlites_suffixes() -> None:
    assert side_files(Path("/x/index.db")) == [
        "/x/index.db-wal",
        "/x/index.db-shm",
        "/x/index.db-journal",
    ]


def _garbage_wal(db: Path) -> None:
    Path(f"{db}-wal").write_bytes(b"not a wal file at all, but 32+ bytes long")


def _journal(db: Path) -> None:
    Path(f"{db}-journal").write_bytes(dbfiles.JOURNAL_MAGIC + bytes(8) + (1).to_bytes(4, "big") * 3)


def _lock_with_data(db: Path) -> None:
    (db.parent / dbfiles.LOCK_FILE).write_text("pid 123")


def _lock_symlink(db: Path) -> None:
    (db.parent / dbfiles.LOCK_FILE).symlink_to(db.parent / "elsewhere")


def _shm_symlink(db: Path) -> None:
    Path(f"{db}-shm").symlink_to(db.parent / "elsewhere")


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (_garbage_wal, "file.not_wal"),
        (_journal, "file.foreign_journal"),
        (_lock_with_data, "file.lock_holds_data"),
        (_lock_symlink, "file.symlink"),
        (_shm_symlink, "file.symlink"),
    ],
)
def test_a_side_file_memo_did_not_leave_makes_its_index_foreign(
    tmp_path: Path, make, what: str
) -> None:
    db = _memo_index(tmp_path / "index.db")
    make(db)
    mark, why = inspect(db)
    assert mark is Mark.FOREIGN and _what(why) == what


def test_an_empty_lock_file_beside_it_is_memos(tmp_path: Path) -> None:
    db = _memo_index(tmp_path / "index.db")
    (tmp_path / dbfiles.LOCK_FILE).write_bytes(b"")
    assert inspect(db) == (Mark.MEMO, None)


def test_a_side_file_with_no_database_beside_it_is_foreign(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    Path(f"{db}-shm").write_bytes(b"")
    mark, why = inspect(db)
    assert mark is Mark.FOREIGN and _what(why) == "file.side_alone"


def test_the_journal_of_a_database_being_made_restores_nothing(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    db.write_bytes(b"")
    Path(f"{db}-journal").write_bytes(bytes(dbfiles.JOURNAL_HEADER_SIZE))  # magic still zero
    assert inspect(db) == (Mark.NONE, None)
    Path(f"{db}-journal").write_bytes(b"")
    assert inspect(db) == (Mark.NONE, None)


# -- helpers -------------------------------------------------------------------------------


def test_unexpected_names_nothing_in_memos_own_schema(tmp_path: Path) -> None:
    db = apsw.Connection(str(_memo_index(tmp_path / "index.db")))
    try:
        assert unexpected(db) == ""
        db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
        db.execute("CREATE VIEW v AS SELECT 1")
        assert unexpected(db) == ""  # a newer schema is the opener's to judge
        db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION}")
        assert unexpected(db) == "view v"
    finally:
        db.close()


def test_unexpected_names_at_most_three_things(tmp_path: Path) -> None:
    db = apsw.Connection(str(_memo_index(tmp_path / "index.db")))
    try:
        for name in "abcde":
            db.execute(f"CREATE TABLE x{name}(y)")
        assert unexpected(db) == "table xa, table xb, table xc"
    finally:
        db.close()


@pytest.mark.parametrize(
    ("path", "options", "uri"),
    [
        (Path("/a/index.db"), (), "file:/a/index.db?"),
        (Path("/a b/index.db"), ("immutable=1",), "file:/a%20b/index.db?immutable=1"),
        (Path("/a?#/i.db"), ("mode=ro", "nolock=1"), "file:/a%3F%23/i.db?mode=ro&nolock=1"),
        (Path("/б"), (), "file:/%D0%B1?"),
    ],
)
def test_sqlite_uri_quotes_the_path_and_joins_its_options(
    path: Path, options: tuple[str, ...], uri: str
) -> None:
    assert sqlite_uri(path, *options) == uri


def test_an_uri_reaches_a_file_whose_name_needs_quoting(tmp_path: Path) -> None:
    db = _sqlite(tmp_path / "a b?#%.db", "CREATE TABLE t(x)", "INSERT INTO t VALUES (5)")
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    conn = apsw.Connection(sqlite_uri(db, "immutable=1"), flags=flags)
    try:
        assert conn.execute("SELECT x FROM t").fetchall() == [(5,)]
    finally:
        conn.close()
