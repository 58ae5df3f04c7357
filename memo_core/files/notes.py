"""One note read for a reader (the `memo://note` resource, `memo_read`), and the notes of a
folder (completions): exactly what a search could find there, nothing else.

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

from memo_core.errors import NotANoteError, NoteNotFoundError, NoteUnreadableError
from memo_core.files.fsafe import (
    Escape,
    Folder,
    NotRegularFile,
    open_collection,
    out_of_files,
    too_many_files,
)
from memo_core.files.walker import (
    Verdict,
    index_path,
    is_note_path,
    is_within,
    judge_path,
    scan,
)
from memo_core.text.escapes import shown

# The most of one note a read hands over (the MCP resource, an agent's context): a note past
# it is cut at a line end, and says where the rest is.
NOTE_LIMIT = 2 * 1024 * 1024
ASK_RELATIVE = "give the note's path relative to the collection, e.g. home/backup.md"


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
        raise NotANoteError(ASK_RELATIVE)
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
        raise NotANoteError(f"{shown(full)} leads outside {where}") from e
    except FileNotFoundError as e:
        raise NoteNotFoundError(f"no such note: {shown(full)} in {where}") from e
    except NotRegularFile as e:
        raise _not_a_note(full) from e
    except OSError as e:  # unreadable, or swapped meanwhile
        if out_of_files(e):
            raise too_many_files(where) from e
        raise NoteUnreadableError(f"{shown(full)} cannot be read: {e.strerror or e}") from e
    if len(data) <= limit:
        return NoteText(data.decode("utf-8", errors="replace"), size, len(data), cut=False)
    kept = data[:limit]
    kept = kept[: kept.rfind(b"\n") + 1] or kept
    return NoteText(kept.decode("utf-8", errors="replace"), size, len(kept), cut=True)


def _not_a_note(rel: str) -> NotANoteError:
    return NotANoteError(
        f"{shown(rel)} is not a Markdown note (*.md) outside hidden folders: memo opens notes only"
    )


def _judge(collection: Folder, rel: str) -> None:
    """NotANoteError unless a walk of `collection` takes the note `rel`, whose names
    `is_note_path` has passed: what is left to leave it out is ignore rules."""
    if judge_path(collection, rel, False)[0] is not Verdict.TAKEN:
        raise NotANoteError(
            f"{shown(rel)} is left out by .gitignore or .memoignore rules in "
            f"{shown(collection.path)}: memo opens only the notes it indexes"
        )


def note_paths(folder: Path, roots: Sequence[Path] | None) -> list[str]:
    """The notes a search could find below the real folder `folder`, relative to it,
    sorted; judged like `read_note`, from the collection that holds `folder`."""
    root, inner = _collection_of(folder, roots)
    with open_collection(root) as collection:
        return sorted(rel[len(inner) :] for rel in scan(collection, inner).files)


def _collection_of(folder: Path, roots: Sequence[Path] | None) -> tuple[Path, str]:
    """The collection whose rules judge the notes of `folder`, and `folder` relative to it
    ('/'-terminated, '' for itself): the nearest folder at or above it, up to the highest
    root that holds it, with memo's index; else `folder` itself. The index is looked for
    by path: a swap there only moves where judging starts, never out of the roots."""
    tops = [r for r in roots or () if is_within(folder, r)]
    top = min(tops, key=lambda r: len(r.parts)) if tops else None
    for above in (folder, *folder.parents):
        if os.path.isfile(index_path(above)):
            inner = folder.relative_to(above).as_posix()
            return above, "" if inner == "." else inner + "/"
        if above == top:
            break
    return folder, ""
