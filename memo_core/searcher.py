"""The engine's front: a Searcher over one path (one collection or a folder of them)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from . import models, textnorm
from .collection import Collection
from .discovery import discover, resolve_path
from .embedder import Embedder
from .errors import InvalidArgumentError, ModelUnavailableError
from .indexer import ProgressFn, RefreshStats
from .results import CollectionStatus, SearchResults

MODES: tuple[str, ...] = ("hybrid", "lex", "vec")
MAX_K = 100
MAX_QUERY_CHARS = 4000


class Searcher:
    """Search one path; every search refreshes the index first (incrementally).

    `embedder`: a model to use instead of the configured one; `use_model=False` runs on
    words alone (hybrid then says so, vec is an error). Safe to share between threads.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        embedder: Embedder | None = None,
        use_model: bool = True,
        auto_install: bool = True,
    ) -> None:
        self.path = resolve_path(path)
        self._embedder = embedder
        self._use_model = use_model
        self._auto_install = auto_install
        self._lock = threading.Lock()
        self._collections: dict[Path, Collection] = {}
        self._rediscover()

    @property
    def collections(self) -> list[Collection]:
        return list(self._collections.values())

    def close(self) -> None:
        with self._lock:
            for c in self._collections.values():
                c.close()
            self._collections.clear()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- model --------------------------------------------------------------------------

    def embedder(self) -> Embedder:
        """The model for vectors; ModelUnavailableError says why there is none."""
        if self._embedder is not None:
            return self._embedder
        if not self._use_model:
            raise ModelUnavailableError("this search runs without a model (words only)")
        return models.get_embedder(auto_install=self._auto_install)

    def has_model(self) -> bool:
        try:
            self.embedder()
        except ModelUnavailableError:
            return False
        return True

    # -- operations ---------------------------------------------------------------------

    def refresh(
        self, *, embed: bool = True, progress: ProgressFn | None = None, wait: bool = True
    ) -> RefreshStats:
        """Bring every collection's index up to date; `embed=False` leaves vectors for later.

        `wait=False`: where a rebuild or another process is at work on a collection, leave
        it to them (`busy` says where and why) instead of waiting.
        """
        embedder = self.embedder() if embed else None
        total = RefreshStats()
        for c in self._rediscover():
            s = c.refresh(embedder, progress, wait=wait)
            total.busy.extend(s.busy)
            for name in (
                "added",
                "changed",
                "deleted",
                "touched",
                "chunks_written",
                "chunks_embedded",
                "seconds",
            ):
                setattr(total, name, getattr(total, name) + getattr(s, name))
            total.notes.extend(s.notes)
        return total

    def search(
        self,
        query: str,
        k: int = 8,
        mode: str = "hybrid",
        *,
        refresh: bool = True,
        progress: ProgressFn | None = None,
    ) -> SearchResults:
        """The k best passages for `query`, after a refresh (`refresh=False`: as indexed).

        A refresh under way in this process is waited for; a rebuild or another process's
        refresh is not: the answer then comes from the last snapshot and says so.
        """
        if mode not in MODES:
            raise InvalidArgumentError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise InvalidArgumentError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
        if not isinstance(query, str) or not query.strip():
            raise InvalidArgumentError("the query is empty: say what to look for")
        k = min(k, MAX_K)
        query = query[:MAX_QUERY_CHARS]
        notices: list[str] = []
        embedder: Embedder | None = None
        if mode != "lex":
            try:
                embedder = self.embedder()
            except ModelUnavailableError as e:
                if mode == "vec":
                    raise ModelUnavailableError(
                        f"vector search needs a model: {e}. Use mode 'lex' or 'hybrid'"
                    ) from e
                notices.append(f"модель недоступна ({e}); ответ только по словам")
                mode = "lex"
        if refresh:
            notices += self.refresh(embed=embedder is not None, progress=progress, wait=False).busy
        qvec = embedder.embed([query], query=True)[0] if embedder is not None else None
        match = textnorm.fts_match(textnorm.query_terms(query))
        hits = [h for c in self.collections for h in c.search(match, qvec, k, mode)]
        hits.sort(key=lambda h: (-h.score, h.path, h.line))
        return SearchResults(hits[:k], mode, notices)

    def status(self) -> list[CollectionStatus]:
        return [c.status() for c in self._rediscover()]

    def reindex(self, progress: ProgressFn | None = None) -> int:
        """Rebuild every collection's index from scratch; the number of files indexed."""
        try:
            embedder: Embedder | None = self.embedder()
        except ModelUnavailableError:
            embedder = None  # words now; vectors are filled in by the next search
        return sum(c.rebuild(embedder, progress) for c in self._rediscover())

    # -- collections --------------------------------------------------------------------

    def _rediscover(self) -> list[Collection]:
        """Pick up collections created under the path since the last call."""
        roots = discover(self.path)
        with self._lock:
            for root in roots:
                if root not in self._collections:
                    self._collections[root] = Collection(root)
            return [self._collections[r] for r in roots]
