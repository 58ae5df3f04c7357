"""An index records what decided its content; made another way, it is rebuilt (and says so
once), atomically as reindex does. Older schemas migrate on open."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest
from conftest import HANG_S, BlockedEmbedder, CountingEmbedder, write_notes

from memo_core import Embedder, Engine, ModelSource, NoticeKind, Tuning
from memo_core.index.jobs import NO_SMALL_WORK
from memo_core.index.schema import MIGRATIONS, SCHEMA_VERSION
from memo_text import format_hits, format_status, notice_text

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


class WithSentences(Embedder):
    """`passages`, taking a second look whose sentences `sentences` embeds (each a wrapper of
    the tiny model: blocked, counting)."""

    second_look = 0.6

    def __init__(self, passages: Embedder, sentences: Embedder) -> None:
        self.passages, self.sentences = passages, sentences
        self.model_id, self.dim = passages.model_id, passages.dim

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        return self.passages.embed_batch(texts, query=query)

    @property
    def sentence_model(self) -> Embedder:
        return self.sentences


def sentences_held(tiny: Embedder) -> tuple[WithSentences, threading.Event]:
    """The tiny model, whose sentences' batches wait for the event returned (a rebuild's
    sentence pass under way for as long as a test needs)."""
    blocked = BlockedEmbedder(tiny)
    return WithSentences(tiny, blocked), blocked.gate


def counted(tiny: Embedder) -> tuple[WithSentences, CountingEmbedder, CountingEmbedder]:
    """The tiny model with its sentences, each side counting the texts it embeds."""
    passages, sentences = CountingEmbedder(tiny), CountingEmbedder(tiny)
    return WithSentences(passages, sentences), passages, sentences


@contextmanager
def rebuilding(
    notes: Path, model: Embedder, gate: threading.Event, **engine: Any
) -> Iterator[Engine]:
    """An engine whose next refresh of `notes` rebuilds their index (words alone, made with
    another chunk size), with `model` and `engine`'s settings (a search's budget: an hour,
    unless they say); `gate` opened after."""
    with Engine(tuning=Tuning(chunk_max_chars=2000), models=ModelSource(enabled=False)) as e:
        e.refresh(notes, embed=False)
    with Engine(
        tuning=Tuning(chunk_max_chars=300),
        models=ModelSource(model),
        **{"refresh_budget_s": 3600.0, **engine},
    ) as e:
        try:
            yield e
        finally:
            gate.set()


def answered(e: Engine, notes: Path, times: int) -> list[list[NoticeKind]]:
    """The notices of `times` searches one after another, each on a thread of its own that
    must end within HANG_S: with a budget of an hour, a search that waits for a refresh
    hangs."""
    kinds: list[list[NoticeKind]] = []

    def search() -> None:
        kinds.append([n.kind for n in e.search(notes, "paragraph 3", mode="hybrid").notices])

    for _ in range(times):
        t = threading.Thread(target=search, daemon=True)
        t.start()
        t.join(HANG_S)
        assert not t.is_alive(), "a search waited for the refresh"
    return kinds


def test_a_search_during_a_rebuild_answers_from_the_new_index_once_its_vectors_are_in(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """A search with a budget (a script's, an agent's) that meets a rebuild of a small folder
    waits for its words and vectors, as for a first index, and answers from the new index
    while the sentences go on: the rebuild had made them aside, so the search answered from
    the old index (its words alone, where it had no vectors) saying only that sentences
    were coming, and a one-shot `memo search`, ending with its process, never got further."""
    notes = write_notes(tmp_path / "notes", LONG)
    held, gate = sentences_held(tiny_embedder)
    with rebuilding(notes, held, gate, refresh_budget_s=10.0) as e:  # a script's budget
        hits = e.search(notes, "paragraph 3", mode="hybrid")
        during = e.status(notes)[0]
    assert during.chunks > 1 and during.chunks_without_vectors == 0  # the old one: one chunk
    assert during.model == held.model_id and during.chunks_without_sentences > 0
    assert [n.kind for n in hits.notices] == [NoticeKind.REBUILT, NoticeKind.SENTENCES]
    assert hits[0].text.count("paragraph") == 1  # a passage of the new index: one paragraph


def test_a_rebuild_under_way_says_the_old_index_answers(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """Past a small folder's wait, a search meeting a rebuild answers from the old index,
    and says so (not how far the new one's words or vectors got, none of which answer)."""
    notes = write_notes(tmp_path / "notes", LONG)
    held = BlockedEmbedder(tiny_embedder)
    with rebuilding(notes, held, held.gate, refresh_budget_s=0.0, small=NO_SMALL_WORK) as e:
        deadline = time.monotonic() + HANG_S
        # Until the rebuild has said what it does (a busy machine: it may not have yet).
        while (hits := e.search(notes, "paragraph 3", mode="hybrid")).notices[
            0
        ].kind is not NoticeKind.REBUILDING:
            assert time.monotonic() < deadline
    assert [n.kind for n in hits.notices] == [NoticeKind.REBUILDING]
    assert hits[0].found_by == ("lex",)  # the old index's words
    assert hits[0].text.count("paragraph") > 1  # its one passage for the whole note


# Notes in the tiny model's words (conftest's `tiny_model_dir`), two sentences each.
TINY_WORDS = {
    "soup.md": "# Soup\n\nThe beets go in the bowl. Then the cabbage sings.\n",
    "backup.md": "# Backup\n\nrestic backs up each night. Восстановление: проверка в месяц.\n",
}


def made_by_another_version(notes: Path, **identity: object) -> None:
    """The index's record of what made it, as another memo would have left it."""
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    (raw,) = db.execute("SELECT value FROM meta WHERE key = 'identity'").fetchone()
    db.execute(
        "UPDATE meta SET value = ? WHERE key = 'identity'",
        (json.dumps({**json.loads(raw), **identity}),),
    )
    db.close()


@pytest.mark.parametrize(
    ("older", "embedded"),
    [
        ({"words": 3}, False),  # new words: every passage keeps its vectors
        ({"stemmer": "2.2.0"}, False),
        ({"embed_max_chars": 1000}, True),  # another embedded text: all made again
        ({"embedded": 1}, True),
    ],
)
def test_a_rebuild_keeps_the_vectors_its_words_do_not_change(
    tmp_path: Path, tiny_embedder: Embedder, older: dict[str, object], embedded: bool
) -> None:
    """A rebuild for new words (a stemmer's version, the normaliser's) takes each passage's
    vectors and its sentences' from the live index, by the passage's hash: a folder's
    rebuild after an upgrade was its whole first indexing again (84 s for 400 pages, 20
    minutes for 5,900) for vectors that had not changed. Where the text embedded is made
    another way, every vector is made again."""
    notes = write_notes(tmp_path / "notes", TINY_WORDS)
    with Engine(models=ModelSource(counted(tiny_embedder)[0])) as e:
        e.refresh(notes)
        before = e.status(notes)[0]
        found = [(h.relpath, h.score) for h in e.search(notes, "beets bowl", mode="vec")]
    assert before.chunks_without_vectors == 0 and before.chunks_without_sentences == 0
    made_by_another_version(notes, **older)
    model, passages, sentences = counted(tiny_embedder)
    with Engine(models=ModelSource(model)) as e:
        assert [n.kind for n in e.refresh(notes).notices] == [NoticeKind.REBUILT]
        after = e.status(notes)[0]
        hits = e.search(notes, "beets bowl", mode="vec", refresh=False)
    assert (after.chunks, after.chunks_without_vectors, after.chunks_without_sentences) == (
        before.chunks,
        0,
        0,
    )
    assert bool(passages.texts) is embedded and bool(sentences.texts) is embedded
    assert found and [(h.relpath, h.score) for h in hits] == found  # the same vectors


def test_a_rebuild_asked_for_makes_every_vector_again(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    # `memo reindex` is asked for where the index is not trusted: nothing is taken from it.
    notes = write_notes(tmp_path / "notes", TINY_WORDS)
    with Engine(models=ModelSource(counted(tiny_embedder)[0])) as e:
        e.refresh(notes)
    model, passages, sentences = counted(tiny_embedder)
    with Engine(models=ModelSource(model)) as e:
        assert e.reindex(notes) == len(TINY_WORDS)
    assert passages.texts and sentences.texts


def test_every_search_during_a_rebuild_answers_without_waiting_for_it(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """Past a small folder's wait, each search that meets a rebuild answers from the old
    index at once: the searches after the one that started it waited their whole budget
    (10 s each, for the 20 minutes of a big folder's rebuild), for words the old index
    could not get before the new one replaced it."""
    notes = write_notes(tmp_path / "notes", LONG)
    held = BlockedEmbedder(tiny_embedder)
    with rebuilding(notes, held, held.gate, small=NO_SMALL_WORK) as e:
        answers = answered(e, notes, 3)
        [st] = e.status(notes)
    assert answers[1:] == [[NoticeKind.REBUILDING]] * 2
    assert st.indexing is not None and st.indexing.kind is NoticeKind.REBUILDING
    chunks = st.indexing.total  # the new index's passages, none with vectors yet
    said = f", идёт перестройка индекса: векторы 0 из {chunks} фрагментов (пока отвечает прежний), "
    assert chunks > 1 and said in format_status([st])


def test_searches_while_a_rebuilt_index_gets_its_sentences_wait_for_none_of_them(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    # A long-lived process: once the new index is in, a search waits for no step of its
    # sentences, as in any refresh (the rebuild's last pass had no words gate: every search
    # after the first waited its whole budget for the sentences to end).
    notes = write_notes(tmp_path / "notes", LONG)
    held, gate = sentences_held(tiny_embedder)
    with rebuilding(notes, held, gate, notify=True) as e:
        kinds = answered(e, notes, 3)
    said = [NoticeKind.REBUILT, NoticeKind.SENTENCES]  # why, once, then how far they got
    assert kinds == [said, [NoticeKind.SENTENCES], [NoticeKind.SENTENCES]]


def test_a_search_while_a_reindex_makes_its_sentences_answers_from_the_new_index(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    # `memo_reindex` in memo-mcp, a search beside it: once the new index is in, the search
    # answers from it at once, saying its sentences are coming.
    notes = write_notes(tmp_path / "notes", LONG)
    held, gate = sentences_held(tiny_embedder)
    gate.set()
    with Engine(models=ModelSource(held), refresh_budget_s=3600.0, notify=True) as e:
        e.refresh(notes)
        gate.clear()
        reindex = threading.Thread(target=e.reindex, args=(notes,), daemon=True)
        reindex.start()
        try:
            deadline = time.monotonic() + HANG_S
            while e.status(notes)[0].chunks_without_sentences == 0:  # until the copy is in
                assert time.monotonic() < deadline
                time.sleep(0.01)
            kinds = answered(e, notes, 1)
            [st] = e.status(notes)
        finally:
            gate.set()
            reindex.join(HANG_S)
    assert kinds == [[NoticeKind.SENTENCES]]
    assert st.indexing is not None and st.indexing.kind is NoticeKind.SENTENCES  # and status
