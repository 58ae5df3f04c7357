"""Bounded waits: a search waits for its refresh at most the budget, then answers from what
is committed and says how far indexing got, while the indexing goes on in the background."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from conftest import HANG_S, BlockedEmbedder, PacedEmbedder, many_notes
from mcp_helpers import WireServer, server_env

from memo_core import Embedder, Engine, ModelSource, NoticeKind, Tuning
from memo_core.index.jobs import NO_SMALL_WORK as LONG  # a slow model: no folder is small
from memo_text import format_status, notice_text


@pytest.fixture
def slow(tiny_embedder: Embedder) -> BlockedEmbedder:
    """A real tiny model whose note batches wait for its `gate`."""
    return BlockedEmbedder(tiny_embedder)


def test_a_long_first_index_answers_within_the_budget(
    tmp_path: Path, slow: BlockedEmbedder
) -> None:
    notes = many_notes(tmp_path / "notes", 300)
    with Engine(models=ModelSource(slow), refresh_budget_s=0.5, small=LONG) as e:
        t0 = time.monotonic()
        first = e.search(notes, "cat 7", mode="hybrid")
        assert time.monotonic() - t0 < HANG_S
        [n] = first.notices  # words are in (they come first), vectors are not
        assert (n.kind, n.collection, n.total) == (NoticeKind.EMBEDDING, str(notes), 301)
        assert notice_text(n).startswith(
            f"{notes}: векторов пока нет ни у одного из 301 фрагментов"
        )
        assert first[0].relpath == "d7/n7.md"  # answered by words from the committed part
        [st] = e.status(notes)
        assert st.files == 301 and st.indexing is not None
        assert ", идёт расчёт векторов: 0 из 301 фрагментов" in format_status([st])
        t0 = time.monotonic()
        second = e.search(notes, "cat 8", mode="hybrid")  # the refresh runs: at once
        assert time.monotonic() - t0 < HANG_S and second.notices[0].kind is NoticeKind.EMBEDDING
        slow.gate.set()
        deadline = time.monotonic() + 30
        while (later := e.search(notes, "cat 9", mode="hybrid")).notices:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert later[0].relpath == "d9/n9.md" and "vec" in later[0].found_by
        assert e.status(notes)[0].indexing is None


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_nothing_found_while_vectors_come_is_not_the_final_answer(
    tmp_path: Path, slow: BlockedEmbedder, lang: str
) -> None:
    """A search that finds nothing before the vectors are made says nothing was found yet,
    and how much could be searched by meaning; once the index is whole, the final words."""
    from memo_text import Lang, format_hits

    notes = many_notes(tmp_path / "notes", 40)
    words = Lang.EN if lang == "en" else Lang.RU
    with Engine(models=ModelSource(slow), refresh_budget_s=0.3, small=LONG) as e:
        deadline = time.monotonic() + HANG_S
        while (early := e.search(notes, "zebra quantum", mode="hybrid")).notices[
            0
        ].kind is not NoticeKind.EMBEDDING:  # words first (a busy machine: past the budget)
            assert time.monotonic() < deadline
        assert len(early) == 0
        text = format_hits(early, lang=words)
        want = {
            "ru": "пока ничего не найдено по словам; векторов ещё нет ни у одного из 41 фрагментов",
            "en": "nothing found by words yet; no chunk of 41 has vectors so far",
        }[lang]
        assert text.endswith(want + "\n") and "ничего не найдено\n" not in text.replace(want, "")
        slow.gate.set()
        e.refresh(notes)
        final = e.search(notes, "zebra quantum", mode="lex", refresh=False)  # whole now
        assert format_hits(final, lang=words) == (
            "ничего не найдено\n" if lang == "ru" else "nothing found\n"
        )


def test_a_change_made_before_the_call_is_in_its_answer(tmp_path: Path, tiny_embedder) -> None:
    notes = many_notes(tmp_path / "notes", 50)
    with Engine(models=ModelSource(tiny_embedder), refresh_budget_s=5) as e:
        e.search(notes, "cat", mode="lex")
        for i in range(20):  # each edit lands just before a call
            (notes / f"new{i}.md").write_text(f"# New {i}\n\nzebra{i} here\n", encoding="utf-8")
            hits = e.search(notes, f"zebra{i}", mode="lex")
            assert hits and hits[0].relpath == f"new{i}.md"


def test_closing_stops_the_background_refresh(tmp_path: Path, slow: BlockedEmbedder) -> None:
    notes = many_notes(tmp_path / "notes", 100)
    batches = Tuning(batch_chunks=16)  # many batches: the stop comes between two
    e = Engine(tuning=batches, models=ModelSource(slow), refresh_budget_s=0.2, small=LONG)
    e.search(notes, "cat", mode="hybrid")
    closing = threading.Thread(target=e.close)
    closing.start()
    slow.gate.set()  # the batch under way ends; no other starts
    closing.join(20)
    assert not closing.is_alive()
    with Engine(tuning=batches, models=ModelSource(enabled=False)) as again:
        [st] = again.status(notes)
        assert st.files == 101 and 0 < st.chunks_without_vectors < 101


def test_memo_mcp_answers_a_first_search_within_its_budget(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    notes = many_notes(tmp_path / "notes", 3000)
    env = server_env(tmp_path, tiny_model_dir) | {"MEMO_REFRESH_BUDGET": "0.3"}
    server = WireServer(env)
    try:
        server.initialize()
        t0 = time.monotonic()
        first = server.text("memo_search", {"path": str(notes), "query": "cat 7"})
        assert time.monotonic() - t0 < HANG_S
        assert first.startswith(f"({notes}: индексация: ") or first.startswith(
            f"({notes}: векторы: "
        ), first
        t0 = time.monotonic()
        status = server.text("memo_status", {"path": str(notes)})
        second = server.text("memo_search", {"path": str(notes), "query": "cat 8"})
        assert time.monotonic() - t0 < HANG_S, (status, second)
        deadline = time.monotonic() + 120
        while (later := server.text("memo_search", {"path": str(notes), "query": "cat 9"}))[
            0
        ] == "(":
            assert time.monotonic() < deadline, later
            time.sleep(0.2)
        assert later.startswith(f"{notes / 'd9' / 'n9.md'}:1  Note 9\n")
        server.check_stdout()
    finally:
        assert server.close() == 0


def test_several_collections_wait_one_budget_and_say_so_in_one_line(
    tmp_path: Path, slow: BlockedEmbedder
) -> None:
    home = tmp_path / "home"
    for name in ("a", "b", "c"):
        many_notes(home / name, 40)
    # The budget is long; the vectors never come while the search waits (the gate opens
    # by itself after a minute, to fail rather than hang): once the words of all three are
    # in, the search answers, the three still making vectors said in one line.
    opener = threading.Timer(HANG_S, slow.gate.set)
    opener.start()
    try:
        with Engine(models=ModelSource(slow), refresh_budget_s=600, small=LONG) as e:
            hits = e.search(home, "cat 7", mode="hybrid")
            waited_whole = slow.gate.is_set()
            slow.gate.set()
            assert not waited_whole
            [n] = hits.notices
            assert (n.kind, n.collection, n.done, n.total) == (
                NoticeKind.EMBEDDING,
                str(home),
                0,
                123,
            )
    finally:
        opener.cancel()
        slow.gate.set()


@pytest.mark.parametrize("notify", [False, True])
def test_an_edit_made_while_vectors_are_made_is_in_the_words_at_once(
    tmp_path: Path, tiny_embedder: Embedder, notify: bool
) -> None:
    """A first index embeds for minutes; an edit made just before a search must be in that
    search's words meanwhile (the refresh takes it in between two batches of vectors), the
    OS reporting changes (`notify`, a long-lived process) or not."""
    notes = many_notes(tmp_path / "notes", 600)  # vectors for 20 s: longer than the edits
    paced = PacedEmbedder(tiny_embedder, 0.25)
    with Engine(
        models=ModelSource(paced),
        tuning=Tuning(batch_chunks=8),
        refresh_budget_s=2,
        small=LONG,
        notify=notify,
    ) as e:
        assert e.search(notes, "cat 7", mode="hybrid").notices  # vectors under way
        for i in range(5):
            (notes / f"edit{i}.md").write_text(f"# Edit\n\nquokka{i}\n", encoding="utf-8")
            answer = e.search(notes, f"quokka{i}", mode="hybrid")
            assert [h.relpath for h in answer] == [f"edit{i}.md"], i
            assert answer.notices[0].kind is NoticeKind.EMBEDDING  # still making vectors


def test_searches_while_vectors_are_made_wait_for_no_step_where_the_os_reports_changes(
    tmp_path: Path, slow: BlockedEmbedder
) -> None:
    """A long-lived process (the OS reporting its folders' changes) whose vectors are being
    made: a search waits for no step of them when the OS reported no change since the last
    words were indexed; it waited for the step under way (1 s, 2-4 s under load) to take in
    the words of changes there were none of."""
    notes = many_notes(tmp_path / "notes", 300)
    with Engine(models=ModelSource(slow), refresh_budget_s=3600.0, small=LONG, notify=True) as e:
        kinds: list[NoticeKind] = []

        def search(i: int) -> None:
            kinds.append(e.search(notes, f"cat {i}", mode="hybrid").notices[0].kind)

        try:
            for i in range(3):  # the first starts the refresh; the others meet it at work
                t = threading.Thread(target=search, args=(i,), daemon=True)
                t.start()
                t.join(HANG_S)
                assert not t.is_alive(), "a search waited for a step of vectors"
        finally:
            slow.gate.set()
    assert kinds == [NoticeKind.EMBEDDING] * 3
