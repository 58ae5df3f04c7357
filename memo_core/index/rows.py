"""The rows the store reads and writes, and how a note's path is kept in one."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FileState:
    id: int
    mtime_ns: int
    size: int
    hash: str


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str
    line: int  # where the passage starts (a section's first: its heading's line)
    heading: str
    text: str
    text_line: int  # where its text begins (`Chunk.text_line`)


def stored(rel: str) -> str:
    """How a note's relative path is stored: as it is when it is valid UTF-8; otherwise "/"
    and the hex of its bytes (any name the OS allows; a relative path never starts with /)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "/" + os.fsencode(rel).hex()
    return rel


def from_stored(text: str) -> str:
    """The relative path `stored` made, as the OS gives it (undecodable bytes as surrogates)."""
    return os.fsdecode(bytes.fromhex(text[1:])) if text[:1] == "/" else text
