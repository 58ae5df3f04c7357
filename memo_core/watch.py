"""Keeping indexes warm while the user writes: re-index notes as they are saved."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import watchfiles

from .searcher import Searcher

DEBOUNCE_MS = 300


def _note_event(_change: watchfiles.Change, path: str) -> bool:
    """Markdown files and folders (a folder moved or deleted takes its notes along); never
    anything under a hidden folder, which covers memo's own writes to `.memo/`."""
    p = Path(path)
    if any(part.startswith(".") for part in p.parts[1:]):
        return False
    return p.suffix.lower() == ".md" or not p.suffix


def watch(
    searchers: Sequence[Searcher],
    report: Callable[[str], None],
    *,
    stop: threading.Event | None = None,
    debounce_ms: int = DEBOUNCE_MS,
) -> None:
    """Refresh each Searcher whose folder changed, and `report` one line per update.

    Blocks until `stop` is set (or Ctrl-C, which returns quietly). The first refresh runs
    before watching starts, so the index is current from the first line on.
    """
    for s in searchers:
        s.refresh(embed=s.has_model())
    report("watching " + ", ".join(str(s.path) for s in searchers) + " (Ctrl-C stops)")
    for changes in watchfiles.watch(
        *(s.path for s in searchers),
        watch_filter=_note_event,
        debounce=debounce_ms,
        stop_event=stop,
        raise_interrupt=False,
    ):
        changed = {Path(p) for _, p in changes}
        for s in searchers:
            if any(p == s.path or p.is_relative_to(s.path) for p in changed):
                t0 = time.monotonic()
                st = s.refresh(embed=s.has_model())
                if st.changed_anything:
                    report(
                        f"{time.strftime('%H:%M:%S')}  {s.path}: новых {st.added}, "
                        f"изменённых {st.changed}, удалённых {st.deleted}; "
                        f"векторов {st.chunks_embedded} ({time.monotonic() - t0:.2f} с)"
                    )
