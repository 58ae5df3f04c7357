"""Keeping indexes warm while the user writes: re-index notes as they are saved."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memo_core import Engine, UserPath, relevant_change, resolve_path, shown, whole_number
from memo_text import Lang, format_update, notice_text

if TYPE_CHECKING:
    import watchfiles

DEBOUNCE_MS = 300
MAX_DEBOUNCE_MS = 60_000  # a minute of quiet: beyond it a save would wait for no reason
WAKE_MS = 500
POLL_MS = 1000  # how often a watcher out of inotify watches looks for changes itself
FEED_WALK_S = 60.0  # how often a feed-driven watch refreshes with no event (see feed)


def watch(
    engine: Engine,
    paths: Sequence[UserPath],
    report: Callable[[str], None],
    *,
    stop: threading.Event | None = None,
    debounce_ms: int = DEBOUNCE_MS,
    ready: threading.Event | None = None,
    lang: Lang = Lang.RU,
) -> None:
    """Refresh each watched folder when its notes change, and `report` one line per update.

    Blocks until `stop` is set; Ctrl-C raises KeyboardInterrupt, as anywhere. The first
    refresh runs before watching starts, so the index is current from the first line on,
    and says what it indexed; one more follows at once, for notes saved while the first
    ran (before changes were watched: on a big folder, seconds); `ready` is set once
    changes are being watched. Changes are judged by the walker's rules
    below each watched folder (a folder that is itself hidden, like ~/.local/share/notes,
    is watched). InvalidArgumentError for a `debounce_ms` outside 0..MAX_DEBOUNCE_MS, first.
    """
    whole_number("debounce", debounce_ms, 0, MAX_DEBOUNCE_MS)
    bases = [resolve_path(p) for p in paths]
    for base in bases:
        _update(engine, base, report, lang)
    report(lang.text("watch.watching", paths=", ".join(shown(str(b)) for b in bases)))
    for base in bases:
        _update(engine, base, report, lang)
    if all(engine.reported(b) for b in bases):  # the engine's own feed: one watcher
        _follow_feed(engine, bases, report, stop or threading.Event(), debounce_ms, ready, lang)
        return
    import watchfiles  # only where no feed of the engine's watches (its import costs a search)

    polling = False
    while True:
        try:
            for changes in watchfiles.watch(
                *bases,
                watch_filter=lambda change, path: any(_relevant(b, change, path) for b in bases),
                debounce=debounce_ms,
                stop_event=stop,
                raise_interrupt=True,  # Ctrl-C for the caller, not watchfiles' English log line
                # An empty set every so often: how `ready` learns the watcher is running.
                yield_on_timeout=True,
                rust_timeout=WAKE_MS,
                force_polling=polling or None,
                poll_delay_ms=POLL_MS,
            ):
                if ready is not None:
                    ready.set()
                for base in bases:
                    if any(_relevant(base, change, path) for change, path in changes):
                        _update(engine, base, report, lang)
            return
        except OSError as e:  # no inotify instance or watch left (the user's limits)
            if polling:
                raise
            polling = True
            report(lang.text("watch.polling", reason=shown(lang.word(e)), ms=POLL_MS))


def _follow_feed(
    engine: Engine,
    bases: list[Path],
    report: Callable[[str], None],
    stop: threading.Event,
    debounce_ms: int,
    ready: threading.Event | None,
    lang: Lang,
) -> None:
    """Refresh when the OS reports a change through the engine's feed (Linux): no second
    watcher on the same folders. A refresh looks only where the feed says; one runs every
    FEED_WALK_S anyway, for what no event names (the feed then walks when it is due)."""
    last = time.monotonic()
    if ready is not None:
        ready.set()  # the feeds were started by the first refresh
    while not stop.is_set():
        changed = engine.wait_for_change(WAKE_MS / 1000)
        if not changed and time.monotonic() - last < FEED_WALK_S:
            continue
        if changed:
            stop.wait(debounce_ms / 1000)  # a burst of saves: one refresh after it
        last = time.monotonic()
        for base in bases:
            _update(engine, base, report, lang)


def _relevant(base: Path, change: watchfiles.Change, path: str) -> bool:
    from watchfiles import Change  # imported by then (watch)

    return relevant_change(base, path, deleted=change == Change.deleted)


def _update(engine: Engine, base: Path, report: Callable[[str], None], lang: Lang) -> None:
    t0 = time.monotonic()
    stats = engine.refresh(base)
    for n in stats.notices:
        report(notice_text(n, lang))
    if stats.changed_anything:
        line = format_update(str(base), stats, time.monotonic() - t0, lang)
        report(f"{time.strftime('%H:%M:%S')}  {line}")
