"""The index's schema, as numbered migrations applied on open."""

from __future__ import annotations

import apsw

SCHEMA_VERSION = 1
APP_ID = "memo"  # stored in meta: how memo recognises its own index


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


# Numbered migrations: MIGRATIONS[i] takes a database from version i to i + 1.
MIGRATIONS = [_schema_v1]
