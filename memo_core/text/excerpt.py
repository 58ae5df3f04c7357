"""What a hit shows of its passage: the lines that best match the query.

A passage is up to a few thousand characters; an agent asking for 8 hits needs the spot in
each, and `path:line` to read around it. So a hit shows a window of whole lines, at most
EXCERPT_LINES of them and EXCERPT_CHARS in all, chosen by the query's words (normalised as
the index normalises them, `textnorm`): the window that holds the most distinct query
words, then the most matches, starting at a line that matches. A passage none of whose
lines match (found by meaning, or by its heading or path) shows its start.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass

from memo_core.text import textnorm
from memo_core.text.passagelang import ENGLISH
from memo_core.values import CUT

# About a screenful of a note: 8 hits of this stay near 6,000 characters with their
# `path:line  heading` lines (memo_text's DEFAULT_MAX_CHARS, an answer's budget).
EXCERPT_LINES = 12
EXCERPT_CHARS = 600
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Excerpt:
    first: int  # index of the first line shown among the passage's lines
    last: int  # index of the last line shown
    text: str  # those lines joined by "\n" (one line longer than the window: a slice of it)


def matched(line: str, terms: Set[str], lang: str = ENGLISH) -> set[str]:
    """The query words (stems, `textnorm.query_groups`) that `line` holds, its words
    stemmed as its passage's (`lang`)."""
    return {s for s in textnorm.stems(line, lang) if s in terms} if terms else set()


def excerpt(
    lines: Sequence[str],
    terms: Set[str],
    *,
    lang: str = ENGLISH,
    max_lines: int = EXCERPT_LINES,
    max_chars: int = EXCERPT_CHARS,
) -> Excerpt:
    """The window of `lines` (a passage, line by line, its Latin words in `lang`) that
    shows best where `terms` (the query words' stems; empty: found by meaning alone)
    match; see the module's docstring."""
    if len(lines) <= max_lines and _chars(lines, 0, len(lines)) <= max_chars:
        s, e = 0, len(lines)  # it fits whole: shown whole wherever the words match
    else:
        s, e = _best_window(lines, terms, lang, max_lines, max_chars)
    # A window that reached the passage's end with room to spare shows the lines before it
    # (a short passage is shown whole, as it reads).
    while s > 0 and e - s < max_lines and _chars(lines, s - 1, e) <= max_chars:
        s -= 1
    while e - s > 1 and not lines[e - 1].strip():  # blank edges say nothing
        e -= 1
    while e - s > 1 and not lines[s].strip():
        s += 1
    if e - s == 1 and len(lines[s]) > max_chars:
        return Excerpt(s, s, _slice(lines[s], terms, lang, max_chars))
    return Excerpt(s, e - 1, "\n".join(lines[s:e]))


def _best_window(
    lines: Sequence[str], terms: Set[str], lang: str, max_lines: int, max_chars: int
) -> tuple[int, int]:
    """The window (first line, end) that holds the most distinct query words, then the
    most matches, starting at a line that matches (the first line where none does)."""
    found = [matched(line, terms, lang) for line in lines]
    starts = [i for i, words in enumerate(found) if words] or [0]
    best: tuple[int, int, int] | None = None  # (words covered, matches, -start)
    window = (0, 1)
    for s in starts:
        e = _end(lines, s, max_lines, max_chars)
        covered = set().union(*found[s:e])
        key = (len(covered), sum(len(w) for w in found[s:e]), -s)
        if best is None or key > best:
            best, window = key, (s, e)
    return window


def _chars(lines: Sequence[str], s: int, e: int) -> int:
    """Characters of lines s..e-1 joined by newlines."""
    return sum(len(line) for line in lines[s:e]) + e - s - 1


def _end(lines: Sequence[str], s: int, max_lines: int, max_chars: int) -> int:
    """Where a window from line `s` ends (exclusive): as many lines as fit, at least one."""
    e, size = s + 1, len(lines[s])
    while e < len(lines) and e - s < max_lines and size + 1 + len(lines[e]) <= max_chars:
        size += 1 + len(lines[e])
        e += 1
    return e


def _slice(line: str, terms: Set[str], lang: str, max_chars: int) -> str:
    """`max_chars` of one overlong line (an abstract written as one paragraph line), from a
    little before its first query word, cut at word boundaries and marked with "…"."""
    at = next((m.start() for m in _WORD.finditer(line) if matched(m.group(), terms, lang)), 0)
    start = max(0, at - max_chars // 4)
    if start:  # from the next word on: no half word at the front
        gap = line.find(" ", start, at)
        start = gap + 1 if gap >= 0 else start
    end = min(len(line), start + max_chars - 2 * len(CUT))
    if end < len(line):
        space = line.rfind(" ", start + max_chars // 2, end)
        end = space if space >= 0 else end
    return (CUT if start else "") + line[start:end] + (CUT if end < len(line) else "")
