"""Migrating an index keeps what a fresh index of the same notes would hold."""

from __future__ import annotations

import os
from pathlib import Path

import apsw
from conftest import NOTES, as_schema_2, write_notes

from memo_core import Engine
from memo_core.index.history import fingerprint_text, item


def test_a_migrated_index_with_a_fifo_has_a_fresh_index_fingerprint(tmp_path: Path) -> None:
    """A FIFO named *.md is recorded but has no content: the migration to schema 3 must not
    count it in the fingerprint, and a rebuild after it must not keep a wrong sum."""
    notes = write_notes(tmp_path / "notes", NOTES)
    os.mkfifo(notes / "pipe.md")
    with Engine() as engine:
        fresh = engine.changes(notes).fingerprint
    as_schema_2(notes / ".memo" / "index.db")
    with Engine() as engine:
        assert engine.changes(notes).fingerprint == fresh
        engine.reindex(notes)
        assert engine.changes(notes).fingerprint == fresh


def test_a_rebuild_heals_a_sum_that_counted_a_fifo(tmp_path: Path) -> None:
    """An index migrated by a memo that counted the FIFO: the next rebuild recounts its sum,
    and a client holding the fingerprint it gave out before still gets a delta."""
    notes = write_notes(tmp_path / "notes", NOTES)
    os.mkfifo(notes / "pipe.md")
    with Engine() as engine:
        fresh = engine.changes(notes).fingerprint
    index = notes / ".memo" / "index.db"
    db = apsw.Connection(str(index))
    with db:  # what that migration wrote: every row's hash counted, the FIFO's too
        rows = list(db.execute("SELECT path, hash FROM files"))
        wrong = sum(item(path, digest) for path, digest in rows) % (1 << 128)
        db.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint_sum'", (f"{wrong:032x}",))
        db.execute("INSERT INTO history(fingerprint, at) VALUES (?, 0)", (fingerprint_text(wrong),))
    db.close()
    with Engine() as engine:
        given = engine.changes(notes).fingerprint
        assert given == fingerprint_text(wrong) != fresh
        engine.reindex(notes)
        assert engine.changes(notes).fingerprint == fresh
        (notes / "a.md").write_text("# A\n\nnew\n", encoding="utf-8")
        for since in (given, fresh):
            report = engine.changes(notes, since)
            assert (report.mode, report.added) == ("delta", [str(notes / "a.md")])
