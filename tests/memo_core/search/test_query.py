"""memo_core.search.query: a search as asked, checked once (`Query.of`), and what every
stage reads of it: its terms, how deep to rank, how many candidates to gather."""

from __future__ import annotations

import dataclasses

import pytest

from memo_core.errors import InvalidArgumentError
from memo_core.files.scope import Scope
from memo_core.search.query import Query
from memo_core.text import textnorm
from memo_core.tuning import Tuning
from memo_core.values import DEFAULT_K, DEFAULT_MODE, MAX_K, MAX_OFFSET, MAX_QUERY_CHARS


def test_defaults() -> None:
    q = Query.of("cats")
    assert (q.text, q.k, q.mode, q.offset, q.scope, q.explain) == (
        "cats",
        DEFAULT_K,
        DEFAULT_MODE,
        0,
        None,
        False,
    )


def test_every_argument_is_kept() -> None:
    scope = Scope.parse(under="pets", tags="animals")
    q = Query.of("cats", 3, "vec", offset=9, scope=scope, explain=True)
    assert (q.k, q.mode, q.offset, q.scope, q.explain) == (3, "vec", 9, scope, True)


def test_the_text_is_checked_as_any_search_argument() -> None:
    q = Query.of("x" * (MAX_QUERY_CHARS + 1) + " tail")
    assert q.text == "x" * MAX_QUERY_CHARS
    assert "\ufffd" in Query.of("cat\udcff").text


@pytest.mark.parametrize(
    ("args", "kw", "key"),
    [
        (("",), {}, "search.empty_query"),
        (("cats", 0), {}, "search.whole_range"),
        (("cats", MAX_K + 1), {}, "search.whole_range"),
        (("cats", 8, "bm25"), {}, "search.mode"),
        (("cats",), {"offset": -1}, "search.whole_range"),
        (("cats",), {"offset": MAX_OFFSET + 1}, "search.whole_range"),
        (("cats",), {"offset": 1.5}, "search.whole_range"),
        (("cats",), {"scope": "pets/"}, "search.scope_type"),
        (("cats",), {"scope": {"under": "pets"}}, "search.scope_type"),
    ],
)
def test_a_query_it_cannot_be_is_refused(args: tuple, kw: dict, key: str) -> None:
    with pytest.raises(InvalidArgumentError) as e:
        Query.of(*args, **kw)
    assert e.value.message.key == key


def test_offset_error_names_offset() -> None:
    with pytest.raises(InvalidArgumentError) as e:
        Query.of("cats", offset=MAX_OFFSET + 1)
    assert e.value.message.params["name"] == "offset"
    assert e.value.message.params["high"] == MAX_OFFSET


def test_offset_bounds_are_allowed() -> None:
    assert Query.of("cats", offset=MAX_OFFSET).offset == MAX_OFFSET
    assert Query.of("cats", MAX_K).k == MAX_K


def test_terms_are_the_words_as_the_index_holds_them() -> None:
    q = Query.of("How do the Cats восстанавливают ёлку?")
    assert q.terms == textnorm.query_terms(q.text)
    assert "the" not in q.terms and "how" not in q.terms  # stopwords dropped
    assert "cat" in q.terms  # stemmed, lower-cased
    assert any(t.startswith("елк") for t in q.terms)  # ё folded
    assert q.terms is q.terms  # computed once


def test_only_stopwords_are_kept_when_nothing_else_is_left() -> None:
    assert Query.of("the").terms == ["the"]


@pytest.mark.parametrize(("k", "offset", "deep"), [(1, 0, 2), (8, 0, 9), (10, 30, 41)])
def test_deep_counts_the_pages_before_this_one_and_one_more(k: int, offset: int, deep: int) -> None:
    assert Query.of("cats", k, offset=offset).deep == deep


def test_wanted_is_the_candidates_setting_or_deeper() -> None:
    tuning = Tuning(fusion_candidates=50)
    assert Query.of("cats", 10).wanted(tuning) == 50
    assert Query.of("cats", 10, offset=100).wanted(tuning) == 111
    assert Query.of("cats", 10, offset=39).wanted(tuning) == 50  # deep 50: a tie


def test_in_mode_changes_only_the_mode() -> None:
    scope = Scope.parse(under="pets")
    q = Query.of("cats", 4, "hybrid", offset=2, scope=scope, explain=True)
    lex = q.in_mode("lex")
    assert lex.mode == "lex" and q.mode == "hybrid"
    assert dataclasses.replace(lex, mode="hybrid") == q
    assert lex.terms == q.terms


def test_a_query_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Query.of("cats").k = 3  # type: ignore[misc]
