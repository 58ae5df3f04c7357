"""What changed under a collection, learnt from the OS (Linux inotify), so a refresh in a
long-lived process looks at what changed instead of walking the whole tree.

Exactness: the kernel queues an inotify event inside the system call that makes the change,
so once that call has returned its event is in the queue. Draining the queue at the start of
a refresh therefore sees every change that completed before it (no barrier needed). A new
folder gets its watch before it is listed, and is walked whole, so notes written into it
before the watch existed are found too. Whenever the feed cannot be exact — the queue
overflowed, a watched folder moved, a watch could not be added, the file system is not a
local one (a network share changes without local events), no inotify — `changes()` says
so (None) and the caller walks everything.
"""

from __future__ import annotations

import ctypes
import logging
import os
import struct
import sys
import threading
import time
from functools import lru_cache
from pathlib import Path

from .formatting import shown
from .fsafe import Folder, listing
from .ignore import IGNORE_FILES, Rules, ignored, rules_above, with_folder
from .walker import TOOL_DIRS, Changes, is_note_name, skipped_name

log = logging.getLogger("memo")

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


class _Unavailable(Exception):
    """The feed cannot be exact (no inotify, a watch that could not be added)."""


# A collection learning from the OS is still walked whole this often: what no event names
# (a note hard-linked from elsewhere after the first walk, then edited through that other
# name) is found within this many seconds.
WALK_EVERY_S = 300.0
# At most this many reads of the queue per refresh (64 KB each): a folder that changes
# faster than memo reads (a flipping symlink) ends in one walk, not in draining forever.
MAX_READS = 64


class Inotify:
    """The process's one inotify instance (a user has 128 in all, and every program wants
    some), shared by the feeds of every collection: a watch names its feeds and the folder
    it is for each, and the events read by whichever feed asks are handed to all of them."""

    def __init__(self) -> None:
        self._fd = -1
        self._lock = threading.Lock()  # the queue and the watches
        self._owners: dict[int, dict[ChangeFeed, str]] = {}  # wd -> feed -> its folder

    def watch(self, feed: ChangeFeed, path: str, rel: str) -> bool:
        """Watch the folder at `path` (`rel` in `feed`); False when it is gone already."""
        with self._lock:
            if self._fd < 0:
                self._fd = _inotify_init()
            wd = _add_watch(self._fd, path)
            if wd >= 0:
                self._owners.setdefault(wd, {})[feed] = rel
            return wd >= 0

    def forget(self, feed: ChangeFeed) -> None:
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

    def collect(self, feed: ChangeFeed) -> tuple[Changes, list[str], bool]:
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
                except _Unavailable:
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


class ChangeFeed:
    """inotify watches on every folder of a collection the walker would enter (in the
    process's one `Inotify`), and what they reported since it was last asked."""

    def __init__(self, root: Path, inotify: Inotify) -> None:
        self.root = str(root)
        self._inotify = inotify
        # Since it was last asked (kept under the Inotify's lock): what changed, folders to
        # start watching (new ones, and those whose ignore rules changed), whether it lost
        # track (then everything is walked).
        self.pending = Changes()
        self.new_folders: list[str] = []
        self.lost = False

    def start(self) -> bool:
        """Watch the whole tree; whether the feed works here (else: walk every time)."""
        if not _supported(self.root):
            return False
        try:
            self._watch_tree("")
        except _Unavailable as e:
            # Said once per collection: its searches stay exact, each walking the folder.
            log.warning(
                "memo: no change reports for %s (%s): it is walked at every search",
                shown(self.root),
                e,
            )
            self.close()
            return False
        return True

    def close(self) -> None:
        self._inotify.forget(self)

    def changes(self) -> Changes | None:
        """The folders where something changed since the last call; None: unknown (walk)."""
        found, folders, lost = self._inotify.collect(self)
        try:
            for rel in folders:
                self._watch_tree(rel)
        except _Unavailable:
            lost = True
        if lost:  # resync the watches, then one full walk
            self._inotify.forget(self)
            try:
                self._watch_tree("")
            except _Unavailable:
                self.lost = True  # still: walk next time too
            return None
        return found

    # -- events ---------------------------------------------------------------------------

    def event(self, mask: int, name: str, folder: str) -> None:
        """Note what one event in `folder` (of this feed) touched."""
        found = self.pending
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            found.trees.add(folder)
            if folder == "":
                self.lost = True  # the root itself went away
            return
        if not name or skipped_name(name) and name not in IGNORE_FILES:
            return
        if mask & IN_ISDIR:
            sub = f"{folder}{name}/"
            if mask & IN_MOVED_FROM:
                self.lost = True  # watches below it now name other paths
            elif mask & (IN_CREATE | IN_MOVED_TO):
                self.new_folders.append(sub)
            found.trees.add(sub)
        elif name in IGNORE_FILES:
            found.trees.add(folder)  # its rules changed: all below may come or go,
            self.new_folders.append(folder)  # and folders it no longer ignores are watched
        elif is_note_name(name):
            found.dirs.add(folder)

    def _watch_tree(self, top: str) -> None:
        """Watch `top` and every folder below it the walker would enter; each gets its watch
        before it is listed, so nothing created meanwhile goes unseen. Folders are listed
        through the root's descriptor (see `fsafe`), as the walker lists them."""
        try:
            root = Folder(self.root)
        except OSError as e:
            raise _Unavailable(str(e)) from e
        with root:
            stack: list[tuple[str, Rules]] = [(top, rules_above(root, top) if top else ())]
            while stack:
                rel, rules = stack.pop()
                if not self._inotify.watch(self, os.path.join(self.root, rel), rel):
                    continue  # gone already
                try:
                    fd = root.open_dir(rel)
                except OSError:
                    continue
                try:
                    entries = listing(fd)
                    hidden = [n.name for n in entries if n.name[0] == "."]
                    rules = with_folder(rules, fd, rel, hidden)
                except OSError:
                    continue
                finally:
                    os.close(fd)
                for entry in entries:
                    if skipped_name(entry.name) or entry.name in TOOL_DIRS:
                        continue
                    try:
                        if not entry.is_dir(follow_symlinks=False):
                            continue
                    except OSError:
                        continue
                    sub = f"{rel}{entry.name}/"
                    if not (rules and ignored(rules, sub[:-1], True)):
                        stack.append((sub, rules))


class Freshness:
    """How a collection learns what changed: from a ChangeFeed while `notify` holds and the
    feed works, else by walking. The feed starts before the first walk, so nothing that
    happens during that walk is lost."""

    def __init__(self, root: Path, inotify: Inotify | None) -> None:
        self.root = root
        self.notify = inotify is not None
        self._inotify = inotify
        self._feed: ChangeFeed | None = None
        self._walked = 0.0  # when the last walk of everything was asked (monotonic)

    def changes(self) -> Changes | None:
        """What changed since the last call; None: walk everything."""
        if not self.notify or self._inotify is None:
            return None
        if self._feed is None:
            feed = ChangeFeed(self.root, self._inotify)
            if not feed.start():
                self.notify = False  # not here: walk every time
                return None
            self._feed = feed
            return self._walk()
        found = self._feed.changes()
        if found is None or time.monotonic() - self._walked > WALK_EVERY_S:
            return self._walk()
        return found

    def _walk(self) -> Changes | None:
        """None: walk everything (and remember when)."""
        self._walked = time.monotonic()
        return None

    def give_up(self) -> None:
        """Walk from now on (e.g. symlinks were followed: a change shows under one name)."""
        self.notify = False
        self.close()

    def close(self) -> None:
        if self._feed is not None:
            self._feed.close()
            self._feed = None


# -- the system calls -----------------------------------------------------------------------


def _supported(root: str) -> bool:
    return sys.platform.startswith("linux") and _fs_type(root) in LOCAL_FS


def _fs_type(path: str) -> str:
    """The type of the file system holding `path` (the longest mount point above it)."""
    best, kind = "", ""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                point = parts[1].replace("\\040", " ")
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, parts[2]
    except OSError:
        return ""
    return kind


@lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    """The C library (loaded once per process)."""
    return ctypes.CDLL(None, use_errno=True)


def _inotify_init() -> int:
    try:
        fd = _lib().inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, AttributeError) as e:
        raise _Unavailable(str(e)) from e
    if fd < 0:
        raise _Unavailable(os.strerror(ctypes.get_errno()))
    return int(fd)


def _add_watch(fd: int, path: str) -> int:
    wd = _lib().inotify_add_watch(fd, os.fsencode(path), MASK)
    if wd < 0:
        err = ctypes.get_errno()
        if err in (2, 20):  # ENOENT, ENOTDIR: it went away meanwhile
            return -1
        raise _Unavailable(os.strerror(err))  # ENOSPC: the user's watch limit, and others
    return int(wd)


def _rm_watch(fd: int, wd: int) -> None:
    _lib().inotify_rm_watch(fd, wd)  # an error: the watch is gone already


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except BlockingIOError:
        return b""
    except OSError as e:
        raise _Unavailable(str(e)) from e
