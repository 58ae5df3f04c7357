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

from .regular import read_regular

IGNORE_FILES = (".gitignore", ".memoignore")
MAX_IGNORE_BYTES = 1 << 20  # a bigger "ignore file" is not one: its lines are not read

# (folder relative to the root, '/'-terminated or '' for the root; its compiled spec)
Rules = tuple[tuple[str, Any], ...]


def with_folder(rules: Rules, dir_path: str, rel: str, names: Iterable[str]) -> Rules:
    """`rules` plus those of the folder at `dir_path` (holding `names`), if it has any."""
    present = [n for n in IGNORE_FILES if n in names]
    if not present:
        return rules
    lines: list[str] = []
    for name in present:
        lines += _read_lines(os.path.join(dir_path, name))
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


def rules_above(root: str, rel: str) -> Rules:
    """The rules that folders above `rel` ('/'-terminated, below `root`) set for it: for
    walking one sub-folder on its own, as a walk from the root would see it."""
    rules: Rules = ()
    parts = [p for p in rel.split("/") if p]
    for depth in range(len(parts)):
        sub = "".join(p + "/" for p in parts[:depth])
        folder = os.path.join(root, *parts[:depth])
        rules = with_folder(rules, folder, sub, [n for n in IGNORE_FILES if _exists(folder, n)])
    return rules


def _exists(folder: str, name: str) -> bool:
    return os.path.isfile(os.path.join(folder, name))


def _read_lines(path: str) -> list[str]:
    try:
        data, size = read_regular(path, MAX_IGNORE_BYTES + 1)
    except OSError:
        return []  # unreadable, or a FIFO named .gitignore: no rules from it
    if size > MAX_IGNORE_BYTES:
        return []
    return data.decode("utf-8", errors="replace").splitlines()
