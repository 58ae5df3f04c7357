"""`memo watch`: saved notes are indexed by themselves; other processes see the updates."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from memo_core import Searcher


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
        [sys.executable, "-m", "memo_core.cli", "watch", str(notes), "--debounce", "100"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _lines(proc)
        assert _next(lines).startswith(f"watching {notes}")
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
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
        assert _next(lines, 5) == "stopped"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in proc.stderr.read()
