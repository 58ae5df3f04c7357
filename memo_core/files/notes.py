"""One note read for a reader (the `memo://note` resource, `memo_read`), the lines of it a
reader asked for, and the notes of a folder (completions): exactly what a search could find
there, nothing else.

A path is judged by the walker's own policy (`is_note_path`, `judge_path`: hidden and
tool folders, `.gitignore` and `.memoignore` at every level), from the collection that
holds the folder asked for: the nearest folder at or above it, within the allowed roots,
that has an index (else the folder itself). So a note an index leaves out cannot be had by
naming one of its sub-folders as the collection. The note is read through that
collection's descriptor (`fsafe`): a symlink leading out of it, a FIFO or a device is
refused, never followed or opened for reading.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memo_core.errors import (
    InvalidArgumentError,
    NotANoteError,
    NoteNotFoundError,
    NoteUnreadableError,
)
from memo_core.files.fsafe import (
    Escape,
    Folder,
    NotRegularFile,
    open_collection,
    out_of_files,
    too_many_files,
)
from memo_core.files.indexes import has_index
from memo_core.files.walker import (
    Verdict,
    is_note_name,
    is_note_path,
    is_within,
    judge_path,
    scan,
)
from memo_core.text.chunking import editor_lines
from memo_core.text.escapes import shown

# The most of one note a read hands over (the MCP resource, an agent's context): a note past
# it is cut at a line end, and says where the rest is.
NOTE_LIMIT = 2 * 1024 * 1024
# Lines shown on each side of the line a reader reads around (a hit's `path:line`): the
# passage and its neighbourhood, not the whole note.
AROUND_LINES = 20
# Digits a `path:line` may have: more is no line of any note (and int() of thousands of
# digits is refused by Python itself).
MAX_LINE_DIGITS = 18


@dataclass(frozen=True)
class NoteText:
    """A note as a reader gets it: its text (bytes that are not UTF-8 replaced), cut at a
    line end when the note is over the limit asked for (`cut`: the text holds the first
    `kept` of its `size` bytes)."""

    text: str
    size: int
    kept: int
    cut: bool


def read_note(folder: Path, rel: str, limit: int, roots: Sequence[Path] | None) -> NoteText:
    """Note `rel` ('/' between folders) below the real folder `folder`, at most `limit`
    bytes of it, if a search could find it there; `roots`: how far up the collection that
    holds `folder` is looked for (None: anywhere). NotANoteError, NoteNotFoundError or
    NoteUnreadableError (a MemoError) say why not."""
    if not rel or "\0" in rel or any(p in ("", ".", "..") for p in rel.split("/")):
        raise NotANoteError("note.relative")
    root, inner = _collection_of(folder, roots)
    full = inner + rel
    # By its names first: a path that is no note gets one answer, whatever lies there.
    if not is_note_path(full):
        raise _not_a_note(full)
    where = shown(str(root))
    try:
        with open_collection(root) as collection:
            _judge(collection, full)
            data, size = collection.read(full, limit + 1)
    except Escape as e:  # where it leads is judged before whether it exists
        raise NotANoteError("note.outside", note=shown(full), where=where) from e
    except FileNotFoundError as e:
        raise NoteNotFoundError("note.missing", note=shown(full), where=where) from e
    except NotRegularFile as e:
        raise _not_a_note(full) from e
    except OSError as e:  # unreadable, or swapped meanwhile
        if out_of_files(e):
            raise too_many_files(where) from e
        raise NoteUnreadableError("note.unreadable", note=shown(full), reason=e) from e
    if len(data) <= limit:
        return NoteText(data.decode("utf-8", errors="replace"), size, len(data), cut=False)
    kept = data[:limit]
    kept = kept[: kept.rfind(b"\n") + 1] or kept
    return NoteText(kept.decode("utf-8", errors="replace"), size, len(kept), cut=True)


def _not_a_note(rel: str) -> NotANoteError:
    return NotANoteError("note.not_markdown", note=shown(rel))


def _judge(collection: Folder, rel: str) -> None:
    """NotANoteError unless a walk of `collection` takes the note `rel`, whose names
    `is_note_path` has passed: what is left to leave it out is ignore rules."""
    if judge_path(collection, rel, False)[0] is not Verdict.TAKEN:
        raise NotANoteError("note.ignored", note=shown(rel), where=shown(collection.path))


def note_paths(folder: Path, roots: Sequence[Path] | None) -> list[str]:
    """The notes a search could find below the real folder `folder`, relative to it,
    sorted; judged like `read_note`, from the collection that holds `folder` (a FIFO named
    like a note is no note to read: not listed)."""
    root, inner = _collection_of(folder, roots)
    with open_collection(root) as collection:
        found = scan(collection, inner)
    readable = found.files.keys() - set(found.special)
    return sorted(rel[len(inner) :] for rel in readable)


def _collection_of(folder: Path, roots: Sequence[Path] | None) -> tuple[Path, str]:
    """The collection whose rules judge the notes of `folder`, and `folder` relative to it
    ('/'-terminated, '' for itself): the nearest folder at or above it, up to the highest
    root that holds it, with memo's index; else `folder` itself. The index is looked for
    by path: a swap there only moves where judging starts, never out of the roots."""
    tops = [r for r in roots or () if is_within(folder, r)]
    top = min(tops, key=lambda r: len(r.parts)) if tops else None
    for above in (folder, *folder.parents):
        if has_index(above):
            inner = folder.relative_to(above).as_posix()
            return above, "" if inner == "." else inner + "/"
        if above == top:
            break
    return folder, ""


@dataclass(frozen=True)
class NoteLines:
    """Lines of a note as an editor numbers them: `lines`, the first of them line `first`,
    out of `total` in the text read (a cut note's first `note.kept` bytes); `asked`: the
    span asked for (its last None: to the end), which may run past the end; `where`: the
    note's real path."""

    where: str
    note: NoteText
    first: int
    lines: list[str]
    total: int
    asked: tuple[int, int | None]


def located(note: str) -> tuple[str, int | None]:
    """A hit's `path:line` split into the note and its line; any other name as it is (a
    name with a colon of its own is no `.md` before its last one)."""
    head, sep, tail = note.rpartition(":")
    digits = tail.isascii() and tail.isdigit() and len(tail) <= MAX_LINE_DIGITS
    if sep and digits and is_note_name(os.path.basename(head)):
        return head, int(tail)
    return note, None


def line_span(
    from_line: int | None, to_line: int | None, around: int | None
) -> tuple[int, int | None]:
    """The first and last line asked for (last None: to the end): `from_line`–`to_line`,
    either left out, or AROUND_LINES each side of `around`. InvalidArgumentError, saying what
    to write, for a line below 1, a range that ends before it starts, or both ways at once."""
    for name, n in (("from", from_line), ("to", to_line), ("around", around)):
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
            raise InvalidArgumentError("read.line_number", name=name, got=n)
    if around is not None:
        if from_line is not None or to_line is not None:
            raise InvalidArgumentError("read.around_and_span")
        return max(1, around - AROUND_LINES), around + AROUND_LINES
    if from_line is not None and to_line is not None and from_line > to_line:
        raise InvalidArgumentError("read.span_reversed", first=from_line, last=to_line)
    return from_line or 1, to_line


def note_lines(note: NoteText, where: str, first: int, last: int | None) -> NoteLines:
    """Lines `first`–`last` of `note` (None: to its end; a span past the end is cut to it),
    counted as a hit's `path:line` counts them (`editor_lines`)."""
    lines = editor_lines(note.text)
    if lines[-1] == "":  # the newline that ends the last line starts no line of its own
        lines.pop()
    end = len(lines) if last is None else min(last, len(lines))
    return NoteLines(where, note, first, lines[first - 1 : end], len(lines), (first, last))
