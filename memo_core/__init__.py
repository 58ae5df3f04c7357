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

from memo_core import settings
from memo_core._version import __version__
from memo_core.catalogue import Lang, Message, user_language
from memo_core.errors import (
    FolderChangedError,
    IndexBusyError,
    IndexLocationError,
    IndexStoreError,
    InvalidArgumentError,
    MemoError,
    ModelInstallError,
    ModelUnavailableError,
    NoCollectionError,
    NotANoteError,
    NoteNotFoundError,
    NoteUnreadableError,
    OutsideRootsError,
    PathNotFoundError,
    ResourceLimitError,
    SettingError,
)
from memo_core.files.confine import allowed_roots, confine
from memo_core.files.discovery import resolve_path
from memo_core.files.notes import AROUND_LINES, NOTE_LIMIT, NoteLines, NoteText
from memo_core.files.walker import find_indexes, relevant_change
from memo_core.formatting import (
    WordedParser,
    changes_data,
    file_note_text,
    format_changes,
    format_hits,
    format_read,
    format_refresh,
    format_reindex,
    format_status,
    format_update,
    iso_time,
    listen_failed_text,
    note_text,
    notice_text,
    search_data,
)
from memo_core.results import ChangeReport, CollectionStatus, Explain, Hit, SearchResults
from memo_core.shutdown import leave
from memo_core.text.escapes import for_terminal, shown
from memo_core.values import (
    DEFAULT_K,
    DEFAULT_MAX_CHARS,
    DEFAULT_MODE,
    DEFAULT_REFRESH_BUDGET_S,
    MAX_CHARS_RANGE,
    MAX_K,
    MAX_OFFSET,
    MODES,
    SERVER_REFRESH_BUDGET_S,
    FileNote,
    ModeName,
    Notice,
    NoticeKind,
    refresh_budget,
    whole_number,
)

if TYPE_CHECKING:
    from memo_core.engine import Engine, UserPath
    from memo_core.files.scope import Scope
    from memo_core.index.indexer import Progress, ProgressFn, RefreshStats
    from memo_core.model.embedder import Embedder
    from memo_core.model.install import (
        install_named,
        is_installed,
        model_config_text,
        resolve_model_dir,
    )
    from memo_core.model.loading import ModelSource
    from memo_core.model.onnx_embedder import load_model_dir
    from memo_core.model.sources import DEFAULT_SOURCE, MODELS, chosen_source, install_command
    from memo_core.searcher import Searcher
    from memo_core.tuning import Tuning

# Exported names that live in heavy modules, by module: imported when first asked for.
_LAZY = {
    "Embedder": "model.embedder",
    "load_model_dir": "model.onnx_embedder",
    "Engine": "engine",
    "UserPath": "engine",
    "install_named": "model.install",
    "is_installed": "model.install",
    "model_config_text": "model.install",
    "resolve_model_dir": "model.install",
    "DEFAULT_SOURCE": "model.sources",
    "MODELS": "model.sources",
    "chosen_source": "model.sources",
    "install_command": "model.sources",
    "Progress": "index.indexer",
    "ProgressFn": "index.indexer",
    "RefreshStats": "index.indexer",
    "ModelSource": "model.loading",
    "Scope": "files.scope",  # its tags are read as the front matter's (a YAML parser)
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
    "AROUND_LINES",
    "NOTE_LIMIT",
    "ChangeReport",
    "CollectionStatus",
    "DEFAULT_K",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MODE",
    "DEFAULT_REFRESH_BUDGET_S",
    "SERVER_REFRESH_BUDGET_S",
    "DEFAULT_SOURCE",
    "Embedder",
    "Engine",
    "Explain",
    "FileNote",
    "FolderChangedError",
    "Hit",
    "IndexBusyError",
    "IndexLocationError",
    "IndexStoreError",
    "InvalidArgumentError",
    "Lang",
    "MAX_CHARS_RANGE",
    "MAX_K",
    "MAX_OFFSET",
    "MODELS",
    "MODES",
    "MemoError",
    "Message",
    "ModeName",
    "ModelInstallError",
    "ModelSource",
    "ModelUnavailableError",
    "NoCollectionError",
    "NotANoteError",
    "NoteLines",
    "NoteNotFoundError",
    "NoteText",
    "NoteUnreadableError",
    "Notice",
    "NoticeKind",
    "OutsideRootsError",
    "PathNotFoundError",
    "Progress",
    "ProgressFn",
    "RefreshStats",
    "ResourceLimitError",
    "SettingError",
    "Scope",
    "SearchResults",
    "Searcher",
    "Tuning",
    "UserPath",
    "WordedParser",
    "__version__",
    "allowed_roots",
    "changes_data",
    "chosen_source",
    "confine",
    "file_note_text",
    "find_indexes",
    "for_terminal",
    "format_changes",
    "format_hits",
    "format_read",
    "format_refresh",
    "format_reindex",
    "format_status",
    "format_update",
    "install_command",
    "install_named",
    "is_installed",
    "model_config_text",
    "iso_time",
    "listen_failed_text",
    "load_model_dir",
    "note_text",
    "notice_text",
    "leave",
    "refresh_budget",
    "relevant_change",
    "resolve_model_dir",
    "resolve_path",
    "search_data",
    "settings",
    "shown",
    "user_language",
    "whole_number",
]
