"""An advisory lock file: one refresher per collection across processes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from memo_core.files.fsafe import Folder
from memo_core.index.directory import open_lock_file

if sys.platform != "win32":  # Windows has no fcntl: the package imports, the Engine refuses
    import fcntl


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _lock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_EX)


def _unlock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)


class FileLock:
    """Exclusive lock on `path`; released on `release()` or when the process dies. `root`:
    the collection's folder, when `path` lies in its `.memo` (reached through it)."""

    def __init__(self, path: Path, root: Folder | None = None) -> None:
        self.path = path
        self.root = root
        self._fd: int | None = None

    def acquire(self, *, wait: bool) -> bool:
        fd = open_lock_file(self.path, self.root)
        if wait:
            _lock(fd)
        elif not _try_lock(fd):
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            _unlock(self._fd)
            os.close(self._fd)
            self._fd = None
