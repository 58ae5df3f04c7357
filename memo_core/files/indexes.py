"""Where a collection's index lives, by name: `<collection>/.memo/index.db`, or, where the
folder cannot hold it, a file of its own in the cache folder; and whether a folder has one.
Names only: `index.location` decides which of the two a collection uses, and
`index.directory` reaches them safely."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from memo_core.settings import cache_dir

INDEX_DIR = ".memo"
INDEX_FILE = "index.db"


def index_path(root: Path) -> Path:
    """Where a collection's index lives when its folder can hold it."""
    return root / INDEX_DIR / INDEX_FILE


def fallback_index_path(root: Path) -> Path:
    """Where the index lives when the collection folder cannot hold it (a name of plain
    characters: SQLite takes only UTF-8 paths)."""
    return Path(_fallback_index_path(os.fspath(root)))


def _fallback_index_path(root: str) -> str:
    tag = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    name = _UNSAFE.sub("_", os.path.basename(root))
    return os.path.join(cache_dir(), "indexes", f"{name}-{tag}", INDEX_FILE)


_UNSAFE = re.compile(r"[^\w.-]", flags=re.ASCII)


def index_folders(root: str | os.PathLike[str]) -> tuple[str, str]:
    """The folders whose entries say whether `root` has an index (`has_index`): its own
    `.memo`, and its folder in the cache."""
    folder = os.fspath(root)
    return os.path.join(folder, INDEX_DIR), os.path.dirname(_fallback_index_path(folder))


def has_index(root: str | os.PathLike[str]) -> bool:
    """Whether the folder `root` has memo's index, in it or in the cache folder (the one
    answer every caller gets: `index.location.choose` decides which of the two is used).
    Reads by path only."""
    # Strings, not Paths: discovery asks this of every folder under a broad path.
    folder = os.fspath(root)
    if _is_file(os.path.join(folder, INDEX_DIR, INDEX_FILE)):
        return True
    return _is_file(_fallback_index_path(folder))


def _is_file(path: str | os.PathLike[str]) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):  # as Path.is_file: not there, or a name no file has
        return False
