"""One collection: a notes folder and its index, guarded for use from several threads."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .discovery import INDEX_DIR, INDEX_FILE
from .embedder import Embedder
from .indexer import Indexer, ProgressFn, RefreshStats
from .results import CollectionStatus, Hit
from .store import Store


class Collection:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.db_path = root / INDEX_DIR / INDEX_FILE
        self._lock = threading.RLock()
        self._store = Store(self.db_path)

    def close(self) -> None:
        with self._lock:
            self._store.close()

    def refresh(self, embedder: Embedder | None, progress: ProgressFn | None) -> RefreshStats:
        with self._lock:
            return Indexer(self.root, self._store, embedder).refresh(progress)

    def lex(self, match: str, limit: int) -> list[tuple[int, float]]:
        with self._lock:
            return self._store.lex(match, limit)

    def knn(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        with self._lock:
            return self._store.knn(vector, limit)

    def hits(self, ranked: Sequence[tuple[int, float, tuple[str, ...]]]) -> list[Hit]:
        with self._lock:
            rows = self._store.chunk_rows([cid for cid, _, _ in ranked])
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
            if cid in rows
        ]

    def status(self) -> CollectionStatus:
        with self._lock:
            s = self._store
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
            )

    def rebuild(self, embedder: Embedder | None, progress: ProgressFn | None) -> int:
        """Build a fresh index beside the live one, then swap it in.

        Searches keep answering from the old index while the new one is built; a crash
        mid-build leaves the old one in place (the half-built file is only a leftover).
        """
        tmp = self.db_path.with_name(f"{INDEX_FILE}.rebuild-{os.getpid()}")
        for leftover in (tmp, *_sidecars(tmp)):
            leftover.unlink(missing_ok=True)
        fresh = Store(tmp)
        try:
            Indexer(self.root, fresh, embedder).refresh(progress)
            files = fresh.counts()[0]
            fresh.checkpoint_and_detach_wal()
        finally:
            fresh.close()
        with self._lock:
            self._store.close()
            os.replace(tmp, self.db_path)
            for side in _sidecars(self.db_path):
                side.unlink(missing_ok=True)
            self._store = Store(self.db_path)
        return files


def _sidecars(db: Path) -> tuple[Path, Path]:
    return db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")
