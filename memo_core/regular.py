"""Reading a file that may be hostile: only a regular file, opened without blocking."""

from __future__ import annotations

import os
import stat


class NotRegularFile(OSError):
    """A FIFO, device or socket where a note was expected: never read (it could block)."""


def read_regular(path: str | os.PathLike[str], limit: int) -> tuple[bytes, int]:
    """At most `limit` bytes of a regular file, and its size. Opened without blocking and
    checked after opening, so a FIFO (or a file swapped for one) never hangs the caller."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{os.fspath(path)} is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(limit), st.st_size
    finally:
        os.close(fd)
