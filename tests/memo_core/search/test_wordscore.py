"""memo_core.search.wordscore: a passage's word score, BM25 × naming + proximity, over one
collection's real index (its notes indexed by words alone)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core.collection import Collection
from memo_core.files.scope import Scope
from memo_core.index.rows import ChunkRow
from memo_core.index.store import Store
from memo_core.search.wordscore import (
    WordScore,
    exactness,
    naming_factor,
    word_candidates,
)
from memo_core.text import textnorm
from memo_core.tuning import Tuning

FILLER = " ".join(f"w{i}" for i in range(6))
NOTES = {
    # Named by its heading: every query word is in it.
    "garden.md": "# Tomato seedlings\n\nWater them in the morning, keep them warm.\n",
    # The words, apart and repeated, in a long body under another heading.
    "diary.md": "# Diary\n\n"
    + " ".join(f"tomato {FILLER} seedlings {FILLER}" for _ in range(3))
    + "\n",
    # The words side by side in the body.
    "shop.md": "# Shopping\n\nBuy tomato seedlings and soil.\n",
    "other.md": "# Other\n\nNothing about flowers at all.\n",
    "named.md": "---\naliases: [Pepper plants]\n---\n# Notes\n\nPepper plants need sun.\n",
    "sub/deep.md": "# Deep\n\nTomato in a sub-folder.\n",
}


def indexed(root: Path, tuning: Tuning) -> Collection:
    c = Collection(root, tuning)
    c.refresh(None, None)
    return c


@pytest.fixture
def collection(tmp_path: Path) -> Iterator[Collection]:
    c = indexed(write_notes(tmp_path / "notes", NOTES), Tuning())
    yield c
    c.close()


def paths(store: Store, words: list[WordScore]) -> list[str]:
    rows = store.chunk_rows([w.chunk for w in words])
    return [rows[w.chunk].path for w in words]


def terms(query: str) -> list[textnorm.Group]:
    """The query's words as an English index holds them."""
    return textnorm.query_groups(query, ["english"])


@pytest.mark.parametrize(
    ("bm25", "naming", "proximity", "score"),
    [(2.0, 1.0, 0.0, 2.0), (2.0, 1.5, 0.0, 3.0), (2.0, 1.5, 0.25, 3.25), (0.0, 3.0, 0.5, 0.5)],
)
def test_score_joins_the_three_parts(
    bm25: float, naming: float, proximity: float, score: float
) -> None:
    assert WordScore(1, bm25, naming, proximity).score == pytest.approx(score)


def test_word_score_defaults_to_no_naming_and_no_proximity() -> None:
    w = WordScore(7, 1.25)
    assert (w.naming, w.proximity, w.score) == (1.0, 0.0, 1.25)


@pytest.mark.parametrize(
    ("query", "heading", "rel", "names", "expected"),
    [
        # Only the passage's own heading (the last part) and the note's first count.
        ("middle", "Top > Middle > Leaf", "a.md", (), 0.0),
        ("leaf", "Top > Middle > Leaf", "a.md", (), 1.0),
        ("top", "Top > Middle > Leaf", "a.md", (), 1.0),
        # A front matter name counts as a title.
        ("pepper plants", "Notes", "n.md", ("Pepper plants",), 1.0),
        ("pepper", "Notes", "n.md", ("Pepper plants", "Capsicum"), 0.5),
        # The folders above the note do not.
        ("garden", "", "garden/x.md", (), 0.0),
        # A title without words counts for nothing.
        ("anything", "---", "__.md", ("!!",), 0.0),
    ],
)
def test_exactness(
    query: str, heading: str, rel: str, names: tuple[str, ...], expected: float
) -> None:
    words = set(textnorm.query_terms(query))
    assert exactness(words, heading, rel, names) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("heading", "expected_exact"), [("Tomato seedlings", 1.0), ("Tomato seedlings care", 2 / 3)]
)
def test_naming_factor(heading: str, expected_exact: float) -> None:
    row = ChunkRow(1, "x.md", 1, heading, "body", 3, "x")
    tuning = Tuning(heading_match_boost=0.5, title_exact_boost=1.5)
    got = naming_factor(row, set(textnorm.query_terms("tomato seedlings")), tuning)
    assert got == pytest.approx(1 + 0.5 + 1.5 * expected_exact)


def test_naming_factor_uses_the_notes_names() -> None:
    row = ChunkRow(1, "x.md", 1, "Notes", "body", 3, "x")
    query = set(textnorm.query_terms("pepper plants"))
    tuning = Tuning(heading_match_boost=0.0, title_exact_boost=2.0)
    assert naming_factor(row, query, tuning) == pytest.approx(1.0)
    assert naming_factor(row, query, tuning, ["Pepper plants"]) == pytest.approx(3.0)


def test_candidates_come_best_first_with_their_parts(collection: Collection) -> None:
    tuning = collection.tuning
    with collection.snapshot() as store:
        assert store is not None
        words = word_candidates(store, terms("tomato seedlings"), 10, tuning)
        found = paths(store, words)
    assert set(found) == {"garden.md", "diary.md", "shop.md", "sub/deep.md"}
    assert [w.score for w in words] == sorted((w.score for w in words), reverse=True)
    by_path = dict(zip(found, words, strict=True))
    # The heading names it: 1 + boost + exact boost × 1.
    garden = by_path["garden.md"]
    assert garden.naming == pytest.approx(1 + tuning.heading_match_boost + tuning.title_exact_boost)
    assert found[0] == "garden.md"
    # Not named: naming 1. Side by side: a proximity share; apart, or one word: none.
    assert {p: by_path[p].naming for p in ("diary.md", "shop.md", "sub/deep.md")} == {
        "diary.md": 1.0,
        "shop.md": 1.0,
        "sub/deep.md": 1.0,
    }
    assert by_path["shop.md"].proximity > 0
    assert by_path["diary.md"].proximity == 0.0
    assert by_path["sub/deep.md"].proximity == 0.0
    for w in words:
        assert w.bm25 > 0
        assert w.score == pytest.approx(w.bm25 * w.naming + w.proximity)


def test_naming_and_proximity_off(tmp_path: Path) -> None:
    off = Tuning(heading_match_boost=0.0, title_exact_boost=0.0, proximity_weight=0.0)
    c = indexed(write_notes(tmp_path / "notes", NOTES), off)
    try:
        with c.snapshot() as store:
            assert store is not None
            words = word_candidates(store, terms("tomato seedlings"), 10, off)
            plain = store.lex(terms("tomato seedlings"), 10, (off.heading_weight, off.body_weight))
    finally:
        c.close()
    assert all((w.naming, w.proximity) == (1.0, 0.0) for w in words)
    # Then the word score is FTS5's BM25 itself, in its order.
    assert [w.chunk for w in words] == [cid for cid, _ in plain]
    assert [w.score for w in words] == pytest.approx([score for _, score in plain])


def test_proximity_weight_scales_the_share(tmp_path: Path) -> None:
    shares = []
    for weight in (0.1, 0.3):
        tuning = Tuning(proximity_weight=weight)
        c = indexed(write_notes(tmp_path / f"notes{weight}", NOTES), tuning)
        try:
            with c.snapshot() as store:
                assert store is not None
                words = word_candidates(store, terms("tomato seedlings"), 10, tuning)
                shares.append({paths(store, [w])[0]: w.proximity for w in words})
        finally:
            c.close()
    assert shares[1]["shop.md"] == pytest.approx(3 * shares[0]["shop.md"])


def test_a_single_word_has_no_proximity(collection: Collection) -> None:
    with collection.snapshot() as store:
        assert store is not None
        words = word_candidates(store, terms("tomato"), 10, collection.tuning)
    assert words and all(w.proximity == 0.0 for w in words)


def test_front_matter_names_name_a_passage(collection: Collection) -> None:
    with collection.snapshot() as store:
        assert store is not None
        words = word_candidates(store, terms("pepper plants"), 10, collection.tuning)
        found = paths(store, words)
    assert found == ["named.md"]
    assert words[0].naming > 1.0


@pytest.mark.parametrize("n", [1, 2, 3])
def test_at_most_n(collection: Collection, n: int) -> None:
    with collection.snapshot() as store:
        assert store is not None
        words = word_candidates(store, terms("tomato seedlings"), n, collection.tuning)
    assert len(words) == n


@pytest.mark.parametrize("query", ["", "zzzunknownword", "qqq-zzz xq"])
def test_no_candidates(collection: Collection, query: str) -> None:
    with collection.snapshot() as store:
        assert store is not None
        assert word_candidates(store, terms(query), 10, collection.tuning) == []


def test_scoped_candidates_are_chosen_among_those_in_scope(collection: Collection) -> None:
    with collection.snapshot() as store:
        assert store is not None
        among = collection.in_scope(store, Scope(under="sub"), "")
        assert among is not None and len(among) == 1
        # n = 1: the best in scope, not the best overall cut to those in scope (none).
        words = word_candidates(store, terms("tomato seedlings"), 1, collection.tuning, scoped=True)
        assert paths(store, words) == ["sub/deep.md"]
        assert [w.chunk for w in words] == [int(among[0])]
