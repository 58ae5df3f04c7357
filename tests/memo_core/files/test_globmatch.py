"""memo_core.files.globmatch: a `.gitignore` line parsed as git parses it, and globs matched
as git's wildmatch matches them (WM_PATHNAME), on bytes, in time linear in the path."""

from __future__ import annotations

import re

import pytest

from memo_core.files.globmatch import (
    ANY,
    DIRS,
    LIT,
    ONE,
    STAR,
    Kind,
    Rule,
    match,
    parse,
    path_glob,
    positions,
    regex,
)


def matches(pattern: bytes, path: bytes) -> bool:
    tokens = path_glob(pattern)
    assert tokens is not None, pattern
    return match(tokens, path, positions(path))


# -- parse: one line of an ignore file --------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        (b"build", Rule(False, False, Kind.NAME, False, b"build")),
        (b"build/", Rule(False, True, Kind.NAME, False, b"build")),
        (b"!keep.md", Rule(True, False, Kind.NAME, False, b"keep.md")),
        (b"/build", Rule(False, False, Kind.PATH, True, b"build")),
        (b"docs/out", Rule(False, False, Kind.PATH, True, b"docs/out")),
        (b"/docs/out/", Rule(False, True, Kind.PATH, True, b"docs/out")),
        (b"*.pyc", Rule(False, False, Kind.SUFFIX, False, b".pyc")),
        (b"**/cache", Rule(False, False, Kind.NAME, False, b"cache")),  # a name anywhere
        (b"\\#not-a-comment", Rule(False, False, Kind.NAME, False, b"#not-a-comment")),
        (b"\\!bang", Rule(False, False, Kind.NAME, False, b"!bang")),
        (b"name\\ ", Rule(False, False, Kind.NAME, False, b"name ")),  # an escaped space stays
        (b"name   ", Rule(False, False, Kind.NAME, False, b"name")),  # trailing spaces go
        (b"name\r", Rule(False, False, Kind.NAME, False, b"name")),  # a CRLF file
        (b"ab\0cd", Rule(False, False, Kind.NAME, False, b"ab")),  # git reads a C string
        (b"caf\xe9", Rule(False, False, Kind.NAME, False, b"caf\xe9")),  # not UTF-8: bytes
    ],
)
def test_plain_lines_are_looked_up_not_matched(line: bytes, rule: Rule) -> None:
    assert parse(line) == rule


@pytest.mark.parametrize(
    ("line", "anchored"),
    [
        (b"*~*", False),
        (b"a?c", False),
        (b"[abc].md", False),
        (b"docs/*.md", True),
        (b"/*.tmp", True),
        (b"a/**/b", True),
        (b"**/x/y", True),  # `**/` and a path: not one name
        (b"**/[ab].md", False),  # `**/` and one name: the name anywhere
        (b"**/*.md", True),  # `**/*` merged: any path, then `.md`
    ],
)
def test_lines_with_wildcards_are_globs(line: bytes, anchored: bool) -> None:
    rule = parse(line)
    assert rule is not None and rule.kind is Kind.GLOB
    assert rule.anchored is anchored and rule.tokens and not rule.text


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"   ",
        b"# a comment",
        b"#",
        b"!",
        b"/",
        b"!/",
        b"\r",
        b"[unclosed",
        b"trailing\\",  # a trailing backslash: git matches nothing
        b"a[/]b/c",  # a class of '/' only: nothing can match it
        b"[[:nosuch:]]",  # an unknown class name
    ],
)
def test_lines_that_set_no_rule(line: bytes) -> None:
    assert parse(line) is None


def test_a_hash_after_spaces_is_no_comment() -> None:
    assert parse(b" #x") == Rule(False, False, Kind.NAME, False, b" #x")


@pytest.mark.parametrize(
    ("line", "must"),
    [
        (b"*ab*cde*", b"cde"),
        (b"x*yz?w", b"yz"),
        (b"foo*bar*", b"foo"),  # of equal runs, the first
        (b"*?*", b""),
    ],
)
def test_must_is_the_longest_literal_run(line: bytes, must: bytes) -> None:
    rule = parse(line)
    assert rule is not None and rule.kind is Kind.GLOB
    assert rule.must() == must


# -- matching a path, as wildmatch with WM_PATHNAME ---------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        (b"a/*/c", b"a/b/c", True),
        (b"a/*/c", b"a/b/x/c", False),  # `*` stays within a name
        (b"a*", b"ab/c", False),
        (b"*", b"", True),
        (b"a/**/c", b"a/c", True),  # `**/` may be nothing
        (b"a/**/c", b"a/b/x/c", True),
        (b"a/**/c", b"a/bc", False),
        (b"a/**", b"a/b/c", True),
        (b"a/**", b"a", False),  # inside a, not a itself
        (b"**", b"any/path/at/all", True),
        (b"**/c", b"c", True),
        (b"**/c", b"a/b/c", True),
        (b"**/c", b"a/bc", False),
        (b"a**b", b"axxb", True),  # not between slashes: one `*`
        (b"a**b", b"ax/xb", False),
        (b"a/**b", b"a/x/yb", False),
        (b"a?c", b"abc", True),
        (b"a?c", b"a/c", False),  # `?` never takes a '/'
        (b"a?c", b"ac", False),
        (b"[a-c]x", b"bx", True),
        (b"[a-c]x", b"dx", False),
        (b"[!a-c]x", b"dx", True),
        (b"[^a-c]x", b"ax", False),
        (b"[!a]", b"/", False),  # not even a negated class takes a '/'
        (b"[]]", b"]", True),  # a ']' first is a member
        (b"[]-a]", b"^", True),  # a range from ']' to 'a'
        (b"[a-]", b"-", True),  # a '-' last is a member
        (b"[[:digit:]]*", b"2024-notes", True),
        (b"[[:upper:][:digit:]]", b"Q", True),
        (b"[[:alpha:]]", b"\xd0", False),  # the named classes are ASCII only
        (b"[z-a]", b"m", False),  # an empty range
        (b"[\\]]", b"]", True),
        (b"\\*", b"*", True),  # an escaped star is a star
        (b"\\*", b"x", False),
        (b"\\[x]", b"[x]", True),
        (b"?", b"\xd1\x8f", False),  # one Cyrillic letter is two bytes: `??`
        (b"??", b"\xd1\x8f", True),
        (b"\xff*", b"\xff.md", True),  # bytes that are not UTF-8
        (b"**/*.md", b"a.md", True),
        (b"**/*.md", b"d/e/a.md", True),
        (b"**/*.md", b"d/a.txt", False),
        (b"journal/2024-*", b"journal/2024-01.md", True),
        (b"journal/2024-*", b"journal/2023-01.md", False),
    ],
)
def test_a_glob_matches_a_path_as_wildmatch_does(
    pattern: bytes, path: bytes, expected: bool
) -> None:
    assert matches(pattern, path) is expected


def test_a_star_run_after_a_literal_prefix_counts_as_at_the_start() -> None:
    """git compares the literal prefix on its own: `foo**/bar` matches `foobar` and
    `foox/y/bar`, as git does."""
    rule = parse(b"foo**/bar")
    assert rule is not None and rule.kind is Kind.GLOB and rule.anchored
    for path, expected in [(b"foobar", True), (b"foox/y/bar", True), (b"fo/bar", False)]:
        assert match(rule.tokens, path, positions(path)) is expected, path


@pytest.mark.parametrize(
    ("pattern", "tokens"),
    [
        (b"a*", ((LIT, 0x61), (STAR, 0))),
        (b"**/x", ((DIRS, 0), (LIT, 0x78))),
        (b"a/**", ((LIT, 0x61), (LIT, 0x2F), (ANY, 0))),
        (b"**/**/x", ((DIRS, 0), (LIT, 0x78))),  # `**/**/` is `**/`
        (b"**/**", ((ANY, 0),)),  # and `**/**` is any path
        (b"**/*", ((ANY, 0),)),
        (b"\\a", ((LIT, 0x61),)),
        (b"[ab]", ((ONE, 1 << 0x61 | 1 << 0x62),)),
    ],
)
def test_path_glob_reads_runs_and_merges_adjacent_ones(
    pattern: bytes, tokens: tuple[tuple[int, int], ...]
) -> None:
    assert path_glob(pattern) == tokens


@pytest.mark.parametrize("pattern", [b"[abc", b"x\\", b"[/]", b"[[:bogus:]]", b"[!"])
def test_path_glob_refuses_what_can_match_nothing(pattern: bytes) -> None:
    assert path_glob(pattern) is None


def test_positions_mark_where_each_byte_stands() -> None:
    assert positions(b"abca") == {0x61: 0b1001, 0x62: 0b0010, 0x63: 0b0100}
    assert positions(b"") == {}


def test_a_pattern_that_would_make_a_regex_backtrack_is_answered_alike() -> None:
    """`*a*a*…*b` against a long run of `a`s: backtracking would never end; `match` says
    no, and finds the one `b` at the end."""
    tokens = path_glob(b"*a" * 30 + b"*b")
    assert tokens is not None
    text = b"a" * 200
    assert not match(tokens, text, positions(text))
    assert match(tokens, text + b"b", positions(text + b"b"))


# -- the regular expression for patterns with one run ------------------------------------


@pytest.mark.parametrize(
    "pattern", [b"journal/2024-*", b"**/x.md", b"a/**", b"[a-c]?.md", b"plain", b"a/**/b"]
)
def test_a_pattern_with_one_run_has_a_regex_that_agrees(pattern: bytes) -> None:
    tokens = path_glob(pattern)
    assert tokens is not None
    source = regex(tokens)
    assert source is not None
    paths = [b"journal/2024-01.md", b"x.md", b"d/x.md", b"a/b", b"a/x/b", b"a", b"bz.md", b"plain"]
    paths += [b"journal/2024-/x", b"a\nb", b"a/\n/b"]
    for path in paths:
        want = match(tokens, path, positions(path))
        assert (re.fullmatch(source, path) is not None) is want, (pattern, path)


def test_patterns_with_two_runs_or_too_long_have_no_regex() -> None:
    two = path_glob(b"*a*")
    assert two is not None and regex(two) is None
    long = path_glob(b"x" * 200 + b"*")
    assert long is not None
    assert regex(long) is None  # 4 bytes per literal: beyond 512
    assert regex(long, most=10_000) is not None
