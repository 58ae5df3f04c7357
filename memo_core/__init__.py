"""memo_core: the indexing and search engine behind `memo` and `memo-mcp`.

from memo_core import Searcher
hits = Searcher("~/notes").search("как настроить бэкап", k=8, mode="hybrid")
"""

from importlib.metadata import PackageNotFoundError, version

from .errors import (
    IndexStoreError,
    InvalidArgumentError,
    MemoError,
    ModelInstallError,
    ModelUnavailableError,
    NoCollectionError,
    PathNotFoundError,
)
from .results import CollectionStatus, Hit, SearchResults
from .searcher import MODES, Searcher

try:
    __version__ = version("memo-notes")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.1.0"

__all__ = [
    "MODES",
    "CollectionStatus",
    "Hit",
    "IndexStoreError",
    "InvalidArgumentError",
    "MemoError",
    "ModelInstallError",
    "ModelUnavailableError",
    "NoCollectionError",
    "PathNotFoundError",
    "SearchResults",
    "Searcher",
    "__version__",
]
