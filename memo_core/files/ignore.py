"""Ignore rules: `.gitignore` files and memo's own `.memoignore` (the same syntax), nested
the way git nests them, with git's semantics (`globmatch` reads and matches a pattern).

A folder's rules apply to everything below it; a deeper file's rules decide before a
higher one's, and within one folder `.memoignore` comes after `.gitignore`, so it has the
last word (`!keep.md` in `.memoignore` takes back what `.gitignore` ignored). An ignored
folder is not entered, so nothing inside it can be taken back (as in git).

Cost: an ignore file is compiled once (and kept while its bytes stay the same); plain
names, paths and `*suffix`es are looked up in dicts (a 100,000-line file of names costs a
few lookups per path), and only the other patterns are matched, last first, each in time
linear in the path, within limits on how many are in force.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from functools import lru_cache

from memo_core.files.fsafe import READ_FLAGS, read_fd
from memo_core.files.globmatch import Kind, Rule, Token, match, parse, positions, regex
from memo_core.messages import Message

IGNORE_FILES = (".gitignore", ".memoignore")
MAX_IGNORE_BYTES = 1 << 20  # a bigger "ignore file" is not one: none of it is applied
# Limits on the rules in force at a folder (its own ignore files' and its parents'): the
# first bounds memory; the others the time per path, as wildcard patterns (all but plain
# names, paths and `*suffix`es) are tried one by one, and those with two runs or more
# (`**/bin/*`, `*a*b`) cost the most. An ignore file that would go past one is not
# applied, and memo logs a warning once per content of that file. For scale: the largest
# of github/gitignore's 312 templates has 69 wildcard patterns, and 43 with two runs.
MAX_RULES = 200_000
MAX_PATTERNS = 500
MAX_COMPLEX = 100
_LIMITS = (MAX_RULES, MAX_PATTERNS, MAX_COMPLEX)

log = logging.getLogger("memo")

# A rule's rank: its index in its file * 2, + 1 if it ignores (0: `!` takes back). The
# highest rank that matches decides, as git's last matching line does.
# Lookup tables map bytes to (best rank for a file, best rank for a folder), -1 for none:
# a folder-only rule (`build/`) ranks for folders only.
_Ranks = tuple[int, int]
_NONE: _Ranks = (-1, -1)


# A wildcard pattern: (rank, folders only, matched against the whole path, bytes every
# match contains, tokens, the same as a regular expression if `regex` takes it).
_Pattern = tuple[int, bool, bool, bytes, tuple[Token, ...], "re.Pattern[bytes] | None"]


class RuleSet:
    """The rules of one ignore file, compiled once."""

    def __init__(self, rules: list[Rule]) -> None:
        self.size = len(rules)
        self.names: dict[bytes, _Ranks] = {}
        self.paths: dict[bytes, _Ranks] = {}
        self.suffixes: dict[bytes, _Ranks] = {}
        # Wildcard patterns, highest rank first: `simple` ones (those `regex` takes: one
        # run at most, like `*.py[cod]`, `/build-*`, `docs/**`) also make up `screens`,
        # an alternation per (for folders, anchored) that says in one call whether any of
        # them matches (usually none does); `complex` ones are tried one by one.
        self.simple: list[_Pattern] = []
        self.complex: list[_Pattern] = []
        for i, rule in enumerate(rules):
            rank = 2 * i + (not rule.negative)
            kind = rule.kind
            if kind is Kind.GLOB:
                source = regex(rule.tokens)
                rx = re.compile(source) if source else None
                pattern = (rank, rule.dir_only, rule.anchored, rule.must(), rule.tokens, rx)
                (self.simple if source else self.complex).append(pattern)
                continue
            if kind is Kind.NAME:
                table = self.names
            elif kind is Kind.PATH:
                table = self.paths
            else:
                table = self.suffixes
            for_files = table.get(rule.text, _NONE)[0] if rule.dir_only else rank
            table[rule.text] = (for_files, rank)
        self.simple.reverse()
        self.complex.reverse()
        # A name can end in a suffix only from where that suffix's first byte stands in it
        # (usually one '.'), so only those tails are looked up.
        self.suffix_firsts = bytes(sorted({s[0] for s in self.suffixes}))
        self.screens = tuple(
            tuple(_screen(self.simple, for_dirs, anchored) for anchored in (False, True))
            for for_dirs in (False, True)
        )

    @property
    def cost(self) -> tuple[int, int, int]:
        """What counts against the limits: (rules, wildcard patterns, complex ones)."""
        return self.size, len(self.simple) + len(self.complex), len(self.complex)

    def decide(self, path: bytes, is_dir: bool) -> bool | None:
        """Whether the entry at `path` (below this folder) is ignored (True), taken back
        (False), or left to the rules above (None)."""
        name = path[path.rfind(b"/") + 1 :]
        best = self.names.get(name, _NONE)[is_dir]
        found = self.paths.get(path, _NONE)[is_dir]
        best = found if found > best else best
        for first in self.suffix_firsts:
            at = name.find(first)
            while at >= 0:
                found = self.suffixes.get(name[at:], _NONE)[is_dir]
                best = found if found > best else best
                at = name.find(first, at + 1)
        if self.complex:
            best = _first(self.complex, best, path, name, is_dir)
        by_name, by_path = self.screens[is_dir]
        if (by_name and by_name.fullmatch(name)) or (by_path and by_path.fullmatch(path)):
            best = _first(self.simple, best, path, name, is_dir)
        return None if best < 0 else bool(best & 1)


def _screen(simple: list[_Pattern], for_dirs: bool, anchored: bool) -> re.Pattern[bytes] | None:
    branches = [
        rx.pattern
        for _, only, whole, *_, rx in simple
        if rx and whole == anchored and (for_dirs or not only)
    ]
    return re.compile(b"|".join(branches)) if branches else None


def _first(patterns: list[_Pattern], best: int, path: bytes, name: bytes, is_dir: bool) -> int:
    """The rank of the first of `patterns` that matches, if above `best`; else `best`."""
    at_name = at_path = None
    for rank, dir_only, anchored, must, tokens, rx in patterns:
        if rank < best:
            break  # only a later rule can overrule what already matched
        if dir_only and not is_dir:
            continue
        text = path if anchored else name
        if must not in text:
            continue
        if rx is not None:
            if rx.fullmatch(text):
                return rank
            continue
        if anchored:
            at = at_path = at_path or positions(path)
        else:
            at = at_name = at_name or positions(name)
        if match(tokens, text, at):
            return rank
    return best


# (folder relative to the root as bytes, '/'-terminated or b'' for the root; the rules of
# one of its ignore files), the deepest last; a folder's `.memoignore` after its `.gitignore`
Rules = tuple[tuple[bytes, RuleSet], ...]


def with_folder(rules: Rules, dir_fd: int, rel: str, names: Iterable[str]) -> Rules:
    """`rules` plus those of the open folder `dir_fd` (at `rel`, holding `names`), if any."""
    for name in [n for n in IGNORE_FILES if n in names]:
        data = _read(dir_fd, name)
        if data is None:
            continue
        if len(data) > MAX_IGNORE_BYTES:
            _not_applied(_where(dir_fd, rel, name), hash(data), _TOO_BIG)
            continue
        spec = compiled(data)
        if spec is None or not _within(rules, spec):
            _not_applied(_where(dir_fd, rel, name), hash(data), _TOO_MANY)
        elif spec.size:
            rules = (*rules, (os.fsencode(rel), spec))
    return rules


def _within(rules: Rules, spec: RuleSet) -> bool:
    """Whether `spec` keeps the rules in force within the limits."""
    total = [sum(counts) for counts in zip(spec.cost, *(s.cost for _, s in rules), strict=True)]
    return all(count <= most for count, most in zip(total, _LIMITS, strict=True))


def ignored(rules: Rules, rel: str, is_dir: bool) -> bool:
    """Whether the entry at `rel` (relative to the root) is ignored by `rules`."""
    path = os.fsencode(rel)  # git matches bytes; a name that is not UTF-8 is its bytes
    for prefix, spec in reversed(rules):
        decided = spec.decide(path[len(prefix) :], is_dir)
        if decided is not None:
            return decided
    return False


@lru_cache(maxsize=8)
def compiled(data: bytes) -> RuleSet | None:
    """The rules of an ignore file's bytes; None if it alone goes past the limits (reading
    stops there). The last 8 are kept for the next walks (every search walks): a big file
    is read again, but not parsed again, while its bytes stay the same."""
    if data.startswith(b"\xef\xbb\xbf"):  # git skips a UTF-8 byte order mark
        data = data[3:]
    rules: list[Rule] = []
    patterns = 0
    for line in data.split(b"\n"):
        rule = parse(line)
        if rule is None:
            continue
        rules.append(rule)
        patterns += rule.kind is Kind.GLOB
        if len(rules) > MAX_RULES or patterns > MAX_PATTERNS:
            return None
    spec = RuleSet(rules)
    return spec if spec.cost[2] <= MAX_COMPLEX else None


def _read(dir_fd: int, name: str) -> bytes | None:
    """The bytes of the ignore file `name` in `dir_fd` (one more than MAX_IGNORE_BYTES at
    most). A symlink is not followed (as git does not since 2.32): an ignore file that is
    a link or a FIFO sets no rules."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        return read_fd(fd, MAX_IGNORE_BYTES + 1, name)[0]
    except OSError:
        return None
    finally:
        os.close(fd)


def _where(dir_fd: int, rel: str, name: str) -> str:
    """The ignore file's path for a message: absolute where /proc tells the folder's."""
    try:
        return os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), name)
    except OSError:
        return rel + name


_TOO_BIG = Message("log.ignore_too_big", limit=MAX_IGNORE_BYTES)
_TOO_MANY = Message(
    "log.ignore_too_many", rules=MAX_RULES, patterns=MAX_PATTERNS, complex=MAX_COMPLEX
)


@lru_cache(maxsize=1024)
def _not_applied(where: str, content: int, why: Message) -> None:
    """Log that an ignore file is not applied: once per content of it (the cache is what
    remembers it was said; every search walks again)."""
    log.warning("memo: %s", Message("log.ignore_not_applied", path=repr(where), why=why))
