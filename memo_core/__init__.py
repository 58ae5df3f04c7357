"""memo_core: the indexing and search engine behind `memo` and `memo-mcp`.

    from memo_core import Engine
    with Engine() as engine:
        hits = engine.search("~/notes", "как настроить бэкап", k=8, mode="hybrid")

This module is the front door: front ends (the CLI, `memo_mcp`, the presentation layer
`memo_text`, scripts) use what it exports and nothing deeper. The engine answers with data
and keyed errors; the texts people read are `memo_text`'s. What needs numpy, SQLite or the
model (the Engine and what it is made of) is imported on first use, so a front end that
starts before its first call (memo-mcp answering `initialize`) does not pay for it.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

from memo_core import settings
from memo_core._version import __version__
from memo_core.errors import (
    DiskFullError,
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
from memo_core.messages import TEXTS as ENGINE_TEXTS
from memo_core.messages import Message, error_text, os_reason
from memo_core.results import ChangeReport, CollectionStatus, Explain, Hit, SearchResults
from memo_core.text.escapes import for_terminal, shown
from memo_core.values import (
    CUT,
    DEFAULT_K,
    DEFAULT_MODE,
    DEFAULT_REFRESH_BUDGET_S,
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
    )
    from memo_core.model.loading import ModelSource
    from memo_core.model.onnx_embedder import load_model_dir
    from memo_core.model.sources import (
        DEFAULT_SOURCE,
        MODELS,
        chosen_source,
        install_command,
        model_dirs_of,
        parts_of,
    )
    from memo_core.searcher import Searcher
    from memo_core.tuning import Tuning

# Exported names that live in heavy modules, by module: imported when first asked for.
_LAZY = {
    "engine": ("Engine", "UserPath"),
    "files.scope": ("Scope",),  # its tags are read as the front matter's (a YAML parser)
    "index.indexer": ("Progress", "ProgressFn", "RefreshStats"),
    "model.embedder": ("Embedder",),
    "model.install": ("install_named", "is_installed", "model_config_text"),
    "model.loading": ("ModelSource",),
    "model.onnx_embedder": ("load_model_dir",),
    "model.sources": (
        "DEFAULT_SOURCE",
        "MODELS",
        "chosen_source",
        "install_command",
        "model_dirs_of",
        "parts_of",
    ),
    "searcher": ("Searcher",),
    "tuning": ("Tuning",),
}
_LAZY_MODULE = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _LAZY_MODULE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # asked once: from now on an ordinary attribute
    return value


# Every name the front door offers, each listed once: what it imports above (less what only
# the front door itself uses, and the sub-packages importing makes attributes) and the lazy
# ones. `settings` is a module offered as such.
_ITS_OWN = {"annotations", "import_module", "TYPE_CHECKING", "Any", "ModuleType"}
__all__ = sorted(
    {n for n, v in globals().items() if not n.startswith("_") and not isinstance(v, ModuleType)}
    - _ITS_OWN
    | {"settings", "__version__"}
    | set(_LAZY_MODULE)
)
