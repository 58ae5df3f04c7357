"""A one-line progress bar on stderr for long refreshes (the CLI's; the server reports its own)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from memo_core import Lang, Progress

BAR_WIDTH = 24
MIN_INTERVAL_S = 0.2


class ProgressBar:
    """Callable as an indexer ProgressFn; draws only on a terminal, throttled."""

    def __init__(self, lang: Lang = Lang.RU, stream: TextIO | None = None) -> None:
        self.lang = lang
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._last = 0.0
        self._drawn = False

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if not self.enabled or now - self._last < MIN_INTERVAL_S:
            return
        self._last = now
        self.stream.write("\r" + render(p, self.lang) + "\x1b[K")
        self.stream.flush()
        self._drawn = True

    def done(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


def render(p: Progress, lang: Lang = Lang.RU) -> str:
    """E.g. `index [#####-----]  120/5925 files  1830 chunks  152 chunks/s  ETA 0:38`."""
    elapsed = max(p.elapsed, 1e-6)
    if p.phase == "embed" and p.chunks_total:
        done, total = p.chunks_done, p.chunks_total
        counts = lang.text("bar.chunks", done=done, total=total)
    else:
        done, total = p.files_done, p.files_total
        counts = lang.text("bar.files", done=done, total=total, chunks=p.chunks_done)
    frac = done / total if total else 1.0
    fill = int(frac * BAR_WIDTH)
    rate = p.chunks_done / elapsed
    eta = elapsed * (1 - frac) / frac if frac > 0 else 0.0
    phase = lang.text("bar.embed" if p.phase == "embed" else "bar.index")
    rest = lang.text("bar.rate", rate=rate, eta=f"{int(eta // 60)}:{int(eta % 60):02d}")
    return f"{phase} [{'#' * fill}{'-' * (BAR_WIDTH - fill)}]  {counts}  {rest}"
