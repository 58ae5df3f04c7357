"""Ignore rules: `.gitignore` files and memo's own `.memoignore` (the same syntax), nested
the way git nests them, matched with `pathspec`'s gitignore implementation.

A folder's rules apply to everything below it; a deeper file's rules decide before a
higher one's, and within one folder `.memoignore` comes after `.gitignore`, so it has the
last word (`!keep.md` in `.memoignore` takes back what `.gitignore` ignored). An ignored
folder is not entered, so nothing inside it can be taken back (as in git).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from .fsafe import READ_FLAGS, Folder, read_fd

IGNORE_FILES = (".gitignore", ".memoignore")
MAX_IGNORE_BYTES = 1 << 20  # a bigger "ignore file" is not one: its lines are not read

# (folder relative to the root, '/'-terminated or '' for the root; its compiled spec)
Rules = tuple[tuple[str, Any], ...]


def with_folder(rules: Rules, dir_fd: int, rel: str, names: Iterable[str]) -> Rules:
    """`rules` plus those of the open folder `dir_fd` (at `rel`, holding `names`), if any."""
    present = [n for n in IGNORE_FILES if n in names]
    if not present:
        return rules
    lines: list[str] = []
    for name in present:
        lines += _read_lines(dir_fd, name)
    if not lines:
        return rules
    from pathspec import GitIgnoreSpec  # only folders that have ignore files pay for it

    return (*rules, (rel, GitIgnoreSpec.from_lines(lines)))


def ignored(rules: Rules, rel: str, is_dir: bool) -> bool:
    """Whether the entry at `rel` (relative to the root) is ignored by `rules`."""
    path = rel + "/" if is_dir else rel
    for prefix, spec in reversed(rules):
        decided = spec.check_file(path[len(prefix) :]).include
        if decided is not None:
            return bool(decided)
    return False


def rules_above(root: Folder, rel: str) -> Rules:
    """The rules that folders above `rel` ('/'-terminated, below `root`) set for it: for
    walking one sub-folder on its own, as a walk from the root would see it."""
    rules: Rules = ()
    parts = [p for p in rel.split("/") if p]
    for depth in range(len(parts)):
        sub = "".join(p + "/" for p in parts[:depth])
        try:
            fd = root.open_dir(sub)
        except OSError:
            return rules  # gone or swapped meanwhile: the walk below finds nothing either
        try:
            rules = with_folder(rules, fd, sub, IGNORE_FILES)
        finally:
            os.close(fd)
    return rules


def _read_lines(dir_fd: int, name: str) -> list[str]:
    """The lines of the ignore file `name` in `dir_fd`. A symlink is not followed (as git
    does not since 2.32): an ignore file that is a link, a FIFO or too big sets no rules."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return []
    try:
        data, size = read_fd(fd, MAX_IGNORE_BYTES + 1, name)
    except OSError:
        return []
    finally:
        os.close(fd)
    if size > MAX_IGNORE_BYTES:
        return []
    return data.decode("utf-8", errors="replace").splitlines()
