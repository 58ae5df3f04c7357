"""The index file: schema versions, foreign files, consistency of chunks, words and vectors."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from memo_core import IndexStoreError, Searcher
from memo_core.index.schema import SCHEMA_VERSION
from memo_core.index.store import Store
from memo_core.model.embedder import Embedder
from memo_core.text.chunking import Chunk


def test_new_index_has_schema_version_and_marker(tmp_path: Path) -> None:
    s = Store.create(tmp_path / "i.db")
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert s.get_meta("app") == "memo"
    assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s.close()
    Store.create(tmp_path / "i.db").close()  # reopening applies nothing and keeps it


def test_foreign_database_is_refused(tmp_path: Path) -> None:
    db = apsw.Connection(str(tmp_path / "x.db"))
    db.execute("CREATE TABLE t(x)")
    db.close()
    with pytest.raises(IndexStoreError, match="not a memo index"):
        Store.create(tmp_path / "x.db")


def test_index_from_newer_memo_is_refused(tmp_path: Path) -> None:
    Store.create(tmp_path / "i.db").close()
    db = apsw.Connection(str(tmp_path / "i.db"))
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(IndexStoreError, match="newer memo"):
        Store.create(tmp_path / "i.db")


def test_garbage_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "i.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(IndexStoreError, match=r"not a memo index \(not a SQLite database\)"):
        Store.create(tmp_path / "i.db")


def test_a_damaged_memo_index_is_a_clear_error(tmp_path: Path) -> None:
    Store.create(tmp_path / "i.db").close()
    data = (tmp_path / "i.db").read_bytes()
    (tmp_path / "i.db").write_bytes(data[:100] + b"\xff" * (len(data) - 100))
    with pytest.raises(IndexStoreError, match="damaged or not memo.s: move"):
        Store.open_existing(tmp_path / "i.db")


def _consistent(db_path: Path) -> None:
    db = apsw.Connection(str(db_path))
    import sqlite_vec

    db.enable_load_extension(True)
    sqlite_vec.load(db)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    chunks = {r[0] for r in db.execute("SELECT id FROM chunks")}
    with_vec = {r[0] for r in db.execute("SELECT id FROM chunks WHERE has_vec = 1")}
    vec = {r[0] for r in db.execute("SELECT rowid FROM vec")}
    assert vec == with_vec <= chunks
    fts_rows = db.execute("SELECT count(*) FROM fts").fetchone()[0]
    assert fts_rows == len(chunks)
    db.close()


def test_chunks_words_and_vectors_agree_after_edits(notes: Path, tiny_embedder: Embedder):
    with Searcher(notes, embedder=tiny_embedder) as s:
        s.refresh()
        (notes / "pets.md").write_text("# Only cats\n\nCats now.\n", encoding="utf-8")
        (notes / "backup.md").unlink()
        (notes / "new.md").write_text("# New\n\ntext\n\n## Two\n\nmore\n", encoding="utf-8")
        s.refresh()
        assert [h.relpath for h in s.search("cats", mode="lex")] == ["pets.md"]
    _consistent(notes / ".memo" / "index.db")


def test_reindex_rebuilds_and_keeps_answering(notes: Path, tiny_embedder: Embedder) -> None:
    with Searcher(notes, embedder=tiny_embedder) as s:
        s.refresh()
        before = s.status()[0]
        assert s.reindex() == 3
        after = s.status()[0]
        assert (after.files, after.chunks) == (before.files, before.chunks)
        assert after.updated_at >= before.updated_at
        assert s.search("borscht", mode="hybrid")[0].relpath == "cooking/soup.md"
    leftovers = [p.name for p in (notes / ".memo").iterdir() if "rebuild" in p.name]
    assert leftovers == []
    _consistent(notes / ".memo" / "index.db")


def test_term_stats_are_the_vocabularys_document_counts(notes: Path) -> None:
    """Each word's count is the number of passages holding it (in their heading column or
    body), as FTS5's own vocabulary table counts them; an absent word is left out."""
    with Searcher(notes, use_model=False) as s:
        s.refresh(embed=False)
        [c] = s.collections
        with c.snapshot() as store:
            assert store is not None
            store.db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'fts', 'row')")
            vocab = dict(store.db.execute("SELECT term, doc FROM temp.v"))
            chunks, docs = store.term_stats([(t,) for t in [*vocab, "zzzabsent"]])
            assert chunks == store.count_chunks() > 0
    assert docs == vocab and len(vocab) > 20


def test_an_index_counts_the_languages_of_its_chunks_words(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "i.db")
    assert store.languages() == {"english"}  # always: what every query word is stemmed in
    with store.write():
        fid = store.upsert_file("n.md", 1, 1, "h", None)
        ids = [
            store.insert_chunk(fid, i, Chunk(1, "", text, 1), f"c{i}", "", lang)
            for i, (text, lang) in enumerate(
                [("Sicherungen der Datenbanken", "german"), ("Datenbank backups", "english")]
            )
        ]
    assert store.languages() == {"english", "german"}
    # A query word's group counts as its most frequent stem ("datenbank": in German the
    # first chunk's Datenbanken, in English the second's Datenbank), led by its first.
    groups = [("sicherungen", "sicherung"), ("datenbanken", "datenbank"), ("nowhere",)]
    assert store.term_stats(groups) == (2, {"sicherungen": 1, "datenbanken": 2})
    assert {cid for cid, _ in store.lex(groups[:1], 10, (1.0, 1.0))} == {ids[0]}
    with store.write():
        store.delete_chunks([ids[0]])
    assert store.languages() == {"english"}
    store.close()
