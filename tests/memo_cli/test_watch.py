"""`memo watch`: saved notes are indexed by themselves; other processes see the updates."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import default_sigint, write_notes

from memo_cli.watch import watch
from memo_core import Embedder, Engine, ModelSource, Searcher


def _lines(proc: subprocess.Popen) -> queue.Queue:
    q: queue.Queue = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            q.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return q


def _next(q: queue.Queue, timeout: float = 20.0) -> str:
    return q.get(timeout=timeout)


def test_watch_indexes_saved_notes_and_stops_cleanly(notes: Path, tiny_model_dir: Path) -> None:
    env = {**os.environ, "MEMO_MODEL_DIR": str(tiny_model_dir), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo_cli.main", "watch", str(notes), "--debounce", "100"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _lines(proc)
        first = _next(lines)  # what it indexed on its way in
        assert f"  {notes}: новых 3, изменённых 0, удалённых 0; векторов" in first, first
        assert _next(lines).startswith(f"слежу за {notes}")
        time.sleep(0.3)
        (notes / "weather.md").write_text("# Weather\n\nrain tomorrow\n", encoding="utf-8")
        update = _next(lines)
        assert f"{notes}: новых 1, изменённых 0, удалённых 0; векторов 1" in update
        # Another process's search sees the watcher's update without refreshing itself.
        with Searcher(notes, use_model=False) as s:
            hit = s.search("rain", mode="lex", refresh=False)[0]
            assert hit.relpath == "weather.md"
        (notes / "pets.md").unlink()
        assert "удалённых 1" in _next(lines)
        proc.send_signal(signal.SIGTERM)  # Ctrl-C: 130, tests/stories/test_cli_exits.py
        assert proc.wait(timeout=10) == 0
        assert _next(lines, 5) == "остановлено"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in proc.stderr.read()


class Watching:
    """`watch` running in a thread over one folder, with its lines in a queue."""

    def __init__(self, engine: Engine, folder: Path) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []  # the lines `update` read
        self.stop, ready = threading.Event(), threading.Event()
        self.thread = threading.Thread(
            target=watch,
            args=(engine, [folder], self.lines.put),
            kwargs={"stop": self.stop, "debounce_ms": 50, "ready": ready},
        )
        self.thread.start()
        assert ready.wait(20), "the watcher did not start"
        while not self.lines.get(timeout=20).startswith("слежу за"):
            pass  # what the first refresh indexed

    def update(self) -> str:
        while True:
            line = self.lines.get(timeout=20)
            self.seen.append(line)
            if "новых" in line:
                return line

    def close(self) -> None:
        self.stop.set()
        self.thread.join(20)


@pytest.fixture
def watching(tiny_embedder):
    started: list[Watching] = []
    engine = Engine(models=ModelSource(tiny_embedder))

    def start(folder: Path) -> Watching:
        started.append(Watching(engine, folder))
        return started[-1]

    yield start
    for w in started:
        w.close()
    engine.close()


def test_notes_inside_a_hidden_folder_are_watched(tmp_path: Path, watching) -> None:
    notes = write_notes(tmp_path / ".local" / "share" / "notes", {"a.md": "# A\n\ncat\n"})
    w = watching(notes)
    (notes / "weather.md").write_text("# Weather\n\nrain\n", encoding="utf-8")
    assert "новых 1, изменённых 0, удалённых 0" in w.update()
    (notes / ".draft.md").write_text("# hidden\n", encoding="utf-8")  # not a note: no update
    (notes / "a.md").write_text("# A\n\ncat and dog\n", encoding="utf-8")
    assert "новых 0, изменённых 1, удалённых 0" in w.update()


def test_moving_away_a_folder_with_a_dot_in_its_name(tmp_path: Path, watching) -> None:
    # Moved out, the folder is reported alone (no event for the notes inside it).
    notes = write_notes(
        tmp_path / "notes", {"a.md": "# A\n\ncat\n", "v1.2/b.md": "# B\n\ndog\n", "v1.2/c.md": "c"}
    )
    w = watching(notes)
    (notes / "v1.2").rename(tmp_path / "elsewhere")
    assert "удалённых 2" in w.update()
    shutil.rmtree(tmp_path / "elsewhere")


def test_out_of_inotify_it_says_so_and_polls(
    tmp_path: Path, tiny_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No inotify instance left (other programs took the user's 128): a line says so, and
    saved notes are still indexed, found by looking every second."""
    import watchfiles

    real = watchfiles.watch

    def limited(*paths, force_polling=None, **kw):
        if not force_polling:
            raise OSError("OS file watch limit reached")
        return real(*paths, force_polling=force_polling, **kw)

    monkeypatch.setattr(watchfiles, "watch", limited)
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat\n"})
    with Engine(models=ModelSource(tiny_embedder)) as engine:
        w = Watching(engine, notes)
        try:
            (notes / "weather.md").write_text("# Weather\n\nrain\n", encoding="utf-8")
            assert "новых 1" in w.update()
        finally:
            w.close()
    assert not w.thread.is_alive()
    assert any("OS file watch limit reached" in line for line in w.seen)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")
def test_memo_watch_holds_one_inotify_watcher(notes: Path, tiny_model_dir: Path) -> None:
    """`memo watch` follows the engine's own change feed: one inotify instance, not two."""
    env = {**os.environ, "MEMO_MODEL_DIR": str(tiny_model_dir), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo_cli.main", "watch", str(notes), "--debounce", "50"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        lines = _lines(proc)
        first = _next(lines)  # what it indexed on its way in
        assert f"  {notes}: новых 3, изменённых 0, удалённых 0; векторов" in first, first
        assert _next(lines).startswith(f"слежу за {notes}")
        time.sleep(0.5)
        fds = Path(f"/proc/{proc.pid}/fd")
        links = []
        for fd in fds.iterdir():
            try:
                links.append(os.readlink(fd))
            except OSError:
                continue
        assert links.count("anon_inode:inotify") == 1, links
        (notes / "weather.md").write_text("# Weather\n\nsnow\n", encoding="utf-8")
        assert "новых 1" in _next(lines)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


class SavesWhileIndexing(Embedder):
    """A real tiny model that saves a new note into `folder` on its first batch of notes:
    a user saving while `memo watch` starts (its first refresh embedding)."""

    def __init__(self, inner: Embedder, folder: Path) -> None:
        self.inner, self.model_id, self.dim, self.folder = inner, inner.model_id, inner.dim, folder
        self.saved = False

    def embed_batch(self, texts: list[str], *, query: bool = False):
        if not query and not self.saved:
            self.saved = True
            (self.folder / "saved-meanwhile.md").write_text("# Late\n\nquokka\n", "utf-8")
            time.sleep(0.5)
        return self.inner.embed_batch(texts, query=query)


@pytest.mark.parametrize("notify", [True, False])
def test_a_note_saved_while_watch_starts_is_indexed_and_printed(
    tmp_path: Path, tiny_embedder, notify: bool
) -> None:
    folder = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat\n", "b.md": "# B\n\ndog\n"})
    model = SavesWhileIndexing(tiny_embedder, folder)
    lines: queue.Queue[str] = queue.Queue()
    stop = threading.Event()
    with Engine(models=ModelSource(model), notify=notify) as engine:
        t = threading.Thread(
            target=watch, args=(engine, [folder], lines.put), kwargs={"stop": stop}
        )
        t.start()
        try:
            said = [lines.get(timeout=20)]
            assert f"{folder}: новых 2," in said[0]  # what it indexed on its way in
            while not said[-1].startswith("слежу за"):
                said.append(lines.get(timeout=20))
            late = lines.get(timeout=10)
            assert f"{folder}: новых 1," in late, said + [late]
            hits = engine.search(folder, "quokka", mode="lex", refresh=False)
            assert hits[0].relpath == "saved-meanwhile.md"
        finally:
            stop.set()
            t.join(20)
