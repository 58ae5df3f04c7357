"""A one-line progress bar on stderr for long refreshes (the CLI's; the server reports its own)."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from memo_core import shown
from memo_text import Lang

if TYPE_CHECKING:
    from memo_core import Progress

BAR_WIDTH = 24
MIN_INTERVAL_S = 0.2
# Outside a terminal (a log file, a pipe, a service), a line this often: a long `memo index`
# says it is alive and how far it got, without a line per batch.
LINE_INTERVAL_S = 5.0


class ProgressBar:
    """Callable as an indexer ProgressFn; on a terminal a bar redrawn in place, throttled;
    elsewhere, with `lines`, a line every LINE_INTERVAL_S (nothing without)."""

    def __init__(
        self,
        lang: Lang = Lang.RU,
        stream: TextIO | None = None,
        *,
        lines: bool = False,
        lock: threading.Lock | None = None,
    ) -> None:
        self.lang = lang
        self.stream = stream or sys.stderr
        self.terminal = self.stream.isatty()
        self.enabled = self.terminal or lines
        self._last = time.monotonic() if not self.terminal else 0.0  # a line once work is long
        self._drawn = False
        self.lock = lock or threading.Lock()  # reports come from refresh threads too

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        interval = MIN_INTERVAL_S if self.terminal else LINE_INTERVAL_S
        if not self.enabled or now - self._last < interval:
            return
        self._last = now
        with self.lock:
            if self.terminal:
                self.stream.write("\r" + render(p, self.lang) + "\x1b[K")
                self._drawn = True
            else:
                self.stream.write("memo: " + render(p, self.lang) + "\n")
            self.stream.flush()

    def done(self) -> None:
        with self.lock:
            self.clear_line()

    def clear_line(self) -> None:
        """The bar's line cleared, for a line of text in its place (the caller holds
        `lock`)."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


class Console:
    """The CLI's stderr: one-line messages, and the bar of the command under way; a message
    takes the bar's line (a model installing says its steps while a search draws its bar),
    and the bar is drawn again below it with the next report."""

    def __init__(self, lang: Lang = Lang.RU, stream: TextIO | None = None) -> None:
        self.lang = lang
        self.stream = stream or sys.stderr
        self._lock = threading.Lock()
        self._bar: ProgressBar | None = None

    def bar(self, *, lines: bool = False) -> ProgressBar:
        """A new bar for a command (`lines`: also outside a terminal, a line now and then)."""
        self._bar = ProgressBar(self.lang, self.stream, lines=lines, lock=self._lock)
        return self._bar

    def say(self, line: str) -> None:
        """`memo: <line>` on a line of its own: control characters (a folder's name may
        hold a newline or a terminal escape) escaped, so it stays one line."""
        with self._lock:
            if self._bar is not None:
                self._bar.clear_line()
            self.stream.write(f"memo: {shown(line)}\n")
            self.stream.flush()


# A refresh's passes as the bar names them: words, passages' vectors, sentences' vectors.
_PHASES = {"index": "bar.index", "embed": "bar.embed", "sentences": "bar.sentences"}


def render(p: Progress, lang: Lang = Lang.RU) -> str:
    """E.g. `index [#####-----]  120/5925 files  1830 chunks  152 chunks/s  ETA 0:38`."""
    elapsed = max(p.elapsed, 1e-6)
    if p.phase != "index" and p.chunks_total:
        done, total = p.chunks_done, p.chunks_total
        counts = lang.text("bar.chunks", done=done, total=total)
    else:
        done, total = p.files_done, p.files_total
        counts = lang.text("bar.files", done=done, total=total, chunks=p.chunks_done)
    frac = done / total if total else 1.0
    fill = int(frac * BAR_WIDTH)
    # The pace of this run: passages done by an earlier one (a restart) took none of it.
    before = p.chunks_before if p.phase != "index" else 0
    rate = (p.chunks_done - p.chunks_before) / elapsed
    ran = done - before
    eta = elapsed * (total - done) / ran if ran > 0 else 0.0
    phase = lang.text(_PHASES.get(p.phase, "bar.index"))
    rest = lang.text("bar.rate", rate=rate, eta=f"{int(eta // 60)}:{int(eta % 60):02d}")
    return f"{phase} [{'#' * fill}{'-' * (BAR_WIDTH - fill)}]  {counts}  {rest}"
