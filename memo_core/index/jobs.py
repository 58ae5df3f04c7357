"""A refresh running on a thread of its own, so a search can wait for it a bounded time and
then answer from what is committed while the indexing goes on (in a long-lived process)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from memo_core.errors import MemoError
from memo_core.index.indexer import Progress, ProgressFn, RefreshStats, WordsGate
from memo_core.messages import Message
from memo_core.model.embedder import Embedder
from memo_core.text.escapes import shown
from memo_core.values import Notice, NoticeKind

POLL_S = 0.05  # how often a waiter looks whether the words it waits for are in
# Once the words an answer needs are in, how long a search still waits for the vectors
# being made before it answers by what is in (a step about to land gets in; a long pass is
# not waited for: every search would otherwise wait its whole budget until it ends).
VECTORS_GRACE_S = 0.5

log = logging.getLogger("memo")


class FailureLog:
    """Background refresh failures, said in the log (stderr; stdout may be a protocol) for
    an engine's collections together: an expected failure (a MemoError) once a minute per
    kind, however many collections meet it (a search over 400 folders out of descriptors is
    one line, not 400); an unexpected one, a bug, each time with its traceback."""

    def __init__(self, every_s: float = 60.0) -> None:
        self.every_s = every_s
        self._said: dict[str, float] = {}
        self._lock = threading.Lock()

    def __call__(self, where: str, e: BaseException) -> None:
        if not isinstance(e, MemoError):
            log.error("memo: refreshing %s failed: %r", shown(where), e, exc_info=e)
            return
        kind = getattr(e.message, "key", type(e).__name__)
        now = time.monotonic()
        with self._lock:
            if now - self._said.get(kind, -self.every_s) < self.every_s:
                return
            self._said[kind] = now
        log.error("memo: %s", Message("log.refresh_failed", path=shown(where), reason=e))


class RefreshJob:
    """`run(report)` on a daemon thread; callers wait for it, or read how far it got."""

    def __init__(
        self,
        run: Callable[[ProgressFn], RefreshStats],
        embedder: Embedder | None,
        collection: str,
        listener: ProgressFn | None = None,
        gate: WordsGate | None = None,
        failures: FailureLog | None = None,
    ) -> None:
        self.embedder = embedder
        self.failures = failures or FailureLog()
        self.gate = gate or WordsGate()  # callers waiting for words ask through it
        self.collection = collection
        self.started = time.monotonic()
        self.done = threading.Event()
        self.stats: RefreshStats | None = None
        self.error: BaseException | None = None
        # Whether `error` was told to someone: raised to a waiter, or said in an answer
        # (`Collection.unreported_failure`); a failure nobody waited for must not vanish.
        self.told = False
        self.progress: Progress | None = None
        self._listeners: list[ProgressFn] = [listener] if listener is not None else []
        self._lock = threading.Lock()
        self.thread = threading.Thread(
            target=self._main, args=(run,), daemon=True, name=f"memo refresh {collection}"
        )
        self.thread.start()

    def _main(self, run: Callable[[ProgressFn], RefreshStats]) -> None:
        try:
            self.stats = run(self._report)
        except BaseException as e:  # handed to whoever waits: see `result`
            self.error = e
            # Said here, whoever waits: a failure past every waiter's budget is otherwise
            # seen only by the next answer.
            self.failures(self.collection, e)
        finally:
            self.done.set()

    def _report(self, p: Progress) -> None:
        self.progress = p
        with self._lock:
            listeners = list(self._listeners)
        for fn in listeners:
            fn(p)

    def wait(
        self,
        deadline: float,
        progress: ProgressFn | None,
        words_since: float | None = None,
        *,
        behind_since: float | None = None,
        vectors_until: float | None = None,
    ) -> bool:
        """Wait until the job is done (or, with `words_since`, has the words of every
        change made before then; or all an answer needs is in, `behind`, past
        `vectors_until` (monotonic) even while vectors are still being made) or `deadline`
        (monotonic) passes, passing its progress to `progress` meanwhile; whether it got
        there."""
        if progress is not None:
            with self._lock:
                new = progress not in self._listeners
                if new:
                    self._listeners.append(progress)
                latest = self.progress
            if new and latest is not None:
                progress(latest)  # what was reported before this caller came
        try:
            while (left := deadline - time.monotonic()) > 0:
                if self.done.wait(min(left, POLL_S)) or self._got(
                    words_since, behind_since, vectors_until
                ):
                    return True
            return self.done.is_set() or self._got(words_since, behind_since, vectors_until)
        finally:
            if progress is not None:
                with self._lock:
                    self._listeners.remove(progress)

    def result(self) -> RefreshStats:
        """What the finished job did; its error, if it failed."""
        if self.error is not None:
            self.told = True
            raise self.error
        assert self.stats is not None
        return self.stats

    def _got(
        self, words_since: float | None, behind_since: float | None, vectors_until: float | None
    ) -> bool:
        if words_since is not None and self.gate.fresh(words_since):
            return True
        vectors = vectors_until is not None and time.monotonic() >= vectors_until
        return self.behind(behind_since, vectors=vectors)

    def behind(self, since: float | None = None, *, vectors: bool = False) -> bool:
        """Whether all an answer needs is in while the job goes on: only its sentences'
        vectors (the second look's, which sees those done so far) are still coming, or
        (`vectors`) passages' vectors too, which an answer then goes without where they
        are missing; and (`since`) the words of every change made before then are in.
        A rebuild (`Progress.aside`) is behind whatever it does and since when: the old
        index, which answers until the new one is in, is all there is meanwhile (the
        changes it misses, the new one takes in before it is done), and no step of the new
        one's is worth a wait (a small folder's rebuild is waited for whole: `SmallWork`)."""
        p = self.progress
        if p is None:
            return False
        if p.aside:
            return True
        phases = ("sentences", "embed") if vectors else ("sentences",)
        return p.phase in phases and (since is None or self.gate.fresh(since))

    def activity(self) -> Notice:
        """How far the job got, as a notice (`activity_of`)."""
        return activity_of(self.progress, self.collection)


def activity_of(p: Progress | None, collection: str) -> Notice:
    """How far a refresh of `collection` got by its last `p`, as a notice: files indexed,
    chunks given vectors, or chunks whose sentences got theirs; or that it rebuilds the
    index (the old one answers), its pass (`detail`) counted as those are."""
    if p is None:
        return Notice(NoticeKind.INDEXING, collection)
    files = p.phase == "index"
    done, total = (p.files_done, p.files_total) if files else (p.chunks_done, p.chunks_total or 0)
    if p.aside:  # none of it answers yet
        return Notice(NoticeKind.REBUILDING, collection, p.phase, done=done, total=total)
    if files:
        return Notice(NoticeKind.INDEXING, collection, done=done, total=total)
    kind = NoticeKind.EMBEDDING if p.phase == "embed" else NoticeKind.SENTENCES
    return Notice(kind, collection, done=done, total=total)


@dataclass(frozen=True)
class SmallWork:
    """A refresh a search waits for whole, whatever its budget: an answer from a small
    folder's words alone would miss every question asked in other words or in another
    language, while its vectors take seconds. Measured (BENCHMARKS.md, "First answers on a
    busy machine"): e5-small embeds 800 passages (about 200 notes) in about 11 s on 2 quiet
    cores, 22 s beside two busy processes; MCP clients give a call 60 s by default.

    `files`: notes still to index whose words are waited for; `chunks`: passages still
    without vectors that are waited for; `within_s`: never longer than this from the call;
    `start_s`: a refresh that has said nothing yet (opening its index, walking the folder)
    is waited for this long from the call.
    """

    files: int = 400
    chunks: int = 800
    within_s: float = 45.0
    start_s: float = 2.0

    def covers(self, job: RefreshJob, called: float) -> bool:
        """Whether what `job` has left is small enough to wait for."""
        p = job.progress
        if p is None:
            return time.monotonic() < called + self.start_s
        if p.phase == "index":
            return p.files_total <= self.files
        if p.phase == "sentences":
            return False  # an answer needs none of them
        return (p.chunks_total or 0) - p.chunks_before <= self.chunks  # this pass's work


SMALL_WORK = SmallWork()
NO_SMALL_WORK = SmallWork(files=-1, chunks=-1, within_s=0.0, start_s=0.0)


def wait_within(
    start: Callable[[], RefreshJob],
    progress: ProgressFn | None,
    budget: float,
    called: float,
    *,
    model: bool,
    small: SmallWork = NO_SMALL_WORK,
    started: RefreshJob | None = None,
) -> RefreshStats:
    """Start a refresh (or join the one running: `start`) and wait for it until `budget`
    seconds after `called` (the caller's start; earlier when a refresh was already running:
    its own start counts): past that, what is committed answers, and the notice says how far
    indexing got. `started`: the refresh this caller started already (maybe done by now:
    it is the caller's, and not started again).

    A change completed before the call is in the answer when it is in time: a refresh
    already running when the call came in may have walked before the change, so it is
    followed by another; so is one that ran without the model this caller has (`model`).
    A refresh embedding for long indexes the words of changes made before the call
    between two batches of vectors, and the answer comes then. Once the words are in, the
    vectors are waited for `VECTORS_GRACE_S` from the call, not the budget. Past that, a
    refresh whose work left is `small` is waited for on, up to `small.within_s` from the
    call."""
    deadline: float | None = None
    while True:
        job, started = started or start(), None
        deadline = deadline or min(called, job.started) + budget
        # A refresh that began before the call may have walked before a change made just
        # before it: if it is making vectors for long, it takes in the newer words first,
        # and the answer comes once they are in.
        # It is waited for whole until the deadline, as any; past that, until those words
        # are in, up to the budget from the call, however long it has been running.
        since = called if job.started < called else None
        if since is not None:
            job.gate.ask(since)
        # Once the words are in, the vectors still being made are waited for only briefly:
        # the answer says how many there are so far (a small folder's are waited for
        # whole, below).
        grace = called + VECTORS_GRACE_S
        if (
            not job.wait(deadline, progress, behind_since=since, vectors_until=grace)
            and since is not None
        ):
            job.wait(called + budget, progress, since)
        end = called + small.within_s
        while not job.done.is_set() and time.monotonic() < end and small.covers(job, called):
            job.wait(min(end, time.monotonic() + 10 * POLL_S), progress)
        if not job.done.is_set():
            return RefreshStats(notices=[job.activity()])
        stats = job.result()
        if stats.stopped:  # asked to stop (the engine closing): the answer says how far it got
            stats.notices.append(job.activity())
            return stats
        if job.started >= called and (job.embedder is not None or not model):
            return stats
