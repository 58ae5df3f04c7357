"""Finding the collections under a path the user gave (SPEC "Discovery")."""

from __future__ import annotations

import os
from pathlib import Path

from memo_core.errors import NoCollectionError, PathNotFoundError
from memo_core.files.walker import has_notes, index_path, subfolders

# SPEC: walk down from the given path at most this many levels looking for roots.
DISCOVERY_DEPTH = 2
# When nothing is found there, how much further memo looks, to say where notes are.
NEAREST_MAX_DEPTH = 6
NEAREST_MAX_FOLDERS = 5_000


def resolve_path(path: str | os.PathLike[str]) -> Path:
    """Absolute, `~`-expanded, symlink-free form of a user's path, which must be a directory."""
    raw = os.fspath(path)
    if not raw.strip():
        raise PathNotFoundError("path.empty")
    try:  # RuntimeError: ~user with no such user, or a link loop; ValueError: a NUL
        real = Path(raw).expanduser().resolve(strict=True)
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
    return index_path(folder).is_file() or has_notes(folder)


def discover(base: Path) -> list[Path]:
    """Collection roots at or below the resolved folder `base`, sorted."""
    roots: list[Path] = []
    level = [base]
    frontier: list[Path] = []  # the deepest folders looked at, none of them a root
    for depth in range(DISCOVERY_DEPTH + 1):
        below: list[Path] = []
        for d in level:
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
