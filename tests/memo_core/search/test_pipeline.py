"""memo_core.search.pipeline: one search over a path's collections, called directly on
indexed Collections: each read from its snapshot, ranked once together, the page's hits
read back (paging, scope, explain, copies, notes spread over pages)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core.collection import Collection
from memo_core.files.scope import Scope
from memo_core.model.embedder import Embedder
from memo_core.results import SearchResults
from memo_core.search.pipeline import search
from memo_core.search.query import Query
from memo_core.tuning import Tuning
from memo_core.values import Notice, NoticeKind

COPY = (
    "Feed the sourdough starter every morning with equal weights of flour and water, "
    "then keep it warm until it doubles."
)
NOTES = {
    "a/soup.md": "# Soup recipe\n\nBorscht soup: cook the beets first, then add cabbage.\n",
    "a/pets.md": "# Pets\n\nThe cat and the dog share a bowl.\n\n## Birds\n\nA bird sings.\n",
    "a/starter.md": f"# Starter\n\n{COPY}\n",
    "b/kitchen.md": "# Kitchen\n\nSoup pots and a cabbage knife.\n\n## Beets\n\nBeets stain.\n",
    "b/archive/starter-old.md": f"# Starter\n\n{COPY}\n",
    "b/garden.md": "# Garden\n\nThe cat sleeps in the garden.\n",
    "b/long.md": "# Long\n\n" + "".join(f"filler line {i}\n" for i in range(12)) + "a bowl sings\n",
}


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "base", NOTES)


def indexed(roots: list[Path], embedder: Embedder | None) -> list[Collection]:
    cs = [Collection(root, Tuning()) for root in roots]
    for c in cs:
        c.refresh(embedder, None)
    return cs


@pytest.fixture
def cs(base: Path, tiny_embedder: Embedder) -> Iterator[list[Collection]]:
    found = indexed([base / "a", base / "b"], tiny_embedder)
    yield found
    for c in found:
        c.close()


def run(
    base: Path,
    cs: list[Collection],
    query: Query,
    model: Embedder | None = None,
    notices: list[Notice] | None = None,
    open_budget: int = 10,
) -> SearchResults:
    return search(base, cs, query, model, Tuning(), notices or [], open_budget)


def test_a_hit_as_the_reader_sees_it(base: Path, cs: list[Collection]) -> None:
    hits = run(base, cs, Query.of("borscht", mode="lex"))
    assert hits.mode == "lex" and (hits.offset, hits.next_offset) == (0, None)
    [hit] = hits
    assert (hit.relpath, hit.collection) == ("soup.md", str(base / "a"))
    assert hit.path == str(base / "a" / "soup.md")
    assert (hit.heading, hit.line, hit.end_line) == ("Soup recipe", 1, 3)
    assert hit.text == "Borscht soup: cook the beets first, then add cabbage."
    assert (hit.found_by, hit.explain, hit.also_in) == (("lex",), None, ())
    assert hit.score > 0


def test_collections_are_ranked_as_one(base: Path, cs: list[Collection]) -> None:
    hits = run(base, cs, Query.of("soup beets cabbage", 10, "lex"))
    assert {h.collection for h in hits} == {str(base / "a"), str(base / "b")}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize("mode", ["lex", "vec", "hybrid"])
def test_each_mode(base: Path, cs: list[Collection], tiny_embedder: Embedder, mode: str) -> None:
    hits = run(base, cs, Query.of("beets cabbage", 3, mode), tiny_embedder)  # type: ignore[arg-type]
    assert hits.mode == mode
    assert hits[0].relpath in ("soup.md", "kitchen.md")
    assert all(set(h.found_by) <= {"lex", "vec"} for h in hits)
    if mode != "hybrid":
        assert all(h.found_by == (mode,) for h in hits)


def test_a_hit_shows_the_lines_its_words_are_on_or_by_meaning_its_start(
    base: Path, cs: list[Collection], tiny_embedder: Embedder
) -> None:
    [by_words] = [h for h in run(base, cs, Query.of("bowl", 10, "lex")) if h.relpath == "long.md"]
    assert "a bowl sings" in by_words.text and "filler line 0" not in by_words.text
    assert by_words.end_line == 15  # the note's own line numbers
    assert by_words.line > 3
    [by_meaning] = [
        h
        for h in run(base, cs, Query.of("bowl sings", 20, "vec"), tiny_embedder)
        if h.relpath == "long.md"
    ]
    assert by_meaning.line == 1  # the passage's start: its heading
    assert by_meaning.text.startswith("filler line 0")


def test_without_a_model_only_words_are_found(base: Path, cs: list[Collection]) -> None:
    hits = run(base, cs, Query.of("cat", 10, "lex"))
    assert {h.relpath for h in hits} == {"pets.md", "garden.md"}
    assert all(h.found_by == ("lex",) for h in hits)


def test_notices_are_kept_and_the_callers_list_untouched(base: Path, cs: list[Collection]) -> None:
    given = [Notice(NoticeKind.BUSY, str(base / "a"))]
    hits = run(base, cs, Query.of("cat", mode="lex"), notices=given)
    assert hits.notices == given
    assert hits.notices is not given


def test_another_models_index_is_searched_by_words_and_said(
    base: Path, tiny_embedder: Embedder
) -> None:
    [words_only] = indexed([base / "a"], None)
    [other] = indexed([base / "b"], tiny_embedder)
    try:

        class Renamed(Embedder):
            model_id, dim = "another/model", tiny_embedder.dim

            def embed_batch(self, texts: list[str], *, query: bool = False):  # type: ignore[override]
                return tiny_embedder.embed_batch(texts, query=query)

        hits = run(base, [words_only, other], Query.of("cat garden"), Renamed())
    finally:
        words_only.close()
        other.close()
    assert [(n.kind, n.collection) for n in hits.notices] == [
        (NoticeKind.OTHER_MODEL, str(base / "b"))
    ]
    assert hits and all(h.found_by == ("lex",) for h in hits if h.collection == str(base / "b"))


def test_a_collection_never_indexed_is_passed_over(base: Path, cs: list[Collection]) -> None:
    write_notes(base / "c", {"cat.md": "# Cat\n\ncat cat cat\n"})
    fresh = Collection(base / "c", Tuning())
    try:
        hits = run(base, [*cs, fresh], Query.of("cat", 10, "lex"))
    finally:
        fresh.close()
    assert str(base / "c") not in {h.collection for h in hits}
    assert {h.relpath for h in hits} == {"pets.md", "garden.md"}
    assert not (base / "c" / ".memo").exists()


def test_no_hits(base: Path, cs: list[Collection]) -> None:
    hits = run(base, cs, Query.of("zzzunknown", mode="lex"))
    assert (list(hits), hits.next_offset, hits.notices) == ([], None, [])


@pytest.mark.parametrize("open_budget", [0, 1])
def test_past_the_open_budget_the_answer_is_the_same(
    base: Path, cs: list[Collection], tiny_embedder: Embedder, open_budget: int
) -> None:
    query = Query.of("cat soup beets bird", 4, "hybrid", offset=1, explain=True)
    kept = run(base, cs, query, tiny_embedder, open_budget=10)
    one_at_a_time = run(base, cs, query, tiny_embedder, open_budget=open_budget)
    assert list(one_at_a_time) == list(kept)
    assert one_at_a_time.next_offset == kept.next_offset


def test_pages_follow_each_other(tmp_path: Path) -> None:
    notes = write_notes(
        tmp_path / "many", {f"n{i:02}.md": f"# Note {i}\n\ncat {'cat ' * i}\n" for i in range(9)}
    )
    [c] = indexed([notes], None)
    try:
        seen: list[str] = []
        offset: int | None = 0
        pages = 0
        while offset is not None:
            page = run(notes, [c], Query.of("cat", 4, "lex", offset=offset))
            assert page.offset == offset
            seen += [h.relpath for h in page]
            offset = page.next_offset
            pages += 1
        assert pages == 3
        assert sorted(seen) == [f"n{i:02}.md" for i in range(9)]  # each once, none lost
    finally:
        c.close()


def test_a_page_shows_distinct_notes_while_there_are_enough(tmp_path: Path) -> None:
    notes = write_notes(
        tmp_path / "n",
        {
            "big.md": "# Big\n\ncat cat cat\n\n## Two\n\ncat cat cat\n\n## Three\n\ncat cat\n",
            "x.md": "# X\n\ncat here\n",
            "y.md": "# Y\n\na cat\n",
        },
    )
    [c] = indexed([notes], None)
    try:
        first = run(notes, [c], Query.of("cat", 3, "lex"))
        second = run(notes, [c], Query.of("cat", 3, "lex", offset=3))
    finally:
        c.close()
    assert sorted(h.relpath for h in first) == ["big.md", "x.md", "y.md"]
    assert [h.relpath for h in second] == ["big.md", "big.md"]  # the rest of big.md
    assert (first.next_offset, second.next_offset) == (3, None)


def test_copies_are_one_hit_that_names_the_others(base: Path, cs: list[Collection]) -> None:
    hits = run(base, cs, Query.of("sourdough starter flour", 10, "lex"))
    starters = [h for h in hits if "starter" in h.relpath]
    # The copy kept in an archive is the one folded in, whatever ranks first.
    assert [h.relpath for h in starters] == ["starter.md"]
    assert starters[0].also_in == (str(base / "b" / "archive" / "starter-old.md"),)


def test_a_scope_is_read_from_the_path_searched(base: Path, cs: list[Collection]) -> None:
    hits = run(base, cs, Query.of("cat", 10, "lex", scope=Scope(under="b")))
    assert [h.relpath for h in hits] == ["garden.md"]
    assert not run(base / "b", cs[1:], Query.of("cat", 10, "lex", scope=Scope(under="b")))


@pytest.mark.parametrize("mode", ["lex", "vec", "hybrid"])
def test_explain_says_why_each_ranks_there(
    base: Path, cs: list[Collection], tiny_embedder: Embedder, mode: str
) -> None:
    hits = run(base, cs, Query.of("beets cabbage soup", 5, mode, explain=True), tiny_embedder)  # type: ignore[arg-type]
    assert hits
    for h in hits:
        why = h.explain
        assert why is not None
        if "lex" in h.found_by:
            assert why.bm25 is not None and why.lex is not None
        if "vec" in h.found_by:
            assert why.vec is not None
        if mode == "hybrid":
            assert why.dense_weight is not None
        if mode == "lex":
            assert h.score == pytest.approx(why.lex)
        if mode == "vec":
            assert h.score == pytest.approx(why.vec)


def test_a_passage_scores_the_same_in_a_scoped_search(tmp_path: Path) -> None:
    # "cat": in 1 of a's 3 passages and 1 of b's 4, so its IDF over both (7 passages, 2
    # with it) differs from b's own, and b's word scores are scaled in a search of both.
    root = write_notes(
        tmp_path / "two",
        {
            **{f"a/{w}.md": f"# {w.title()}\n\n{w} words\n" for w in ("cat", "sun", "moon")},
            **{f"b/{w}.md": f"# {w.title()}\n\n{w} words\n" for w in ("cat", "sea", "sky", "ice")},
        },
    )
    cs = indexed([root / "a", root / "b"], None)
    try:
        plain = run(root, cs, Query.of("cat", 10, "lex"))
        scoped = run(root, cs, Query.of("cat", 10, "lex", scope=Scope(under="b")))
    finally:
        for c in cs:
            c.close()
    [in_b] = [h for h in plain if h.collection == str(root / "b")]
    assert [h.path for h in scoped] == [in_b.path]
    assert scoped[0].score == pytest.approx(in_b.score)
