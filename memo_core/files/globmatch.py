"""One line of a `.gitignore`, parsed as git parses it and matched as git's wildmatch
matches, in time linear in the path whatever the pattern.

Patterns and paths are bytes (a name that is not UTF-8 is its own bytes), as in git: `?`
and a class like `[а-я]` match one byte, so one Cyrillic letter takes `??`.

Why not a regular expression: Python's `re` backtracks, and `*a*a*a*a*a*a*a*a*a*a*a*a*b`
against a name of 60 `a`s takes longer than anyone waits, holding the GIL all along. Here
a pattern is a list of tokens, each taking one byte (a literal, `?`, a class) or a run of
them (`*`, `**`, `**/`), and `match` carries the set of positions in the path that the
tokens so far can reach, as the bits of one integer: a few integer operations per token,
and at most 2n + 3 tokens looked at for a path of n bytes (see `match`). Only patterns
with at most one run, where backtracking is bounded too, go through `re` (see `regex`).
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

# Token kinds. A token is (kind, argument): LIT a byte value; ONE the set of bytes it
# accepts, as a 256-bit mask; the rest take no argument.
LIT, ONE, STAR, ANY, DIRS = range(5)
# STAR: `*`, any run without '/'. ANY: a `**` that may cross folders. DIRS: a leading or
# inner `**/`, i.e. nothing, or anything that ends with '/' (`a/**/b` matches `a/b`).
Token = tuple[int, int]

ALL_BYTES = (1 << 256) - 1
NOT_SLASH = ALL_BYTES & ~(1 << 0x2F)  # `?` and classes never match '/' (WM_PATHNAME)
_WILDCARDS = b"*?[\\"  # what ends git's "simple_length" (the literal prefix)


def _span(lo: int, hi: int) -> int:
    return ((1 << (hi + 1)) - 1) & ~((1 << lo) - 1)


_DIGIT, _UPPER, _LOWER = _span(0x30, 0x39), _span(0x41, 0x5A), _span(0x61, 0x7A)
# git's own ctype tables (ASCII only: no byte >= 0x80 is in any class).
_NAMED = {
    b"alnum": _DIGIT | _UPPER | _LOWER,
    b"alpha": _UPPER | _LOWER,
    b"blank": 1 << 0x20 | 1 << 0x09,
    b"cntrl": _span(0, 0x1F) | 1 << 0x7F,
    b"digit": _DIGIT,
    b"graph": _span(0x21, 0x7E),
    b"lower": _LOWER,
    b"print": _span(0x20, 0x7E),
    b"punct": _span(0x21, 0x7E) & ~(_DIGIT | _UPPER | _LOWER),
    b"space": 1 << 0x20 | 1 << 0x09 | 1 << 0x0A | 1 << 0x0D,
    b"upper": _UPPER,
    b"xdigit": _DIGIT | _span(0x41, 0x46) | _span(0x61, 0x66),
}


class Kind(Enum):
    """How a rule is looked up: the first three by a dict, only GLOB by matching."""

    NAME = "name"  # a plain name, at any depth: `build`, `.DS_Store`
    PATH = "path"  # a plain path below the ignore file's folder: `/build`, `docs/out`
    SUFFIX = "suffix"  # `*` and a plain tail, at any depth: `*.pyc`
    GLOB = "glob"


class Rule(NamedTuple):
    """One line of an ignore file: whether it takes back (`!`), applies to folders only
    (a trailing `/`), is matched against the whole path below the ignore file's folder
    (`anchored`: it has a '/' other than a trailing one) or else against the last name,
    and either the plain bytes it stands for (NAME, PATH, SUFFIX) or its tokens (GLOB)."""

    negative: bool
    dir_only: bool
    kind: Kind
    anchored: bool
    text: bytes = b""
    tokens: tuple[Token, ...] = ()

    def must(self) -> bytes:
        """The longest run of literal bytes every match contains: a cheap test that rules
        most paths out before `match` runs."""
        best = b""
        run: list[int] = []
        for kind, arg in (*self.tokens, (STAR, 0)):
            if kind == LIT:
                run.append(arg)
                continue
            if len(run) > len(best):
                best = bytes(run)
            run = []
        return best


def parse(line: bytes) -> Rule | None:
    """The rule a line of an ignore file sets (the line without its '\\n'), as git's dir.c
    reads it; None for a blank line, a comment, or a pattern that can match nothing (an
    unclosed `[`, a trailing backslash)."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line or line[0] == 0x23:  # '#': git tests this before trimming
        return None
    if b"\0" in line:  # git reads a C string
        line = line[: line.index(b"\0")]
    if line.endswith(b" "):
        line = _trim_trailing_spaces(line)
    negative = line.startswith(b"!")
    if negative:
        line = line[1:]
    dir_only = line.endswith(b"/")
    if dir_only:
        line = line[:-1]
    if not line:
        return None
    if len(line.translate(None, _WILDCARDS)) == len(line):  # a plain name or path
        if b"/" not in line:
            return Rule(negative, dir_only, Kind.NAME, False, line)
        return Rule(negative, dir_only, Kind.PATH, True, line[1:] if line[0] == 0x2F else line)
    if b"/" not in line:  # matched against the last name, at any depth
        tokens = _tokens(line, pathname=False)
        if tokens is None:
            return None
        return _classified(negative, dir_only, tokens, anchored=False)
    body = line[1:] if line[0] == 0x2F else line  # '/' only anchors
    # git compares the literal prefix (up to the first wildcard) on its own and runs
    # wildmatch on the rest, so a `**` right after that prefix counts as being at the
    # pattern's start: `foo**/bar` matches `foobar` and `foox/y/bar`, as in git.
    cut = next((i for i, c in enumerate(body) if c in _WILDCARDS), len(body))
    rest = _tokens(body[cut:], pathname=True)
    if rest is None:
        return None
    return _classified(negative, dir_only, [(LIT, c) for c in body[:cut]] + rest, anchored=True)


def _classified(negative: bool, dir_only: bool, tokens: list[Token], anchored: bool) -> Rule:
    # `**/x`, where nothing in x takes a '/' (no '/', `**`, `**/`): the name x anywhere.
    in_one_name = all(t[0] < ANY and t != (LIT, 0x2F) for t in tokens[1:])
    if anchored and tokens[:1] == [(DIRS, 0)] and in_one_name:
        tokens, anchored = tokens[1:], False
    literal = bytes(arg for kind, arg in tokens if kind == LIT)
    if len(literal) == len(tokens):
        kind = Kind.PATH if anchored else Kind.NAME
        return Rule(negative, dir_only, kind, anchored, literal)
    if not anchored and tokens[0] == (STAR, 0) and len(literal) == len(tokens) - 1 > 0:
        return Rule(negative, dir_only, Kind.SUFFIX, anchored, literal)
    return Rule(negative, dir_only, Kind.GLOB, anchored, tokens=tuple(tokens))


def _trim_trailing_spaces(line: bytes) -> bytes:
    """git's trim_trailing_spaces: trailing ' ' go unless escaped (`foo\\ ` keeps one)."""
    end = len(line)
    while end and line[end - 1] == 0x20:
        end -= 1
    if end == len(line):
        return line
    slashes = len(line[:end]) - len(line[:end].rstrip(b"\\"))
    return line[: end + 1] if slashes % 2 else line[:end]


def _tokens(src: bytes, pathname: bool) -> list[Token] | None:
    """wildmatch's reading of `src`; None if no path can match it. Without `pathname`
    (a pattern for the last name) every star run is a plain `*`: there is no '/' to cross."""
    out: list[Token] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == 0x5C:  # '\\': the next byte as itself; at the end, git matches nothing
            if i + 1 == n:
                return None
            out.append((LIT, src[i + 1]))
            i += 2
        elif c == 0x3F:  # '?'
            out.append((ONE, NOT_SLASH))
            i += 1
        elif c == 0x5B:  # '['
            parsed = _class(src, i)
            if parsed is None or not parsed[0] & NOT_SLASH:
                return None
            out.append((ONE, parsed[0] & NOT_SLASH))
            i = parsed[1]
        elif c == 0x2A:  # '*'
            j = i
            while j < n and src[j] == 0x2A:
                j += 1
            # wildmatch: `**` crosses folders only between '/' (or the start) and '/', an
            # escaped '/' or the end; anywhere else it is one `*`.
            at_edges = (i == 0 or src[i - 1] == 0x2F) and (
                j == n or src[j] == 0x2F or src[j : j + 2] == b"\\/"
            )
            if not (pathname and j - i >= 2 and at_edges):
                kind = STAR
            elif j < n and src[j] == 0x2F:
                kind = DIRS
                j += 1  # the '/' belongs to DIRS
            else:
                kind = ANY
            # Only `**/` can meet another run: `**/**/` is `**/`, and `**/**` or `**/*` is
            # any path. Merged, no two loops are adjacent, which bounds `match`'s steps.
            if out and out[-1][0] == DIRS:
                out[-1] = (DIRS if kind == DIRS else ANY, 0)
            else:
                out.append((kind, 0))
            i = j
        else:
            out.append((LIT, c))
            i += 1
    return out


def path_glob(pattern: bytes) -> tuple[Token, ...] | None:
    """A glob matched against a whole relative path (a search's `under`), read as git's
    wildmatch with WM_PATHNAME reads it: `*` and `?` stay within one name, `**` crosses
    folders; None if no path can match it (an unclosed `[`, a trailing backslash)."""
    tokens = _tokens(pattern, pathname=True)
    return tuple(tokens) if tokens is not None else None


def _class(src: bytes, i: int) -> tuple[int, int] | None:
    """The class opening at src[i] == '[': (its bytes, the index after its ']'), read as
    wildmatch reads it (a ']' first is a member, `[!` and `[^` negate, `a-z`, `\\x`,
    `[:alpha:]`); None where wildmatch gives up (unclosed, unknown `[:name:]`)."""
    n = len(src)
    p = i + 1
    if p >= n:
        return None
    negated = src[p] in b"!^"
    if negated:
        p += 1
        if p >= n:
            return None
    members, prev, ch = 0, 0, src[p]
    while True:
        if ch == 0x5C:  # '\\'
            p += 1
            if p >= n:
                return None
            ch = src[p]
            members |= 1 << ch
        elif ch == 0x2D and prev and p + 1 < n and src[p + 1] != 0x5D:  # a range
            p += 1
            ch = src[p]
            if ch == 0x5C:
                p += 1
                if p >= n:
                    return None
                ch = src[p]
            if prev <= ch:
                members |= _span(prev, ch)
            ch = 0  # a range's end starts no other range
        elif ch == 0x5B and p + 1 < n and src[p + 1] == 0x3A:  # '[:'
            close = src.find(b"]", p + 2)
            if close < 0:
                return None
            if close - (p + 2) >= 1 and src[close - 1] == 0x3A:
                named = _NAMED.get(src[p + 2 : close - 1])
                if named is None:
                    return None
                members |= named
                p, ch = close, 0
            else:
                members |= 1 << ch  # no ':]': a plain '['
        else:
            members |= 1 << ch
        prev = ch
        p += 1
        if p >= n:
            return None
        ch = src[p]
        if ch == 0x5D:
            return (ALL_BYTES & ~members if negated else members), p + 1


def positions(text: bytes) -> dict[int, int]:
    """For each byte in `text`, the positions where it stands, as bits: what `match`
    works from (made once per path, shared by every pattern tried on it)."""
    found: dict[int, int] = {}
    bit = 1
    for c in text:
        found[c] = found.get(c, 0) | bit
        bit <<= 1
    return found


def match(tokens: tuple[Token, ...], text: bytes, at: dict[int, int]) -> bool:
    """Whether `tokens` match all of `text` (`at` = positions(text)).

    `live` holds bit i when the tokens so far can match text[:i]. Each token maps it in
    a constant number of integer operations on n + 1 bits (n = len(text)), plus, for a
    class, a look at each distinct byte of the text: O(n) per token, no backtracking.
    And few tokens are ever looked at: each one that takes a byte moves every live
    position on by one, so after n + 1 of them nothing is live and `match` stops; no two
    loops are adjacent (`_tokens` merges them), so at most 2n + 3 tokens are processed,
    however long the pattern: O(min(len(pattern), n) × n) in all.
    """
    n = len(text)
    everywhere = (1 << (n + 1)) - 1
    slashes = at.get(0x2F, 0)
    in_names = everywhere >> 1 & ~slashes  # positions of bytes a `*` may take
    live = 1
    for kind, arg in tokens:
        if kind == LIT:
            live = (live & at.get(arg, 0)) << 1
        elif kind == ONE:
            accepted = 0
            for c, where in at.items():
                if arg >> c & 1:
                    accepted |= where
            live = (live & accepted) << 1
        elif kind == STAR:
            # From each live position, on through the run of non-'/' bytes it stands in:
            # adding `seeds` carries through each run from its lowest seed; the bits the
            # carry cleared (and the seeds) are the run from there on.
            seeds = live & in_names
            run = (in_names & ~(in_names + seeds)) | seeds
            live |= run << 1
        else:
            beyond = everywhere & ~((live & -live) - 1)  # from the first live position on
            live = beyond if kind == ANY else live | (beyond & slashes) << 1
        if not live:
            return False
    return bool(live >> n & 1)


def regex(tokens: tuple[Token, ...], most: int = 512) -> bytes | None:
    """The same pattern as a regular expression, if it has at most one run (`*`, `**`,
    `**/`) and the expression takes at most `most` bytes; else None.

    Python's `re` backtracks, but only into a run: with one, it tries each length of it
    once (n + 1 of them, twice for `(?:.*/)?`), each followed by fixed-width tokens, so a
    match costs O(len(pattern) × n) however the pattern is written; an alternation of
    such patterns costs the sum. Other patterns go through `match`.
    """
    if sum(kind >= STAR for kind, _ in tokens) > 1:
        return None
    parts = []
    size = 0
    for kind, arg in tokens:
        if kind == LIT:
            part = b"\\x%02x" % arg
        elif kind == ONE:
            part = _class_regex(arg)
        else:
            part = {STAR: b"[^/]*", ANY: b"(?s:.*)", DIRS: b"(?s:.*/)?"}[kind]
        size += len(part)
        if size > most:
            return None
        parts.append(part)
    return b"".join(parts)


def _class_regex(members: int) -> bytes:
    spans = []
    c = 0
    while c < 256:
        if members >> c & 1:
            first = c
            while c < 255 and members >> (c + 1) & 1:
                c += 1
            spans.append(b"\\x%02x-\\x%02x" % (first, c))
        c += 1
    return b"[" + b"".join(spans) + b"]"
