"""Helpers for the race tests (tests/stories/test_races.py): swapping two paths again and again with
renameat2(RENAME_EXCHANGE), hashing a folder tree, and counting what each attempt gave.

The swap is atomic (both names always exist, each naming one of the two things), so a
reader never sees a missing file: it sees either the real note or folder, or the symlink to
what lies outside the roots. Whatever memo does, its answers must never carry the outside
text, and nothing outside may change.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# The text of every file outside the roots: an answer that carries it leaked.
MARKER = "OUTSIDE-SECRET-7f3a"

AT_FDCWD = -100
RENAME_EXCHANGE = 2

# Seconds between two swaps. A flipper that never pauses holds the GIL between its system
# calls and starves the threads it races (a change feed drowns in its events): a short pause
# makes memo's reads and the swaps interleave far more often. MEMO_RACE_PAUSE overrides it.
PAUSE_S = float(os.environ.get("MEMO_RACE_PAUSE", "0.0001"))

# How long each race runs: short in the default run, long (marked slow) on demand.
SHORT_S = float(os.environ.get("MEMO_RACE_SHORT_S", "1.0"))
LONG_S = float(os.environ.get("MEMO_RACE_LONG_S", "25.0"))
SWAPS = 200  # swaps that prove a flipper ran
DURATIONS = [
    pytest.param(SHORT_S, id="short"),
    pytest.param(LONG_S, id="long", marks=pytest.mark.slow),
]


def _renameat2() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_RENAMEAT2 = _renameat2()


def exchange(a: bytes, b: bytes) -> None:
    """Swap the names `a` and `b` atomically (both must exist, on one file system)."""
    assert _RENAMEAT2 is not None
    if _RENAMEAT2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), os.fsdecode(a), None, os.fsdecode(b))


def require_exchange(folder: Path) -> None:
    """Skip the test unless renameat2(RENAME_EXCHANGE) works in `folder`."""
    if _RENAMEAT2 is None:
        pytest.skip("renameat2 is not available (not Linux/glibc ≥ 2.28)")
    a, b = folder / ".xchg-a", folder / ".xchg-b"
    a.write_text("a")
    os.symlink("a", b)
    try:
        exchange(os.fsencode(a), os.fsencode(b))
    except OSError as e:
        if e.errno in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):
            pytest.skip(f"renameat2(RENAME_EXCHANGE) does not work here: {e}")
        raise
    finally:
        a.unlink()
        b.unlink()


class Flipper:
    """A thread that swaps two paths as fast as it can (or with `pause` seconds between
    swaps) until stopped; `swaps` counts them.

    Used as a context manager: on exit it stops, and the two paths are put back the way
    they were (each name naming what it named before), whatever happened in between.
    """

    def __init__(self, a: Path, b: Path, pause: float = PAUSE_S) -> None:
        self.a, self.b = os.fsencode(a), os.fsencode(b)
        self.pause = pause  # seconds between swaps (0: none)
        self.swaps = 0
        self.error: BaseException | None = None
        self._a_was = os.lstat(a)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flipper", daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                exchange(self.a, self.b)
                self.swaps += 1
                if self.pause:
                    time.sleep(self.pause)
        except BaseException as e:  # reported by stop(): a flipper that died raced nothing
            self.error = e

    def __enter__(self) -> Flipper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        assert not self._thread.is_alive(), "the flipping thread did not stop"
        now = os.lstat(self.a)
        if (now.st_dev, now.st_ino) != (self._a_was.st_dev, self._a_was.st_ino):
            exchange(self.a, self.b)  # back as it was
        if self.error is not None:
            raise AssertionError(f"the flipping thread failed: {self.error!r}")


def tree_state(top: Path) -> dict[str, str]:
    """Every name under `top` (symlinks not followed) and what it holds: a file's bytes
    (as a hash), a symlink's target, a folder. Equal states: nothing there changed."""
    state: dict[str, str] = {}
    for folder, dirs, files in os.walk(top, followlinks=False):
        for name in dirs + files:
            p = os.path.join(folder, name)
            rel = os.path.relpath(p, top)
            if os.path.islink(p):
                state[rel] = "symlink -> " + os.readlink(p)
            elif os.path.isdir(p):
                state[rel] = "folder"
            else:
                with open(p, "rb") as f:
                    state[rel] = hashlib.sha256(f.read()).hexdigest()
    return state


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What differs between two `tree_state`s, one line per name."""
    lines = [f"new: {n}" for n in sorted(after.keys() - before.keys())]
    lines += [f"gone: {n}" for n in sorted(before.keys() - after.keys())]
    lines += [
        f"changed: {n}" for n in sorted(before.keys() & after.keys()) if before[n] != after[n]
    ]
    return lines


@dataclass
class Tally:
    """What a race's attempts gave: answers, leaks (answers carrying MARKER), clean
    errors (memo's own, with a message) and anything else (a generic error)."""

    want: int = 20  # attempts that prove a race ran (`check`)
    attempts: int = 0
    answers: int = 0
    leaks: int = 0
    found_inside: int = 0  # answers that carried the inside note: the race ran both ways
    clean_errors: int = 0
    generic_errors: int = 0
    generic_examples: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def answer(self, text: str, inside: str | None = None) -> None:
        self.attempts += 1
        self.answers += 1
        if MARKER in text:
            self.leaks += 1
            if len(self.leaked) < 3:
                self.leaked.append(text[:300])
        if inside is not None and inside in text:
            self.found_inside += 1

    def clean(self, message: str) -> None:
        if not message.strip():
            self.generic("an error without a message")
            return
        self.attempts += 1
        self.clean_errors += 1
        if MARKER in message:  # an error message must not carry outside text either
            self.leaks += 1
            if len(self.leaked) < 3:
                self.leaked.append(message[:300])

    def generic(self, what: str) -> None:
        self.attempts += 1
        self.generic_errors += 1
        if len(self.generic_examples) < 5:
            self.generic_examples.append(what[:300])

    def summary(self, swaps: int) -> str:
        return (
            f"{self.leaks} leaks in {self.attempts} attempts ({self.answers} answers, "
            f"{self.found_inside} with the inside note, {self.clean_errors} clean errors, "
            f"{self.generic_errors} generic errors) over {swaps} swaps in "
            f"{time.monotonic() - self.started:.1f} s"
        )

    def check(
        self, swaps: int, outside_changes: list[str], *, min_attempts: int, min_swaps: int = SWAPS
    ) -> None:
        """No leak, no change outside, no generic error, and proof that the race really ran."""
        report = self.summary(swaps)
        if outside_changes:
            report += f"; memo changed what lies outside the roots: {outside_changes}"
        print(report)
        assert self.leaks == 0 and not outside_changes, f"{report}; leaked e.g. {self.leaked}"
        assert self.generic_errors == 0, f"{report}; e.g. {self.generic_examples}"
        assert swaps >= min_swaps, f"the flipper barely ran: {report}"
        assert self.attempts >= min_attempts, f"too few attempts to race: {report}"
        assert self.found_inside > 0, f"no answer ever carried the inside note: {report}"
