"""The second front door: what a program that runs memo as a process needs besides the
engine (`memo_core`'s own door offers the engine's objects). The front ends (`memo`,
`memo-mcp`) raise the open-files limit before their first call, leave without the
interpreter's finalization once their engine is closed, and memo-mcp reads the mount table
to give each file system its own threads."""

from __future__ import annotations

from memo_core.files.fsafe import descriptor_limit, raise_descriptor_limit
from memo_core.files.mounts import MOUNTINFO, Mount, mount_of, read_mountinfo
from memo_core.shutdown import end_process

__all__ = [
    "MOUNTINFO",
    "Mount",
    "descriptor_limit",
    "mount_of",
    "end_process",
    "raise_descriptor_limit",
    "read_mountinfo",
]
