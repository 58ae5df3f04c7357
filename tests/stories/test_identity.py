"""An index records what decided its content; made another way, it is rebuilt (and says so
once), atomically as reindex does. Older schemas migrate on open."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest
from conftest import write_notes

from memo_core import Engine, ModelSource, NoticeKind, Tuning
from memo_core.index.schema import MIGRATIONS, SCHEMA_VERSION
from memo_text import format_hits, notice_text

LONG = {"long.md": "# Long\n\n" + "\n\n".join(f"paragraph {i} " + "word " * 30 for i in range(6))}


def words_only(tuning: Tuning | None = None) -> Engine:
    return Engine(tuning=tuning, models=ModelSource(enabled=False))


def test_identity_names_everything_that_decides_content() -> None:
    ident = Tuning().identity()
    assert {"chunker", "chunk_max_chars", "embed_max_chars", "max_file_bytes", "words"} <= set(
        ident
    )
    assert ident["stemmer"]  # the Snowball stemmer's version
    assert Tuning(dense_weight=0.5).identity() == ident  # ranking knobs do not rebuild
    assert Tuning(chunk_max_chars=500).identity() != ident


def test_other_chunk_size_rebuilds_once_and_says_so(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", LONG)
    with words_only(Tuning(chunk_max_chars=2000)) as e:
        e.refresh(notes, embed=False)
        before = e.status(notes)[0]
    with words_only(Tuning(chunk_max_chars=300)) as e:
        hits = e.search(notes, "paragraph", mode="lex")
        [n] = hits.notices
        assert (n.kind, n.collection, n.detail) == (
            NoticeKind.REBUILT,
            str(notes),
            "chunk_max_chars",
        )
        assert format_hits(hits).startswith(
            f"({notes}: индекс перестроен заново: изменились параметры (chunk_max_chars))\n"
        )
        after = e.status(notes)[0]
        assert after.chunks > before.chunks
        assert e.search(notes, "paragraph", mode="lex").notices == []  # once
        assert not e.refresh(notes, embed=False).notices
    assert not [p for p in (notes / ".memo").iterdir() if "rebuild" in p.name]


def test_an_index_that_recorded_nothing_is_rebuilt(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", LONG)
    with words_only() as e:
        e.refresh(notes, embed=False)
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    db.execute("DELETE FROM meta WHERE key = 'identity'")
    db.close()
    with words_only() as e:
        [n] = e.refresh(notes, embed=False).notices
        assert notice_text(n) == f"{notes}: индекс перестроен заново: индекс от прежней версии memo"


def test_a_schema_1_index_is_migrated_then_rebuilt(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat\n", "empty.md": ""})
    (notes / ".memo").mkdir()
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    db.execute("PRAGMA journal_mode=WAL")
    MIGRATIONS[0](db)  # what memo 0.1 made: schema 1, no identity
    db.execute(
        "INSERT INTO files(path, mtime_ns, size, hash, note) VALUES "
        "('empty.md', 1, 0, 'x', 'skipped: empty'), ('gone.md', 1, 3, 'y', NULL);"
        "PRAGMA user_version=1"
    )
    db.close()
    with words_only() as e:
        st = e.status(notes)[0]  # read as it is: nothing written by status
        assert (st.files, st.empty, st.skipped) == (2, 1, 0)  # an empty note is a note
        [n] = e.refresh(notes, embed=False).notices
        assert n.kind is NoticeKind.REBUILT
        st = e.status(notes)[0]
        assert (st.files, st.empty, st.skipped) == (2, 1, 0)
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks'").fetchone()[0]
    assert "AUTOINCREMENT" in sql
    ident = json.loads(db.execute("SELECT value FROM meta WHERE key = 'identity'").fetchone()[0])
    assert ident == Tuning().identity()
    db.close()


@pytest.mark.parametrize("old", ["skipped: empty", "skipped: binary data", "cut: only the first"])
def test_migration_keeps_what_each_file_note_meant(tmp_path: Path, old: str) -> None:
    from memo_core import FileNote
    from memo_core.index.store import Store

    path = tmp_path / "index.db"
    db = apsw.Connection(str(path))
    MIGRATIONS[0](db)
    db.execute(
        "INSERT INTO files(path, mtime_ns, size, hash, note) VALUES ('x.md', 1, 1, 'h', ?)", (old,)
    )
    db.execute("PRAGMA user_version=1")
    db.close()
    store = Store.create(path)
    [(_, note)] = store.notes()
    assert (
        note is FileNote.parse(old)
        and note.value == store.db.execute("SELECT note FROM files").fetchone()[0]
    )
    store.close()
