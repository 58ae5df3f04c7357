"""The engine: one object per process (or per test) that front ends build and pass around.

It holds exactly one `Collection` per real folder, however the path was spelled, so one
folder never has two connections or two vector copies in one process; the `Tuning` and the
`ModelSource` it was given; and what discovery found under each path, kept while the folders
that decided it stand as they were. Every call takes the user's path, asks discovery which
collections lie there now, and works on exactly those.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from memo_core import refreshing
from memo_core.changes import changes_since
from memo_core.collection import CLOSE_WAIT_S, Collection
from memo_core.errors import (
    InvalidArgumentError,
    ModelUnavailableError,
    NoteNotFoundError,
    OutsideRootsError,
)
from memo_core.files.confine import allowed_roots, check_inside, real_path
from memo_core.files.discovery import Discoveries, resolve_path, within_reach
from memo_core.files.feed import Inotify
from memo_core.files.fsafe import descriptor_limit, require_supported
from memo_core.files.notes import (
    NOTE_LIMIT,
    NoteLines,
    NoteText,
    line_span,
    located,
    note_lines,
    note_paths,
    read_note,
)
from memo_core.files.scope import Scope
from memo_core.files.walker import is_within
from memo_core.index.indexer import ProgressFn, RefreshStats
from memo_core.index.jobs import SMALL_WORK, FailureLog, SmallWork
from memo_core.messages import Message
from memo_core.model.embedder import Embedder
from memo_core.model.loading import ModelSource
from memo_core.results import ChangeReport, CollectionStatus, SearchResults
from memo_core.search import pipeline
from memo_core.search.query import Query
from memo_core.text.escapes import shown, unshown
from memo_core.tuning import Tuning
from memo_core.values import (
    DEFAULT_K,
    DEFAULT_MODE,
    DEFAULT_REFRESH_BUDGET_S,
    ModeName,
    Notice,
    NoticeKind,
)

# Collections whose connections stay open, between calls and within one: a reader and a
# refresh's writer each hold the index folder, the index and its WAL, and the shared memory
# is open once (7; measured on Linux); a search over more reads the rest one at a time.
# The budget is the descriptors left past a reserve (notes being read, the model, a
# server's clients: at most half of them), never past MAX_OPEN (memory: an open collection
# of 100 notes holds about 0.6 MB).
MAX_OPEN = 1024
FDS_PER_COLLECTION = 7
FDS_RESERVED = 256
MAX_REFRESHING = 4  # background refreshes at once in one engine
# What a search's refresh without the model said that its refresh with the model says anew.
_SUPERSEDED = (
    NoticeKind.MODEL_UNAVAILABLE,
    NoticeKind.INDEXING,
    NoticeKind.EMBEDDING,
    NoticeKind.SENTENCES,
)
IDLE_S = 600.0  # a collection unused this long releases its connections, watches and vectors
UserPath = str | os.PathLike[str]

log = logging.getLogger("memo")


class Engine:
    """Search, refresh, status and rebuild of the collections under any path.

    Safe to share between threads. `tuning`: how indexes are built and searches ranked;
    `models`: where the embedding model comes from (default: the configured one); `roots`:
    the only folders it works in (default: anywhere); `refresh_budget_s`: how long a search
    waits for its refresh (None: until it is done); `notify`: learn about changes from the OS
    (for a long-lived process: a refresh then looks only at what changed); `max_open`: how
    many collections keep their connections (default: `open_budget()`); `idle_s`: after
    how long unused a collection releases its connections and vectors (loaded again when
    next used); `small`: the refresh a search waits for whole past its budget (a small
    folder's words and vectors: `SmallWork`; `NO_SMALL_WORK`: none).
    """

    def __init__(
        self,
        *,
        tuning: Tuning | None = None,
        models: ModelSource | None = None,
        roots: Sequence[UserPath] | None = None,
        refresh_budget_s: float | None = DEFAULT_REFRESH_BUDGET_S,
        notify: bool = False,
        max_open: int | None = None,
        idle_s: float = IDLE_S,
        small: SmallWork = SMALL_WORK,
    ) -> None:
        require_supported()  # Windows: one clear error (UnsupportedPlatformError), nothing else
        self.tuning = tuning or Tuning()
        self.models = models or ModelSource()
        self.refresh_budget_s = refresh_budget_s
        self.small = small
        self.notify = notify
        self._inotify = Inotify() if notify else None  # one for the process's collections
        # Where this engine may work at all (memo-mcp: the allowed roots). A front end checks
        # a path first; the engine checks again what it resolved, whatever it was given.
        # Resolved as the front ends resolve theirs (`allowed_roots`): `~`, relative, links.
        self.roots = None if roots is None else _resolved_roots(roots)
        self._lock = threading.Lock()  # guards the dicts only: no I/O is done under it
        self._collections: dict[Path, Collection] = {}
        self._discoveries = Discoveries()  # the roots under each path, while its folders stand
        # Each open collection keeps a few descriptors (connections, a lock file): those
        # least recently used beyond `max_open`, or idle, release them (see `_to_release`).
        self.max_open = open_budget() if max_open is None else max_open
        self._used: dict[Path, float] = {}  # when each was last used (monotonic)
        self._released: set[Path] = set()
        # Idle collections are released by a thread of the engine's own, without waiting for
        # the next call: a server at rest gives their vectors' memory back. Started with the
        # first collection; `_wake`: look again (a collection was used, or the engine closes).
        self.idle_s = idle_s
        self._janitor: threading.Thread | None = None
        self._wake = threading.Event()
        self._closed = False
        # A search over hundreds of folders starts a refresh for each: at most this many run
        # at once (each holds connections and reads notes), the rest wait their turn.
        self._refreshing = threading.BoundedSemaphore(MAX_REFRESHING)
        self._failures = FailureLog()  # background failures, said once for them all

    def close(self, timeout: float = CLOSE_WAIT_S) -> None:
        """Stop the background refreshes and close every collection, waiting at most
        `timeout` seconds in all: a refresh stuck in a batch (in the model, in the kernel)
        is left on its daemon thread, which closes its index when it ends."""
        with self._lock:
            collections = list(self._collections.values())
            self._collections.clear()
            self._used.clear()
            self._released.clear()
            self._closed = True
            janitor = self._janitor
        self._wake.set()
        for c in collections:  # all stop together, then share one bounded wait
            c.stop()
        deadline = time.monotonic() + timeout
        for c in collections:
            if not c.close(max(0.0, deadline - time.monotonic())):
                log.warning(
                    "memo: %s",
                    Message("log.refresh_not_stopped", path=shown(str(c.root)), seconds=timeout),
                )
        if self._inotify is not None:
            self._inotify.close()
        if janitor is not None:
            janitor.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- collections ----------------------------------------------------------------------

    def collections(self, path: UserPath) -> list[Collection]:
        """The collections discovery finds under `path` now, one object per folder: each
        gets an index at its first refresh (calls the user aimed there: index, reindex)."""
        base, roots = self._discovered(path)
        return self._use_collections(base, roots)

    def held_collections(self) -> dict[Path, Collection]:
        """The collections this engine holds now, by root (a copy; nothing is discovered or
        marked used): those its calls met and it has not forgotten, each with its connections
        open or released (`Collection.is_open`, `Collection.vectors_held`)."""
        with self._lock:
            return dict(self._collections)

    def _reachable(self, path: UserPath) -> tuple[Path, list[Collection], list[Notice]]:
        """`path` resolved, and the collections a read-only call (search, changes) works on
        under it: all, unless that would index more than a few folders the user never named
        (a broad path: `discovery.within_reach`); then those with an index, and a notice
        naming the rest."""
        base, roots = self._discovered(path)
        roots, left = within_reach(base, roots)
        return base, self._use_collections(base, roots), [left] if left else []

    def _discovered(self, path: UserPath) -> tuple[Path, list[Path]]:
        """The resolved `path` and the collection roots discovery finds there, all inside
        the roots this engine may work in."""
        # First what earlier calls left open beyond the budget: released before discovery,
        # which itself needs descriptors (so a call after running out of them works).
        with self._lock:
            spare = self._to_release(time.monotonic())
        self._release(spare)
        base = resolve_path(path)
        check_inside(base, self.roots, path)
        roots = self._discoveries.discover(base)
        if self.roots is not None:  # each as it really is now, not as it was when discovered
            for root in roots:
                check_inside(Path(real_path(root)), self.roots, root)
        return base, roots

    def _use_collections(self, base: Path, roots: list[Path]) -> list[Collection]:
        """This engine's one object for each of `roots` (found under `base`), each marked
        used now; with the first, the idle janitor's thread starts; collections below `base`
        whose folders are gone are forgotten (closed without waiting)."""
        with self._lock:
            now = time.monotonic()
            for root in roots:
                if root not in self._collections:
                    self._collections[root] = Collection(
                        root,
                        self.tuning,
                        inotify=self._inotify,
                        refreshing=self._refreshing,
                        failures=self._failures,
                    )
                if root not in self._used or root in self._released:
                    self._wake.set()  # one more to watch (the others' due times only move on)
                self._used[root] = now
                self._released.discard(root)
            if self._janitor is None and not self._closed:
                self._janitor = threading.Thread(
                    target=_tidy,
                    args=(weakref.ref(self), self._wake),
                    name="memo-idle",
                    daemon=True,
                )
                weakref.finalize(self, self._wake.set)  # an engine dropped unclosed: it ends
                self._janitor.start()
            found = [self._collections[r] for r in roots]
            found_here = set(roots)
            missing = [r for r in self._collections if r not in found_here and is_within(r, base)]
        # Folders deleted since: forget them (they are not searched anyway). A refresh of
        # one may be stuck in a batch: it closes when it ends, and this call does not wait.
        for root in [r for r in missing if not r.is_dir()]:
            with self._lock:
                gone = self._collections.pop(root, None)
            if gone is not None:
                gone.close(timeout=0)
        return found

    def _to_release(self, now: float, *, by_count: bool = True) -> list[Collection]:
        """Collections to release (call under the lock): beyond `max_open` by last use (not
        with `by_count` False: a call's own collections are not taken from under it), or
        unused for `idle_s`."""
        limit = self.max_open if by_count else len(self._collections)
        order = sorted(self._collections, key=lambda r: self._used.get(r, 0.0), reverse=True)
        spare = [
            r
            for i, r in enumerate(order)
            if r not in self._released
            and (i >= limit or now - self._used.get(r, 0.0) > self.idle_s)
        ]
        self._released.update(spare)
        return [self._collections[r] for r in spare]

    def _release(self, spare: list[Collection]) -> None:
        """Release `spare` at a call, which needs their descriptors now; opened again when
        next used. A refresh under way (or one that starts meanwhile, on another thread)
        keeps its own and is never asked to stop: stopping it half way left a search that
        waited for it answering from half an index with nothing said."""
        for c in self._still_unused(spare):
            c.release()  # a call never waits for another's refresh

    def _still_unused(self, spare: list[Collection]) -> list[Collection]:
        with self._lock:  # not those used again meanwhile (by another thread)
            return [c for c in spare if c.root in self._released]

    def _release_idle(self) -> float | None:
        """The janitor's round: release what stayed unused for `idle_s` (a refresh at work
        is never stopped: it counts as use); how long until the next one is due (None:
        none is open). Those beyond `max_open` are left to the next call."""
        with self._lock:
            if not self._closed:  # a close's wake, set after it said so, is never lost
                self._wake.clear()  # a use from here on wakes the next round
            spare = self._to_release(time.monotonic(), by_count=False)
        for c in self._still_unused(spare):
            if not c.release():
                with self._lock:
                    if c.root in self._released and c.root in self._collections:
                        self._released.discard(c.root)
                        self._used[c.root] = time.monotonic()
        with self._lock:
            due = [t for r, t in self._used.items() if r not in self._released]
        # Just past the first one's due time (`_to_release` wants it strictly past).
        return max(0.0, min(due) + self.idle_s - time.monotonic()) + 0.01 if due else None

    def reported(self, path: UserPath) -> bool:
        """Whether the OS reports the changes of every collection under `path` now (after
        a refresh has started their feeds): `wait_for_change` then sees them all."""
        return self._inotify is not None and all(c.reported for c in self.collections(path))

    def wait_for_change(self, timeout: float) -> bool:
        """Whether the OS reported a change in a collection with a feed, waiting at most
        `timeout` seconds (the next refresh reads it)."""
        if self._inotify is None:
            time.sleep(timeout)
            return False
        return self._inotify.wait(timeout)

    # -- operations -----------------------------------------------------------------------

    def search(
        self,
        path: UserPath,
        query: str,
        k: int = DEFAULT_K,
        mode: ModeName = DEFAULT_MODE,
        *,
        refresh: bool = True,
        progress: ProgressFn | None = None,
        explain: bool = False,
        offset: int = 0,
        scope: Scope | None = None,
    ) -> SearchResults:
        """The k best passages for `query` under `path`, ranked together across its
        collections, after a refresh (`refresh=False`: as indexed; waited for at most
        `refresh_budget_s`, then what is committed answers and says how far indexing got);
        `explain`: each hit says why it ranks where it does (`Hit.explain`).

        Each hit shows the lines of its passage that best match the query (`Hit.line` to
        `Hit.end_line`). `offset`: skip that many better hits (the next page), and
        `next_offset` says where the next one starts (None: no more hits); the presentation
        layer fits a page into a reader's budget (`memo_text.fit_to_budget`). `scope`
        (`Scope.parse`): rank only the notes in it, chosen among them before the k are
        cut; its `under` read from `path`.
        """
        asked = Query.of(query, k, mode, offset=offset, scope=scope, explain=explain)
        base, collections, notices = self._reachable(path)
        model, asked, notices = self._refresh_and_get_model(
            collections, asked, notices, refresh, progress
        )
        return pipeline.search(base, collections, asked, model, self.tuning, notices, self.max_open)

    def _refresh_and_get_model(
        self,
        collections: list[Collection],
        query: Query,
        notices: list[Notice],
        refresh: bool,
        progress: ProgressFn | None,
    ) -> tuple[Embedder | None, Query, list[Notice]]:
        """The collections refreshed (`refresh`), the model of `query`, ready, and the query
        in the mode it can run in (hybrid on words alone without a model); the notices so
        far. A model not loaded yet loads its graph while the refresh walks (it needs only
        the model's id, unless it has passages to embed) and the vectors load."""
        loading, called = not self.models.loaded, time.monotonic()
        model, mode = self._model(query.mode, notices, ready=False)
        if refresh:
            notices += self._refresh(collections, model, progress)
            came = model is None and query.mode == "hybrid"
            if came and self._installed_for(collections, called):
                # The model came: this search has it after all. What the refresh without
                # it said stands (a failure is said once), but the words-only answer and
                # how far it got, which the refresh with the model says anew.
                notices = [n for n in notices if n.kind not in _SUPERSEDED]
                model, mode = self._model(query.mode, notices, ready=False)
                notices += self._refresh(collections, model, progress)
        if model is not None and loading:
            for c in collections[: self.max_open]:  # those past it are read one at a time
                c.load_vectors()
            model, mode = self._model(mode, notices, ready=True)
        return model, query.in_mode(mode), notices

    def _model(
        self, mode: ModeName, notices: list[Notice], *, ready: bool
    ) -> tuple[Embedder | None, ModeName]:
        """The model of a search in `mode` and the mode it runs in: without a model, a
        hybrid search runs on words (a notice says why) and a vec search is an error."""
        if mode == "lex":
            return None, mode
        try:
            # hybrid answers by words while a missing model installs; vec waits for it
            return self.models.get(ready=ready, background=mode == "hybrid"), mode
        except ModelUnavailableError as e:
            if mode == "vec":
                raise ModelUnavailableError("search.vec_needs_model", reason=e) from e
            notices.append(Notice(NoticeKind.MODEL_UNAVAILABLE, detail=e.message))
            return None, "lex"

    def _installed_for(self, collections: list[Collection], called: float) -> bool:
        """Whether the model this search found missing (installed now on a thread of its
        own, while words answered) is in within `small.within_s` of the call, where what
        it would embed here is small: a small folder's first answer has its vectors."""
        if not self.models.installing:
            return False
        read = Collection.without_vectors
        if sum(refreshing.each_within(collections, self.max_open, read)) > self.small.chunks:
            return False
        return self.models.wait_installed(called + self.small.within_s - time.monotonic())

    def _refresh(
        self,
        collections: list[Collection],
        embedder: Embedder | None,
        progress: ProgressFn | None,
    ) -> list[Notice]:
        return refreshing.refresh_collections(
            collections,
            embedder,
            progress,
            budget=self.refresh_budget_s,
            small=self.small,
            open_budget=self.max_open,
        )

    def changes(
        self,
        path: UserPath,
        since: str | None = None,
        *,
        refresh: bool = True,
        progress: ProgressFn | None = None,
    ) -> ChangeReport:
        """What was added, changed and removed under `path` since the content had the
        fingerprint `since` (from `status`, or an earlier answer), after a refresh; every
        note when `since` is None, unknown here, or older than the history kept.

        Several collections: the fingerprint is theirs, each with its folder, joined by "."
        in path order; a collection renamed or moved under `path` is its old notes removed
        and its new ones added, one that appeared all added, also since parts that name no
        folder (`changes`)."""
        base, collections, notices = self._reachable(path)
        if refresh:
            notices += self._refresh(collections, None, progress)
        return changes_since(base, collections, since, notices)

    def refresh(
        self,
        path: UserPath,
        *,
        embed: bool = True,
        progress: ProgressFn | None = None,
        wait: bool = True,
    ) -> RefreshStats:
        """Bring every collection's index under `path` up to date; `embed=False` leaves
        vectors for later (so does a model that cannot be had: the notices say why).

        `wait=False`: where a rebuild or another process is at work on a collection, leave
        it to them (the notices say where and why) instead of waiting.
        """
        total = RefreshStats()
        embedder: Embedder | None = None
        if embed:
            try:  # its graph loads on a thread of its own while the words are indexed
                embedder = self.models.get(ready=False)
            except ModelUnavailableError as e:
                total.notices.append(Notice(NoticeKind.MODEL_UNAVAILABLE, detail=e.message))

        def refresh(c: Collection) -> RefreshStats:
            stats = c.refresh(embedder, progress, wait=wait)
            stats.notices[:0] = c.untold()  # why it was rebuilt, if it was: said first
            return stats

        # Past the budget of open collections each lets go once indexed, as a search's do.
        for stats in refreshing.each_within(self.collections(path), self.max_open, refresh):
            total.add(stats)
        if embedder is not None:
            try:  # a graph that failed to load made no vectors: say why
                self.models.get()
            except ModelUnavailableError as e:
                total.notices.append(Notice(NoticeKind.MODEL_UNAVAILABLE, detail=e.message))
        return total

    def status(self, path: UserPath) -> list[CollectionStatus]:
        """What each collection's index holds, and how many notes on disk it does not hold
        as they are yet (`pending`: a walk of the folder); reads only, creates nothing."""
        return [c.status() for c in self.collections(path)]

    def reindex(self, path: UserPath, progress: ProgressFn | None = None) -> int:
        """Rebuild every collection's index from scratch; the number of files indexed."""
        try:
            embedder: Embedder | None = self.models.get()
        except ModelUnavailableError:
            embedder = None  # words now; vectors are filled in by the next search
        rebuild = partial(Collection.rebuild, embedder=embedder, progress=progress)
        return sum(refreshing.each_within(self.collections(path), self.max_open, rebuild))

    # -- notes ----------------------------------------------------------------------------

    def note(self, folder: UserPath, rel: str, *, limit: int = NOTE_LIMIT) -> NoteText:
        """Note `rel` ('/' between folders) below `folder`, at most `limit` bytes of it (cut
        at a line end), if a search could find it there: judged by the walker's rules from
        the collection that holds `folder`, read through its descriptor (files/notes.py).
        NotANoteError, NoteNotFoundError or NoteUnreadableError say why not."""
        base = resolve_path(folder)
        check_inside(base, self.roots, folder)
        return read_note(base, rel, limit, self.roots)

    def read(
        self,
        folder: UserPath,
        note: str,
        *,
        from_line: int | None = None,
        to_line: int | None = None,
        around: int | None = None,
        limit: int = NOTE_LIMIT,
    ) -> NoteLines:
        """Lines `from_line`–`to_line` of note `note` below `folder`, or those around line
        `around` (none given: all), numbered as a hit's `path:line` counts them, of the text
        `note()` serves (its checks, its bound). `note` may be a hit's absolute path (then
        judged from its own folder, which must lie inside the roots), and may end in a
        hit's `:line`: read around it, also as an answer shows it (a name's bytes that are
        not UTF-8 and its control characters escaped: `text.escapes.unshown`).
        InvalidArgumentError for a bad span, before reading. A relative `note` not found
        below `folder` is tried relative to the current folder too: a hit's path as the
        CLI prints it (`examples/notes/a.md:3` for `memo search examples/notes`)."""
        tries = [note] + ([unescaped] if (unescaped := unshown(note)) != note else [])
        tries += [os.path.abspath(t) for t in tries if not os.path.isabs(t)]
        missing: NoteNotFoundError | None = None
        for t in tries:
            try:
                return self._read(folder, t, from_line, to_line, around, limit)
            except NoteNotFoundError as e:
                missing = missing or e  # said of the note as it was asked for
            except OutsideRootsError:
                if missing is None:  # the note as asked for lies outside
                    raise
                # else a guess (the current folder) led outside: the note was not found
        assert missing is not None
        raise missing

    def _read(
        self,
        folder: UserPath,
        note: str,
        from_line: int | None,
        to_line: int | None,
        around: int | None,
        limit: int,
    ) -> NoteLines:
        rel, at = located(note)
        if at is not None:
            if (from_line, to_line, around) != (None, None, None):
                raise InvalidArgumentError("read.line_given", note=shown(note))
            around = at
        first, last = line_span(from_line, to_line, around)
        if os.path.isabs(rel):
            folder, rel = os.path.split(rel)
        text = self.note(folder, rel, limit=limit)
        where = os.path.join(resolve_path(folder), rel)
        return note_lines(text, where, first, last)

    def note_paths(self, folder: UserPath) -> list[str]:
        """The notes a search could find below `folder`, relative to it, sorted."""
        base = resolve_path(folder)
        check_inside(base, self.roots, folder)
        return note_paths(base, self.roots)


def _tidy(ref: weakref.ref[Engine], wake: threading.Event) -> None:
    """The janitor's loop, on a thread of its own: each round releases what stayed unused,
    then sleeps until the next one is due or `wake` is set. It holds the engine only during
    a round, so an engine dropped without `close` is still collected (and wakes it to end)."""
    while (engine := ref()) is not None and not engine._closed:
        wait = engine._release_idle()
        del engine
        wake.wait(wait)


def _resolved_roots(roots: Sequence[UserPath]) -> list[Path]:
    """`roots` as paths the engine compares with (str or Path, `~`, relative), none read
    from the environment; an empty list stays empty (nowhere)."""
    raw = [os.fspath(r) for r in roots]
    return allowed_roots(raw, env="") if raw else []


def open_budget() -> int:
    """How many collections may keep their connections open, by the descriptors this
    process may open now (`raise_descriptor_limit` first, in an entry point)."""
    limit = descriptor_limit()
    if limit is None:
        return MAX_OPEN
    reserved = min(FDS_RESERVED, limit // 2)
    return max(1, min(MAX_OPEN, (limit - reserved) // FDS_PER_COLLECTION))
