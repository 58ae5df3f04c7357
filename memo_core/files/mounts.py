"""The mount table: which file system a path lies on, found by its name alone.

It lives in procfs, so reading it never touches the mounts themselves (a dead one included).
The engine asks for a file system's type (the OS reports changes on local ones only); memo-mcp
for its device (threads are bounded per file system).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple, TypeVar

MOUNTINFO = Path("/proc/self/mountinfo")
# How mountinfo writes a space, tab, newline or backslash in a path: `\040` for a space.
_ESCAPED = re.compile(rb"\\([0-3][0-7]{2})")

T = TypeVar("T")


class Mount(NamedTuple):
    device: str  # major:minor (bind mounts of one file system share it)
    fs_type: str  # ext4, nfs, fuse.sshfs...


def read_mountinfo(source: Path = MOUNTINFO) -> dict[bytes, Mount]:
    """Each mount point of a mountinfo table (bytes: a path need not be UTF-8) → its file
    system. Of mounts on one point, the one on top: the one no other there is mounted on.
    OSError where it cannot be read (no /proc, out of descriptors)."""
    with open(source, "rb") as f:
        # mount id, parent's id, major:minor, root, mount point, options, [optional fields,]
        # "-", file system type, source, super options
        entries = [fields for fields in (line.split() for line in f) if b"-" in fields[6:]]
    # (point, id of a mount something else is mounted on there); a root that names itself as
    # its parent covers nothing.
    covered = {(fields[4], fields[1]) for fields in entries if fields[1] != fields[0]}
    return {
        unescape(fields[4]): Mount(fields[2].decode("ascii", "replace"), _fs_type(fields))
        for fields in entries
        if (fields[4], fields[0]) not in covered
    }


def _fs_type(fields: list[bytes]) -> str:
    return fields[fields.index(b"-", 6) + 1].decode("ascii", "replace")


def unescape(field: bytes) -> bytes:
    """A mountinfo field as named (`\\040` back to a space)."""
    return _ESCAPED.sub(lambda m: bytes([int(m[1], 8)]), field)


def mount_of(table: Mapping[bytes, T], path: str | os.PathLike[str]) -> T | None:
    """What `table` says of the longest mount point holding the absolute `path`, whole
    components only (/mnt/database is not in /mnt/data); None where no point holds it."""
    name = os.fsencode(path)
    while name not in table:
        parent = os.path.dirname(name)
        if parent == name:
            return None
        name = parent
    return table[name]
