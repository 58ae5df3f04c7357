"""Split a Markdown note into chunks: one per heading section, long sections split further
(a note made of near-empty sections, too many chunks for its size, is split by size alone).

Hits are shown as `path:line` and people jump straight there, so line numbers are an editor's.
The parser is a single-pass subset of CommonMark (headings, fences, front matter) without
regexes, so hostile input (a 1 MB line of `#` or backticks) costs linear time. Front matter
and inline `#tags` are read by `frontmatter` (`parse_note` returns them with the chunks).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from memo_core.text import frontmatter
from memo_core.text.frontmatter import FrontMatter
from memo_core.text.headings import rendered

__all__ = [
    "CHUNKER_VERSION",
    "DEFAULT_MAX_CHARS",
    "MAX_HEADING_CHARS",
    "Chunk",
    "Note",
    "chunk_markdown",
    "parse_note",
]

# Bump whenever a change here can split a note differently: indexes record it and rebuild.
# 3: headings as a reader sees them (inline HTML tags and `{#id}` blocks dropped).
# 4: a note of sections too small to pay for their chunks is chunked by size (MAX_INDEX_COST).
# 5: front matter parsed (a block its parser rejects is text, as it reads); the parser has
# its own version (frontmatter.PARSER_VERSION), recorded beside this one.
# 6: a chunk records the line where its text begins (`Chunk.text_line`), below its heading.
# 7: nothing inside an HTML comment block is a heading.
CHUNKER_VERSION = 7
# A heading path is cut here (every chunk stores its own: a 12,000-word title under 2,000
# sections would otherwise store 2,000 copies of it); a longer title stays whole in the text.
MAX_HEADING_CHARS = 200
# The default chunk size (Tuning.chunk_max_chars takes it from here).
DEFAULT_MAX_CHARS = 2000
# What a chunk costs the index beyond its text, in bytes: its row, hash and index entries
# (about 150, measured on 200,000 one-letter headings), and its heading path, stored and
# indexed (about twice its length, a path of one-letter words being the worst).
CHUNK_COST = 150
HEADING_COST = 2
# A note may cost the index this many times its length in such overhead, beyond the first
# FREE_CHUNKS chunks' worth; past that (100,000 bare `## hN` lines under one long title cost
# 37 times the note) it is chunked by size instead. Real notes stay under 2 (the office and
# SciFact sets), so only notes made of near-empty sections are ever chunked by size. With
# the text's own words (up to 6x for unique hyphenated words) an index stays under the 10x
# README states: the worst note built within this rule makes 7.3x.
MAX_INDEX_COST = 3
FREE_CHUNKS = 32

# (first line index, last line index, level, text); a setext heading spans several lines.
_Heading = tuple[int, int, int, str]


@dataclass(frozen=True, slots=True)
class Chunk:
    line: int  # 1-based line where the chunk starts, as an editor counts lines
    heading: str  # heading path, e.g. "Setup > Linux"; "" before the first heading
    text: str  # the passage, without its heading line
    # 1-based line where `text` begins: `line` but for a section's first chunk, whose `line`
    # is its heading's (a setext title and blank lines may come between); a piece of an
    # overlong line begins on that line. A hit showing lines further down counts from here.
    text_line: int


@dataclass(frozen=True, slots=True)
class Note:
    """A note as the index reads it: its chunks, front matter, and tags."""

    chunks: list[Chunk]
    front: FrontMatter  # empty when the note has none (or its block is text)
    tags: tuple[str, ...]  # the front matter's, then the body's inline ones (normalised)
    titled: bool = False  # it has a title of its own: a level-1 heading


def chunk_markdown(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Chunks of `text` in file order; a body longer than `max_chars` is split at blocks,
    and a note whose chunks would cost the index too much for its size as one long body."""
    return parse_note(text, max_chars).chunks


def parse_note(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> Note:
    """`text`'s chunks (as `chunk_markdown`), front matter and tags; inline tags are read
    outside code fences."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    lines = editor_lines(text)
    start, front = frontmatter.parse_front_matter(lines)
    headings, fences = _scan(lines, start)
    front = front or FrontMatter()
    tags = tuple(dict.fromkeys(front.tags + frontmatter.inline_tags(_prose(lines, start, fences))))
    titled = any(level == 1 for _, _, level, _ in headings)
    chunks = _chunks(lines, start, headings, fences, max_chars, len(text))
    return Note(chunks, front, tags, titled)


def _prose(lines: list[str], start: int, fences: dict[int, int]) -> Iterator[str]:
    """Lines from `start` on, those of code fences (delimiters included) left out."""
    i = start
    while i < len(lines):
        if i in fences:
            i = fences[i] + 1
            continue
        yield lines[i]
        i += 1


def _chunks(
    lines: list[str],
    start: int,
    headings: list[_Heading],
    fences: dict[int, int],
    max_chars: int,
    size: int,
) -> list[Chunk]:
    """The chunks of lines `start`.. (`size`: the note's length, which bounds their cost)."""
    # offsets[i] = characters before line i ("\n" included), so any span's length is O(1).
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    sec = _Sections(lines, offsets, fences, max_chars, [])

    sec.emit(start, headings[0][0] if headings else len(lines), None, "", leaf=False)
    paths: list[str] = []
    stack: list[tuple[int, str]] = []
    for k, (first, last, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, _cut(title)))
        path = _cut(" > ".join(t for _, t in stack if t))
        paths.append(path)
        nxt = headings[k + 1] if k + 1 < len(headings) else None
        end = nxt[0] if nxt else len(lines)
        # A title too long for the path is kept whole in the text, so its words stay findable.
        body = first if len(title) > MAX_HEADING_CHARS else last + 1
        # A heading right above a deeper one is only a title for it; a bare leaf heading
        # still gets a chunk, so a file of headings alone remains findable.
        sec.emit(body, end, first, path, leaf=nxt is None or nxt[2] <= level)
    cost = sum(CHUNK_COST + HEADING_COST * len(c.heading) for c in sec.out)
    if cost <= MAX_INDEX_COST * size + FREE_CHUNKS * CHUNK_COST:
        return sec.out
    return _by_size(sec, start, [h[0] for h in headings], paths)


def _by_size(sec: _Sections, start: int, firsts: list[int], paths: list[str]) -> list[Chunk]:
    """The note's lines packed into chunks as a long section's are (headings are lines of
    the text, so their words stay findable), each under the heading path in force at its
    first line (`firsts[k]`: the first line of the heading whose path is `paths[k]`)."""
    whole = _Sections(sec.lines, sec.offsets, sec.fences, sec.max, [])
    whole.emit(start, len(sec.lines), None, "", leaf=False)
    chunks = []
    for c in whole.out:
        k = bisect_right(firsts, c.line - 1) - 1
        chunks.append(Chunk(c.line, paths[k] if k >= 0 else "", c.text, c.text_line))
    return chunks


def _cut(title: str) -> str:
    return title if len(title) <= MAX_HEADING_CHARS else title[: MAX_HEADING_CHARS - 1] + "…"


def editor_lines(text: str) -> list[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    # Editors (and Python's universal newlines) break lines at \r\n, \r and \n only;
    # str.splitlines() would also break at \x0c, \x1c-\x1e, \x85, \u2028, … and shift numbers.
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _scan(lines: list[str], start: int) -> tuple[list[_Heading], dict[int, int]]:
    """Headings in order, and fenced code blocks as {opening index: closing index}."""
    headings: list[_Heading] = []
    fences: dict[int, int] = {}
    fence: tuple[str, int, int] | None = None  # fence char, its length, opening index
    para = -1  # first line of the open paragraph; -1 when none is open
    setext_ok = False  # whether that paragraph may become a setext heading
    comment = False  # inside an HTML comment block: nothing in it is a heading
    for i in range(start, len(lines)):
        line = lines[i]
        if fence is not None:
            if _indent(line) < 4 and _fence_closes(line.lstrip(" "), fence[0], fence[1]):
                fences[fence[2]] = i
                fence = None
            continue
        if comment:
            comment = "-->" not in line
            continue
        if not line.strip():
            para = -1
            continue
        indent = _indent(line)
        if indent >= 4:
            continue  # indented code, or a continuation of the open paragraph: never a heading
        s = line[indent:]
        ch = s[0]
        if ch in "`~" and (opened := _fence_opens(s)):
            fence, para = (opened[0], opened[1], i), -1
        elif s.startswith("<!--"):
            # An HTML block (CommonMark's kind 2) to the line holding `-->`: translators
            # keep the original there (`<!--\n## Motivation\n…-->` above `## 动机`), which
            # no reader sees as a heading. Its words are still the note's and are found.
            comment, para = "-->" not in s[4:], -1
        elif ch == "#" and (atx := _atx(s)):
            headings.append((i, i, atx[0], atx[1]))
            para = -1
        elif ch in "=-" and para >= 0 and setext_ok and _is_underline(s):
            title = rendered(" ".join(lines[para:i]))
            headings.append((para, i, 1 if ch == "=" else 2, title))
            para = -1
        elif ch in "-*_" and _is_thematic_break(s):
            para = -1
        elif ch == ">" or _is_list_item(s):
            # An underline below a list item or a quote is a thematic break or part of that
            # container, never a heading of the note.
            para = i if para < 0 else para
            setext_ok = False
        elif para < 0:
            para, setext_ok = i, True
    if fence is not None:
        fences[fence[2]] = len(lines) - 1  # an unclosed fence runs to the end of the file
    return headings, fences


def _indent(line: str) -> int:
    """Leading columns (tabs stop at multiples of 4), counted only as far as 4."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
        if col >= 4:
            break
    return col


def _atx(s: str) -> tuple[int, str] | None:
    rest = s.lstrip("#")
    level = len(s) - len(rest)
    if level > 6 or (rest and rest[0] not in " \t"):
        return None  # "#######" or "#hashtag"
    rest = rest.strip(" \t")
    # A closing run of #s counts only after whitespace, so "# C#" keeps its "#".
    body = rest.rstrip("#")
    if not body:
        rest = ""
    elif body[-1] in " \t":
        rest = body
    return level, rendered(rest)


def _fence_opens(s: str) -> tuple[str, int] | None:
    ch = s[0]
    info = s.lstrip(ch)
    n = len(s) - len(info)
    if n < 3 or (ch == "`" and "`" in info):
        return None  # "``x``" at a line start is inline code, not a fence
    return ch, n


def _fence_closes(s: str, ch: str, n: int) -> bool:
    rest = s.lstrip(ch)
    return len(s) - len(rest) >= n and not rest.strip(" \t")


def _is_underline(s: str) -> bool:
    return not s.rstrip(" \t").strip(s[0])  # "===" or "---", no inner spaces


def _is_thematic_break(s: str) -> bool:
    marks = s.replace(" ", "").replace("\t", "")
    return len(marks) >= 3 and not marks.strip(s[0])


def _is_list_item(s: str) -> bool:
    if s[0] in "-+*":
        return len(s) == 1 or s[1] in " \t"
    i = 0
    while i < len(s) and i < 10 and s[i] in "0123456789":
        i += 1
    return 1 <= i <= 9 and i < len(s) and s[i] in ".)" and (i + 1 == len(s) or s[i + 1] in " \t")


@dataclass(slots=True)
class _Sections:
    """Turns line spans into chunks; the shared state of one chunk_markdown call."""

    lines: list[str]
    offsets: list[int]
    fences: dict[int, int]
    max: int
    out: list[Chunk]

    def size(self, a: int, b: int) -> int:
        return self.offsets[b] - self.offsets[a] - 1  # lines a..b-1 joined by "\n"

    def emit(self, a: int, b: int, head: int | None, path: str, leaf: bool) -> None:
        """Chunks for body lines a..b-1 under the heading at index `head` (None: preamble)."""
        lines = self.lines
        while a < b and not lines[a].strip():
            a += 1
        while b > a and not lines[b - 1].strip():
            b -= 1
        if a == b:
            if head is not None and leaf:
                self.out.append(Chunk(head + 1, path, "", head + 1))
            return
        if self.size(a, b) <= self.max:
            pieces = [(a, "\n".join(lines[a:b]))]
        else:
            pieces = self.split(a, b)
        for n, (i, text) in enumerate(pieces):
            # The first chunk points at its heading, which the user sees as the section start.
            line = head if n == 0 and head is not None else i
            self.out.append(Chunk(line + 1, path, text, i + 1))

    def split(self, a: int, b: int) -> list[tuple[int, str]]:
        """Greedy packing of blocks into pieces of at most max chars; fences are never cut."""
        pieces: list[tuple[int, str]] = []
        cur = end = -1  # the pending span of lines cur..end-1

        def flush() -> None:
            nonlocal cur, end
            if cur >= 0:
                pieces.append((cur, "\n".join(self.lines[cur:end])))
            cur = end = -1

        for s, e, is_fence in self.blocks(a, b):
            if cur >= 0 and self.size(cur, e) <= self.max:
                end = e
                continue
            flush()
            if is_fence or self.size(s, e) <= self.max:
                cur, end = s, e  # a fence longer than max stays whole, alone
                continue
            for j in range(s, e):  # an overlong paragraph: pack its lines
                line = self.lines[j]
                if len(line) > self.max:  # an overlong line: hard pieces, all at its number
                    flush()
                    for off in range(0, len(line), self.max):
                        piece = line[off : off + self.max]
                        if piece.strip():
                            pieces.append((j, piece))
                elif cur >= 0 and self.size(cur, j + 1) <= self.max:
                    end = j + 1
                else:
                    flush()
                    cur, end = j, j + 1
        flush()
        return pieces

    def blocks(self, a: int, b: int) -> list[tuple[int, int, bool]]:
        """(start, end, is_fence) for blank-separated paragraphs and fences in lines a..b-1."""
        lines, blocks = self.lines, []
        para, j = -1, a
        soft = True  # still looking for fences indented 4+ (as in list items)
        while j < b:
            close = self.fences.get(j)
            if close is None and soft and _indent(lines[j]) >= 4:
                close = self.soft_fence(j, b)
                # After an unclosed one, stop looking: a hostile run of openers then costs one
                # scan to the end, not one per line.
                soft = close != b
                close = None if close == b else close
            if close is not None or not lines[j].strip():
                if para >= 0:
                    blocks.append((para, j, False))
                para = -1
            elif para < 0:
                para = j
            if close is not None:
                blocks.append((j, min(close, b - 1) + 1, True))
                j = min(close, b - 1)
            j += 1
        if para >= 0:
            blocks.append((para, b, False))
        return blocks

    def soft_fence(self, j: int, b: int) -> int | None:
        """Closing index of a fence that an indented line j opens (b if it never closes)."""
        s = self.lines[j].lstrip(" \t")
        opened = _fence_opens(s) if s[:1] in ("`", "~") else None
        if opened is None:
            return None
        ch, n = opened
        for k in range(j + 1, b):
            if _fence_closes(self.lines[k].lstrip(" \t"), ch, n):
                return k
        return b
