"""memo_core.index.schema: the numbered migrations, what each schema holds, the vector table."""

from __future__ import annotations

import struct

import apsw
import pytest
import sqlite_vec

from memo_core.index import history, schema


@pytest.fixture
def db():
    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    yield conn
    conn.close()


def _migrate(db: apsw.Connection, start: int, end: int) -> None:
    for migrate in schema.MIGRATIONS[start:end]:
        migrate(db)


def test_one_migration_per_version() -> None:
    assert len(schema.MIGRATIONS) == schema.SCHEMA_VERSION
    assert schema.APPLICATION_ID == int.from_bytes(b"memo", "big")


@pytest.mark.parametrize(
    ("version", "has", "lacks"),
    [
        (
            1,
            {("table", "files"), ("table", "chunks"), ("table", "meta"), ("table", "fts")},
            {("table", "history")},
        ),
        (
            3,
            {("table", "history"), ("table", "file_log"), ("index", "history_fingerprint")},
            {("table", "tags")},
        ),
        (4, {("table", "tags"), ("index", "tags_file")}, {("table", "sentences")}),
        (6, {("table", "sentences"), ("index", "chunks_nosent")}, set()),
    ],
)
def test_each_schema_holds_what_its_migrations_make(version: int, has: set, lacks: set) -> None:
    tables, _ = schema.objects(version)
    assert has <= tables
    assert not lacks & tables
    assert not any(name.startswith("sqlite_") for _, name in tables)


def test_each_version_holds_all_the_one_before_did_but_a_replaced_table() -> None:
    for version in range(2, schema.SCHEMA_VERSION + 1):
        before, _ = schema.objects(version - 1)
        now, _ = schema.objects(version)
        assert before <= now, version


def test_the_vector_table_adds_vec0_and_its_shadow_tables() -> None:
    tables, vectors = schema.objects(schema.SCHEMA_VERSION)
    assert ("table", "vec") in vectors
    assert ("table", "vec_chunks") in vectors
    assert not vectors & tables


def test_listed_leaves_out_sqlites_own_objects(db: apsw.Connection) -> None:
    _migrate(db, 0, 2)  # AUTOINCREMENT makes sqlite_sequence
    names = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert "sqlite_sequence" in names
    assert ("table", "chunks") in schema.listed(db)
    assert not any(name.startswith("sqlite_") for _, name in schema.listed(db))
    assert schema.listed(db) == schema.objects(2)[0]


def test_a_schema_1_index_migrates_with_its_rows_kept(db: apsw.Connection) -> None:
    _migrate(db, 0, 1)
    assert db.execute("SELECT value FROM meta WHERE key = 'app'").fetchall() == [("memo",)]
    db.execute(
        "INSERT INTO files(id, path, mtime_ns, size, hash, note) VALUES "
        "(1, 'a.md', 1, 2, 'h1', NULL), (2, 'b.md', 1, 2, 'h2', 'skipped: empty file'), "
        "(3, 'c.md', 1, 2, 'h3', 'skipped: binary data'), (4, 'd.md', 1, 2, 'h4', 'cut at 1 MB'),"
        "(5, 'e.md', 1, 2, 'h5', 'skipped: unreadable: denied')"
    )
    db.execute(
        "INSERT INTO chunks(id, file_id, seq, line, heading, text, hash) VALUES "
        "(7, 1, 0, 1, 'H', 'text', 'c1'), (9, 1, 1, 5, 'H2', 'more', 'c2')"
    )
    _migrate(db, 1, schema.SCHEMA_VERSION)
    assert schema.listed(db) == schema.objects(schema.SCHEMA_VERSION)[0]
    notes = dict(db.execute("SELECT path, note FROM files"))
    assert notes == {
        "a.md": None,
        "b.md": "empty",
        "c.md": "binary",
        "d.md": "cut",
        "e.md": "unreadable",
    }
    rows = db.execute("SELECT id, seq, heading, text_line, has_sent FROM chunks ORDER BY id")
    assert rows.fetchall() == [(7, 0, "H", 0, 0), (9, 1, "H2", 0, 0)]
    assert db.execute("PRAGMA application_id").fetchone() == (schema.APPLICATION_ID,)
    generation = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    assert generation is not None and len(generation[0]) == 16
    assert db.execute("SELECT front, lead FROM files WHERE id = 1").fetchone() == ("", "")


def test_after_schema_2_a_chunk_id_is_never_given_again(db: apsw.Connection) -> None:
    _migrate(db, 0, 1)
    db.execute("INSERT INTO files VALUES (1, 'a.md', 1, 2, 'h', NULL)")
    db.execute(
        "INSERT INTO chunks(id, file_id, seq, line, heading, text, hash) "
        "VALUES (5, 1, 0, 1, '', 't', 'c')"
    )
    _migrate(db, 1, schema.SCHEMA_VERSION)
    db.execute("DELETE FROM chunks WHERE id = 5")
    db.execute(
        "INSERT INTO chunks(file_id, seq, line, heading, text, hash) VALUES (1, 0, 1, '', 't', 'c')"
    )
    assert db.execute("SELECT id FROM chunks").fetchall() == [(6,)]


def test_the_history_starts_from_the_content_the_index_holds(db: apsw.Connection) -> None:
    _migrate(db, 0, 2)
    db.execute(
        "INSERT INTO files VALUES (1, 'a.md', 1, 2, 'h1', NULL), (2, 'b.md', 1, 2, 'h2', NULL)"
    )
    _migrate(db, 2, 3)
    total = (history.item("a.md", "h1") + history.item("b.md", "h2")) % (1 << 128)
    rows = db.execute("SELECT fingerprint FROM history").fetchall()
    assert rows == [(history.fingerprint_text(total),)]
    stored = db.execute("SELECT value FROM meta WHERE key = 'fingerprint_sum'").fetchone()
    assert stored == (f"{total:032x}",)


def test_a_generation_is_new_each_time() -> None:
    made = {schema.new_generation() for _ in range(20)}
    assert len(made) == 20
    assert all(len(g) == 16 and int(g, 16) >= 0 for g in made)


def test_the_vector_table_holds_vectors_of_its_dimension_by_cosine(db: apsw.Connection) -> None:
    schema.create_vectors_table(db, 3)
    for rowid, v in [(1, (1.0, 0.0, 0.0)), (2, (0.0, 1.0, 0.0))]:
        db.execute(
            "INSERT INTO vec(rowid, embedding) VALUES (?, ?)", (rowid, struct.pack("3f", *v))
        )
    query = struct.pack("3f", 2.0, 0.1, 0.0)  # cosine: its length does not count
    rows = db.execute(
        "SELECT rowid, distance FROM vec WHERE embedding MATCH ? AND k = 2", (query,)
    ).fetchall()
    assert [r[0] for r in rows] == [1, 2]
    assert rows[0][1] == pytest.approx(1 - 2 / (4.01**0.5), abs=1e-5)
    with pytest.raises(apsw.Error):
        db.execute("INSERT INTO vec(rowid, embedding) VALUES (3, ?)", (struct.pack("2f", 1, 0),))
