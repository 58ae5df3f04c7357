"""Where a collection's index lives: `<collection>/.memo/index.db` when memo may keep it
there, else a file of its own in the cache dir. Deciding reads only; clearing a killed
rebuild's scratch removes only files that are memo's by `dbfiles`' rules.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from memo_core.errors import IndexLocationError
from memo_core.files.fsafe import Folder
from memo_core.files.indexes import INDEX_DIR, INDEX_FILE, fallback_index_path, index_path
from memo_core.index import directory
from memo_core.index.dbfiles import Mark, inspect
from memo_core.messages import Message


def choose(root: Path, *, with_schema: bool = True) -> tuple[Path, Message | None]:
    """`<root>/.memo/index.db`, or the cache-dir one where an index already lives, where
    the folder cannot hold one, or where something that is not memo's lies at memo's place;
    and why it is not the collection's own. Reads only. `with_schema` False: a file with
    memo's mark counts as memo's whatever its schema holds (for a caller whose opener reads
    the schema anyway, and chooses again where that is not memo's: `dbfiles.inspect`)."""
    own = index_path(root)
    fallback = fallback_index_path(root)
    if why := unusable(root, with_schema=with_schema):
        return fallback, why
    if own.is_file() or not fallback.is_file():
        return own, None
    return fallback, Message("place.could_not_hold")


def unusable(root: Path, *, with_schema: bool = True) -> Message | None:
    """Why `<root>/.memo/index.db` cannot be memo's index now (None: it can). Reads only.
    `with_schema`: as for `choose` (the rebuild's scratch is read whole either way)."""
    folder = root / INDEX_DIR
    try:
        str(folder).encode("utf-8")
    except UnicodeEncodeError:
        return Message("place.not_utf8")
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None
    except OSError as e:
        return Message("place.unreadable", path=folder, reason=e)
    if stat.S_ISLNK(st.st_mode):
        return Message("place.through", path=folder, what=Message("file.symlink"))
    if not stat.S_ISDIR(st.st_mode):
        return Message("file.is", path=folder, what=Message("file.not_folder"))
    # The rebuild's scratch is one of memo's names there too: what is not memo's at it
    # would stop every rebuild (memo neither builds in it nor deletes it).
    db = folder / INDEX_FILE
    for path, whole in ((db, with_schema), (scratch_path(db), True)):
        mark, why = inspect(path, with_schema=whole)
        if mark is Mark.FOREIGN:
            return why
    return None


def scratch_path(db: Path) -> Path:
    return db.with_name(f"{db.name}.rebuild")


def clear_scratch(db: Path, root: Folder | None = None) -> None:
    """Remove what a killed rebuild of `db` left (only while holding the refresh lock: then
    no rebuild is running); anything there that memo did not make is left alone."""
    with contextlib.suppress(IndexLocationError):
        directory.remove_files(scratch_path(db), root)


def scratch_left(db: Path) -> bool:
    """Whether something lies where a rebuild of `db` builds: a hint, looked at again by
    the refresh that clears it (holding the refresh lock, through the root's descriptor)."""
    return os.path.lexists(scratch_path(db))


def fresh_scratch(db: Path, root: Folder | None = None) -> Path:
    """Where a rebuild of `db` builds (call while holding the refresh lock), cleared of what
    a killed rebuild left. Something there that memo did not make is neither built in nor
    deleted (nor is another program's journal played back into a new index there): then
    IndexLocationError, which says to move it away."""
    scratch = scratch_path(db)
    try:
        directory.remove_files(scratch, root)
    except IndexLocationError as e:
        raise IndexLocationError("index.cannot_rebuild", path=db, reason=e) from e
    return scratch
