"""Finding the collections under a path the user gave."""

from __future__ import annotations

import os
import shlex
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from memo_core import settings
from memo_core.errors import NoCollectionError, PathNotFoundError
from memo_core.files.indexes import has_index, index_folders
from memo_core.files.walker import has_notes, subfolders
from memo_core.messages import Message
from memo_core.text.escapes import shown
from memo_core.values import NAMED_FOLDERS, Notice, NoticeKind

# walk down from the given path at most this many levels looking for roots.
DISCOVERY_DEPTH = 2
# When nothing is found there, how much further memo looks, to say where notes are.
NEAREST_MAX_DEPTH = 6
NEAREST_MAX_FOLDERS = 5_000
# A read-only call (search, changes) under a path that is not itself one collection makes at
# most this many new indexes: a folder of a few collections (examples/, a test's siblings)
# is searched as one, while a broad path (~, /tmp, where every git checkout's README.md
# makes a collection) does not get an index in each folder of notes it holds.
# An explicit `memo index PATH` / `memo reindex PATH` makes them all.
MAX_NEW_INDEXES = 3
# What is found under a path is kept while every folder whose entries decided it stands as
# it was (`Discoveries`); a folder changed less than this long ago is read again next time:
# file systems stamp changes with a coarse clock (a tick of the kernel's, 2 s on FAT), and
# a second change within one tick can leave a folder's time as the first one left it.
SETTLED_NS = 2_000_000_000
# Paths whose findings are kept at once (the oldest forgotten first).
KEPT_PATHS = 64

# A folder as a stamp: (device, inode, its inode's change time in ns), () where there is
# none. The change time moves with its entries (as the modification time does) and with its
# permissions too: a folder that becomes readable is read again.
Stamp = tuple[int, ...]


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """Absolute, `~`-expanded, symlink-free form of a user's path, which must be a directory."""
    raw = os.fspath(path)
    if not raw.strip():
        raise PathNotFoundError("path.empty")
    try:  # RuntimeError: ~user with no such user, or a link loop; ValueError: a NUL
        real = settings.expanded(raw).resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as e:
        raise missing(raw) from e
    check_dir(real, raw)
    return real


def check_dir(real: str | os.PathLike[str], raw: str) -> None:
    """PathNotFoundError (naming `raw`, as the user gave it) unless `real` is a folder."""
    if not os.path.isdir(real):
        if not os.path.lexists(real):
            raise missing(raw)
        raise PathNotFoundError("path.not_dir", path=raw)


def missing(raw: str) -> PathNotFoundError:
    return PathNotFoundError("path.missing", path=raw)


def is_root(folder: Path) -> bool:
    return has_index(folder) or has_notes(folder)


def stamp(folder: str) -> Stamp:
    """`folder` as it stands: a change of its entries changes this (see SETTLED_NS)."""
    try:
        st = os.stat(folder, follow_symlinks=False)
    except (OSError, ValueError):
        return ()
    return st.st_dev, st.st_ino, st.st_ctime_ns


@dataclass(frozen=True)
class _Found:
    roots: list[Path]
    read: dict[str, Stamp]  # each folder whose entries decided them, stamped before reading


class Discoveries:
    """The collection roots under each path asked for (`discover`), kept between calls
    while every folder whose entries decided them stands as it was (`stamp`): a search over
    a folder of 500 collections found them again in about 24 ms a call, and now checks
    about 1,500 folders' stamps in a few. A note that is a symlink (whose target may come
    or go without any folder changing) is taken as it was found until its folder changes."""

    def __init__(self) -> None:
        self._found: dict[Path, _Found] = {}
        self._lock = threading.Lock()

    def discover(self, base: Path) -> list[Path]:
        with self._lock:
            found = self._found.get(base)
        if found is not None and all(stamp(f) == was for f, was in found.read.items()):
            return list(found.roots)
        read: dict[str, Stamp] = {}
        roots = discover(base, read)
        now = time.time_ns()
        if all(not was or now - was[2] > SETTLED_NS for was in read.values()):
            with self._lock:
                self._found.pop(base, None)
                while len(self._found) >= KEPT_PATHS:
                    del self._found[next(iter(self._found))]
                self._found[base] = _Found(roots, read)
        return list(roots)


def discover(base: Path, read: dict[str, Stamp] | None = None) -> list[Path]:
    """Collection roots at or below the resolved folder `base`, sorted; `read`: each folder
    whose entries decide them, stamped before its entries are read (`Discoveries`)."""
    roots: list[Path] = []
    level = [base]
    frontier: list[Path] = []  # the deepest folders looked at, none of them a root
    for depth in range(DISCOVERY_DEPTH + 1):
        below: list[Path] = []
        for d in level:
            if read is not None:
                read[str(d)] = stamp(str(d))
                own, cached = index_folders(d)
                for folder in (own, cached):  # one made later changes the folder above it:
                    if was := stamp(folder):  # `d`, or the cache folders' parent
                        read[folder] = was
                parent = os.path.dirname(cached)
                read.setdefault(parent, stamp(parent))
            if is_root(d):
                roots.append(d)
            elif depth < DISCOVERY_DEPTH:
                below.extend(Path(p) for p in subfolders(d))
            else:
                frontier.append(d)
        level = below
    if not roots:
        deeper = _nearest_notes(frontier)
        if deeper:
            raise NoCollectionError(
                "path.no_notes_deeper", path=base, depth=DISCOVERY_DEPTH, deeper=deeper
            )
        raise NoCollectionError("path.no_notes", path=base, depth=DISCOVERY_DEPTH)
    return sorted(roots)


def within_reach(base: Path, roots: list[Path]) -> tuple[list[Path], Notice | None]:
    """The roots (discovered under `base`) that a read-only call works on, and the notice
    naming those it leaves alone (None: none).

    All of them when `base` is itself a collection, or when at most MAX_NEW_INDEXES lack an
    index (`indexes.has_index`); else only those with one, the rest left alone:
    memo does not make indexes in folders the user never named. NoCollectionError, naming
    them and the command that indexes them, where that leaves nothing to search."""
    if base in roots:
        return roots, None
    new = [r for r in roots if not has_index(r)]
    if len(new) <= MAX_NEW_INDEXES:
        return roots, None
    names = ["/".join(r.relative_to(base).parts) for r in new]
    named = tuple(names[:NAMED_FOLDERS])
    if len(new) == len(roots):
        listed = ", ".join(shown(n) for n in named)
        if len(names) > len(named):
            listed = Message("list.and_more", named=listed, more=len(names) - len(named))
        raise NoCollectionError(
            "path.none_indexed",
            total=len(names),
            path=base,
            named=listed,
            most=MAX_NEW_INDEXES,
            command=_index_command(base),
        )
    kept = [r for r in roots if r not in new]
    command = _index_command(base)
    return kept, Notice(NoticeKind.NOT_INDEXED, str(base), command, folders=named, total=len(new))


def _index_command(base: Path) -> str:
    """The command that indexes every collection under `base`, as a shell takes it."""
    return f"memo index {shlex.quote(shown(str(base)))}"


def _nearest_notes(level: list[Path]) -> Path | None:
    """The first folder holding notes below `level` (the folders discovery stopped at),
    looking a few levels and a bounded number of folders further: notes deeper than the
    discovery depth are pointed at, not silently lost."""
    budget = NEAREST_MAX_FOLDERS
    for _ in range(NEAREST_MAX_DEPTH):
        below: list[Path] = []
        for d in sorted(level):
            for sub in sorted(subfolders(d)):
                budget -= 1
                if budget < 0:
                    return None
                if has_notes(sub):
                    return Path(sub)
                below.append(Path(sub))
        level = below
    return None
