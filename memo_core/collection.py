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
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import apsw

from memo_core.errors import (
    DiskFullError,
    FolderChangedError,
    IndexBusyError,
    IndexLocationError,
    IndexStoreError,
)
from memo_core.files.feed import Freshness, Inotify
from memo_core.files.fsafe import (
    Folder,
    no_room,
    open_collection,
    out_of_files,
    out_of_room,
    too_many_files,
)
from memo_core.files.indexes import fallback_index_path
from memo_core.files.scope import Scope
from memo_core.files.walker import Changes, FileStat, scan
from memo_core.index import location
from memo_core.index.dbfiles import LOCK_FILE
from memo_core.index.directory import check_held
from memo_core.index.filelock import FileLock
from memo_core.index.history import EMPTY_FINGERPRINT
from memo_core.index.indexer import Indexer, Progress, ProgressFn, RefreshStats, WordsGate
from memo_core.index.jobs import FailureLog, RefreshJob, activity_of
from memo_core.index.rows import BadRow
from memo_core.index.scoped import ScopedChunks
from memo_core.index.store import Store
from memo_core.messages import Message, error_text
from memo_core.model.embedder import Embedder
from memo_core.results import CollectionStatus
from memo_core.tuning import Tuning
from memo_core.values import FileNote, Notice, NoticeKind

if TYPE_CHECKING:  # numpy and the vectors load with the first search by meaning
    import numpy as np

    from memo_core.index.vectors import VectorCache

T = TypeVar("T")

# How long closing waits for a refresh to stop after its batch under way: a batch stuck in
# the model or the kernel must not hang a process's exit (it closes the index when it ends).
CLOSE_WAIT_S = 5.0


class Collection:
    def __init__(
        self,
        root: Path,
        tuning: Tuning,
        *,
        inotify: Inotify | None = None,
        refreshing: threading.BoundedSemaphore | None = None,
        failures: FailureLog | None = None,
    ) -> None:
        self.root = root
        self._failures = failures or FailureLog()  # shared by the engine's collections
        # Background refreshes in this process at once (each holds a few descriptors and
        # reads notes): shared by the engine's collections; None: no bound.
        self._slots = refreshing
        self.tuning = tuning
        self._freshness = Freshness(root, inotify)  # the OS's change reports, or walks
        self.location_note: str | None = None
        self.refreshed_at: float | None = None  # last refresh by this process
        self._db_path: Path | None = None
        self._read_lock = threading.RLock()
        self._reader: Store | None = None
        # The vectors in memory, loaded by the first vector search; dropped with the
        # connections when the engine releases an unused collection (its memory budget).
        self._vectors: VectorCache | None = None
        self._scoped = ScopedChunks()
        self._refresh_lock = threading.Lock()
        self._writer: Store | None = None
        # What this process last knew whole in the index ("": the words; else also that
        # model's vectors) by a refresh that ended or a walk that found nothing to do.
        self._whole: str | None = None
        # The last progress of a rebuild under way here (None: none is): what a refresh that
        # does not wait for it, and a status, are told (`activity_of`).
        self._rebuilt_so_far: Progress | None = None
        self._untold: list[Notice] = []  # see `untold`
        self._job: RefreshJob | None = None  # the background refresh, if one was started
        self._job_lock = threading.Lock()
        self._stop = threading.Event()  # set: the refresh under way ends after its batch
        self._close_asked = False  # a close set `_stop`: every refresh ends until it closed
        # A close that found a refresher at work: the refresher closes when it lets go of
        # the refresh lock (both decided under `_close_lock`, so neither misses the other).
        self._close_lock = threading.Lock()
        self._closing = False
        self.refresh_error: str | None = None  # the last background refresh's failure

    def stop(self) -> None:
        """Ask a refresh under way to end after its current batch (`close` does too)."""
        self._stop.set()

    def close(self, timeout: float = CLOSE_WAIT_S) -> bool:
        """Stop a background refresh (after its current batch) and close the index, waiting
        at most `timeout` seconds for the refresh (0: not at all, as on a search's path);
        whether it is closed now. Else the refresher still at work (on a daemon thread, or
        a caller's) closes the index itself when it ends."""
        deadline = time.monotonic() + timeout
        self._close_asked = True
        self._stop.set()
        job = self._job
        if job is not None and timeout > 0:
            job.thread.join(timeout)
        held = self._refresh_lock.acquire(timeout=max(0.0, deadline - time.monotonic()))
        if not held:
            with self._close_lock:
                held = self._refresh_lock.acquire(blocking=False)
                self._closing = not held
            if not held:
                return False
        return self._close_and_let_go()

    def release(self) -> bool:
        """Close the connections and drop the vectors, unless a refresh (in the background
        or a caller's) is at work: it is left alone, never asked to stop. Whether released;
        the next use opens and loads them again (the engine's memory budget)."""
        if not self._refresh_lock.acquire(blocking=False):
            return False
        return self._close_and_let_go()

    def close_connections(self) -> None:
        """Close the connections (not the writer of a refresh at work: see `start_refresh`'s
        `let_go`) and drop the vectors, keeping the OS's reports: a search over more
        collections than the engine keeps open reads the rest one at a time, each let go
        before the next."""
        if self._refresh_lock.acquire(blocking=False):
            try:
                self._close_writer()
            finally:
                self._refresh_lock.release()
        self._close_reader()

    def _close_and_let_go(self) -> bool:
        """Close (the refresh lock held), then let the lock go: True, closed."""
        try:
            self._close_held()
        finally:
            self._refresh_lock.release()
        return True

    def _close_held(self) -> None:
        """Close the connections and watches (under the refresh lock)."""
        self._close_writer()
        self._close_reader()
        self._freshness.close()
        self._closing = False
        self._close_asked = False
        self._stop.clear()

    def _close_reader(self) -> None:
        """Close the searches' connection and drop the vectors read through it."""
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
            self._vectors = None

    def _close_writer(self) -> None:
        """Close the refresher's connection (under the refresh lock), and under the read
        lock: a reader of this process opening the index while the writer closed found it
        empty (a search then answered nothing, saying nothing)."""
        with self._read_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    def _let_go(self) -> None:
        """Release the refresh lock, closing first if a `close` was handed over meanwhile."""
        with self._close_lock:
            try:
                if self._closing:
                    self._close_held()
                elif not self._close_asked:
                    self._stop.clear()  # a stop ends the refresh it found, not the next one
            finally:
                self._refresh_lock.release()

    # -- where the index lives ------------------------------------------------------------

    @property
    def db_path(self) -> Path:
        """Where the index lives (`location.choose`; deciding it writes nothing). The file's
        schema is left to the opener, which reads it anyway (`_opened`): a search over
        hundreds of collections then reads each schema once, not twice."""
        if self._db_path is None:
            self._use(*location.choose(self.root, with_schema=False))
        assert self._db_path is not None
        return self._db_path

    def _opened(self, open_at: Callable[[Path], T]) -> T:
        """`open_at(db_path)`; where it finds the file there not memo's (planted triggers,
        views, tables), the place chosen again by every rule, and opened there once more."""
        try:
            return open_at(self.db_path)
        except IndexLocationError:
            path, why = location.choose(self.root)
            if path == self.db_path:
                raise
            self._use(path, why)
            return open_at(path)

    def _use(self, path: Path, why: Message | None) -> None:
        with self._read_lock:
            if self._reader is not None and self._reader.path != path:
                self._reader.close()
                self._reader = None
            self._db_path = path
            self.location_note = Message("status.kept_in", path=path, why=why) if why else None

    @contextmanager
    def _sqlite_errors(self) -> Iterator[None]:
        try:
            yield
        except apsw.BusyError as e:
            raise IndexBusyError("index.busy", path=self.db_path) from e
        except BadRow as e:  # a row memo never writes: the index is damaged, not memo
            raise IndexStoreError(
                "index.damaged", path=self.db_path, reason=e, folder=self.db_path.parent
            ) from e
        except apsw.Error as e:
            if out_of_files():
                raise too_many_files(str(self.root)) from e
            # the disk, not the index: rebuilding cannot help
            if isinstance(e, apsw.FullError) or out_of_room(self.root):
                raise no_room(str(self.db_path)) from e
            raise IndexStoreError(
                "index.failed", path=self.db_path, reason=e, root=self.root
            ) from e

    # -- reading --------------------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[Store | None]:
        """The read connection inside one read transaction (None: not indexed yet), so a
        writer committing meanwhile (another process's refresh) cannot change what a search
        sees between its steps."""
        with self._read_lock, self._sqlite_errors(), open_collection(self.root) as root:
            self._reader = _still_held(self._reader, root)
            if self._reader is None:
                try:
                    self._reader = self._opened(lambda path: Store.open_existing(path, root))
                except DiskFullError:
                    # No room for the -shm a reader needs: what the index last saved is
                    # read without writing, for this call only (it would not see commits).
                    store = self._opened(lambda path: Store.open_without_writing(path, root))
                    try:
                        yield store
                    finally:
                        if store is not None:
                            store.close()
                    return
            if self._reader is None:
                yield None
                return
            with self._reader.snapshot():
                check_held(self._reader.db, self._reader.path, root)  # and the WAL it opened
                yield self._reader

    def in_scope(self, store: Store, scope: Scope, below: str) -> np.ndarray | None:
        """The ids of the chunks `scope` keeps, put in scope for the word side too (call
        inside `snapshot`; None: it leaves none out), judged from the path searched, where
        this collection is the folder `below` ('/'-separated; "": the path itself); kept
        for the next page on the same reader."""
        return self._scoped.among(store, scope, below)

    def without_vectors(self) -> int:
        """Passages the index holds without a vector (0 where nothing is indexed yet)."""
        with self.snapshot() as store:
            return store.count_without_vectors() if store is not None else 0

    def load_vectors(self) -> None:
        """Hold this index's vectors as they are now (a search's own sync then costs
        nothing if no one wrote meanwhile): while a model loads, say."""
        with self.snapshot() as store:
            if store is not None:
                self.vectors(store)

    def vectors(self, store: Store) -> VectorCache:
        """The index's vectors, held between searches and brought up to date with `store`
        (call inside `snapshot`)."""
        from memo_core.index.vectors import VectorCache

        vectors = self._vectors = self._vectors or VectorCache()  # under the read lock
        vectors.sync(store)
        return vectors

    def status(self) -> CollectionStatus:
        """What the index holds as last committed; writes nothing, not even SQLite's shared
        memory, so a status after a killed `memo index` leaves its WAL as it was (a folder
        never indexed reads as empty)."""
        with self._sqlite_errors(), open_collection(self.root) as root:
            # The folder first, then the index: a note indexed meanwhile (by a refresh in
            # another process) is then not counted as still to come.
            on_disk = scan(root).files
            read = partial(self._status_of, on_disk)
            return self._opened(lambda path: Store.look(path, read, root))

    def _status_of(self, on_disk: dict[str, FileStat], s: Store | None) -> CollectionStatus:
        files, chunks, skipped = s.counts() if s else (0, 0, 0)
        notes = s.notes() if s else []
        # An empty note is a note (`changes` reports it): counted among the files, as empty.
        empty = sum(note is FileNote.EMPTY for _, note in notes)
        known = s.file_stats() if s else {}
        # A note unreadable last time is kept with mtime -1, to be retried by every refresh:
        # it is skipped (and said so), not still to come.
        pending = sum(
            known.get(rel) != st and known.get(rel, (0, 0))[0] != -1 for rel, st in on_disk.items()
        )
        unreadable, ignored = s.walk_facts() if s else ([], 0)
        updated = s.get_meta("updated_at") if s else None
        return CollectionStatus(
            root=str(self.root),
            files=files + empty,
            chunks=chunks,
            skipped=skipped - empty,
            empty=empty,
            pending=pending,
            updated_at=float(updated) if updated else None,
            model=s.get_meta("vec_model") if s else None,
            chunks_without_vectors=s.count_without_vectors() if s else 0,
            chunks_without_sentences=(s.count_without_sentences() if s and s.sentence_dim() else 0),
            notes=notes,
            index_path=str(self.db_path),
            location_note=self.location_note,
            fingerprint=s.history.fingerprint() if s else EMPTY_FINGERPRINT,
            refreshed_at=max(self.refreshed_at or 0.0, float(updated or 0.0)) or None,
            unreadable_folders=unreadable,
            ignored=ignored,
            indexing=self.activity(),
            refresh_error=self.refresh_error,
        )

    @property
    def reported(self) -> bool:
        """Whether the OS reports this folder's changes now (see `feed.Freshness`)."""
        return self._freshness.reported

    @property
    def is_open(self) -> bool:
        """Whether the searches' connection to the index is open now: not before the first
        search, nor once the collection was released or closed (the next search opens it
        again)."""
        with self._read_lock:
            return self._reader is not None

    @property
    def vectors_held(self) -> int:
        """How many vectors this collection holds in memory now: 0 before its first vector
        search and once released (its memory given back), else one for each passage with a
        vector as of the last search."""
        with self._read_lock:
            return 0 if self._vectors is None else len(self._vectors.live()[0])

    def absolute(self, rel: str) -> str:
        """A note's path as hits show it, from its path relative to the root."""
        return str(self.root.joinpath(*rel.split("/")))

    # -- writing --------------------------------------------------------------------------

    def _open_writer(self, root: Folder) -> Store:
        """The refresher's connection (under the refresh lock), holding the index in `root`."""
        self._writer = _still_held(self._writer, root)
        if self._writer is None:
            try:
                self._writer = self._opened(lambda path: Store.create(path, root))
            except IndexLocationError as e:
                fallback = fallback_index_path(self.root)
                if self.db_path == fallback:
                    raise
                # Out of descriptors or of room, a place fails in ways that look alike: no
                # index is made in the cache for want of either (it stayed there for good).
                if out_of_files():
                    raise too_many_files(str(self.root)) from e
                if out_of_room(self.root):
                    raise no_room(str(self.db_path)) from e
                # A read-only folder, or a filesystem without WAL: keep the index in the cache.
                self._use(fallback, e.message)
                self._writer = Store.create(fallback)
        return self._writer

    @contextmanager
    def _refreshing(self, wait: bool) -> Iterator[tuple[Store | None, Folder, Notice | None]]:
        """Be the one refresher, in this process and then across processes.

        Yields the writer and the root (opened by descriptor for this refresh) once this
        caller may write, or (when `wait` is False) why it may not: a rebuild under way
        here, or another process refreshing. A refresh in this process is waited for even
        then: it is the same work, and the caller needs it.
        """
        with open_collection(self.root) as root:
            while not self._refresh_lock.acquire(timeout=0.05):
                if not wait and (told := self._rebuild_activity()) is not None:
                    yield None, root, told
                    return
            try:
                with self._sqlite_errors():
                    writer = self._open_writer(root)
                lock = FileLock(writer.path.with_name(LOCK_FILE), root)
                if not lock.acquire(wait=wait):
                    yield None, root, Notice(NoticeKind.BUSY, str(self.root))
                    return
                try:
                    location.clear_scratch(writer.path, root)  # what a killed rebuild left
                    yield writer, root, None
                finally:
                    lock.release()
            finally:
                self._let_go()

    def refresh(
        self,
        embedder: Embedder | None,
        progress: ProgressFn | None,
        *,
        wait: bool = True,
        gate: WordsGate | None = None,
    ) -> RefreshStats:
        """Update the index; rebuild it when what decides its content has changed (said
        once, in the notices). With `wait` False, a rebuild here or a refresh in another
        process is not waited for: the notices then say why nothing was done. `gate`: see
        `Indexer.refresh`."""
        with self._refreshing(wait) as (writer, root, busy):
            if writer is None:
                if busy is not None and busy.kind is NoticeKind.BUSY and embedder is not None:
                    busy = self._vectors_so_far(busy)
                return RefreshStats(notices=[busy] if busy else [])
            self._whole = None
            with self._sqlite_errors():
                # A model still loading (a search's) is waited for before the words only where
                # the index holds another model's vectors: a graph that fails never replaces a
                # good one's. An index with none yet gets its words first; its vectors' pass
                # waits for the graph (and makes none if it fails).
                if embedder is not None and writer.vector_key()[1] not in (
                    None,
                    embedder.model_id,
                ):
                    embedder = embedder if embedder.usable() else None
                model = embedder.model_id if embedder is not None else None
                changed = writer.identity_change(self.tuning.identity(), model)
                if changed is None:
                    indexer = Indexer(root, writer, embedder, self.tuning)
                    changes = self._changes(gate)
                    try:
                        stats = indexer.refresh(progress, self._stop, changes, gate)
                    except BadRow as e:  # a row memo never writes: made again from the notes
                        why = Message("index.bad_row", row=str(e))
                        rebuilt = Notice(NoticeKind.REBUILT, str(self.root), why)
                        stats = self._rebuild(writer, root, embedder, progress, rebuilt=rebuilt)
                    else:
                        if stats.two_names:  # the OS reports a change under the name it was made by
                            self._freshness.give_up()
                else:  # made another way: what did not change the vectors keeps them
                    rebuilt = Notice(NoticeKind.REBUILT, str(self.root), changed)
                    stats = self._rebuild(
                        writer, root, embedder, progress, reuse=True, gate=gate, rebuilt=rebuilt
                    )
                if not stats.stopped:  # the words are whole, and the vectors?
                    self._whole = model if model and writer.vectors_whole(model) else ""
            if not stats.stopped:
                self.refreshed_at = time.time()
                self.refresh_error = None
            return stats

    def untold(self) -> list[Notice]:
        """What this collection has to say once that no answer said yet (why its index was
        rebuilt, said as the new one came in): taken by the call that says it."""
        with self._job_lock:
            told, self._untold = self._untold, []
        return told

    def _vectors_so_far(self, busy: Notice) -> Notice:
        """`busy` (another process refreshes) with the passages whose vectors it has
        committed so far, of all, where some are still missing: what an answer by meaning
        covers now (the other process's own progress is not seen from here)."""
        with self.snapshot() as store:
            if store is None:
                return busy
            total, missing = store.count_chunks(), store.count_without_vectors()
        return replace(busy, done=total - missing, total=total) if missing else busy

    def start_refresh(
        self, embedder: Embedder | None, progress: ProgressFn | None, *, let_go: bool = False
    ) -> RefreshJob:
        """The refresh under way here, or a new one on a thread of its own (reporting to
        `progress` from its start); `let_go`: a new one closes the connections as it ends
        (one of more collections than the engine keeps open: the refreshes of many that
        end before their waiter gets to them must not hold a writer each meanwhile)."""
        with self._job_lock:
            job = self._job
            if job is None or job.done.is_set():
                root = str(self.root)

                gate = WordsGate(self._freshness.changes, self._freshness.quiet)

                def run(report: ProgressFn) -> RefreshStats:
                    try:
                        with self._slots or nullcontext():
                            return self.refresh(embedder, report, wait=False, gate=gate)
                    except Exception as e:  # kept for status until a refresh succeeds
                        self.refresh_error = error_text(e)
                        raise
                    finally:
                        if let_go:
                            self.close_connections()

                job = self._job = RefreshJob(
                    run, embedder, root, progress, gate, failures=self._failures
                )
            return job

    def unreported_failure(self) -> Notice | None:
        """Why the last background refresh failed, once, when no one was told (it failed
        past every waiter's budget); None: nothing to tell."""
        with self._job_lock:
            job = self._job
            if job is None or not job.done.is_set() or job.error is None or job.told:
                return None
            job.told = True
        return Notice(NoticeKind.REFRESH_FAILED, str(self.root), detail=error_text(job.error))

    def needs_refresh(self, embedder: Embedder | None) -> bool:
        """Whether a search with `embedder` must refresh this collection first: not when it
        is known whole (words, and `embedder`'s vectors) and the OS reported nothing here
        since, nor when a walk finds the index holding the folder as it is (and nothing a
        killed rebuild left to clear). Read only: a search over hundreds of collections
        then starts no refresh, thread or writer for each."""
        if self.activity() is not None or self.refresh_error is not None:
            return True
        model = embedder.model_id if embedder is not None else ""
        if self._freshness.reported:
            if not self._freshness.quiet():
                return True  # what the OS reported is the refresh's to take
            if self._whole == model:
                return False
            held = self._whole is not None  # the feed's last report taken by a refresh that ended
        else:
            self._freshness.changes()  # the feed starts here, where the OS reports
            held = False
        with self.snapshot() as store:
            whole = (
                store is not None
                and not location.scratch_left(store.path)
                and store.made_as(self.tuning.identity())
                and (not model or store.vectors_whole(model))
                and (held or self._holds(store))
            )
        if not whole:
            self._freshness.walk_next()  # the refresh walks what the feed started after
            return True
        self._whole = model
        return False

    def _holds(self, store: Store) -> bool:
        """Whether the index holds the folder as a walk finds it now."""
        with self._sqlite_errors(), open_collection(self.root) as root:
            found = scan(root)
        return found.files == store.file_stats() and not found.unreadable and not found.two_names

    def activity(self) -> Notice | None:
        """How far a refresh under way in this process got, or a rebuild asked for (`memo
        reindex`, no background refresh: what a search meanwhile is told); None: none is."""
        job = self._job
        if job is not None and not job.done.is_set():
            return job.activity()
        return self._rebuild_activity()

    def _rebuild_activity(self) -> Notice | None:
        p = self._rebuilt_so_far
        return activity_of(p, str(self.root)) if p is not None else None

    def rebuild(self, embedder: Embedder | None, progress: ProgressFn | None) -> int:
        """Rebuild from scratch (searches answer from the old index meanwhile); the number
        of files indexed."""
        with self._refreshing(wait=True) as (writer, root, _), self._sqlite_errors():
            assert writer is not None  # waiting, the writer is always ours
            self._whole = None
            self._rebuild(writer, root, embedder, progress)
            self.refreshed_at = time.time()
            self.refresh_error = None
            return writer.counts()[0]

    def _rebuild(
        self,
        writer: Store,
        root: Folder,
        embedder: Embedder | None,
        progress: ProgressFn | None,
        *,
        reuse: bool = False,
        gate: WordsGate | None = None,
        rebuilt: Notice | None = None,
    ) -> RefreshStats:
        """Build a fresh index beside the live one, its words and passages' vectors, then
        copy it in as one transaction; then the sentences' vectors, in the live one.

        A crash mid-build leaves the old one untouched. Only memo's own files in the index
        folder are written: the live index (recognised as memo's on open) and a scratch file
        memo names and removes. The refresh lock makes this the only rebuild, so what is
        memo's at the scratch name is the leftover of one that crashed.

        `reuse`: a passage takes its vectors (and its sentences') from the live index where
        that holds them as the new one would (`Store.same_vectors`): new words (a stemmer's
        version) cost no vector. Not for a rebuild asked for (`memo reindex`, a damaged row),
        which makes everything again.

        The sentences come after the copy as in any refresh (`gate`: a refresh's, see
        `Indexer.refresh`): an answer never waits for them, so a search that came during
        the rebuild answers once the new index is in, from it (had they been made aside, it
        would answer from the old one, and a one-shot `memo search` ends the rebuild with
        its process, every time). `rebuilt`: why it was rebuilt, for the next answer to say
        once the new index is in (`untold`), whether the sentences are done by then or not.
        """
        scratch = location.fresh_scratch(writer.path, root)

        def heard(p: Progress) -> None:
            self._rebuilt_so_far = p
            if progress is not None:
                progress(p)

        def aside(p: Progress) -> None:  # counted in the new index: in no answer yet
            heard(replace(p, aside=True))

        # Begun, nothing counted yet: said to a search meanwhile, not drawn as a bar.
        self._rebuilt_so_far = Progress("index", 0, 0, 0, None, time.monotonic(), aside=True)
        try:
            stats = self._build_aside(writer, root, embedder, aside, scratch, reuse=reuse)
            if not stats.stopped and rebuilt is not None:
                with self._job_lock:
                    self._untold.append(rebuilt)
            if not stats.stopped and embedder is not None and embedder.sentence_model is not None:
                stats.add(self._sentences_in(writer, root, embedder, heard, gate))
            return stats
        finally:
            self._rebuilt_so_far = None

    def _build_aside(
        self,
        writer: Store,
        root: Folder,
        embedder: Embedder | None,
        progress: ProgressFn,
        scratch: Path,
        *,
        reuse: bool,
    ) -> RefreshStats:
        """The new index's words and passages' vectors, made at `scratch`, then copied in
        over `writer`'s (unless stopped); `reuse`: see `_rebuild`."""
        try:
            fresh = Store.create(scratch, root)
            try:
                want = self.tuning.identity()
                fresh.set_identity(want)
                same = (
                    reuse
                    and embedder is not None
                    and writer.same_vectors(
                        embedder.model_id, embedder.dim, want, Tuning.EMBEDDING_KEYS
                    )
                )
                indexer = Indexer(
                    root, fresh, embedder, self.tuning, reuse=writer if same else None
                )
                stats = indexer.refresh(progress, self._stop, sentences=False)
                if not stats.stopped:
                    writer.replace_with(fresh)
                return stats
            finally:
                fresh.close()
        finally:
            location.clear_scratch(writer.path, root)

    def _sentences_in(
        self,
        writer: Store,
        root: Folder,
        embedder: Embedder,
        progress: ProgressFn,
        gate: WordsGate | None,
    ) -> RefreshStats:
        """The sentences' vectors of the index just copied in, made in it as any refresh
        makes them (a walk first, which finds the notes as it holds them; `progress` told
        from the copy on that they are what is left)."""
        total, left = writer.count_chunks(), writer.count_without_sentences()
        done = total - left  # those the live index had for the same texts (`reuse`)
        progress(Progress("sentences", 0, 0, done, total, time.monotonic(), chunks_before=done))
        indexer = Indexer(root, writer, embedder, self.tuning)
        return indexer.refresh(progress, self._stop, self._changes(gate), gate)

    def _changes(self, gate: WordsGate | None) -> Changes | None:
        """What the OS reported changed since they were last taken (None: walk it all), for
        a refresh whose words pass `gate` tracks: begun first (`WordsGate.begin`), or a
        change made between the two would count as in."""
        if gate is not None:
            gate.begin()
        return self._freshness.changes()


def _still_held(store: Store | None, root: Folder) -> Store | None:
    """`store` while it holds the index that lies in `root` now; else closed (None)."""
    if store is None:
        return None
    try:
        check_held(store.db, store.path, root)
    except FolderChangedError:
        store.close()
        return None
    return store
