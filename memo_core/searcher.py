"""`Searcher`: one path bound to an Engine, for scripts and the README's Python example.

from memo_core import Searcher
hits = Searcher("~/notes").search("как настроить бэкап")
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from memo_core.collection import Collection
from memo_core.engine import Engine, UserPath
from memo_core.files.discovery import resolve_path
from memo_core.index.indexer import RefreshStats
from memo_core.model.embedder import Embedder
from memo_core.model.loading import ModelSource
from memo_core.results import CollectionStatus, SearchResults
from memo_core.tuning import Tuning


class Searcher:
    """The Engine's calls for one path: `search`, `refresh`, `status`, `reindex` are the
    Engine's own with the path bound (the same arguments, nothing spelled twice). Without
    `engine`, it builds and owns one (from `tuning`, and `embedder` or `use_model=False`
    in place of the configured model)."""

    search: Callable[..., SearchResults]  # Engine.search(path, ...)
    refresh: Callable[..., RefreshStats]  # Engine.refresh(path, ...)
    status: Callable[[], list[CollectionStatus]]  # Engine.status(path)
    reindex: Callable[..., int]  # Engine.reindex(path, ...)

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
        self.search = partial(self.engine.search, self.path)
        self.refresh = partial(self.engine.refresh, self.path)
        self.status = partial(self.engine.status, self.path)
        self.reindex = partial(self.engine.reindex, self.path)

    @property
    def collections(self) -> list[Collection]:
        return self.engine.collections(self.path)

    def close(self) -> None:
        if self._owns:
            self.engine.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
