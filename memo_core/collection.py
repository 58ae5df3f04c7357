"""One collection: a notes folder and its index, safe to use from threads and processes.

Two SQLite connections: one for reading, serialised by an RLock, and one for the single
refresher, so searches keep answering from the last committed snapshot (WAL) while a long
refresh or rebuild runs. Across processes a lock file lets one refresher work at a time; a
search that finds it taken answers from the snapshot instead of doing the same work twice.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import numpy as np

from . import fusion
from .discovery import INDEX_DIR, INDEX_FILE
from .embedder import Embedder
from .errors import IndexBusyError, IndexLocationError, IndexStoreError
from .filelock import FileLock
from .indexer import Indexer, ProgressFn, RefreshStats
from .model_install import cache_dir
from .results import CollectionStatus, Hit
from .store import Store
from .vectors import VectorCache

LOCK_FILE = "refresh.lock"
# When each collection folder was last refreshed by this process, whichever Searcher (and so
# whichever Collection object) did it: status reports the same time through all of them.
_refreshed_at: dict[Path, float] = {}


def fallback_index_path(root: Path) -> Path:
    """Where the index lives when the collection folder cannot hold it."""
    tag = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return cache_dir() / "indexes" / f"{root.name}-{tag}" / INDEX_FILE


class Collection:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.RLock()
        self.location_note: str | None = None
        try:
            self._store = Store(_own_index_path(root))
        except IndexLocationError as e:
            # A read-only folder, or a filesystem without WAL: keep the index in the cache.
            self._store = Store(fallback_index_path(root))
            self.location_note = f"index kept in {self._store.path} ({e})"
        self.db_path = self._store.path
        self._refresh_lock = threading.Lock()
        self._file_lock = FileLock(self.db_path.with_name(LOCK_FILE))
        self._writer: Store | None = None
        self._rebuilding = False
        self._vectors = VectorCache()

    def close(self) -> None:
        with self._refresh_lock, self._lock:
            self._store.close()
            if self._writer is not None:
                self._writer.close()

    @contextmanager
    def _sqlite_errors(self) -> Iterator[None]:
        try:
            yield
        except apsw.BusyError as e:
            raise IndexBusyError(
                f"the index {self.db_path} is busy in another process; try again shortly"
            ) from e
        except apsw.Error as e:
            raise IndexStoreError(
                f"the index {self.db_path} failed: {e}; run `memo reindex {self.root}`"
            ) from e

    @contextmanager
    def _reading(self) -> Iterator[Store]:
        with self._lock, self._sqlite_errors():
            yield self._store

    def _writing(self) -> Store:
        """The refresher's own connection (call only while holding the refresh lock)."""
        if self._writer is None:
            self._writer = Store(self.db_path)
        return self._writer

    @contextmanager
    def _refreshing(self, wait: bool) -> Iterator[str | None]:
        """Be the one refresher, in this process and then across processes.

        Yields None once this caller may write, or (when `wait` is False) why it may not:
        a rebuild under way here, or another process refreshing. A refresh in this process
        is waited for even then: it is the same work, and the caller's answer needs it.
        """
        while not self._refresh_lock.acquire(timeout=0.05):
            if not wait and self._rebuilding:
                yield "индекс перестраивается; ответ по прежнему индексу"
                return
        try:
            if not self._file_lock.acquire(wait=wait):
                yield "индекс обновляется другим процессом; ответ по последнему снимку"
                return
            try:
                yield None
            finally:
                self._file_lock.release()
        finally:
            self._refresh_lock.release()

    def refresh(
        self, embedder: Embedder | None, progress: ProgressFn | None, *, wait: bool = True
    ) -> RefreshStats:
        """Update the index. With `wait` False, a rebuild here or a refresh in another
        process is not waited for: the stats then list why under `busy`."""
        with self._refreshing(wait) as busy:
            if busy:
                return RefreshStats(busy=[f"{self.root}: {busy}"])
            with self._sqlite_errors():
                stats = Indexer(self.root, self._writing(), embedder).refresh(progress)
            _refreshed_at[self.root] = time.time()
            return stats

    def search(self, match: str, qvec: np.ndarray | None, k: int, mode: str) -> list[Hit]:
        """This collection's k best hits, all read from one snapshot, so a writer committing
        meanwhile (another process's refresh) cannot remove a hit between its steps."""
        n = k if mode != "hybrid" else max(k, fusion.FUSION_CANDIDATES)
        with self._reading() as store, store.snapshot():
            lex = store.lex(match, n) if mode != "vec" and match else []
            vec: list[tuple[int, float]] = []
            if qvec is not None:
                self._vectors.sync(store)
                vec = self._vectors.nearest(qvec, n)
            if mode == "hybrid":
                ranked = fusion.fuse(lex, vec)[:k]
            else:
                side = "lex" if mode == "lex" else "vec"
                ranked = [(cid, score, (side,)) for cid, score in (lex or vec)]
            rows = store.chunk_rows([cid for cid, _, _ in ranked])
        return [
            Hit(
                path=str(self.root.joinpath(*rows[cid].path.split("/"))),
                relpath=rows[cid].path,
                collection=str(self.root),
                line=rows[cid].line,
                heading=rows[cid].heading,
                text=rows[cid].text,
                score=float(score),
                found_by=sides,
            )
            for cid, score, sides in ranked
        ]

    def status(self) -> CollectionStatus:
        with self._reading() as s:
            files, chunks, skipped = s.counts()
            updated = s.get_meta("updated_at")
            return CollectionStatus(
                root=str(self.root),
                files=files,
                chunks=chunks,
                skipped=skipped,
                updated_at=float(updated) if updated else None,
                model=s.get_meta("vec_model"),
                chunks_without_vectors=s.count_without_vectors(),
                notes=s.notes(),
                index_path=str(self.db_path),
                location_note=self.location_note,
                fingerprint=s.fingerprint(),
                refreshed_at=max(_refreshed_at.get(self.root, 0.0), float(updated or 0.0)) or None,
            )

    def rebuild(self, embedder: Embedder | None, progress: ProgressFn | None) -> int:
        """Build a fresh index beside the live one, then copy it in as one transaction.

        Searches (in any process) keep answering from the old index while the new one is
        built; a crash mid-build leaves the old one untouched. Only memo's own files in the
        index folder are written: the live index (already recognised as memo's on open)
        and a scratch file memo names and removes.
        """
        # One name: the refresh lock makes this the only rebuild, so whatever lies there is
        # the leftover of a rebuild that crashed.
        scratch = self.db_path.with_name(f"{INDEX_FILE}.rebuild")
        with self._refreshing(wait=True):
            _remove_db_files(scratch)
            self._rebuilding = True
            try:
                fresh = Store(scratch)
                try:
                    Indexer(self.root, fresh, embedder).refresh(progress)
                    files = fresh.counts()[0]
                    with self._sqlite_errors():
                        self._writing().replace_with(fresh)
                finally:
                    fresh.close()
            finally:
                self._rebuilding = False
                _remove_db_files(scratch)
        return files


def _own_index_path(root: Path) -> Path:
    """`<root>/.memo/index.db`, unless `.memo` leads out of the collection (a symlink):
    memo writes only inside the folders it was given."""
    folder = root / INDEX_DIR
    real = Path(os.path.realpath(folder))
    if real != folder and not real.is_relative_to(root):
        raise IndexLocationError(f"{folder} leads outside the collection, to {real}")
    return folder / INDEX_FILE


def _remove_db_files(db: Path) -> None:
    for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        p.unlink(missing_ok=True)
