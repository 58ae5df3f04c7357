"""Finding collections under a path and the Markdown files inside a collection."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import NoCollectionError, PathNotFoundError

INDEX_DIR = ".memo"
INDEX_FILE = "index.db"
# SPEC: walk down from the given path at most this many levels looking for roots.
DISCOVERY_DEPTH = 2


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """Absolute, `~`-expanded, symlink-free form of a user's path, which must be a directory."""
    raw = os.fspath(path)
    if not raw.strip():
        raise PathNotFoundError("path is empty: give the folder of your notes, e.g. ~/notes")
    try:  # RuntimeError: ~user with no such user, or a link loop; ValueError: a NUL
        real = Path(raw).expanduser().resolve(strict=True)
    except (OSError, RuntimeError, ValueError) as e:
        raise PathNotFoundError(
            f"path does not exist: {raw}; give an existing folder of notes, e.g. ~/notes"
        ) from e
    if not real.is_dir():
        raise PathNotFoundError(f"not a directory: {raw}; give the folder that holds the notes")
    return real


def _is_md(name: str) -> bool:
    return name.lower().endswith(".md")


def _is_root(d: Path) -> bool:
    if (d / INDEX_DIR / INDEX_FILE).is_file():
        return True
    try:
        with os.scandir(d) as it:
            return any(_is_md(e.name) and e.is_file() for e in it)
    except OSError:
        return False


def discover(path: str | os.PathLike[str]) -> list[Path]:
    """Collection roots at or below `path` (SPEC "Discovery"), sorted."""
    base = resolve_path(path)
    roots: list[Path] = []
    level = [base]
    for depth in range(DISCOVERY_DEPTH + 1):
        below: list[Path] = []
        for d in level:
            if _is_root(d):
                roots.append(d)
            elif depth < DISCOVERY_DEPTH:
                below.extend(_subdirs(d))
        level = below
    if not roots:
        raise NoCollectionError(
            f"no notes found in {base}: no *.md file within {DISCOVERY_DEPTH} folder levels; "
            "point memo at the folder that holds your Markdown notes"
        )
    return sorted(roots)


def _subdirs(d: Path) -> list[Path]:
    try:
        with os.scandir(d) as it:
            return [
                Path(e.path)
                for e in it
                if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return []


# (mtime_ns, size): a plain tuple, since a walk makes one per file and compares them all.
FileStat = tuple[int, int]


def scan(root: Path) -> dict[str, FileStat]:
    """Every *.md file under `root` by '/'-separated relative path, with its mtime and size.

    Hidden folders are skipped; symlinks are followed only while they stay inside the root,
    and each real folder is visited once, so link loops end. This runs before every search,
    so the loop is kept lean: most entries cost a d_type check, a suffix check and a stat.
    """
    found: dict[str, FileStat] = {}
    root_s = str(root)
    seen_dirs = {root_s}
    stack: list[tuple[str, str]] = [(root_s, "")]
    while stack:
        dir_path, rel = stack.pop()
        try:
            it = os.scandir(dir_path)
        except OSError:
            continue  # vanished or unreadable: its files count as gone
        with it:
            for e in it:
                name = e.name
                if name[0] == ".":
                    continue
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append((e.path, f"{rel}{name}/"))
                    elif e.is_symlink():
                        _follow_link(e, root_s, rel, seen_dirs, stack, found)
                    elif name[-3:].lower() == ".md":
                        st = e.stat(follow_symlinks=False)
                        found[rel + name] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    continue
    return found


def _follow_link(
    e: os.DirEntry[str],
    root_s: str,
    rel: str,
    seen_dirs: set[str],
    stack: list[tuple[str, str]],
    found: dict[str, FileStat],
) -> None:
    real = os.path.realpath(e.path)
    if real != root_s and not real.startswith(root_s + os.sep):
        return  # leads outside the collection: never followed
    if os.path.isdir(real):
        if real not in seen_dirs:
            seen_dirs.add(real)
            stack.append((e.path, f"{rel}{e.name}/"))
    elif _is_md(e.name) and os.path.isfile(real):
        st = os.stat(real)
        found[rel + e.name] = (st.st_mtime_ns, st.st_size)
