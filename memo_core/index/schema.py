"""The index's schema, as numbered migrations applied on open (by `opening`).

Schema 2: chunk ids come from AUTOINCREMENT, so an id is never given to another chunk while
the database lives (a reader's vector cache keys on ids); skip notes are codes. Schema 3:
the history of the content, started by `history.start_history`, so that its fingerprint
follows the one rule there. Schema 4 (this memo): what a note's front matter says (its
names, for the naming boost) and its tags (for scoped searches). Schema 5: the line where a
chunk's text begins, below its heading, so a hit numbers the lines it shows without reading
the note. Schema 6: the title that leads a note's embedded headings, and its passages'
sentence vectors (a pass of their own, after the passages' vectors). Schema 7: the
language a chunk's Latin words are stemmed in.
"""

from __future__ import annotations

import functools
import importlib.util
import os

import apsw

from memo_core.index.history import start_history

SCHEMA_VERSION = 7
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


def _v2_to_v3(db: apsw.Connection) -> None:
    # The history of the content, for "what changed since fingerprint X" (history.py).
    db.execute(
        """
        CREATE TABLE history(
            version INTEGER PRIMARY KEY AUTOINCREMENT,
            fingerprint TEXT NOT NULL,      -- of the content after this version's changes
            at REAL NOT NULL
        );
        CREATE INDEX history_fingerprint ON history(fingerprint);
        CREATE TABLE file_log(
            version INTEGER NOT NULL,
            path TEXT NOT NULL,             -- as files.path
            old_hash TEXT,                  -- NULL: the note was not there
            new_hash TEXT                   -- NULL: the note is gone
        );
        CREATE INDEX file_log_version ON file_log(version);
        """
    )
    start_history(db)


def _v3_to_v4(db: apsw.Connection) -> None:
    # Front matter and tags. `front`: JSON of the note's names and other fields'
    # words as indexed, so a refresh knows when its chunks' words must be written anew, and
    # ranking reads the names as titles. `tags`: normalised (`#` stripped, case-folded),
    # nested ones as written (`a/b`); keyed by tag first, since scopes look files up by tag.
    # Rows of notes indexed before stay empty until the index is rebuilt (the chunker's
    # version changed with this, so it is).
    db.execute(
        """
        ALTER TABLE files ADD COLUMN front TEXT NOT NULL DEFAULT '';
        CREATE TABLE tags(
            file_id INTEGER NOT NULL REFERENCES files(id),
            tag TEXT NOT NULL,
            PRIMARY KEY (tag, file_id)
        ) WITHOUT ROWID;
        CREATE INDEX tags_file ON tags(file_id);
        """
    )


def _v4_to_v5(db: apsw.Connection) -> None:
    # The line where a chunk's text begins (`Chunk.text_line`): a hit that shows lines
    # below its passage's first numbers them from here. 0 in rows written before:
    # read as `line` until the index is rebuilt (the chunker's version changed with this).
    db.execute("ALTER TABLE chunks ADD COLUMN text_line INTEGER NOT NULL DEFAULT 0")


def new_generation() -> str:
    return os.urandom(8).hex()


def _v5_to_v6(db: apsw.Connection) -> None:
    # `lead`: the title its passages are embedded under ('' where a level-1 heading of its
    # own leads them; `text.titles`). `sentences`: each passage's sentence vectors, the
    # sentence model's int8 codes then one float32 scale a sentence (`index.sentvectors`),
    # `has_sent` set once a passage has them (none when it has no sentence of its own).
    # Rows written before keep '' and 0 until the index is rebuilt (its identity changed).
    db.execute(
        """
        ALTER TABLE files ADD COLUMN lead TEXT NOT NULL DEFAULT '';
        ALTER TABLE chunks ADD COLUMN has_sent INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX chunks_nosent ON chunks(id) WHERE has_sent = 0;
        CREATE TABLE sentences(chunk_id INTEGER PRIMARY KEY, vectors BLOB NOT NULL);
        """
    )


def _v6_to_v7(db: apsw.Connection) -> None:
    # `lang`: the Snowball language a chunk's Latin words are stemmed in
    # (`passagelang.passage_languages`), so that its words are found again as the index holds
    # them (a hit's lines, its title words); the languages other than English indexed, so
    # they are counted without reading the chunks, and English rows (nearly all of most
    # indexes) cost no index entry. Rows written before stay English (as they were stemmed)
    # until the index is rebuilt (the normaliser's version changed with this).
    db.execute(
        """
        ALTER TABLE chunks ADD COLUMN lang TEXT NOT NULL DEFAULT 'english';
        CREATE INDEX chunks_lang ON chunks(lang) WHERE lang != 'english';
        """
    )


# Numbered migrations: MIGRATIONS[i] takes a database from version i to i + 1.
MIGRATIONS = [_schema_v1, _v1_to_v2, _v2_to_v3, _v3_to_v4, _v4_to_v5, _v5_to_v6, _v6_to_v7]


def create_vectors_table(db: apsw.Connection, dim: int) -> None:
    """The passages' vector table (sqlite-vec's vec0), made for a model by
    `Store.use_model`: the one table memo makes outside the migrations."""
    db.execute(
        f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{int(dim)}] distance_metric=cosine)"
    )


# An index is memo's only if it holds exactly what memo makes: another file that looks like
# one (a folder shared, synced or cloned with its .memo/) may hold triggers that would run
# in memo's writes, or views and tables that are none of memo's business.
Objects = frozenset[tuple[str, str]]  # (type, name) of what sqlite_master lists


@functools.cache
def objects(version: int) -> tuple[Objects, Objects]:
    """What an index of schema `version` holds: (its tables and indexes, what its vector
    table adds once a model has made it), as the migrations make them with the sqlite-vec
    this memo loads; SQLite's own (`sqlite_*`) left out. Made once, in memory."""
    db = apsw.Connection(":memory:")
    try:
        load_sqlite_vec(db)
        for migrate in MIGRATIONS[:version]:
            migrate(db)
        before = listed(db)
        create_vectors_table(db, 4)
        return before, listed(db) - before
    finally:
        db.close()


def load_sqlite_vec(db: apsw.Connection) -> None:
    """sqlite-vec loaded into `db` (loading extensions is left off after) from the file its
    package ships, found without importing the package: its Python part imports numpy and
    sqlite3, which a search by words in a fresh process has no use for."""
    db.enable_load_extension(True)
    try:
        db.load_extension(_sqlite_vec_file())
    finally:
        db.enable_load_extension(False)


@functools.cache
def _sqlite_vec_file() -> str:
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("sqlite-vec is not installed", name="sqlite_vec")
    return os.path.join(spec.submodule_search_locations[0], "vec0")


def listed(db: apsw.Connection) -> Objects:
    """(type, name) of every object in the database's schema but SQLite's own."""
    rows = db.execute("SELECT type, name FROM main.sqlite_master")
    return frozenset((kind, name) for kind, name in rows if not name.startswith("sqlite_"))
