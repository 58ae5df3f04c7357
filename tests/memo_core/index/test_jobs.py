"""memo_core.index.jobs: a refresh on a thread of its own, waited for a bounded time; its
failures said in the log without flooding it; how far it got, as a notice."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from conftest import HANG_S

from memo_core.errors import IndexBusyError, ResourceLimitError
from memo_core.index.indexer import Progress, ProgressFn, RefreshStats, WordsGate
from memo_core.index.jobs import (
    NO_SMALL_WORK,
    FailureLog,
    RefreshJob,
    SmallWork,
    wait_within,
)
from memo_core.values import NoticeKind


def _progress(phase: str, files: tuple[int, int] = (0, 0), chunks=(0, None), before=0):
    return Progress(phase, *files, *chunks, started=time.monotonic(), chunks_before=before)


class Gated:
    """A refresh that reports `steps`, then waits for `gate` before it ends (`stats`, or
    `error` raised). Opened at the end of every test that makes one (no thread left)."""

    def __init__(self, steps=(), stats: RefreshStats | None = None, error=None) -> None:
        self.steps = list(steps)
        self.stats = stats or RefreshStats(added=1)
        self.error = error
        self.gate = threading.Event()
        self.reported = threading.Event()
        self.calls = 0

    def __call__(self, report: ProgressFn) -> RefreshStats:
        self.calls += 1
        for p in self.steps:
            report(p)
        self.reported.set()
        assert self.gate.wait(HANG_S)
        if self.error is not None:
            raise self.error
        return self.stats


@pytest.fixture
def gates() -> Iterator[list[Gated]]:
    made: list[Gated] = []
    yield made
    for g in made:
        g.gate.set()


def _job(
    gates: list[Gated], *, listener=None, failures=None, embedder=None, **kw
) -> tuple[RefreshJob, Gated]:
    run = Gated(**kw)
    gates.append(run)
    return RefreshJob(run, embedder, "/notes", listener=listener, failures=failures), run


class Said(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def said() -> Iterator[Said]:
    handler = Said()
    logger = logging.getLogger("memo")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


# -- the job -------------------------------------------------------------------------------


def test_a_finished_job_gives_its_stats(gates: list[Gated]) -> None:
    job, run = _job(gates)
    run.gate.set()
    assert job.wait(time.monotonic() + HANG_S, None)
    assert job.done.is_set()
    assert job.result() is run.stats
    job.thread.join(HANG_S)
    assert not job.thread.is_alive()
    assert job.thread.daemon


def test_a_job_not_done_by_the_deadline_is_not_waited_for(gates: list[Gated]) -> None:
    job, run = _job(gates)
    assert run.reported.wait(HANG_S)
    assert not job.wait(time.monotonic() - 1, None)  # the deadline passed already
    assert not job.done.is_set()
    run.gate.set()
    assert job.done.wait(HANG_S)


def test_a_failed_job_raises_its_error_to_whoever_asks_and_logs_it(
    gates: list[Gated], said: Said
) -> None:
    error = IndexBusyError("index.busy", path="/notes/.memo/index.db")
    job, run = _job(gates, error=error)
    run.gate.set()
    assert job.done.wait(HANG_S)
    assert not job.told
    with pytest.raises(IndexBusyError) as caught:
        job.result()
    assert caught.value is error and job.told
    assert len(said.records) == 1 and "/notes" in said.records[0].getMessage()


def test_progress_reaches_the_listener_and_a_waiter_gets_the_latest_at_once(
    gates: list[Gated],
) -> None:
    heard: list[Progress] = []
    steps = [_progress("index", (1, 3)), _progress("index", (3, 3))]
    job, run = _job(gates, listener=heard.append, steps=steps)
    assert run.reported.wait(HANG_S)
    assert heard == steps and job.progress is steps[-1]
    waiter: list[Progress] = []
    assert not job.wait(time.monotonic() - 1, waiter.append)
    assert waiter == [steps[-1]]  # what was said before it came
    run.gate.set()
    assert job.wait(time.monotonic() + HANG_S, waiter.append)
    assert waiter == [steps[-1], steps[-1]]  # not kept as a listener between waits


def test_a_waiter_for_words_is_done_once_they_are_in(gates: list[Gated]) -> None:
    gate = WordsGate()
    run = Gated()
    gates.append(run)
    job = RefreshJob(run, None, "/notes", gate=gate)
    since = time.monotonic()
    assert not job.wait(time.monotonic() - 1, None, since)
    gate.begin()
    gate.finish()
    assert job.wait(time.monotonic() + HANG_S, None, since)  # words in: not done, got there
    assert not job.done.is_set()


@pytest.mark.parametrize(
    ("phase", "vectors", "behind"),
    [
        (None, False, False),
        ("index", True, False),
        ("embed", False, False),
        ("embed", True, True),
        ("sentences", False, True),
    ],
)
def test_behind_is_whether_only_vectors_are_left(
    gates: list[Gated], phase: str | None, vectors: bool, behind: bool
) -> None:
    job, run = _job(gates, steps=[_progress(phase)] if phase else [])
    assert run.reported.wait(HANG_S)
    assert job.behind(vectors=vectors) is behind


def test_behind_since_needs_the_words_of_changes_made_before(gates: list[Gated]) -> None:
    job, run = _job(gates, steps=[_progress("sentences")])
    assert run.reported.wait(HANG_S)
    since = time.monotonic()
    assert not job.behind(since)  # no words pass began after `since`
    job.gate.begin()
    job.gate.finish()
    assert job.behind(since)


@pytest.mark.parametrize(
    ("step", "kind", "done", "total"),
    [
        (None, NoticeKind.INDEXING, 0, 0),
        (_progress("index", (5, 9)), NoticeKind.INDEXING, 5, 9),
        (_progress("embed", (9, 9), (40, 100)), NoticeKind.EMBEDDING, 40, 100),
        (_progress("embed", (9, 9), (40, None)), NoticeKind.EMBEDDING, 40, 0),
        (_progress("sentences", (9, 9), (7, 70)), NoticeKind.SENTENCES, 7, 70),
    ],
)
def test_activity_says_how_far_it_got(
    gates: list[Gated], step: Progress | None, kind: NoticeKind, done: int, total: int
) -> None:
    job, run = _job(gates, steps=[step] if step else [])
    assert run.reported.wait(HANG_S)
    notice = job.activity()
    assert (notice.kind, notice.collection, notice.done, notice.total) == (
        kind,
        "/notes",
        done,
        total,
    )


# -- the failure log -----------------------------------------------------------------------


def test_an_expected_failure_is_said_once_a_minute_per_kind(said: Said) -> None:
    log = FailureLog()
    for n in range(5):
        log(f"/notes/{n}", IndexBusyError("index.busy", path=f"/notes/{n}"))
    assert len(said.records) == 1
    log("/other", ResourceLimitError("index.busy", path="/other"))  # the same key
    assert len(said.records) == 1
    log("/other", IndexBusyError("index.kept_changing", path="/other"))  # another kind
    assert len(said.records) == 2
    assert all(r.exc_info is None for r in said.records)


def test_a_failure_said_every_zero_seconds_is_said_each_time(said: Said) -> None:
    log = FailureLog(every_s=0.0)
    log("/a", IndexBusyError("index.busy", path="/a"))
    log("/b", IndexBusyError("index.busy", path="/b"))
    assert len(said.records) == 2


def test_an_unexpected_failure_is_said_each_time_with_its_traceback(said: Said) -> None:
    log = FailureLog()
    for _ in range(3):
        try:
            raise ZeroDivisionError("bug")
        except ZeroDivisionError as e:
            log("/notes", e)
    assert len(said.records) == 3
    assert all(r.exc_info is not None for r in said.records)
    assert "ZeroDivisionError" in said.records[0].getMessage()


# -- small work ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "covers"),
    [
        (_progress("index", (0, 400)), True),
        (_progress("index", (0, 401)), False),
        (_progress("embed", (1, 1), (0, 800)), True),
        (_progress("embed", (1, 1), (0, 900), before=100), True),  # 800 left for this pass
        (_progress("embed", (1, 1), (0, 801)), False),
        (_progress("sentences", (1, 1), (0, 1)), False),
    ],
)
def test_small_work_is_a_refresh_with_little_left(
    gates: list[Gated], step: Progress, covers: bool
) -> None:
    job, run = _job(gates, steps=[step])
    assert run.reported.wait(HANG_S)
    assert SmallWork().covers(job, time.monotonic()) is covers
    assert not NO_SMALL_WORK.covers(job, time.monotonic())


def test_a_refresh_that_said_nothing_yet_is_small_work_only_at_first(gates: list[Gated]) -> None:
    job, run = _job(gates)
    assert run.reported.wait(HANG_S)
    now = time.monotonic()
    assert SmallWork(start_s=2.0).covers(job, now)
    assert not SmallWork(start_s=2.0).covers(job, now - 3.0)


# -- waiting within a budget ---------------------------------------------------------------


def _starter(jobs: list[RefreshJob]) -> tuple[Callable[[], RefreshJob], list[RefreshJob]]:
    started: list[RefreshJob] = []

    def start() -> RefreshJob:
        job = jobs[len(started)]
        started.append(job)
        return job

    return start, started


def test_wait_within_gives_a_finished_refreshs_stats(gates: list[Gated]) -> None:
    called = time.monotonic()
    job, run = _job(gates)
    run.gate.set()
    start, started = _starter([job])
    assert wait_within(start, None, HANG_S, called, model=False) is run.stats
    assert started == [job]


def test_past_the_budget_the_answer_says_how_far_indexing_got(gates: list[Gated]) -> None:
    called = time.monotonic()
    job, run = _job(gates, steps=[_progress("index", (2, 10))])
    assert run.reported.wait(HANG_S)
    start, _ = _starter([job])
    stats = wait_within(start, None, 0.0, called, model=False)
    assert not stats.changed_anything
    (notice,) = stats.notices
    assert (notice.kind, notice.done, notice.total) == (NoticeKind.INDEXING, 2, 10)


def test_a_refresh_running_before_the_call_is_followed_by_another(gates: list[Gated]) -> None:
    early, early_run = _job(gates, stats=RefreshStats(added=1))
    called = time.monotonic()
    later, later_run = _job(gates, stats=RefreshStats(added=2))
    early_run.gate.set()
    later_run.gate.set()
    start, started = _starter([early, later])
    assert wait_within(start, None, HANG_S, called, model=False) is later_run.stats
    assert started == [early, later]


def test_a_refresh_without_the_model_the_caller_has_is_followed_by_another(
    gates: list[Gated], tiny_embedder
) -> None:
    called = time.monotonic()
    without, run1 = _job(gates)
    with_model, run2 = _job(gates, embedder=tiny_embedder, stats=RefreshStats(added=5))
    run1.gate.set()
    run2.gate.set()
    start, started = _starter([without, with_model])
    assert wait_within(start, None, HANG_S, called, model=True) is run2.stats
    assert started == [without, with_model]


def test_a_stopped_refresh_is_answered_with_how_far_it_got(gates: list[Gated]) -> None:
    called = time.monotonic()
    job, run = _job(
        gates, steps=[_progress("embed", (3, 3), (4, 9))], stats=RefreshStats(stopped=True)
    )
    run.gate.set()
    start, started = _starter([job])
    stats = wait_within(start, None, HANG_S, called, model=False)
    assert stats.stopped and started == [job]
    assert [(n.kind, n.done, n.total) for n in stats.notices] == [(NoticeKind.EMBEDDING, 4, 9)]


def test_the_refresh_this_caller_started_is_not_started_again(gates: list[Gated]) -> None:
    called = time.monotonic()
    job, run = _job(gates)
    run.gate.set()
    start, started = _starter([])
    assert wait_within(start, None, HANG_S, called, model=False, started=job) is run.stats
    assert started == []


def test_a_failed_refresh_raises_to_the_caller(gates: list[Gated], said: Said) -> None:
    called = time.monotonic()
    job, run = _job(gates, error=IndexBusyError("index.busy", path="/x"))
    run.gate.set()
    start, _ = _starter([job])
    with pytest.raises(IndexBusyError):
        wait_within(start, None, HANG_S, called, model=False)
    assert job.told
