"""memo_core.text.excerpt: the window of whole lines a hit shows of its passage, chosen by
the query's words as the index normalises them; a short passage whole, an overlong line cut
at word boundaries."""

from __future__ import annotations

import random

import pytest

from memo_core.text.excerpt import EXCERPT_CHARS, EXCERPT_LINES, Excerpt, excerpt, matched
from memo_core.text.textnorm import query_groups, query_terms
from memo_core.values import CUT


def terms(query: str) -> set[str]:
    return set(query_terms(query))


def filler(n: int) -> list[str]:
    return [f"filler line {i}" for i in range(n)]


def test_matched_finds_the_query_stems_a_line_holds() -> None:
    assert matched("The Cats sat on the mats", terms("cat mat dog")) == terms("cat mat")
    assert matched("Ёлки растут в лесу", terms("ёлка")) == terms("ёлка")  # ё and endings
    assert matched("Настроить бэкапы", terms("бэкап настройка")) == terms("бэкап")
    assert matched("nothing here", terms("cat")) == set()
    assert matched("cat", set()) == set()  # found by meaning alone: no words


def test_a_short_passage_is_shown_whole() -> None:
    lines = ["# Soup", "", "Borscht: beets first.", "Then cabbage."]
    for query in ("cabbage", "nothing matches", ""):
        assert excerpt(lines, terms(query)) == Excerpt(0, 3, "\n".join(lines))


def test_a_passage_no_line_of_which_matches_shows_its_start() -> None:
    lines = filler(40)
    shown = excerpt(lines, terms("absent"))
    assert (shown.first, shown.last) == (0, EXCERPT_LINES - 1)
    assert shown.text == "\n".join(lines[:EXCERPT_LINES])


def test_the_window_starts_at_the_line_that_matches() -> None:
    lines = filler(60)
    lines[30] = "the cat sleeps"
    shown = excerpt(lines, terms("cat"))
    assert shown.first == 30
    assert shown.last == 30 + EXCERPT_LINES - 1
    assert shown.text.splitlines()[0] == "the cat sleeps"


def test_more_distinct_query_words_beat_more_matches_of_one() -> None:
    lines = filler(80)
    for i in range(5, 10):  # five lines of one word
        lines[i] = "cat cat cat"
    lines[50] = "a cat"
    lines[52] = "a dog"  # one line of each word, close together
    shown = excerpt(lines, terms("cat dog"))
    assert shown.first == 50
    assert "a cat" in shown.text and "a dog" in shown.text


def test_more_matches_beat_fewer_when_words_tie() -> None:
    lines = filler(80)
    lines[10] = "cat"
    lines[40] = "cat"
    lines[41] = "cat again"
    assert excerpt(lines, terms("cat")).first == 40


def test_of_equal_windows_the_first_is_shown() -> None:
    lines = filler(80)
    lines[20] = lines[60] = "cat"
    assert excerpt(lines, terms("cat")).first == 20


def test_a_window_that_reaches_the_end_shows_the_lines_before_it() -> None:
    lines = filler(40)
    lines[38] = "the cat"
    shown = excerpt(lines, terms("cat"))
    assert (shown.first, shown.last) == (40 - EXCERPT_LINES, 39)


def test_blank_lines_at_the_window_edges_are_left_out() -> None:
    lines = ["", "  ", "cat", "", "\t"]
    assert excerpt(lines, terms("cat")) == Excerpt(2, 2, "cat")


@pytest.mark.parametrize(("max_lines", "max_chars"), [(3, 600), (12, 250), (1, 1000)])
def test_the_window_holds_whole_lines_within_both_bounds(max_lines: int, max_chars: int) -> None:
    lines = ["x" * 99 for _ in range(30)]
    lines[7] = "cat " + "y" * 95
    shown = excerpt(lines, terms("cat"), max_lines=max_lines, max_chars=max_chars)
    assert shown.first == 7
    assert shown.last - shown.first + 1 <= max_lines
    assert len(shown.text) <= max_chars
    assert shown.text == "\n".join(lines[shown.first : shown.last + 1])


def test_one_overlong_line_is_cut_around_the_query_word() -> None:
    words = [f"w{i}" for i in range(1000)]
    words[500] = "cat"
    line = " ".join(words)
    shown = excerpt([line], terms("cat"))
    assert (shown.first, shown.last) == (0, 0)
    assert shown.text.startswith(CUT) and shown.text.endswith(CUT)
    assert len(shown.text) <= EXCERPT_CHARS
    inner = shown.text[len(CUT) : -len(CUT)]
    assert " cat " in inner and inner in line
    assert inner.split()[0] in words and inner.split()[-1] in words  # whole words only
    assert inner.index("cat") < len(inner) // 2  # a little context before, more after


def test_an_overlong_line_matching_at_its_start_is_not_cut_there() -> None:
    line = "cat " + " ".join(f"w{i}" for i in range(500))
    shown = excerpt([line], terms("cat"))
    assert shown.text.startswith("cat ") and shown.text.endswith(CUT)
    assert len(shown.text) <= EXCERPT_CHARS


def test_an_overlong_line_without_spaces_is_cut_anyway() -> None:
    line = "z" * 5000
    shown = excerpt([line], set())
    assert shown.text == line[: EXCERPT_CHARS - 2 * len(CUT)] + CUT


@pytest.mark.parametrize("seed", range(30))
def test_any_passage_shows_whole_lines_within_bounds_and_a_match_if_any(seed: int) -> None:
    rnd = random.Random(seed)
    vocabulary = ["cat", "dog", "bird", "", "lorem ipsum dolor", "кошка", "x" * 70]
    lines = [
        " ".join(rnd.choice(vocabulary) for _ in range(rnd.randint(0, 6)))
        for _ in range(rnd.randint(1, 60))
    ]
    query = terms("cat dog кошка")
    shown = excerpt(lines, query)
    assert 0 <= shown.first <= shown.last < len(lines)
    assert shown.last - shown.first + 1 <= EXCERPT_LINES
    assert len(shown.text) <= EXCERPT_CHARS
    window = lines[shown.first : shown.last + 1]
    assert shown.text == "\n".join(window)
    if any(matched(line, query) for line in lines):
        assert any(matched(line, query) for line in window)


def test_a_line_is_matched_with_its_words_stemmed_in_its_passages_language() -> None:
    groups = query_groups("Sicherung", ["english", "german"])
    stems = {t for g in groups for t in g}
    assert matched("Die Sicherungen liegen auf dem Server.", stems, "german") == {"sicherung"}
    assert matched("Die Sicherungen liegen auf dem Server.", stems) == set()  # as English
    lines = ["Zuerst den Dienst stoppen.", "Dann die Sicherungen einspielen."]
    assert excerpt(lines, stems, lang="german", max_lines=1).first == 1
