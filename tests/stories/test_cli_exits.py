"""The `memo` command's exits, all through a real subprocess: one set of exit codes
for every command (0 done or nothing found, 1 an error, 2 a usage error, 130 interrupted), a
bad option value a usage error said in one line, a reader that stops reading a quiet end, and
Ctrl-C and SIGTERM on `memo watch`."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import default_sigint

from memo_core import MAX_K, MAX_OFFSET
from memo_text import MAX_CHARS_RANGE

MEMO = [sys.executable, "-m", "memo_cli.main"]
# The tests read English texts (the product's default language may be another).
ENV = {"MEMO_LANG": "en"}


def _memo(*args: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMO, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **ENV},
    )


# -- a bad option value: exit 2 and one line ---------------------------------------------

TOO_BIG = "9" * 30  # beyond every C integer type below Python (watchfiles' debounce: u64)

# (the arguments, with {notes} for a notes folder; a text the line must hold: the value)
BAD_VALUES = {
    "search -k 0": (["search", "{notes}", "x", "-k", "0"], "0"),
    "search -k -1": (["search", "{notes}", "x", "-k", "-1"], "-1"),
    "search -k MAX_K+1": (["search", "{notes}", "x", "-k", str(MAX_K + 1)], str(MAX_K + 1)),
    "search -k huge": (["search", "{notes}", "x", "-k", TOO_BIG], TOO_BIG),
    "search -k abc": (["search", "{notes}", "x", "-k", "abc"], "'abc'"),
    "search -k 1.5": (["search", "{notes}", "x", "-k", "1.5"], "'1.5'"),
    "search -k empty": (["search", "{notes}", "x", "-k", ""], "''"),
    "search -k missing": (["search", "{notes}", "x", "-k"], "-k"),
    "search --mode": (["search", "{notes}", "x", "--mode", "fuzzy"], "'fuzzy'"),
    "search --offset -1": (["search", "{notes}", "x", "--offset", "-1"], "-1"),
    "search --offset max+1": (
        ["search", "{notes}", "x", "--offset", str(MAX_OFFSET + 1)],
        str(MAX_OFFSET + 1),
    ),
    "search --offset 1e3": (["search", "{notes}", "x", "--offset", "1e3"], "'1e3'"),
    "search --max-chars low": (
        ["search", "{notes}", "x", "--max-chars", str(MAX_CHARS_RANGE[0] - 1)],
        str(MAX_CHARS_RANGE[0] - 1),
    ),
    "search --max-chars huge": (["search", "{notes}", "x", "--max-chars", TOO_BIG], TOO_BIG),
    "search --under glob": (["search", "{notes}", "x", "--under", "a["], "a["),
    "search --under absolute": (["search", "{notes}", "x", "--under", "/etc"], "/etc"),
    "search --under ..": (["search", "{notes}", "x", "--under", "../x"], "../x"),
    "search --tag empty": (["search", "{notes}", "x", "--tag", ""], "''"),
    "search --tag 33": (["search", "{notes}", "x", *["--tag", "t"] * 33], "33"),
    "search --after": (["search", "{notes}", "x", "--after", "2024-13-01"], "2024-13-01"),
    "search --before": (["search", "{notes}", "x", "--before", "yesterday"], "yesterday"),
    "search --after > --before": (
        ["search", "{notes}", "x", "--after", "2024-06-01", "--before", "2024-05-01"],
        "2024-05-01",
    ),
    "search empty query": (["search", "{notes}", "   "], "query"),
    "search --json=x": (["search", "{notes}", "x", "--json=x"], "'x'"),
    "watch --debounce -5": (["watch", "{notes}", "--debounce", "-5"], "-5"),
    "watch --debounce huge": (["watch", "{notes}", "--debounce", TOO_BIG], TOO_BIG),
    "watch --debounce x": (["watch", "{notes}", "--debounce", "x"], "'x'"),
    "read --from 0": (["read", "{notes}", "backup.md", "--from", "0"], "0"),
    "read --to -3": (["read", "{notes}", "backup.md", "--to", "-3"], "-3"),
    "read --around 0": (["read", "{notes}", "backup.md", "--around", "0"], "0"),
    "read --from x": (["read", "{notes}", "backup.md", "--from", "x"], "'x'"),
    "read --from > --to": (["read", "{notes}", "backup.md", "--from", "5", "--to", "3"], "5"),
    "read --around and --from": (
        ["read", "{notes}", "backup.md", "--around", "5", "--from", "1"],
        "around",
    ),
    "read path:line and --to": (["read", "{notes}", "backup.md:3", "--to", "4"], "backup.md:3"),
    "status --json=1": (["status", "{notes}", "--json=1"], "'1'"),
    "changes --json=1": (["changes", "{notes}", "--json=1"], "'1'"),
    "index --no-vectors=1": (["index", "{notes}", "--no-vectors=1"], "'1'"),
    "model install name": (["model", "install", "e5-huge"], "'e5-huge'"),
    "model action": (["model", "frob"], "'frob'"),
    "command": (["frob"], "'frob'"),
}


@pytest.mark.parametrize(("argv", "says"), list(BAD_VALUES.values()), ids=list(BAD_VALUES))
def test_a_bad_option_value_is_a_usage_error_in_one_line(
    notes: Path, argv: list[str], says: str
) -> None:
    r = _memo(*[a.format(notes=notes) for a in argv], timeout=15)
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("memo") and says in r.stderr, r.stderr


@pytest.mark.parametrize("argv", [["search"], ["search", "."], ["read", "."], []], ids=str)
def test_a_missing_argument_shows_the_usage(argv: list[str]) -> None:
    """Where an argument is missing the usage helps, and argparse shows it."""
    r = _memo(*argv)
    assert r.returncode == 2
    assert r.stderr.startswith("usage: memo") and "required" in r.stderr.splitlines()[-1]


@pytest.mark.parametrize("k", [1, MAX_K])
def test_k_takes_the_limits_memo_mcp_takes(notes: Path, k: int) -> None:
    """1..MAX_K, as memo_search's schema (tests/stories/test_mcp_wire.py): no clamp either side."""
    r = _memo("search", str(notes), "restic", "--mode", "lex", "-k", str(k))
    assert r.returncode == 0, r.stderr
    assert "backup.md" in r.stdout


def test_an_error_is_still_exit_1(notes: Path, tmp_path: Path) -> None:
    """What is wrong is not how memo was called (a path with no notes): 1, as before."""
    r = _memo("search", str(tmp_path / "nowhere"), "x")
    assert (r.returncode, r.stdout, len(r.stderr.splitlines())) == (1, "", 1), r.stderr


# -- a reader that stops reading: a quiet end, exit 0 -------------------------------------

CLOSED_PIPE = {
    "status": ["status", "{notes}"],
    "status --json": ["status", "{notes}", "--json"],
    "model info": ["model", "info"],
    "search": ["search", "{notes}", "restic", "--mode", "lex"],
    "search --json": ["search", "{notes}", "restic", "--mode", "lex", "--json"],
    "changes": ["changes", "{notes}"],
    "changes --json": ["changes", "{notes}", "--json"],
    "read": ["read", "{notes}", "backup.md"],
    "index": ["index", "{notes}"],
    "reindex": ["reindex", "{notes}"],
    "watch": ["watch", "{notes}"],
    "--help": ["--help"],
    "search --help": ["search", "--help"],
    "--version": ["--version"],
}


def _quiet(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode == 0, r.stderr
    for noise in ("Traceback", "Exception ignored", "BrokenPipe", "Errno 32"):
        assert noise not in r.stderr


@pytest.mark.parametrize("argv", list(CLOSED_PIPE.values()), ids=list(CLOSED_PIPE))
def test_stdout_closed_before_the_first_line(notes: Path, argv: list[str]) -> None:
    """`memo status ~/notes | head -1` where head is gone before memo writes: every write
    fails (EPIPE), at exit too; memo ends quietly (`watch` too: it has no reader left)."""
    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run(
            [*MEMO, *[a.format(notes=notes) for a in argv]],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=20,
            env={**os.environ, **ENV},
        )
    finally:
        os.close(write)
    _quiet(r)


# -- Ctrl-C and SIGTERM on `memo watch` ----------------------------------------------------


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """`proc`'s stdout, line by line as it comes, then None."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _inotify_instances(pid: int) -> int:
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd) == "anon_inode:inotify"
        except OSError:
            continue
    return count


@pytest.fixture(params=["feed", "watchfiles"])
def watched(request: pytest.FixtureRequest, notes: Path) -> tuple[Path, int]:
    """A notes folder, and how many inotify instances `memo watch` holds once it watches:
    the engine's own change feed (1), or watchfiles' watcher besides it (2), which memo
    uses where the kernel cannot tell it everything, as for a note with a second name."""
    if request.param == "feed":
        return notes, 1
    os.link(notes / "backup.md", notes / "backup-again.md")
    return notes, 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify, /proc")
@pytest.mark.parametrize(
    ("signum", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)], ids=["SIGINT", "SIGTERM"]
)
def test_watch_stops_on_a_signal(watched: tuple[Path, int], signum: int, expected: int) -> None:
    """Ctrl-C: 130, as any command interrupted, one line on stderr and none of watchfiles'
    ("KeyboardInterrupt caught, stopping watch"); SIGTERM (a service manager's stop): a
    clean end, `stopped` on stdout, 0."""
    folder, instances = watched
    proc = subprocess.Popen(
        [*MEMO, "watch", str(folder), "--debounce", "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **ENV},
        preexec_fn=default_sigint,
    )
    try:
        lines = _lines(proc)
        while not (lines.get(timeout=20) or "").startswith("watching"):
            pass
        deadline = time.monotonic() + 20
        # Until the watcher runs: a signal then lands inside it (watchfiles' Rust loop).
        while _inotify_instances(proc.pid) < instances:
            assert time.monotonic() < deadline, "the watcher did not start"
            time.sleep(0.05)
        proc.send_signal(signum)
        code = proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert code == expected, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    if signum == signal.SIGINT:
        assert err.startswith("memo: ") and len(err.splitlines()) == 1, err
    else:
        rest = iter(lambda: lines.get(timeout=5), None)
        assert err == "" and list(rest)[-1:] == ["stopped"]
