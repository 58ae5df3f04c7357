"""memo_core.shutdown: `end_process` ends the process with its code, what was written flushed,
without the interpreter's finalization. It ends a process, so each test runs it in a child."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import HANG_S, REPO


def run(code: str) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh interpreter, its output piped (so block-buffered)."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=HANG_S,
        cwd=REPO,
    )


@pytest.mark.parametrize("code", [0, 1, 3, 130])
def test_the_process_ends_with_the_code(code: int) -> None:
    done = run(f"from memo_core.shutdown import end_process\nend_process({code})\nprint('after')")
    assert done.returncode == code
    assert "after" not in done.stdout


def test_what_was_written_is_flushed() -> None:
    done = run(
        """
        import sys
        from memo_core.shutdown import end_process
        sys.stdout.write("to stdout, no newline")
        sys.stderr.write("to stderr, no newline")
        end_process(2)
        """
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "to stdout, no newline",
        "to stderr, no newline",
    )


def test_logging_is_flushed() -> None:
    # A MemoryHandler keeps its records until flushed: only logging.shutdown says them.
    done = run(
        """
        import logging, logging.handlers, sys
        from memo_core.shutdown import end_process
        held = logging.handlers.MemoryHandler(100, target=logging.StreamHandler(sys.stderr))
        log = logging.getLogger("memo-test")
        log.addHandler(held)
        log.error("kept until flushed")
        end_process(0)
        """
    )
    assert done.returncode == 0
    assert "kept until flushed" in done.stderr


def test_no_finalization_runs() -> None:
    # No atexit handler, no finally, and a non-daemon thread still running is not waited for.
    done = run(
        """
        import atexit, threading
        from memo_core.shutdown import end_process
        atexit.register(lambda: print("atexit ran", flush=True))
        threading.Thread(target=threading.Event().wait).start()  # never ends
        try:
            end_process(7)
        finally:
            print("finally ran", flush=True)
        """
    )
    assert done.returncode == 7
    assert "ran" not in done.stdout


@pytest.mark.parametrize(
    "break_stdout",
    [
        "sys.stdout.close()",  # a stream closed: ValueError on flush
        # a reader gone: BrokenPipeError on flush
        "r, w = os.pipe(); sys.stdout = open(w, 'w'); os.close(r); sys.stdout.write('x' * 10)",
    ],
)
def test_a_stream_that_cannot_be_flushed_does_not_stop_it(break_stdout: str) -> None:
    done = run(
        f"""
        import os, sys
        from memo_core.shutdown import end_process
        {break_stdout}
        sys.stderr.write("still said")
        end_process(4)
        """
    )
    assert done.returncode == 4
    assert done.stderr == "still said"
