"""The one directory walker and its rules: what is a note, which folders are skipped, and
whether a path lies inside a folder. Discovery, the indexer's scan, `memo watch` and the MCP
resources and completions all use these, so they never disagree about what a note is.
"""

from __future__ import annotations

import bisect
import errno
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from memo_core.files.fsafe import (
    DIR_FLAGS,
    Folder,
    Identity,
    identity,
    listing,
    out_of_files,
    too_many_files,
)
from memo_core.files.ignore import IGNORE_FILES, Rules, ignored, with_folder
from memo_core.files.indexes import has_index

# Tool folders never hold notes worth searching; hidden ones neither.
TOOL_DIRS = frozenset({"node_modules", "venv", "__pycache__", "site-packages"})
# What makes a file a note: its name ends in .md, in any case (and it is not hidden).
NOTE_SUFFIXES = (".md", ".MD", ".Md", ".mD")

# (mtime_ns, size): a plain tuple, since a walk makes one per file and compares them all.
FileStat = tuple[int, int]


def skipped_name(name: str) -> bool:
    """A hidden entry (`.git`, `.memo`, `.obsidian`, `.draft.md`) or a tool folder."""
    return verdict((), "", name, True) is SKIPPED


def is_note_name(name: str) -> bool:
    return verdict((), "", name, False) is TAKEN


def is_note_path(rel: str) -> bool:
    """Whether a '/'-separated path below a collection root names a note the walker
    would index (no hidden or tool folder on the way)."""
    *folders, name = rel.split("/")
    return is_note_name(name) and not any(skipped_name(f) for f in folders)


def is_within(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether `path` is `folder` or lies below it; both absolute and already resolved."""
    p, f = os.fspath(path), os.fspath(folder)
    return p == f or p.startswith(f.rstrip(os.sep) + os.sep)


def has_notes(folder: str | os.PathLike[str]) -> bool:
    """Whether `folder` directly holds a note (what makes it a collection root)."""
    try:
        with os.scandir(folder) as it:
            return any(is_note_name(e.name) and e.is_file() for e in it)
    except OSError as e:
        if out_of_files(e):  # not "no notes here": a limit the user can raise
            raise too_many_files(os.fspath(folder)) from e
        return False


def subfolders(folder: str | os.PathLike[str]) -> list[str]:
    """The folders directly inside `folder` that may hold notes (no links, hidden or tools)."""
    try:
        with os.scandir(folder) as it:
            return [
                e.path for e in it if not skipped_name(e.name) and e.is_dir(follow_symlinks=False)
            ]
    except OSError as e:
        if out_of_files(e):
            raise too_many_files(os.fspath(folder)) from e
        return []


class Verdict(Enum):
    """What a walk does with an entry of a folder it entered."""

    TAKEN = "taken"  # a note it indexes, a folder it enters
    SKIPPED = "skipped"  # by its name: hidden, a tool folder, not a note
    IGNORED = "ignored"  # left out by `.gitignore` / `.memoignore` rules


# The members as plain names: an Enum member read through its class costs ~150 ns on
# Python 3.11, and a walk judges every entry of every folder.
TAKEN, SKIPPED, IGNORED = Verdict.TAKEN, Verdict.SKIPPED, Verdict.IGNORED


def verdict(rules: Rules, folder: str, name: str, is_dir: bool) -> Verdict:
    """The traversal policy, in one place: what a walk does with the entry `name` of the
    folder `folder` ('/'-terminated, '' for the root) under the ignore `rules` in force
    there; `is_dir`: a folder, or a symlink to one inside the root. The walker, the change
    feed and note reading all ask this, so they never disagree about what is a note."""
    # Written flat: a walk asks this for every entry of every folder, before each search.
    if name.startswith(".") or (name in TOOL_DIRS if is_dir else not name.endswith(NOTE_SUFFIXES)):
        return SKIPPED
    if rules and ignored(rules, folder + name, is_dir):
        return IGNORED
    return TAKEN


def rules_in(rules: Rules, fd: int, rel: str, entries: list[os.DirEntry[str]]) -> Rules:
    """The ignore rules in force inside the open folder `fd` at `rel`, listed as `entries`:
    `rules` (those of the folders above) plus its own ignore files."""
    hidden = [e.name for e in entries if e.name[0] == "."]
    return with_folder(rules, fd, rel, hidden) if hidden else rules  # ignore files are hidden


def judge_path(root: Folder, rel: str, is_dir: bool) -> tuple[Verdict, Rules]:
    """What a walk from the root does with the entry at `rel` ('/'-separated; a folder when
    `is_dir`), judging each folder on the way first (one it would not enter leaves all
    below it out), and the ignore rules in force in the entry's folder. OSError when a
    folder on the way cannot be opened (gone, unreadable, a symlink leading out)."""
    parts = rel.split("/")
    rules: Rules = ()
    at = ""
    for i, name in enumerate(parts):
        fd = root.open_dir(at)
        try:
            rules = with_folder(rules, fd, at, IGNORE_FILES)
        finally:
            os.close(fd)
        judged = verdict(rules, at, name, is_dir or i < len(parts) - 1)
        if judged is not Verdict.TAKEN:
            return judged, rules
        at += name + "/"
    return Verdict.TAKEN, rules


def relevant_change(root: str | os.PathLike[str], path: str, *, deleted: bool) -> bool:
    """Whether a change reported at `path` can change the notes of the collection `root`:
    a note, or a folder (deleted or moved away, it takes its notes along). Only the path
    below `root` is judged, so a collection may itself sit in a hidden folder."""
    rel = os.path.relpath(path, root)
    if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
        return False
    parts = rel.split(os.sep)
    if parts[-1] in IGNORE_FILES and not any(skipped_name(p) for p in parts[:-1]):
        return True  # new ignore rules: notes may come or go
    if any(skipped_name(p) for p in parts):
        return False
    return is_note_name(parts[-1]) or deleted or os.path.isdir(path)


@dataclass
class Scan:
    """Every note under a root by '/'-separated relative path, with its stat; the folders
    that could not be read ('/'-terminated, '' for the root), whose notes are unknown this
    time rather than gone; how many entries ignore rules left out; and whether a note or
    folder has two names (a symlink followed, a hard-linked note): a change then shows
    under one of them only."""

    files: dict[str, FileStat] = field(default_factory=dict)
    # Of `files`, those that are not regular files (a FIFO or a device named *.md): the
    # index notes them as skipped, and nothing offers them for reading.
    special: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    ignored: int = 0
    two_names: bool = False

    def unknown(self, rel: str) -> bool:
        """Whether `rel` lies in a folder that could not be read."""
        return any(rel.startswith(d) for d in self.unreadable)


@dataclass
class Changes:
    """Folders to look at again: `dirs` by their own entries, `trees` with all below them
    ('/'-terminated relative paths; '' is the root)."""

    dirs: set[str] = field(default_factory=set)
    trees: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.dirs or self.trees)

    def covered(self, folders: Sequence[str]) -> list[str]:
        """Of `folders` (sorted, each '/'-terminated, '' the root), those whose notes looking
        at these folders again tells of: a folder of `dirs`, or one below a tree. Found by
        bisection, so a change costs what it names, not the number of folders."""
        found = [d for d in self.dirs if _among(folders, d)]
        for t in self.trees:
            at = bisect.bisect_left(folders, t)
            while at < len(folders) and folders[at].startswith(t):
                found.append(folders[at])
                at += 1
        return found


def _among(folders: Sequence[str], folder: str) -> bool:
    at = bisect.bisect_left(folders, folder)
    return at < len(folders) and folders[at] == folder


def scan(root: Folder | Path, below: str = "", *, deep: bool = True) -> Scan:
    """Walk the notes of a collection (or of its sub-folder `below`, '/'-terminated; only
    its own entries when not `deep`).

    What it takes is what `verdict` says: hidden and tool folders are skipped, and whatever
    `.gitignore` / `.memoignore` files exclude; a sub-folder `below` that no walk from the
    root would enter (`judge_path`) holds no notes. Every folder is opened relative to its
    parent's descriptor without following symlinks (see `fsafe`): one swapped for a
    symlink meanwhile is skipped, never entered. Symlinks are followed only while they stay
    inside the root, and each folder reached through one is visited once, so link loops
    end. This runs before searches, so the loop is kept lean: most entries cost a d_type
    check, a `verdict` and a stat.
    """
    if not isinstance(root, Folder):  # a caller's own symlink-free path (tests, tools)
        with Folder(os.path.abspath(root)) as folder:
            return scan(folder, below, deep=deep)
    out = Scan()
    rules: Rules = ()
    try:
        if below:
            judged, rules = judge_path(root, below[:-1], True)
            if judged is not Verdict.TAKEN:  # a folder no walk from the root enters
                return out
        start = root.open_dir(below)
    except FileNotFoundError:
        return out  # vanished: its notes are gone
    except OSError as e:
        _unreadable(root, out, below, e)
        return out
    walk = _Walk(root, out, deep)
    try:
        walk.seen.add(identity(os.fstat(start)))
        walk.enter(start, below, rules)
        walk.run()
    finally:
        walk.close()
    return out


def _unreadable(root: Folder, out: Scan, rel: str, e: OSError) -> None:
    """A folder the walk cannot open or list: noted (its notes stay in the index as they
    were), unless the process is out of descriptors, which is no fact of the folder."""
    _out_of_files(root, e)
    out.unreadable.append(rel)


def _out_of_files(root: Folder, e: OSError) -> None:
    """ResourceLimitError where `e` says the process has too many files open: a walk that
    went on would take what it could not open for gone."""
    if out_of_files(e):
        raise too_many_files(root.path) from e


class _Walk:
    """One walk's state: the folders open from the start down to where it is (one
    descriptor per level, so a wide tree never holds many), and what it found."""

    def __init__(self, root: Folder, out: Scan, deep: bool) -> None:
        self.root = root
        self.out = out
        self.deep = deep
        self.seen: set[Identity] = set()  # folders reached through a symlink (or the start)
        # (descriptor, path relative to the root, rules in force, sub-folders still to walk:
        # (name, whether it is a symlink))
        self.stack: list[tuple[int, str, Rules, list[tuple[str, bool]]]] = []

    def close(self) -> None:
        for fd, *_ in self.stack:
            os.close(fd)
        self.stack.clear()

    def run(self) -> None:
        while self.stack:
            fd, rel, rules, todo = self.stack[-1]
            if not todo:
                os.close(fd)
                self.stack.pop()
                continue
            name, linked = todo.pop()
            if linked:  # a symlink to a folder: reached from the root, only inside it
                self._enter_linked(f"{rel}{name}", rules)
                continue
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as e:
                if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                    _unreadable(self.root, self.out, f"{rel}{name}/", e)
                continue  # swapped for a symlink or a file since it was listed: not entered
            self.enter(child, f"{rel}{name}/", rules)

    def enter(self, fd: int, rel: str, rules: Rules) -> None:
        """List the open folder `fd` (now owned by the walk) and note what it holds."""
        self.stack.append((fd, rel, rules, []))
        frame = len(self.stack) - 1
        try:
            entries = listing(fd)
        except OSError as err:
            _unreadable(self.root, self.out, rel, err)
            return
        rules = rules_in(rules, fd, rel, entries)
        todo: list[tuple[str, bool]] = []
        found = self.out.files
        for e in entries:
            name = e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    if self.deep and self._taken(rules, rel, name, True):
                        todo.append((name, False))
                elif e.is_symlink():
                    self._follow_link(rel, name, rules, todo)
                elif (judged := verdict(rules, rel, name, False)) is not TAKEN:
                    self.out.ignored += judged is IGNORED
                else:
                    st = e.stat(follow_symlinks=False)
                    found[rel + name] = (st.st_mtime_ns, st.st_size)
                    if st.st_nlink > 1:
                        self.out.two_names = True
                    if not stat.S_ISREG(st.st_mode):
                        self.out.special.append(rel + name)
            except OSError:
                continue
        self.stack[frame] = (fd, rel, rules, todo if self.deep else [])

    def _taken(self, rules: Rules, folder: str, name: str, is_dir: bool) -> bool:
        """Whether the walk takes the entry (`verdict`), counting what ignore rules leave out."""
        judged = verdict(rules, folder, name, is_dir)
        if judged is IGNORED:
            self.out.ignored += 1
        return judged is TAKEN

    def _follow_link(
        self, folder: str, name: str, rules: Rules, todo: list[tuple[str, bool]]
    ) -> None:
        """A symlink `name` in `folder`: the note it leads to, or its folder to walk (in
        `todo`), when that lies inside the root."""
        rel = folder + name
        try:
            st = self.root.stat(rel)
        except OSError as e:
            _out_of_files(self.root, e)
            return  # leads outside the collection, nowhere, or to something unreadable
        if stat.S_ISDIR(st.st_mode):
            if self.deep and self._taken(rules, folder, name, True):
                todo.append((name, True))
        elif stat.S_ISREG(st.st_mode) and self._taken(rules, folder, name, False):
            self.out.files[rel] = (st.st_mtime_ns, st.st_size)
            self.out.two_names = True

    def _enter_linked(self, rel: str, rules: Rules) -> None:
        try:
            fd = self.root.open_dir(rel)
            st = os.fstat(fd)
        except OSError as e:
            _out_of_files(self.root, e)
            return  # changed since it was listed
        if identity(st) in self.seen:
            os.close(fd)  # met before: a link loop, or two links to one folder
            return
        self.seen.add(identity(st))
        self.out.two_names = True
        self.enter(fd, rel + "/", rules)


def rescan(root: Folder, changes: Changes) -> Scan:
    """What a full walk would find in the folders `changes` names (and nothing else)."""
    out = Scan()
    trees = sorted(changes.trees)
    trees = [t for t in trees if not any(t != u and t.startswith(u) for u in trees)]
    parts = [scan(root, t) for t in trees]
    parts += [
        scan(root, d, deep=False) for d in changes.dirs if not any(d.startswith(t) for t in trees)
    ]
    for part in parts:
        out.files.update(part.files)
        out.unreadable += part.unreadable
        out.ignored += part.ignored
        out.two_names |= part.two_names
    return out


def find_indexes(roots: Iterable[Path], depth: int, max_dirs: int) -> list[Path]:
    """Folders at most `depth` levels below a root that hold memo's index, sorted; at most
    `max_dirs` folders are looked at in all (a home folder can be big)."""
    found: set[Path] = set()
    budget = max_dirs
    for root in roots:
        level = [str(root)]
        for d in range(depth + 1):
            below: list[str] = []
            for folder in level:
                if budget <= 0:
                    return sorted(found)
                budget -= 1
                if has_index(folder):
                    found.add(Path(folder))
                if d < depth:
                    below.extend(subfolders(folder))
            level = below
    return sorted(found)
