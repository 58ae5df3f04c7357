"""The calls both front ends make (the `memo` CLI and the MCP tools), so they never disagree.

A process keeps one Searcher per path, so indexes stay open and the model stays loaded
between calls (the MCP server lives for a whole agent session).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .discovery import resolve_path
from .formatting import format_hits, format_reindex, format_status
from .indexer import ProgressFn
from .searcher import Searcher

_lock = threading.Lock()
_searchers: dict[Path, Searcher] = {}


def searcher_for(path: str | os.PathLike[str]) -> Searcher:
    """The process's Searcher for this path (opened once, then reused)."""
    key = resolve_path(path)
    with _lock:
        if key not in _searchers:
            _searchers[key] = Searcher(key)
        return _searchers[key]


def close_all() -> None:
    with _lock:
        for s in _searchers.values():
            s.close()
        _searchers.clear()


def search_text(
    path: str,
    query: str,
    k: int = 8,
    mode: str = "hybrid",
    *,
    base: str | None = None,
    progress: ProgressFn | None = None,
) -> str:
    results = searcher_for(path).search(query, k=k, mode=mode, progress=progress)
    return format_hits(results, base=base)


def status_text(path: str) -> str:
    return format_status(searcher_for(path).status())


def reindex_text(path: str, progress: ProgressFn | None = None) -> str:
    return format_reindex(searcher_for(path).reindex(progress))
