"""A one-line progress bar on stderr for long refreshes (the CLI's; the server reports its own)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from memo_core import Progress

BAR_WIDTH = 24
MIN_INTERVAL_S = 0.2


class ProgressBar:
    """Callable as an indexer ProgressFn; draws only on a terminal, throttled."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._last = 0.0
        self._drawn = False

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if not self.enabled or now - self._last < MIN_INTERVAL_S:
            return
        self._last = now
        self.stream.write("\r" + render(p) + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def done(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


def render(p: Progress) -> str:
    """E.g. `index [#####-----]  120/5925 files  1830 chunks  152/s  ETA 0:38`."""
    elapsed = max(p.elapsed, 1e-6)
    if p.phase == "embed" and p.chunks_total:
        done, total = p.chunks_done, p.chunks_total
        counts = f"{done}/{total} chunks"
    else:
        done, total = p.files_done, p.files_total
        counts = f"{done}/{total} files  {p.chunks_done} chunks"
    frac = done / total if total else 1.0
    fill = int(frac * BAR_WIDTH)
    rate = p.chunks_done / elapsed
    eta = elapsed * (1 - frac) / frac if frac > 0 else 0.0
    return (
        f"{p.phase} [{'#' * fill}{'-' * (BAR_WIDTH - fill)}]  {counts}  "
        f"{rate:.0f} chunks/s  ETA {int(eta // 60)}:{int(eta % 60):02d}"
    )
