"""Searches racing memo's own housekeeping: the release of collections beyond `max_open` or
idle for `idle_s` never stops a refresh a search waits for, so no search answers from half
an index with nothing said."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import HANG_S, write_notes

from memo_core import Engine, ModelSource, Progress, Tuning
from memo_core.collection import Collection


def folder(root: Path, n: int = 40) -> Path:
    """`n` fillers, then the note a search looks for, written last (the last batch)."""
    files = {f"n{i:03d}.md": f"# N{i}\n\nfiller {i}\n" for i in range(n)}
    return write_notes(root, {**files, "z.md": "# Z\n\nzebra here\n"})


def test_a_release_at_another_call_never_stops_a_refresh_a_search_waits_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spare collection's refresh starts just after the other call looked whether one
    runs (here: it never sees one): releasing it must not stop that refresh."""
    monkeypatch.setattr(Collection, "activity", lambda self: None)
    a, b = folder(tmp_path / "a"), folder(tmp_path / "b")
    first_batch, go_on = threading.Event(), threading.Event()

    def held(p: Progress) -> None:  # A's refresh, held after its first batch
        if p.files_done and not first_batch.is_set():
            first_batch.set()
            assert go_on.wait(HANG_S)

    engine = Engine(models=ModelSource(enabled=False), max_open=1, tuning=Tuning(batch_chunks=4))
    with engine:
        answer: list[object] = []
        searching = threading.Thread(
            target=lambda: answer.append(engine.search(a, "zebra", mode="lex", progress=held))
        )
        searching.start()
        assert first_batch.wait(HANG_S)
        engine.search(b, "zebra", mode="lex")
        engine.search(b, "zebra", mode="lex")  # A is beyond max_open now: released
        go_on.set()
        searching.join(HANG_S)
        [found] = answer
        assert [h.relpath for h in found] == ["z.md"], found.notices  # type: ignore[attr-defined]


@pytest.mark.parametrize(("idle_s", "max_open"), [(0.005, 1), (600.0, 1), (0.005, 64)])
def test_searches_in_threads_beside_the_releases_always_find_the_word(
    tmp_path: Path, idle_s: float, max_open: int
) -> None:
    roots = [folder(tmp_path / f"c{i}", 24) for i in range(4)]
    engine = Engine(
        models=ModelSource(enabled=False),
        idle_s=idle_s,
        max_open=max_open,
        tuning=Tuning(batch_chunks=4),
    )
    silent: list[tuple[int, int]] = []

    def searches(k: int) -> None:
        for n in range(40):
            found = engine.search(roots[(k + n) % 4], "zebra", mode="lex")
            if not found and not found.notices:
                silent.append((k, n))

    with engine, ThreadPoolExecutor(4) as pool:
        for done in [pool.submit(searches, k) for k in range(4)]:
            done.result(HANG_S * 4)  # a search that raised fails the test
    assert silent == []


def _janitors() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "memo-idle"}


def test_closing_an_engine_ends_its_janitor(tmp_path: Path) -> None:
    """The thread that lets go of unused collections ends with the engine's close, also
    when the close comes as a round begins (the round took the close's wake-up for its
    own, and slept on while the close waited its whole timeout)."""
    root = folder(tmp_path / "c", 2)
    began, go_on = threading.Event(), threading.Event()
    real_lock = threading.Lock

    class HeldAsARoundBegins:
        """A lock the engine makes: the first one its janitor thread takes (a round begins
        by taking the engine's lock) is taken only once `go_on` is set."""

        def __init__(self) -> None:
            self.lock = real_lock()

        def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
            if threading.current_thread().name == "memo-idle" and not began.is_set():
                began.set()
                assert go_on.wait(HANG_S)
            return self.lock.acquire(blocking, timeout)

        def release(self) -> None:
            self.lock.release()

        def locked(self) -> bool:
            return self.lock.locked()

        def __enter__(self) -> bool:
            return self.acquire()

        def __exit__(self, *exc: object) -> None:
            self.release()

    models = ModelSource(enabled=False)
    before = _janitors()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(threading, "Lock", HeldAsARoundBegins)  # the locks this engine makes
        engine = Engine(models=models)
    engine.search(root, "zebra", mode="lex")  # its janitor starts: the first round is held
    assert began.wait(HANG_S)
    closing = threading.Thread(target=engine.close, kwargs={"timeout": HANG_S})
    closing.start()
    time.sleep(0.2)  # the close has said so and woken the janitor by now
    go_on.set()
    closing.join(HANG_S * 2)
    assert not closing.is_alive() and _janitors() <= before
