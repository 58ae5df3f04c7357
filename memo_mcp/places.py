"""Where memo-mcp's engine calls run: threads of its own, a few places per folder and per
file system.

Every call that touches a folder (a tool, a resource, a completion, and the confinement of
its path before any of them) runs here, so a folder that hangs (a dead network drive) can
hold only its own few places, and a dead mount only its own few however many of its
folders are named: folders on other file systems, and the protocol, keep answering. A
call waits for a place on the event loop, holding no thread; once it has one it runs on a
daemon thread of its own, and keeps its place until that thread is done, even when the
client has cancelled the call meanwhile: a call stuck in the kernel cannot be
interrupted, so cancelling it must not let another thread start for the same folder (else
100 cancelled calls leave 100 threads). Threads are daemons so that one stuck in a dead
drive never keeps the process from exiting.

The file system a path lies on is found by its name alone (`Mounts`): anything that looks
at the path itself hangs on a dead mount.

`RecentAnswers` keeps answers a few seconds (completions ask once per key typed): one
computation per key at a time, the rest wait for it, bounded in time.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

from memo_core import confine
from memo_core.process import MOUNTINFO, Mount, mount_of, read_mountinfo

# Threads for engine calls: in all, per file system and per folder (a reindex, a search and
# a status of one folder at once). One file system takes at most half of them, so when it
# hangs (a dead mount, however many of its folders are named) the others still have 4;
# calls beyond wait in line, holding no thread.
WORKERS = 8
DEVICE_WORKERS = 4
FOLDER_WORKERS = 3

# The mount table (`memo_core.process.read_mountinfo`) takes no time worth a thread to read; it is
# read again at most every MOUNTS_TTL_S, so a mount made since counts, for that long, with
# the one it was made on.
MOUNTS_TTL_S = 5.0

T = TypeVar("T")


class SlotCall(Generic[T]):
    """One call: waiting for a place, running on its thread, or done (`value` or `error`)."""

    def __init__(self, key: Hashable, device: Hashable, fn: Callable[[], T], keep: bool) -> None:
        self.key = key
        self.device = device
        self.fn = fn
        self.keep = keep  # runs to the end even when nobody waits for it any more
        self.done = anyio.Event()
        self.ended_at = 0.0
        self.value: T | None = None
        self.error: BaseException | None = None
        self.started = False
        self.waiters = 0
        # The loop to report back to, and the caller's context (as anyio's threads have).
        self.token = anyio.lowlevel.current_token()
        self.context = contextvars.copy_context()

    def result(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]


class FolderSlots:
    """At most `size` calls run at once, at most `per_folder` of them with the same key and
    `per_device` on the same file system (the one `mounts` finds for the key, when a path)."""

    def __init__(
        self,
        size: int = WORKERS,
        per_folder: int = FOLDER_WORKERS,
        per_device: int = DEVICE_WORKERS,
        mounts: Mounts | None = None,
    ) -> None:
        self.size = size
        self.per_folder = per_folder
        self.per_device = per_device
        self.mounts = mounts or Mounts()
        self._running: dict[Hashable, int] = {}  # key → its calls on threads now
        self._on_device: dict[Hashable, int] = {}  # device → its calls on threads now
        self._busy = 0
        self._waiting: deque[SlotCall[Any]] = deque()

    def submit(self, key: Hashable, fn: Callable[[], T], keep: bool = False) -> SlotCall[T]:
        """`fn()` queued behind the calls with the same key; starts when there is room."""
        # A key that is no path (the walk of every root) is a file system of its own.
        device = self.mounts.device(key) if isinstance(key, Path) else key
        job = SlotCall(key, device, fn, keep)
        self._waiting.append(job)
        self._dispatch()
        return job

    async def wait(self, job: SlotCall[T]) -> T:
        """The job's result. Cancelled, the caller leaves at once; a job nobody waits for
        that has not started leaves the line, one that has keeps its place until it ends."""
        job.waiters += 1
        try:
            await job.done.wait()
        finally:
            job.waiters -= 1
            if not job.started and not job.waiters and not job.keep:
                self._waiting.remove(job)
        return job.result()

    async def run(self, key: Hashable, fn: Callable[[], T]) -> T:
        return await self.wait(self.submit(key, fn))

    async def confined(self, path: str, roots: Sequence[Path], fn: Callable[[Path], T]) -> T:
        """`fn(real path)` once `path` is confined to `roots` (MemoError if it may not be
        used). Resolving the path can hang on a dead drive too, so it takes a place as
        well: the place of the path as written, since the real one is not known yet (nor
        its file system: a symlink to another one counts where the link is)."""
        real = await self.run(as_written(path), lambda: confine(path, roots))
        return await self.run(real, lambda: fn(real))

    def _dispatch(self) -> None:
        """Start the oldest waiting calls that have room, as long as threads are free."""
        i = 0
        while i < len(self._waiting) and self._busy < self.size:
            job = self._waiting[i]
            if (
                self._running.get(job.key, 0) >= self.per_folder
                or self._on_device.get(job.device, 0) >= self.per_device
            ):
                i += 1
                continue
            del self._waiting[i]
            self._busy += 1
            self._running[job.key] = self._running.get(job.key, 0) + 1
            self._on_device[job.device] = self._on_device.get(job.device, 0) + 1
            job.started = True
            try:
                threading.Thread(
                    target=self._work, args=(job,), name="memo-mcp call", daemon=True
                ).start()
            except RuntimeError as e:  # no thread to be had: this call fails, not others
                job.error = e
                self._release(job)

    def _work(self, job: SlotCall[Any]) -> None:
        try:
            job.value = job.context.run(job.fn)
        except BaseException as e:  # the caller raises it: a MemoError, or a bug
            job.error = e
        try:
            anyio.from_thread.run_sync(self._finished, job, token=job.token)
        except anyio.RunFinishedError:
            pass  # the server has stopped: nobody waits for this call any more

    def _finished(self, job: SlotCall[Any]) -> None:
        self._release(job)
        self._dispatch()

    def _release(self, job: SlotCall[Any]) -> None:
        self._busy -= 1
        for counts, key in ((self._running, job.key), (self._on_device, job.device)):
            left = counts.pop(key) - 1
            if left:
                counts[key] = left
        job.ended_at = time.monotonic()
        job.done.set()


def as_written(path: str) -> Path:
    """A path's place before it is resolved: absolute, `~` and `..` taken by name."""
    return Path(os.path.normpath(os.path.abspath(os.path.expanduser(path))))


class Mounts:
    """The file system a path lies on, found by its name alone: the device of the longest
    mount point that holds it, whole components only (/mnt/database is not in /mnt/data).
    The path is never looked at (that hangs on a dead mount), so a symlink counts where it
    is, not where it leads."""

    def __init__(self, source: Path = MOUNTINFO, ttl_s: float = MOUNTS_TTL_S) -> None:
        self.source = source
        self.ttl_s = ttl_s
        self._table: dict[bytes, Mount] = {}
        self._read_at: float | None = None

    def device(self, path: Path) -> Hashable:
        """The device `path` lies on; the path itself where no mount table says. macOS and
        the BSDs have no /proc: there each folder counts as a file system of its own, so
        only the per-folder bound holds (their getfsstat with MNT_NOWAIT would tell without
        asking the mounts, but only through ctypes, which nothing here could test)."""
        mount = mount_of(self._current(), path)
        return path if mount is None else mount.device

    def _current(self) -> dict[bytes, Mount]:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.ttl_s:
            self._read_at = now
            try:
                self._table = read_mountinfo(self.source)
            except OSError:
                pass  # none (no /proc), or none for now (out of descriptors): keep the last
        return self._table


# The most keys a `RecentAnswers` computes at once (each waits in its place, holding no thread,
# but a client naming ever new folders on a dead drive must not grow them without end).
MAX_PENDING = 256


class RecentAnswers(Generic[T]):
    """Answers per key, kept `ttl_s` seconds (at most `size` keys), each computed in `places`
    by one call at a time that runs to its end: a caller that stops waiting (`wait_s`)
    gets the last answer known, or None, and the next one finds the new answer ready."""

    def __init__(self, places: FolderSlots, ttl_s: float, size: int = 64) -> None:
        self.places = places
        self.ttl_s = ttl_s
        self.size = size
        self._known: OrderedDict[Hashable, tuple[float, T]] = OrderedDict()
        self._jobs: dict[Hashable, SlotCall[T]] = {}

    async def get(
        self, key: Hashable, place: Hashable, fn: Callable[[], T], wait_s: float
    ) -> T | None:
        job = self._jobs.get(key)
        if job is not None and job.done.is_set():
            self._keep(key, job)
            job = None
        known = self._known.get(key)
        if known is not None and time.monotonic() - known[0] <= self.ttl_s:
            return known[1]
        if job is None:
            if len(self._jobs) >= MAX_PENDING:  # so many in the works: no more for now
                return None if known is None else known[1]
            job = self._jobs[key] = self.places.submit(place, fn, keep=True)
        with anyio.move_on_after(wait_s):
            await self.places.wait(job)
            self._keep(key, job)
            return job.result()
        return None if known is None else known[1]

    def _keep(self, key: Hashable, job: SlotCall[T]) -> None:
        if self._jobs.get(key) is job:
            del self._jobs[key]
        if job.error is None:
            self._known.pop(key, None)
            self._known[key] = (job.ended_at, job.result())
            while len(self._known) > self.size:
                self._known.popitem(last=False)
