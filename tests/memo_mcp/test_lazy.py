"""memo_mcp.lazy: the server's one Engine, made on first use; what the engine says reaching
stderr and the calls listening; a close that waits a bounded time.

A real Engine throughout (a tiny folder, the tiny model) except where a close must hang:
no real index can be made to hang on demand without a dead drive (tests/stories/test_mcp_safety.py
has that, over the wire), so there the engine given is a stand-in whose close blocks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import HANG_S, write_notes

from memo_core import SERVER_REFRESH_BUDGET_S, Engine, Message, ModelSource
from memo_core.model.embedder import Embedder
from memo_mcp.lazy import LazyEngine


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", {"a.md": "# Beets\n\nCook the beets first.\n"})


@pytest.fixture
def engine(tiny_embedder: Embedder, tmp_path: Path) -> Iterator[Engine]:
    with Engine(models=ModelSource(tiny_embedder), roots=[tmp_path]) as e:
        yield e


# -- get ---------------------------------------------------------------------------------------


def test_the_engine_given_is_the_one_got(engine: Engine, tmp_path: Path) -> None:
    lazy = LazyEngine([tmp_path], engine)
    assert lazy.get() is engine and lazy.get() is engine
    assert lazy.roots == [tmp_path]


def test_an_engine_is_made_once_for_the_roots_as_a_server_wants_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMO_REFRESH_BUDGET", raising=False)
    roots = (tmp_path / "a", tmp_path / "b")  # any sequence; kept as a list
    for root in roots:
        root.mkdir()
    lazy = LazyEngine(roots)
    assert lazy.roots == list(roots)
    made = lazy.get()
    try:
        assert isinstance(made, Engine) and lazy.get() is made
        assert made.roots == [r.resolve() for r in roots]
        # A long-lived process: a bounded wait for a refresh, changes from the OS.
        assert made.refresh_budget_s == SERVER_REFRESH_BUDGET_S
        assert made.notify is True
    finally:
        lazy.close()


def test_the_refresh_budget_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMO_REFRESH_BUDGET", "2.5")
    lazy = LazyEngine([tmp_path])
    try:
        assert lazy.get().refresh_budget_s == 2.5
    finally:
        lazy.close()


def test_threads_asking_at_once_get_one_engine(tmp_path: Path) -> None:
    lazy = LazyEngine([tmp_path])
    start = threading.Barrier(8)
    got: list[Engine] = []

    def ask() -> None:
        start.wait(HANG_S)
        got.append(lazy.get())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_S)
    try:
        assert len(got) == 8 and all(e is got[0] for e in got)
    finally:
        lazy.close()


# -- said and listening ------------------------------------------------------------------------


def test_what_the_engine_says_goes_to_say_and_to_every_listener(tmp_path: Path) -> None:
    said: list[object] = []
    first: list[object] = []
    second: list[object] = []
    lazy = LazyEngine([tmp_path], say=said.append)
    lazy.said("before")
    with lazy.listening(first.append):
        lazy.said("one")
        with lazy.listening(second.append):
            lazy.said(Message("mcp.still_busy"))
        lazy.said("two")
    lazy.said("after")
    assert said == ["before", "one", Message("mcp.still_busy"), "two", "after"]
    assert first == ["one", Message("mcp.still_busy"), "two"]
    assert second == [Message("mcp.still_busy")]


def test_without_say_only_the_listeners_hear(tmp_path: Path) -> None:
    lazy = LazyEngine([tmp_path])
    heard: list[object] = []
    lazy.said("nobody")  # nothing to hear it: no error
    with lazy.listening(heard.append):
        lazy.said("step")
    assert heard == ["step"]


def test_listening_to_none_changes_nothing(tmp_path: Path) -> None:
    said: list[object] = []
    lazy = LazyEngine([tmp_path], say=said.append)
    with lazy.listening(None):
        lazy.said("x")
    assert said == ["x"]


def test_a_listener_stops_hearing_when_its_call_fails(tmp_path: Path) -> None:
    heard: list[object] = []
    lazy = LazyEngine([tmp_path])
    with pytest.raises(RuntimeError), lazy.listening(heard.append):
        lazy.said("during")
        raise RuntimeError("the call failed")
    lazy.said("later")
    assert heard == ["during"]


def test_the_same_listener_twice_hears_twice_and_leaves_once_each(tmp_path: Path) -> None:
    heard: list[object] = []
    lazy = LazyEngine([tmp_path])
    with lazy.listening(heard.append):
        with lazy.listening(heard.append):
            lazy.said("both")
        lazy.said("one left")
    lazy.said("none")
    assert heard == ["both", "both", "one left"]


def test_a_listener_may_stop_listening_while_being_told(tmp_path: Path) -> None:
    """`said` tells a copy of the listeners: one that leaves (another call ending on its
    thread) does not disturb the others."""
    lazy = LazyEngine([tmp_path])
    heard: list[str] = []
    inner = lazy.listening(lambda step: heard.append(f"inner {step}"))

    def leave_then_hear(step: object) -> None:
        inner.__exit__(None, None, None)
        heard.append(f"outer {step}")

    inner.__enter__()
    with lazy.listening(leave_then_hear):
        lazy.said("x")
        lazy.said("y")
    assert heard == ["inner x", "outer x", "outer y"]


# -- close -------------------------------------------------------------------------------------


def test_close_before_any_engine_makes_none(tmp_path: Path) -> None:
    said: list[object] = []
    lazy = LazyEngine([tmp_path], say=said.append)
    lazy.close()
    lazy.close_within(HANG_S)
    assert said == []
    made = lazy.get()  # still made on first use after
    try:
        assert isinstance(made, Engine)
    finally:
        lazy.close()


def test_close_releases_the_indexes_and_the_engine_stays_usable(
    engine: Engine, folder: Path, tmp_path: Path
) -> None:
    lazy = LazyEngine([tmp_path], engine)
    assert [h.relpath for h in lazy.get().search(folder, "beets", mode="lex")] == ["a.md"]
    assert engine.held_collections()
    lazy.close()
    assert engine.held_collections() == {}
    hits = lazy.get().search(folder, "beets", mode="lex")
    assert [h.path for h in hits] == [str(folder / "a.md")]
    lazy.close()


def test_close_within_a_quick_close_says_nothing(
    engine: Engine, folder: Path, tmp_path: Path
) -> None:
    said: list[object] = []
    lazy = LazyEngine([tmp_path], engine, say=said.append)
    assert len(lazy.get().search(folder, "beets", mode="lex")) == 1
    assert engine.held_collections()
    lazy.close_within(HANG_S)
    assert engine.held_collections() == {}
    assert said == []


class StuckEngine:
    """An engine whose close hangs until `release` (a refresh stuck in a dead drive)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.closed = threading.Event()

    def close(self) -> None:
        self.entered.set()
        self.release.wait(HANG_S)
        self.closed.set()


def test_close_within_leaves_a_stuck_close_behind_and_says_so(tmp_path: Path) -> None:
    stuck = StuckEngine()
    said: list[object] = []
    lazy = LazyEngine([tmp_path], stuck, say=said.append)  # type: ignore[arg-type]
    lazy.close_within(0.05)
    assert stuck.entered.wait(HANG_S)
    assert not stuck.closed.is_set()  # still closing, on its daemon thread
    assert said == [Message("mcp.still_busy")]
    stuck.release.set()
    assert stuck.closed.wait(HANG_S)  # it ends in the background


def test_close_within_without_say_logs_the_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stuck = StuckEngine()
    lazy = LazyEngine([tmp_path], stuck)  # type: ignore[arg-type]
    try:
        with caplog.at_level(logging.WARNING, logger="memo_mcp"):
            lazy.close_within(0.05)
    finally:
        stuck.release.set()
    assert [r.getMessage() for r in caplog.records if r.name == "memo_mcp"] == [
        "memo-mcp: mcp.still_busy"
    ]
    assert stuck.closed.wait(HANG_S)
