"""The rows the store reads and writes, how a note's path is kept in one, and the file rows
it keeps between refreshes (`FileStats`)."""

from __future__ import annotations

import bisect
import json
import os
from dataclasses import dataclass

from memo_core.files.walker import Changes, FileStat
from memo_core.text.passagelang import ENGLISH
from memo_core.text.titles import title_of


@dataclass(frozen=True, slots=True)
class FileState:
    id: int
    mtime_ns: int
    size: int
    hash: str


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str
    line: int  # where the passage starts (a section's first: its heading's line)
    heading: str
    text: str
    text_line: int  # where its text begins (`Chunk.text_line`)
    title: str  # the note's title: its front matter's first name, else its file name
    lang: str = ENGLISH  # the language its Latin words are stemmed in (`text.passagelang`)

    @property
    def shown_heading(self) -> str:
        """The heading a hit shows: a passage before the note's first heading has none of
        its own, and is shown under the note's title."""
        return self.heading or self.title


def note_title(path: str, front: str) -> str:
    """A note's title from its path and its stored front matter (`Store.set_front`'s JSON):
    `title_of` its names and path."""
    try:
        names = json.loads(front).get("names") if front else None
    except (ValueError, AttributeError):
        names = None
    return title_of(path, names if isinstance(names, list) else [])


def stored(rel: str) -> str:
    """How a note's relative path is stored: as it is when it is valid UTF-8; otherwise "/"
    and the hex of its bytes (any name the OS allows; a relative path never starts with /)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "/" + os.fsencode(rel).hex()
    return rel


class BadRow(ValueError):
    """A row memo never writes (an index damaged, or made by someone else): what it holds
    is not read as if it were memo's."""


def from_stored(text: str) -> str:
    """The relative path `stored` made, as the OS gives it (undecodable bytes as surrogates);
    BadRow for one `stored` never makes (not hex after its "/", empty, absolute, a NUL, or a
    "." or ".." part: a path that would lead out of its collection)."""
    try:
        rel = os.fsdecode(bytes.fromhex(text[1:])) if text[:1] == "/" else text
    except ValueError as e:
        raise BadRow(f"a note's path {text[:60]!r}") from e
    if not rel or "\x00" in rel or any(part in ("", ".", "..") for part in rel.split("/")):
        raise BadRow(f"a note's path {text[:60]!r}")
    return rel


class FileStats:
    """The stats `Store.file_stats` keeps: by path, and (from the first call that asks for
    some folders only) by folder, each change applied to both."""

    def __init__(self, stats: dict[str, FileStat]) -> None:
        self.all = stats
        self._folders: list[str] | None = None  # sorted, for `Changes.covered`
        self._in: dict[str, set[str]] = {}  # folder ('/'-terminated, '' the root): its paths

    def within(self, changes: Changes) -> dict[str, FileStat]:
        if self._folders is None:
            for path in self.all:
                self._in.setdefault(_folder(path), set()).add(path)
            self._folders = sorted(self._in)
        return {p: self.all[p] for f in changes.covered(self._folders) for p in self._in[f]}

    def set(self, path: str, st: FileStat | None) -> None:
        if st is None:
            self.all.pop(path, None)
        else:
            self.all[path] = st
        if self._folders is None:
            return
        folder = _folder(path)
        paths = self._in.get(folder)
        if paths is None:
            paths = self._in[folder] = set()
            bisect.insort(self._folders, folder)
        if st is None:
            paths.discard(path)  # the folder stays, known to hold none
        else:
            paths.add(path)


def _folder(path: str) -> str:
    return path[: path.rfind("/") + 1]
