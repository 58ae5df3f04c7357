"""The process's one inotify instance (Linux), shared by the change feeds of every
collection, and the system calls under it. A user has 128 instances in all, and every
program wants some: memo takes one, however many folders it serves."""

from __future__ import annotations

import ctypes
import os
import select
import struct
import sys
import threading
import time
from functools import lru_cache
from typing import Protocol

from memo_core.files.mounts import Mount, mount_of, read_mountinfo
from memo_core.files.walker import Changes


class Listener(Protocol):
    """What the instance hands events to (a collection's `feed.ChangeFeed`): it takes each
    event for a folder it watches, and keeps what changed until it is collected."""

    pending: Changes
    new_folders: list[str]
    lost: bool

    def event(self, mask: int, name: str, folder: str) -> None: ...


IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK, IN_ISDIR = 0x1000000, 0x2000000, 0x4000000, 0x40000000
MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
) | (IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
# File systems whose changes all pass through this kernel (network shares do not).
LOCAL_FS = frozenset(
    "ext2 ext3 ext4 xfs btrfs tmpfs ramfs f2fs zfs jfs reiserfs bcachefs overlay nilfs2".split()
)


class Unavailable(Exception):
    """The feed cannot be exact (no inotify, a watch that could not be added)."""


# At most this many reads of the queue per refresh (64 KB each): a folder that changes
# faster than memo reads (a flipping symlink) ends in one walk, not in draining forever.
MAX_READS = 64
MOUNTS_FRESH_S = 1.0  # a mount table this old is read again


class Inotify:
    """The process's one inotify instance (a user has 128 in all, and every program wants
    some), shared by the feeds of every collection: a watch names its feeds and the folder
    it is for each, and the events read by whichever feed asks are handed to all of them."""

    def __init__(self) -> None:
        self._fd = -1
        self._lock = threading.Lock()  # the queue and the watches
        self._owners: dict[int, dict[Listener, str]] = {}  # wd -> feed -> its folder
        self._mounts: dict[bytes, Mount] = {}
        self._mounts_read = float("-inf")

    def supported(self, root: str) -> bool:
        """Whether the OS reports every change below `root` (Linux, a local file system).
        The mount table is read once for the feeds that start together (a search's first
        look at hundreds of collections), and again once MOUNTS_FRESH_S passed."""
        if not sys.platform.startswith("linux"):
            return False
        with self._lock:
            now = time.monotonic()
            if now - self._mounts_read > MOUNTS_FRESH_S:
                self._mounts, self._mounts_read = _mounts(), now
            mount = mount_of(self._mounts, root)
        return mount is not None and mount.fs_type in LOCAL_FS

    def watch(self, feed: Listener, path: str, rel: str) -> bool:
        """Watch the folder at `path` (`rel` in `feed`); False when it is gone already."""
        with self._lock:
            if self._fd < 0:
                self._fd = _inotify_init()
            wd = add_watch(self._fd, path)
            if wd >= 0:
                self._owners.setdefault(wd, {})[feed] = rel
            return wd >= 0

    def forget(self, feed: Listener) -> None:
        """Drop `feed`'s watches (those no other feed shares)."""
        with self._lock:
            for wd, feeds in list(self._owners.items()):
                if feeds.pop(feed, None) is not None and not feeds:
                    del self._owners[wd]
                    _rm_watch(self._fd, wd)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
            self._fd = -1
            self._lose_all()
            self._owners.clear()

    def wait(self, timeout: float) -> bool:
        """Whether events are queued, waiting at most `timeout` seconds for one."""
        fd = self._fd
        if fd < 0:
            time.sleep(timeout)
            return False
        try:
            return bool(select.select([fd], [], [], timeout)[0])
        except (OSError, ValueError):  # closed meanwhile
            return False

    def quiet(self, feed: Listener) -> bool:
        """Whether nothing reached `feed` since it was last collected: the queue is read
        first (and handed out), nothing is taken."""
        with self._lock:
            self._drain()
            return not feed.pending and not feed.new_folders and not feed.lost

    def collect(self, feed: Listener) -> tuple[Changes, list[str], bool]:
        """What the queue holds, handed to the feeds; then `feed`'s part, taken: what
        changed, the folders to start watching, and whether it lost track."""
        with self._lock:
            self._drain()
            found, feed.pending = feed.pending, Changes()
            folders, feed.new_folders = feed.new_folders, []
            lost, feed.lost = feed.lost, False
            return found, folders, lost

    def _drain(self) -> None:
        if self._fd >= 0:
            for _ in range(MAX_READS):
                try:
                    data = _read(self._fd)
                except Unavailable:
                    self._lose_all()
                    return
                if not data:
                    return
                self._hand_out(data)
            self._lose_all()  # more than memo reads at once: every feed walks instead

    def _lose_all(self) -> None:
        for feeds in self._owners.values():
            for feed in feeds:
                feed.lost = True

    def _hand_out(self, data: bytes) -> None:
        offset = 0
        while offset < len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, offset)
            raw = data[offset + _EVENT.size : offset + _EVENT.size + size].rstrip(b"\0")
            offset += _EVENT.size + size
            if mask & IN_Q_OVERFLOW:
                self._lose_all()
                continue
            feeds = self._owners.get(wd, {})
            if mask & IN_IGNORED:
                self._owners.pop(wd, None)
            for feed, rel in list(feeds.items()):
                feed.event(mask, os.fsdecode(raw), rel)


def _mounts() -> dict[bytes, Mount]:
    try:
        return read_mountinfo()
    except OSError:  # no /proc: no file system counts as local
        return {}


# -- the system calls -----------------------------------------------------------------------


@lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    """The C library (loaded once per process)."""
    return ctypes.CDLL(None, use_errno=True)


def _inotify_init() -> int:
    try:
        fd = _lib().inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError) as e:
        raise Unavailable(str(e)) from e
    if fd < 0:
        raise Unavailable(os.strerror(ctypes.get_errno()))
    return int(fd)


def add_watch(fd: int, path: str) -> int:
    wd = _lib().inotify_add_watch(fd, os.fsencode(path), MASK)
    if wd < 0:
        err = ctypes.get_errno()
        if err in (2, 20):  # ENOENT, ENOTDIR: it went away meanwhile
            return -1
        raise Unavailable(os.strerror(err))  # ENOSPC: the user's watch limit, and others
    return int(wd)


def _rm_watch(fd: int, wd: int) -> None:
    _lib().inotify_rm_watch(fd, wd)  # an error: the watch is gone already


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""
    except OSError as e:
        raise Unavailable(str(e)) from e
