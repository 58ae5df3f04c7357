"""One collection: a notes folder and its index, safe to use from threads and processes.

Two SQLite connections, both opened on first need: one for reading, serialised by an RLock,
and one for the single refresher, so searches keep answering from the last committed
snapshot (WAL) while a long refresh or rebuild runs. Reading never creates anything: a
folder without an index reads as empty. Across processes a lock file lets one refresher
work at a time; a search that finds it taken answers from the snapshot instead of doing the
same work twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import numpy as np

from .changelog import EMPTY_FINGERPRINT
from .dbfiles import LOCK_FILE
from .embedder import Embedder
from .errors import IndexBusyError, IndexLocationError, IndexStoreError
from .feed import Freshness
from .filelock import FileLock
from .fusion import Candidates
from .indexer import Indexer, ProgressFn, RefreshStats
from .jobs import RefreshJob
from .location import choose, clear_scratch, fallback_index_path, fresh_scratch
from .results import CollectionStatus, Hit
from .store import Store
from .tuning import Tuning
from .values import MAX_HIT_CHARS, ModeName, Notice, NoticeKind
from .vectors import VectorCache
from .wordscore import word_candidates


class Collection:
    def __init__(self, root: Path, tuning: Tuning, *, notify: bool = False) -> None:
        self.root = root
        self.tuning = tuning
        self._freshness = Freshness(root, notify)  # the OS's change reports, or walks
        self.location_note: str | None = None
        self.refreshed_at: float | None = None  # last refresh by this process
        self._db_path: Path | None = None
        self._read_lock = threading.RLock()
        self._reader: Store | None = None
        self._vectors = VectorCache()
        self._refresh_lock = threading.Lock()
        self._writer: Store | None = None
        self._rebuilding = False
        self._job: RefreshJob | None = None  # the background refresh, if one was started
        self._job_lock = threading.Lock()
        self._stop = threading.Event()  # set: refreshes end after the batch under way

    def close(self) -> None:
        """Stop a background refresh (after its current batch) and close the index."""
        self._stop.set()
        with self._job_lock:
            job = self._job
        if job is not None:
            job.thread.join()
        with self._refresh_lock, self._read_lock:
            for store in (self._reader, self._writer):
                if store is not None:
                    store.close()
            self._reader = self._writer = None
            self._freshness.close()
        self._stop.clear()

    # -- where the index lives ------------------------------------------------------------

    @property
    def db_path(self) -> Path:
        """Where the index lives (`location.choose`; deciding it writes nothing)."""
        if self._db_path is None:
            self._use(*choose(self.root))
        assert self._db_path is not None
        return self._db_path

    def _use(self, path: Path, why: str | None) -> None:
        with self._read_lock:
            if self._reader is not None and self._reader.path != path:
                self._reader.close()
                self._reader = None
            self._db_path = path
            self.location_note = f"index kept in {path} ({why})" if why else None

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

    # -- reading --------------------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[Store | None]:
        """The read connection inside one read transaction (None: not indexed yet), so a
        writer committing meanwhile (another process's refresh) cannot change what a search
        sees between its steps."""
        with self._read_lock, self._sqlite_errors():
            if self._reader is None:
                self._reader = Store.open_existing(self.db_path)
            if self._reader is None:
                yield None
                return
            with self._reader.snapshot():
                yield self._reader

    def candidates(
        self,
        store: Store,
        terms: list[str],
        qvec: np.ndarray | None,
        model_id: str | None,
        n: int,
        mode: ModeName,
        stats: bool = False,
    ) -> Candidates:
        """Up to n word and n vector candidates with raw scores (call inside `snapshot`);
        `stats`: with the counts of the query's words, for ranking (fusion)."""
        found = Candidates(self, store)
        if mode != "vec":
            found.lex = word_candidates(store, terms, n, self.tuning)
        if stats and mode != "vec":
            found.chunks, found.term_docs = store.term_stats(terms)
        if qvec is not None and mode != "lex":
            self._vectors.sync(store)
            if self._vectors.model in (None, model_id):
                found.vec = self._vectors.nearest(qvec, n)
            else:
                found.notices.append(Notice(NoticeKind.OTHER_MODEL, str(self.root)))
        return found

    def hits(
        self, store: Store, ranked: list[tuple[int, float, tuple[str, ...]]]
    ) -> dict[int, Hit]:
        """Hits for ranked (chunk id, score, sides) by chunk id (call inside `snapshot`)."""
        rows = store.chunk_rows([cid for cid, _, _ in ranked])
        return {
            cid: Hit(
                path=self.absolute(rows[cid].path),
                relpath=rows[cid].path,
                collection=str(self.root),
                line=rows[cid].line,
                heading=rows[cid].heading,
                text=_capped(rows[cid].text),
                score=float(score),
                found_by=sides,
            )
            for cid, score, sides in ranked
            if cid in rows
        }

    def status(self) -> CollectionStatus:
        """What the index holds as last committed; writes nothing, not even SQLite's shared
        memory, so a status after a killed `memo index` leaves its WAL as it was (a folder
        never indexed reads as empty)."""
        with self._sqlite_errors():
            return Store.look(self.db_path, self._status_of)

    def _status_of(self, s: Store | None) -> CollectionStatus:
        files, chunks, skipped = s.counts() if s else (0, 0, 0)
        unreadable, ignored = s.walk_facts() if s else ([], 0)
        updated = s.get_meta("updated_at") if s else None
        return CollectionStatus(
            root=str(self.root),
            files=files,
            chunks=chunks,
            skipped=skipped,
            updated_at=float(updated) if updated else None,
            model=s.get_meta("vec_model") if s else None,
            chunks_without_vectors=s.count_without_vectors() if s else 0,
            notes=s.notes() if s else [],
            index_path=str(self.db_path),
            location_note=self.location_note,
            fingerprint=s.fingerprint() if s else EMPTY_FINGERPRINT,
            refreshed_at=max(self.refreshed_at or 0.0, float(updated or 0.0)) or None,
            unreadable_folders=unreadable,
            ignored=ignored,
            indexing=self.activity(),
        )

    def absolute(self, rel: str) -> str:
        """A note's path as hits show it, from its path relative to the root."""
        return str(self.root.joinpath(*rel.split("/")))

    # -- writing --------------------------------------------------------------------------

    def _open_writer(self) -> Store:
        """The refresher's own connection (call only while holding the refresh lock)."""
        if self._writer is None:
            try:
                self._writer = Store.create(self.db_path)
            except IndexLocationError as e:
                fallback = fallback_index_path(self.root)
                if self.db_path == fallback:
                    raise
                # A read-only folder, or a filesystem without WAL: keep the index in the cache.
                self._use(fallback, str(e))
                self._writer = Store.create(fallback)
        return self._writer

    @contextmanager
    def _refreshing(self, wait: bool) -> Iterator[tuple[Store | None, Notice | None]]:
        """Be the one refresher, in this process and then across processes.

        Yields the writer once this caller may write, or (when `wait` is False) why it may
        not: a rebuild under way here, or another process refreshing. A refresh in this
        process is waited for even then: it is the same work, and the caller needs it.
        """
        while not self._refresh_lock.acquire(timeout=0.05):
            if not wait and self._rebuilding:
                yield None, Notice(NoticeKind.REBUILDING, str(self.root))
                return
        try:
            with self._sqlite_errors():
                writer = self._open_writer()
            lock = FileLock(writer.path.with_name(LOCK_FILE))
            if not lock.acquire(wait=wait):
                yield None, Notice(NoticeKind.BUSY, str(self.root))
                return
            try:
                clear_scratch(writer.path)  # the leftovers of a rebuild that was killed
                yield writer, None
            finally:
                lock.release()
        finally:
            self._refresh_lock.release()

    def refresh(
        self, embedder: Embedder | None, progress: ProgressFn | None, *, wait: bool = True
    ) -> RefreshStats:
        """Update the index; rebuild it when what decides its content has changed (said
        once, in the notices). With `wait` False, a rebuild here or a refresh in another
        process is not waited for: the notices then say why nothing was done."""
        with self._refreshing(wait) as (writer, busy):
            if writer is None:
                return RefreshStats(notices=[busy] if busy else [])
            with self._sqlite_errors():
                model = embedder.model_id if embedder is not None else None
                changed = writer.identity_change(self.tuning.identity(), model)
                if changed is None:
                    indexer = Indexer(self.root, writer, embedder, self.tuning)
                    stats = indexer.refresh(progress, self._stop, self._freshness.changes())
                    if stats.followed_links:  # the OS reports changes under one name only
                        self._freshness.give_up()
                else:
                    stats = self._rebuild(writer, embedder, progress)
                    if not stats.stopped:
                        stats.notices.append(Notice(NoticeKind.REBUILT, str(self.root), changed))
            if not stats.stopped:
                self.refreshed_at = time.time()
            return stats

    def refresh_within(
        self,
        embedder: Embedder | None,
        progress: ProgressFn | None,
        budget: float,
        called: float,
    ) -> RefreshStats:
        """Refresh on a thread of its own and wait for it until `budget` seconds after
        `called` (the caller's start; earlier when a refresh was already running: its own
        start counts): past that, what is committed answers, and the notice says how far
        indexing got.

        A change completed before the call is in the answer when it is in time: a refresh
        already running when the call came in may have walked before the change, so it is
        followed by another; so is one that ran without the model this caller has."""
        deadline: float | None = None
        while True:
            job = self.start_refresh(embedder, progress)
            deadline = deadline or min(called, job.started) + budget
            if not job.wait(deadline, progress):
                return RefreshStats(notices=[job.activity()])
            stats = job.result()
            fresh = job.started >= called or stats.stopped
            if fresh and (embedder is None or job.embedder is not None):
                return stats

    def start_refresh(self, embedder: Embedder | None, progress: ProgressFn | None) -> RefreshJob:
        """The refresh under way here, or a new one on a thread of its own (reporting to
        `progress` from its start)."""
        with self._job_lock:
            job = self._job
            if job is None or job.done.is_set():
                root = str(self.root)

                def run(report: ProgressFn) -> RefreshStats:
                    return self.refresh(embedder, report, wait=False)

                job = self._job = RefreshJob(run, embedder, root, progress)
            return job

    def activity(self) -> Notice | None:
        """How far a refresh under way in this process got (None: none is)."""
        job = self._job
        return job.activity() if job is not None and not job.done.is_set() else None

    def rebuild(self, embedder: Embedder | None, progress: ProgressFn | None) -> int:
        """Rebuild from scratch (searches answer from the old index meanwhile); the number
        of files indexed."""
        with self._refreshing(wait=True) as (writer, _), self._sqlite_errors():
            assert writer is not None  # waiting, the writer is always ours
            self._rebuild(writer, embedder, progress)
            self.refreshed_at = time.time()
            return writer.counts()[0]

    def _rebuild(
        self, writer: Store, embedder: Embedder | None, progress: ProgressFn | None
    ) -> RefreshStats:
        """Build a fresh index beside the live one, then copy it in as one transaction.

        A crash mid-build leaves the old one untouched. Only memo's own files in the index
        folder are written: the live index (recognised as memo's on open) and a scratch file
        memo names and removes. The refresh lock makes this the only rebuild, so what is
        memo's at the scratch name is the leftover of one that crashed.
        """
        scratch = fresh_scratch(writer.path)
        self._rebuilding = True
        try:
            fresh = Store.create(scratch)
            try:
                fresh.set_identity(self.tuning.identity())
                stats = Indexer(self.root, fresh, embedder, self.tuning).refresh(
                    progress, self._stop
                )
                if not stats.stopped:
                    writer.replace_with(fresh)
            finally:
                fresh.close()
        finally:
            self._rebuilding = False
            clear_scratch(writer.path)
        return stats


def _capped(text: str) -> str:
    return text if len(text) <= MAX_HIT_CHARS else text[:MAX_HIT_CHARS] + "\n…"
