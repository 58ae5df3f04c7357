"""memo_core.values: the modes, file notes and notices defined once, and the checks of a
search's arguments (refused, never clamped)."""

from __future__ import annotations

import pytest

from memo_core.errors import InvalidArgumentError
from memo_core.values import (
    DEFAULT_K,
    DEFAULT_MODE,
    DEFAULT_REFRESH_BUDGET_S,
    MAX_K,
    MAX_QUERY_CHARS,
    MODES,
    NAMED_FOLDERS,
    FileNote,
    Notice,
    NoticeKind,
    refresh_budget,
    search_arguments,
    whole_number,
)


def test_modes_and_defaults_agree() -> None:
    assert set(MODES) == {"hybrid", "lex", "vec"}
    assert DEFAULT_MODE in MODES
    assert 1 <= DEFAULT_K <= MAX_K


@pytest.mark.parametrize(
    ("stored", "note"),
    [
        ("empty", FileNote.EMPTY),
        ("binary", FileNote.BINARY),
        ("unreadable", FileNote.UNREADABLE),
        ("special", FileNote.SPECIAL),
        ("cut", FileNote.CUT),
        # what schema 1 stored
        ("skipped: empty file", FileNote.EMPTY),
        ("skipped: binary data (NUL byte)", FileNote.BINARY),
        ("cut at 10 MB", FileNote.CUT),
        ("skipped: permission denied", FileNote.UNREADABLE),
        ("anything else", FileNote.UNREADABLE),
    ],
)
def test_file_note_parses_stored_values(stored: str, note: FileNote) -> None:
    assert FileNote.parse(stored) is note


def test_only_a_cut_file_is_not_skipped() -> None:
    assert [n for n in FileNote if not n.skipped] == [FileNote.CUT]


def test_notice_defaults() -> None:
    n = Notice(NoticeKind.BUSY)
    assert (n.collection, n.detail, n.done, n.total, n.folders) == (None, "", 0, 0, ())


def test_notice_of_folders_names_them_from_the_folder_they_share() -> None:
    roots = ["/n/a", "/n/b/c", "/n/d"]
    n = Notice.of_folders(NoticeKind.NOT_SEARCHED, roots, "why")
    assert (n.kind, n.collection, n.detail) == (NoticeKind.NOT_SEARCHED, "/n", "why")
    assert (n.total, n.folders) == (3, ("a", "b/c", "d"))


def test_notice_of_folders_names_only_the_first_few() -> None:
    roots = [f"/n/f{i}" for i in range(NAMED_FOLDERS + 3)]
    n = Notice.of_folders(NoticeKind.REFRESH_FAILED, roots, "")
    assert n.total == NAMED_FOLDERS + 3
    assert n.folders == tuple(f"f{i}" for i in range(NAMED_FOLDERS))


def test_notice_of_folders_never_names_a_folder_from_itself() -> None:
    # One of them holds the others: it is named from its parent, not as ".".
    n = Notice.of_folders(NoticeKind.NOT_SEARCHED, ["/n/a", "/n/a/b"], "")
    assert n.collection == "/n"
    assert n.folders == ("a", "a/b")
    alone = Notice.of_folders(NoticeKind.NOT_SEARCHED, ["/n/a"], "")
    assert (alone.collection, alone.folders) == ("/n", ("a",))


@pytest.mark.parametrize("value", [1, 5, 10])
def test_whole_number_within_range(value: int) -> None:
    assert whole_number("k", value, 1, 10) == value


@pytest.mark.parametrize("value", [0, 11, -1, 2.0, "3", True, None])
def test_whole_number_refuses_what_is_out_of_range_or_not_whole(value: object) -> None:
    with pytest.raises(InvalidArgumentError) as e:
        whole_number("debounce", value, 1, 10)
    assert e.value.message.key == "search.whole_range"
    assert e.value.message.params == {"name": "debounce", "low": 1, "high": 10, "got": value}


def test_search_arguments_of_a_good_search() -> None:
    assert search_arguments("  cats  ", 3, "lex") == (3, "  cats  ")


@pytest.mark.parametrize(
    ("query", "k", "mode", "key"),
    [
        ("cats", 3, "fuzzy", "search.mode"),
        ("cats", 3, None, "search.mode"),
        ("cats", 0, "lex", "search.whole_range"),
        ("cats", MAX_K + 1, "hybrid", "search.whole_range"),
        ("cats", "3", "vec", "search.whole_range"),
        ("", 3, "lex", "search.empty_query"),
        (" \t\n", 3, "lex", "search.empty_query"),
        (None, 3, "lex", "search.empty_query"),
        (42, 3, "lex", "search.empty_query"),
    ],
)
def test_search_arguments_refused(query: object, k: object, mode: object, key: str) -> None:
    with pytest.raises(InvalidArgumentError) as e:
        search_arguments(query, k, mode)
    assert e.value.message.key == key


def test_a_bad_mode_is_said_before_a_bad_k() -> None:
    with pytest.raises(InvalidArgumentError) as e:
        search_arguments("", 0, "nope")
    assert e.value.message.key == "search.mode"
    assert e.value.message.params["mode"] == "nope"


def test_a_long_query_is_cut() -> None:
    _, query = search_arguments("я" * (MAX_QUERY_CHARS + 50), 1, "lex")
    assert query == "я" * MAX_QUERY_CHARS


def test_lone_surrogates_become_valid_text() -> None:
    _, query = search_arguments("cat\udcffdog\ud800", 1, "lex")
    query.encode("utf-8")  # valid text now: no surrogate left
    assert query.startswith("cat\ufffd") and query.endswith("\ufffd")
    assert query.replace("\ufffd", " ").split() == ["cat", "dog"]


def test_each_lone_surrogate_becomes_one_replacement_character() -> None:
    _, query = search_arguments("cat\udcffdog\ud800", 1, "lex")
    assert query == "cat\ufffddog\ufffd"


def test_refresh_budget_default_and_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMO_REFRESH_BUDGET", raising=False)
    assert refresh_budget() == DEFAULT_REFRESH_BUDGET_S
    assert refresh_budget(7.5) == 7.5
    monkeypatch.setenv("MEMO_REFRESH_BUDGET", "1.25")
    assert refresh_budget(7.5) == 1.25
