"""Files memo reads that it did not make: a model folder's (its memo-model.json, tokenizer
and ONNX graph), a wheel given to an install, and the facts memo keeps in its cache folder
(whoever can write there can put anything in their place).

Each is opened once without blocking (a FIFO opens at once instead of waiting for a writer)
and used only if that descriptor is a regular file: a FIFO or a device, or a symlink to
one, is refused, never read. It is read no further than a bound that fits the real ones,
and JSON parsed from it only so deep. What is refused is a `Refused` naming why (a
catalogue Message), which the caller says as one error of its own.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from memo_core.files.fsafe import read_fd
from memo_core.messages import Message

# The most memo reads of each, far above the real ones: memo-model.json 1.2 KB; tokenizers
# 4.6 MB (memo's, e5-small) and 17 MB (XLM-R's tokenizer.json); graphs 72 and 82 MB
# (onnxruntime reads no single file over 2 GB); wheels hold a graph or a 72 MB 4-bit file.
CONFIG_LIMIT = 1 << 20
TOKENIZER_LIMIT = 64 << 20
ONNX_LIMIT = 4 << 30
WHEEL_LIMIT = 1 << 30
# Deeper than any file memo reads nests (memo-model.json and the facts: 3 levels), and
# shallow enough that nothing memo does with what it parsed (json.dumps for a digest)
# meets Python's recursion limit.
MAX_JSON_DEPTH = 32
# Without blocking, and not inherited; O_BINARY: no newline translation on Windows, which
# has no O_NONBLOCK (a model folder is read there by the engine-free tests only).
_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_READ |= getattr(os, "O_BINARY", 0)


class Refused(ValueError):
    """A file memo does not read as it stands; `what` it is, in the catalogue's words."""

    def __init__(self, what: Message) -> None:
        super().__init__(what)
        self.what = what

    def about(self, name: object) -> Message:
        """What is wrong, said of the file called `name`."""
        return Message("file.is", path=name, what=self.what)


def open_regular(path: Path, limit: int) -> int:
    """A descriptor of the regular file `path` leads to (symlinks followed), at most `limit`
    bytes long; OSError when it cannot be opened, `Refused` when it is no regular file or
    is longer. Whatever is checked here is what the descriptor reads."""
    try:
        fd = os.open(path, _READ)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a socket, or a device without a driver
            raise Refused(Message("file.not_regular")) from e
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(Message("file.not_regular"))
        if st.st_size > limit:
            raise Refused(Message("foreign.too_big", limit=limit))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_all(fd: int, limit: int) -> bytes:
    """The bytes of the regular file `fd` from its start; `Refused` past `limit` (a file
    that grew since it was opened is not read on)."""
    os.lseek(fd, 0, os.SEEK_SET)
    data, _size = read_fd(fd, limit + 1, "")
    if len(data) > limit:
        raise Refused(Message("foreign.too_big", limit=limit))
    return data


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file `path` leads to, at most `limit` of them (see
    `open_regular`)."""
    fd = open_regular(path, limit)
    try:
        return read_all(fd, limit)
    finally:
        os.close(fd)


def parse_json(data: bytes) -> Any:
    """JSON in UTF-8, nested at most MAX_JSON_DEPTH deep; ValueError (`Refused` when it is
    nested deeper) says what is wrong."""
    try:
        value = json.loads(data.decode("utf-8"))
    except RecursionError:  # past the parser's own bound (Python's recursion limit)
        raise Refused(Message("foreign.too_deep", depth=MAX_JSON_DEPTH)) from None
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth > MAX_JSON_DEPTH:
                raise Refused(Message("foreign.too_deep", depth=MAX_JSON_DEPTH))
            todo.extend((x, depth + 1) for x in item)
    return value


def read_json(path: Path, limit: int) -> Any:
    """The JSON in the regular file `path` leads to, at most `limit` bytes of it."""
    return parse_json(read_regular(path, limit))


def by_descriptor(fd: int, path: Path) -> str:
    """A name for a library that opens files by name (onnxruntime) under which it opens the
    file `fd` holds, whatever lies at `path` by now: on Linux /proc's link to it (a new
    open of that very file: handing over its bytes instead held 104 MB more at the peak of
    loading e5-small's 82 MB graph); elsewhere `path` itself."""
    link = f"/proc/self/fd/{fd}"
    return link if os.path.exists(link) else str(path)
