"""`Searcher`: one path bound to an Engine, for scripts and the README's Python example.

from memo_core import Searcher
hits = Searcher("~/notes").search("как настроить бэкап")
"""

from __future__ import annotations

from pathlib import Path

from memo_core.collection import Collection
from memo_core.engine import Engine, UserPath
from memo_core.files.discovery import resolve_path
from memo_core.files.scope import Scope
from memo_core.index.indexer import ProgressFn, RefreshStats
from memo_core.model.embedder import Embedder
from memo_core.model.loading import ModelSource
from memo_core.results import CollectionStatus, SearchResults
from memo_core.tuning import Tuning
from memo_core.values import DEFAULT_K, DEFAULT_MODE, ModeName


class Searcher:
    """The Engine's calls for one path. Without `engine`, it builds and owns one (from
    `tuning`, and `embedder` or `use_model=False` in place of the configured model)."""

    def __init__(
        self,
        path: UserPath,
        *,
        engine: Engine | None = None,
        embedder: Embedder | None = None,
        use_model: bool = True,
        tuning: Tuning | None = None,
    ) -> None:
        self._owns = engine is None
        self.engine = engine or Engine(
            tuning=tuning, models=ModelSource(embedder, enabled=use_model)
        )
        self.path: Path = resolve_path(path)

    @property
    def collections(self) -> list[Collection]:
        return self.engine.collections(self.path)

    def search(
        self,
        query: str,
        k: int = DEFAULT_K,
        mode: ModeName = DEFAULT_MODE,
        *,
        refresh: bool = True,
        progress: ProgressFn | None = None,
        explain: bool = False,
        offset: int = 0,
        max_chars: int | None = None,
        scope: Scope | None = None,
    ) -> SearchResults:
        return self.engine.search(
            self.path,
            query,
            k,
            mode,
            refresh=refresh,
            progress=progress,
            explain=explain,
            offset=offset,
            max_chars=max_chars,
            scope=scope,
        )

    def refresh(
        self, *, embed: bool = True, progress: ProgressFn | None = None, wait: bool = True
    ) -> RefreshStats:
        return self.engine.refresh(self.path, embed=embed, progress=progress, wait=wait)

    def status(self) -> list[CollectionStatus]:
        return self.engine.status(self.path)

    def reindex(self, progress: ProgressFn | None = None) -> int:
        return self.engine.reindex(self.path, progress)

    def close(self) -> None:
        if self._owns:
            self.engine.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
