"""memo_core.results: the plain data the engine answers; `SearchResults` a list with its
notices and paging, and `CollectionStatus.unfinished`, what an index does not hold yet."""

from __future__ import annotations

import dataclasses

import pytest

from memo_core.results import CollectionStatus, Explain, Hit, SearchResults
from memo_core.values import Notice, NoticeKind


def hit(n: int) -> Hit:
    return Hit(
        path=f"/n/{n}.md",
        relpath=f"{n}.md",
        collection="/n",
        line=1,
        end_line=2,
        heading="H",
        text="t",
        score=1.0 / n,
        found_by=("lex",),
    )


def status(**kw: object) -> CollectionStatus:
    base: dict[str, object] = dict(
        root="/n",
        files=10,
        chunks=40,
        skipped=0,
        empty=0,
        pending=0,
        updated_at=None,
        model=None,
        chunks_without_vectors=0,
        chunks_without_sentences=0,
        notes=[],
        index_path="/n/.memo/index.db",
        location_note=None,
        fingerprint="f",
        refreshed_at=None,
        unreadable_folders=[],
        ignored=0,
    )
    return CollectionStatus(**{**base, **kw})  # type: ignore[arg-type]


def test_search_results_is_the_list_of_hits_with_its_facts() -> None:
    hits = [hit(1), hit(2)]
    notice = Notice(NoticeKind.BUSY, "/n")
    r = SearchResults(hits, "lex", [notice], offset=8, next_offset=10)
    assert list(r) == hits and r[0].relpath == "1.md"
    assert (r.mode, r.notices, r.offset, r.next_offset) == ("lex", [notice], 8, 10)


def test_search_results_defaults() -> None:
    r = SearchResults([], "hybrid")
    assert (len(r), r.notices, r.offset, r.next_offset) == (0, [], 0, None)
    # Each answer has a list of notices of its own.
    r.notices.append(Notice(NoticeKind.BUSY))
    assert SearchResults([], "hybrid").notices == []


def test_hit_defaults_and_frozen() -> None:
    h = hit(1)
    assert (h.explain, h.also_in) == (None, ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        h.score = 2.0  # type: ignore[misc]


def test_explain_second_look_parts_default_to_none() -> None:
    e = Explain(1.0, 1.5, 0.0, 1.0, 1.5, None, None, None, None, None)
    assert (e.ranked, e.placed, e.sentence, e.second_look) == (None, None, None, None)


def test_a_whole_index_has_nothing_unfinished() -> None:
    assert status().unfinished() == []


def test_notes_still_to_index_count_the_held_and_those_to_come() -> None:
    got = status(files=10, pending=3, chunks_without_vectors=5).unfinished()
    assert got == [Notice(NoticeKind.INDEXING, "/n", done=10, total=13)]


def test_passages_without_vectors_come_before_those_without_sentences() -> None:
    got = status(chunks=40, chunks_without_vectors=15, chunks_without_sentences=40).unfinished()
    assert got == [Notice(NoticeKind.EMBEDDING, "/n", done=25, total=40)]


def test_passages_without_their_sentences() -> None:
    got = status(chunks=40, chunks_without_sentences=4).unfinished()
    assert got == [Notice(NoticeKind.SENTENCES, "/n", done=36, total=40)]
