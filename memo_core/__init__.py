"""memo_core: the indexing and search engine behind `memo` and `memo-mcp`.

    from memo_core import Engine
    with Engine() as engine:
        hits = engine.search("~/notes", "как настроить бэкап", k=8, mode="hybrid")

This module is the front door: front ends (the CLI, `memo_mcp`, scripts) use what it
exports and nothing deeper.
"""

from ._version import __version__
from .confine import allowed_roots, confine
from .embedder import Embedder, load_model_dir
from .engine import DEFAULT_REFRESH_BUDGET_S, Engine, refresh_budget
from .errors import (
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
)
from .formatting import (
    for_terminal,
    format_hits,
    format_reindex,
    format_status,
    iso_time,
    notice_text,
    shown,
)
from .indexer import Progress, ProgressFn, RefreshStats
from .models import ModelSource
from .regular import read_regular
from .results import CollectionStatus, Hit, SearchResults
from .searcher import Searcher
from .tuning import Tuning
from .values import (
    DEFAULT_K,
    DEFAULT_MODE,
    MAX_K,
    MODES,
    FileNote,
    ModeName,
    Notice,
    NoticeKind,
)
from .walker import find_indexes, index_path, is_note_path, is_within, scan

__all__ = [
    "DEFAULT_K",
    "DEFAULT_REFRESH_BUDGET_S",
    "DEFAULT_MODE",
    "MAX_K",
    "MODES",
    "CollectionStatus",
    "Embedder",
    "Engine",
    "FileNote",
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
    "Notice",
    "NoticeKind",
    "OutsideRootsError",
    "PathNotFoundError",
    "Progress",
    "ProgressFn",
    "RefreshStats",
    "SearchResults",
    "Searcher",
    "Tuning",
    "__version__",
    "allowed_roots",
    "confine",
    "find_indexes",
    "for_terminal",
    "format_hits",
    "format_reindex",
    "format_status",
    "index_path",
    "is_note_path",
    "is_within",
    "iso_time",
    "load_model_dir",
    "notice_text",
    "read_regular",
    "refresh_budget",
    "scan",
    "shown",
]
