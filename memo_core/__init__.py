"""memo_core: the indexing and search engine behind `memo` and `memo-mcp`.

    from memo_core import Engine
    with Engine() as engine:
        hits = engine.search("~/notes", "как настроить бэкап", k=8, mode="hybrid")

This module is the front door: front ends (the CLI, `memo_mcp`, scripts) use what it
exports and nothing deeper. What needs numpy, SQLite or the model (the Engine and what it
is made of) is imported on first use, so a front end that starts before its first call
(memo-mcp answering `initialize`) does not pay for it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .confine import allowed_roots, confine
from .errors import (
    FolderChangedError,
    IndexBusyError,
    IndexLocationError,
    IndexStoreError,
    InvalidArgumentError,
    MemoError,
    ModelInstallError,
    ModelUnavailableError,
    NoCollectionError,
    OutsideRootsError,
    PathNotFoundError,
    ResourceLimitError,
)
from .formatting import (
    changes_data,
    for_terminal,
    format_changes,
    format_hits,
    format_reindex,
    format_status,
    iso_time,
    notice_text,
    shown,
)
from .fsafe import Escape, Folder, NotRegularFile, open_collection
from .results import ChangeReport, CollectionStatus, Hit, SearchResults
from .values import (
    DEFAULT_K,
    DEFAULT_MODE,
    DEFAULT_REFRESH_BUDGET_S,
    MAX_K,
    MODES,
    FileNote,
    ModeName,
    Notice,
    NoticeKind,
    refresh_budget,
)
from .walker import find_indexes, index_path, is_note_path, is_within, scan

if TYPE_CHECKING:
    from .embedder import Embedder
    from .engine import Engine
    from .indexer import Progress, ProgressFn, RefreshStats
    from .models import ModelSource
    from .onnx_embedder import load_model_dir
    from .searcher import Searcher
    from .tuning import Tuning

# Exported names that live in heavy modules, by module: imported when first asked for.
_LAZY = {
    "Embedder": "embedder",
    "load_model_dir": "onnx_embedder",
    "Engine": "engine",
    "Progress": "indexer",
    "ProgressFn": "indexer",
    "RefreshStats": "indexer",
    "ModelSource": "models",
    "Searcher": "searcher",
    "Tuning": "tuning",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # asked once: from now on an ordinary attribute
    return value


__all__ = [
    "DEFAULT_K",
    "DEFAULT_MODE",
    "DEFAULT_REFRESH_BUDGET_S",
    "MAX_K",
    "MODES",
    "ChangeReport",
    "CollectionStatus",
    "Embedder",
    "Engine",
    "Escape",
    "FileNote",
    "Folder",
    "FolderChangedError",
    "Hit",
    "IndexBusyError",
    "IndexLocationError",
    "IndexStoreError",
    "InvalidArgumentError",
    "MemoError",
    "ModeName",
    "ModelInstallError",
    "ModelSource",
    "ModelUnavailableError",
    "NoCollectionError",
    "NotRegularFile",
    "Notice",
    "NoticeKind",
    "OutsideRootsError",
    "PathNotFoundError",
    "Progress",
    "ProgressFn",
    "RefreshStats",
    "ResourceLimitError",
    "SearchResults",
    "Searcher",
    "Tuning",
    "__version__",
    "allowed_roots",
    "changes_data",
    "confine",
    "find_indexes",
    "for_terminal",
    "format_changes",
    "format_hits",
    "format_reindex",
    "format_status",
    "index_path",
    "is_note_path",
    "is_within",
    "iso_time",
    "load_model_dir",
    "notice_text",
    "open_collection",
    "refresh_budget",
    "scan",
    "shown",
]
