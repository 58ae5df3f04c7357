"""memo_core.files.scope: a search's scope checked once when made (a keyed
InvalidArgumentError for each bad value), and its test of a note's path: a sub-folder, a
note, or a glob that holds a note when it matches its path or a folder above it."""

from __future__ import annotations

import os
from datetime import date, datetime, timedelta, timezone

import pytest

from memo_core.errors import InvalidArgumentError, MemoError
from memo_core.files.scope import MAX_DATE_CHARS, MAX_TAGS, MAX_UNDER_CHARS, Scope

UTC = timezone.utc


def refused(key: str, **values: object) -> InvalidArgumentError:
    with pytest.raises(InvalidArgumentError) as caught:
        Scope.parse(**values)  # type: ignore[arg-type]
    assert isinstance(caught.value, MemoError)
    assert caught.value.message.key == key, caught.value.message
    return caught.value


# -- what is made --------------------------------------------------------------------------


def test_an_empty_scope_leaves_nothing_out() -> None:
    for scope in (Scope(), Scope.parse(), Scope.parse(under=" ", after="", before="  ")):
        assert not scope
        assert scope == Scope()
        assert scope.path_test() is None
        assert scope.after_ns is None and scope.before_ns is None


@pytest.mark.parametrize(
    ("under", "kept"),
    [
        ("projects", "projects"),
        ("projects/", "projects"),
        ("./projects//plan.md", "projects/plan.md"),
        ("  a/./b/  ", "a/b"),
        (".", None),
        ("./", None),
        ("заметки/план.md", "заметки/план.md"),
        ("a b/c d", "a b/c d"),  # inner spaces are a name's
        ("~notes", "~notes"),  # only `~` and `~/` mean home
        ("..hidden/x", "..hidden/x"),  # not `..` itself
    ],
)
def test_under_is_kept_normalised(under: str, kept: str | None) -> None:
    assert Scope.parse(under=under).under == kept
    assert Scope(under=under) == Scope.parse(under=under)


@pytest.mark.parametrize(
    ("tags", "kept"),
    [
        ("Work", ("work",)),  # one text is one tag
        (["#Work", "work", "WORK"], ("work",)),  # `#` optional, any case, once
        (["a/B", "#x"], ("a/b", "x")),
        (["#Ёлка"], ("ёлка",)),
        ([" spaced "], ("spaced",)),
        ([], ()),
        (None, ()),
    ],
)
def test_tags_are_kept_normalised_and_once(tags: object, kept: tuple[str, ...]) -> None:
    assert Scope.parse(tags=tags).tags == kept  # type: ignore[arg-type]


def test_a_bare_date_is_a_whole_local_day() -> None:
    scope = Scope.parse(after="2024-05-01", before="2024-05-31")
    assert scope.after is not None and scope.before is not None
    local = datetime(2024, 5, 1).astimezone().tzinfo
    assert scope.after == datetime(2024, 5, 1, tzinfo=local)
    assert scope.before == datetime(2024, 5, 31, 23, 59, 59, 999_999).astimezone()
    assert Scope.parse(after=date(2024, 5, 1), before=date(2024, 5, 31)) == scope


def test_a_date_and_time_is_that_moment_local_unless_it_has_an_offset() -> None:
    scope = Scope.parse(after="2024-05-01T14:30", before="2024-05-02T08:00:00+02:00")
    assert scope.after == datetime(2024, 5, 1, 14, 30).astimezone()
    assert scope.before == datetime(2024, 5, 2, 6, 0, tzinfo=UTC)
    assert scope.before is not None and scope.before.utcoffset() == timedelta(hours=2)
    zulu = Scope.parse(after="2024-05-01T14:30:00Z")
    assert zulu.after == datetime(2024, 5, 1, 14, 30, tzinfo=UTC)


def test_bounds_in_nanoseconds_are_exact_and_take_in_the_last_microsecond() -> None:
    moment = datetime(2024, 1, 1, 0, 0, 0, 123_456, tzinfo=UTC)
    scope = Scope(after=moment, before=moment)  # equal bounds: one microsecond
    assert scope.after_ns == 1_704_067_200_123_456_000
    assert scope.before_ns == 1_704_067_200_123_456_999
    before_epoch = Scope(after=datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC))
    assert before_epoch.after_ns == -(10**9)


def test_the_furthest_dates_fit_what_sqlite_integers_hold() -> None:
    scope = Scope(before=datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC))
    assert scope.before_ns is not None and scope.before_ns <= 2**63 - 1
    early = Scope(after=datetime(1, 1, 2, tzinfo=UTC))
    assert early.after_ns is not None and early.after_ns >= -(2**63)


def test_a_scope_is_a_frozen_value() -> None:
    scope = Scope.parse(under="a/*", tags=["x"])
    assert scope == Scope.parse(under="./a/*/", tags="#X")
    assert hash(scope) == hash(Scope.parse(under="a/*", tags=["x"]))
    with pytest.raises(AttributeError):
        scope.under = "b"  # type: ignore[misc]


# -- what is refused, with the key that says what to write ---------------------------------


@pytest.mark.parametrize(
    ("key", "values"),
    [
        ("scope.nul", {"under": "a\0b"}),
        ("scope.nul", {"tags": ["ok", "b\0d"]}),
        ("scope.nul", {"tags": "x\0"}),
        ("scope.nul", {"after": "2024-01-01\0"}),
        ("scope.nul", {"before": "\0"}),
        ("scope.under_long", {"under": "a" * (MAX_UNDER_CHARS + 1)}),
        ("scope.under_absolute", {"under": "/etc"}),
        ("scope.under_absolute", {"under": "  /etc"}),
        ("scope.under_absolute", {"under": "~"}),
        ("scope.under_absolute", {"under": "~/notes"}),
        ("scope.under_up", {"under": ".."}),
        ("scope.under_up", {"under": "a/../../b"}),
        ("scope.under_glob", {"under": "notes/[abc"}),
        ("scope.under_glob", {"under": "notes/x\\"}),
        ("scope.under_glob", {"under": "a/[/]b"}),
        ("scope.under_glob", {"under": "\ud800*"}),  # a lone surrogate no name holds
        ("scope.tags_many", {"tags": [f"t{i}" for i in range(MAX_TAGS + 1)]}),
        ("scope.not_a_tag", {"tags": ["#"]}),
        ("scope.not_a_tag", {"tags": [""]}),
        ("scope.not_a_tag", {"tags": ["two words"]}),
        ("scope.date_long", {"after": "2" * (MAX_DATE_CHARS + 1)}),
        ("scope.not_a_date", {"after": "yesterday"}),
        ("scope.not_a_date", {"before": "2024-02-30"}),
        ("scope.not_a_date", {"before": "2024-13"}),
        ("scope.date_range", {"after": "0001-01-01"}),
        ("scope.after_before", {"after": "2024-06-01", "before": "2024-05-01"}),
    ],
)
def test_bad_values_are_keyed_errors(key: str, values: dict[str, object]) -> None:
    refused(key, **values)


def test_values_at_the_limits_are_taken() -> None:
    assert Scope.parse(under="a" * MAX_UNDER_CHARS).under == "a" * MAX_UNDER_CHARS
    assert len(Scope.parse(tags=[f"t{i}" for i in range(MAX_TAGS)]).tags) == MAX_TAGS
    same_day = Scope.parse(after="2024-05-01", before="2024-05-01")
    assert same_day.after is not None and same_day.before is not None


def test_the_bad_text_is_named_in_the_error() -> None:
    error = refused("scope.not_a_date", before="someday")
    assert error.message.params["name"] == "before"
    assert error.message.params["value"] == "someday"
    assert "someday" in str(error)


@pytest.mark.parametrize(
    ("key", "values"),
    [
        ("scope.not_a_date", {"after": "2024-01-01"}),  # made directly: a datetime or None
        ("scope.not_a_date", {"before": 20240101}),
        ("scope.not_a_tag", {"tags": (1,)}),
        ("scope.under_long", {"under": 42}),
    ],
)
def test_a_scope_made_directly_is_checked_alike(key: str, values: dict[str, object]) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        Scope(**values)  # type: ignore[arg-type]
    assert caught.value.message.key == key


# -- the test of a note's path -----------------------------------------------------------

PATHS = [
    "top.md",
    "projects.md",
    "projects/plan.md",
    "projects/old/plan.md",
    "projects-old/x.md",
    "journal/2024-01.md",
    "journal/2024-02/notes.md",
    "journal/2023-12.md",
    "archive/journal/2024-03.md",
    "drafts/a.md",
    "a/b/drafts/c.md",
    "a/drafts.md",
    "docs/api/alpha.md",
    "docs/api/zeta.md",
    "docs/guide/intro/beta.md",
    "заметки/план.md",
    os.fsdecode(b"bad\xffname/x.md"),
]


@pytest.mark.parametrize(
    ("under", "kept"),
    [
        ("projects", ["projects/plan.md", "projects/old/plan.md"]),  # whole names only
        ("projects/plan.md", ["projects/plan.md"]),  # a note
        ("journal/2024-*", ["journal/2024-01.md", "journal/2024-02/notes.md"]),
        ("*/2024-*", ["journal/2024-01.md", "journal/2024-02/notes.md"]),
        ("**/drafts", ["drafts/a.md", "a/b/drafts/c.md"]),
        ("**/journal/2024-??.md", ["journal/2024-01.md", "archive/journal/2024-03.md"]),
        ("docs/*/[a-l]*.md", ["docs/api/alpha.md"]),
        ("docs/**/*.md", ["docs/api/alpha.md", "docs/api/zeta.md", "docs/guide/intro/beta.md"]),
        ("**/intro", ["docs/guide/intro/beta.md"]),
        ("a/**/c.md", ["a/b/drafts/c.md"]),
        ("*.md", ["top.md", "projects.md"]),  # `*` stays within a name
        ("заметки", ["заметки/план.md"]),
        ("зам*", ["заметки/план.md"]),
        (os.fsdecode(b"bad\xff*"), [os.fsdecode(b"bad\xffname/x.md")]),
        ("nowhere/*", []),
    ],
)
def test_a_path_is_in_scope_when_under_holds_it(under: str, kept: list[str]) -> None:
    test = Scope.parse(under=under).path_test()
    assert test is not None
    assert [p for p in PATHS if test(p)] == [p for p in PATHS if p in kept]
    # Each test remembers its folders' answers: asked again, in another order, alike.
    assert [p for p in reversed(PATHS) if test(p)] == [p for p in reversed(PATHS) if p in kept]


def test_a_glob_escape_is_a_literal() -> None:
    test = Scope.parse(under="odd/\\*").path_test()
    assert test is not None
    assert test("odd/*/x.md") and not test("odd/y/x.md")
