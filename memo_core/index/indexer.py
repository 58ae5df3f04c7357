"""Bringing a collection's index up to date with its files (incremental refresh).

Cheap when nothing changed: one directory walk with stat, compared with the stored
(mtime_ns, size) of each file. Only files whose stat differs are read and hashed; only
chunks whose text changed are embedded (vectors are reused by content hash, across files,
so a rename re-embeds nothing).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import ChainMap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from memo_core.files.fsafe import Folder, NotRegularFile
from memo_core.files.walker import Changes, FileStat, rescan, scan
from memo_core.index.rows import FileState
from memo_core.index.store import Store
from memo_core.messages import os_reason
from memo_core.model.embedder import Embedder
from memo_core.text import textnorm
from memo_core.text.chunking import Chunk, Note, parse_note
from memo_core.text.frontmatter import FrontMatter
from memo_core.text.passagelang import passage_languages
from memo_core.text.sentences import sentences
from memo_core.text.titles import embedded_heading, lead_of
from memo_core.tuning import Tuning
from memo_core.values import FileNote, Notice, NoticeKind

if TYPE_CHECKING:
    from concurrent.futures import Future


@dataclass
class Progress:
    """What a long refresh reports to its caller (CLI bar, MCP notifications)."""

    phase: str  # "index" (words), "embed" (passages' vectors) or "sentences" (theirs)
    files_done: int
    files_total: int
    chunks_done: int
    chunks_total: int | None
    started: float
    # Of `chunks_done`, those done before this refresh came to the pass (by an earlier
    # run, or another process): counted, so a restart goes on from them, but not in its pace.
    chunks_before: int = 0
    # Counted in an index built beside the live one (a rebuild): searches read the old one
    # until the new one replaces it, so none of this is in their answers yet.
    aside: bool = False

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


ProgressFn = Callable[[Progress], None]

# A vectors pass commits in steps of about this long, whatever the machine's pace: a restart,
# a kill or a second process goes on from the last step, and bars move with each.
# A search that comes meanwhile waits for the step under way (the words of changes made
# before it are indexed between two steps), so this is also about how long that wait is.
STEP_S = 1.0
FIRST_STEP = 16  # passages in a pass's first step, before its pace is known
# Sentences whose vectors a refresh keeps to give again (about 400 bytes each): a site's
# boilerplate repeats over pages the sentence pass takes in different steps (office-dev-ru:
# 107,421 sentences, 77,845 distinct; a step alone saw 7 % of the text twice).
SENTENCES_KEPT = 50_000


class Steps:
    """How many passages the next step of a pass takes: `FIRST_STEP`, then as many as the
    last step's pace gets done in `STEP_S` seconds, at most twice the last step and at most
    `most` (`Tuning.batch_chunks`). The pace is of texts the model embedded: a step whose
    passages all reused vectors of the same text says nothing of it."""

    def __init__(self, most: int) -> None:
        self.most = max(1, most)
        self.size = min(self.most, FIRST_STEP)

    def took(self, embedded: int, seconds: float) -> None:
        if embedded > 0 and seconds > 0:
            paced = int(embedded * STEP_S / seconds)
            self.size = max(1, min(self.most, 2 * self.size, paced))


@dataclass
class RefreshStats:
    added: int = 0
    changed: int = 0
    deleted: int = 0
    touched: int = 0  # stat changed, content did not
    chunks_written: int = 0
    chunks_vectored: int = 0  # passages given a vector: embedded, or sharing an embedded text
    chunks_embedded: int = 0  # distinct texts the model embedded
    sentences_embedded: int = 0  # sentences the sentence model embedded
    seconds: float = 0.0
    notes: list[tuple[str, FileNote, str]] = field(default_factory=list)  # path, note, detail
    notices: list[Notice] = field(default_factory=list)
    stopped: bool = False  # asked to stop before it was done (the next refresh goes on)
    two_names: bool = False  # a note or folder with two names (changes can hide behind one)
    walked: bool = False  # the whole collection was walked (not only what the OS reported)

    @property
    def changed_anything(self) -> bool:
        return bool(self.added or self.changed or self.deleted or self.chunks_embedded)

    def add(self, other: RefreshStats) -> None:
        """Count `other` (another collection's refresh, or a later pass of this one's) in too."""
        for name in ("added", "changed", "deleted", "touched", "chunks_written", "chunks_vectored"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.chunks_embedded += other.chunks_embedded
        self.sentences_embedded += other.sentences_embedded
        self.seconds += other.seconds
        self.notes += other.notes
        self.notices += other.notices
        self.stopped |= other.stopped
        self.walked |= other.walked


T = TypeVar("T")
R = TypeVar("R")
P = TypeVar("P")  # a pass's step, planned
M = TypeVar("M")  # what the model made of it


# A vectors pass's step, planned: the vectors the index has for its passages' hashes, and
# the texts of the rest (by hash) to embed.
_Planned = tuple[dict[str, bytes], dict[str, str]]


@dataclass(frozen=True)
class _Sentences:
    """A sentence pass's step, planned: what the index knows of its passages' sentences
    (by passage hash), the sentences of the rest, those kept from earlier steps, and those
    to embed."""

    known: dict[str, bytes | None]
    todo: dict[str, list[str]]
    kept: dict[str, bytes]
    fresh: list[str]


@dataclass(frozen=True)
class _Pass(Generic[P, M]):
    """What a pass of steps (`Indexer._steps`) does with each step's rows."""

    rows: Callable[[int, int], list]  # (how many, after which id): rows still to do, oldest first
    plan: Callable[[list], P]  # what the rows need made (read from the index)
    make: Callable[[P], M]  # the model's work, on the pass's own thread
    write: Callable[[list, P, M], int]  # the step committed; returns the texts embedded
    left: Callable[[], int]  # rows still to do
    between: Callable[[], bool]  # the words for a caller waiting on them; False: stopped


def _timed(make: Callable[[T], R], planned: T) -> tuple[R, float]:
    """`make(planned)` and the seconds it took, on the thread it ran on."""
    begun = time.monotonic()
    return make(planned), time.monotonic() - begun


@dataclass
class _Prepared:
    rel: str
    stat: FileStat
    old: FileState | None
    hash: str
    note: FileNote | None
    chunks: list[Chunk]
    front: FrontMatter
    tags: tuple[str, ...]
    titled: bool  # a level-1 heading of its own leads its passages

    @property
    def lead(self) -> str:
        """The title its passages are embedded under (`text.titles`)."""
        return lead_of(self.rel, self.front.names, self.titled)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def chunk_hash(heading: str, text: str) -> str:
    """The hash of what is embedded (`heading`: the `embedded_heading`): a passage whose
    hash the index knows has its vector already."""
    return _digest(f"{heading}\x00{text}".encode())


def embed_input(heading: str, text: str, max_chars: int) -> str:
    return (f"{heading}\n{text}" if heading else text)[:max_chars]


def read_note(root: Folder, rel: str, max_bytes: int) -> tuple[bytes, FileNote | None, str]:
    """The bytes of note `rel` below `root` (possibly cut), a note when it is skipped or
    cut, and details. A note swapped for a symlink leading out of the root is unreadable
    (and retried next time), never read."""
    try:
        data, _ = root.read(rel, max_bytes + 1)
    except NotRegularFile:  # a FIFO, socket or device: skipped for good, not retried
        return b"", FileNote.SPECIAL, ""
    except OSError as e:
        return b"", FileNote.UNREADABLE, os_reason(e)
    if not data.strip():
        return data, FileNote.EMPTY, ""
    if b"\x00" in data[:8192]:
        return data, FileNote.BINARY, ""
    if len(data) > max_bytes:
        size = f"{max_bytes >> 20} MB" if max_bytes >= 1 << 20 else f"{max_bytes} bytes"
        return data[:max_bytes], FileNote.CUT, f"the first {size}"
    return data, None, ""


class WordsGate:
    """Whether a caller waits for words newer than those indexed, asked between vector
    batches: a first index embeds for minutes, and an edit made just before a search must
    be in its words meanwhile. `changes` says what changed since the last words pass (None:
    walk everything), like the `changes` of a refresh; `quiet`, whether the OS reported
    nothing since it was last asked (`Freshness.quiet`: never, where it does not report)."""

    def __init__(
        self,
        changes: Callable[[], Changes | None] = lambda: None,
        quiet: Callable[[], bool] = lambda: False,
    ) -> None:
        self.changes = changes
        self._quiet = quiet
        self._lock = threading.Lock()
        self._asked = 0.0  # the latest time from which a waiter wants every change
        self._began = 0.0  # when the words pass under way (or the last one) began
        self._in_pass = False
        self._fresh_from: float | None = None  # the last finished pass began then

    def ask(self, since: float) -> None:
        """A caller wants the words of every change made before `since` (monotonic)."""
        with self._lock:
            self._asked = max(self._asked, since)

    def due(self) -> bool:
        with self._lock:
            return self._fresh_from is None or self._asked > self._fresh_from

    def begin(self) -> None:
        """A words pass begins, before it asks what changed (once a pass: a caller that
        takes the changes itself begins it first, and the refresh's own `begin` is then
        none, or a change made between the two would count as in)."""
        with self._lock:
            if not self._in_pass:
                self._began, self._in_pass = time.monotonic(), True

    def finish(self) -> None:
        with self._lock:
            self._fresh_from, self._in_pass = self._began, False

    def fresh(self, since: float) -> bool:
        """Whether the words of every change made before `since` are in: a words pass begun
        since then has ended; or none is under way and the OS reported nothing since the
        last one asked what changed (a search while vectors are made then waits for no step
        of theirs: under load a step took a search 2-4 s)."""
        with self._lock:
            if self._fresh_from is not None and self._fresh_from >= since:
                return True
            settled = self._fresh_from is not None and not self._in_pass
        return settled and self._quiet()  # read after `since`: it saw every change before


class Indexer:
    """Refreshes one collection's store from its folder."""

    def __init__(
        self,
        root: Folder,
        store: Store,
        embedder: Embedder | None,
        tuning: Tuning,
        *,
        reuse: Store | None = None,
    ) -> None:
        self.root = root  # reached through its descriptor, opened by the caller
        self.store = store
        self.embedder = embedder
        self.tuning = tuning
        # Another index whose vectors (passages' and sentences') are this model's, made the
        # same way (`Store.same_vectors`): a passage whose hash it knows takes them from it,
        # not from the model. A rebuild's live index: words made anew keep their vectors.
        self.reuse = reuse
        # Each sentence embedded this refresh: its vector packed (`vectors.pack_rows`),
        # the oldest let go past SENTENCES_KEPT.
        self._sentences: dict[str, bytes] = {}

    def _embed_input(self, heading: str, text: str) -> str:
        return embed_input(heading, text, self.tuning.embed_max_chars)

    def refresh(
        self,
        progress: ProgressFn | None = None,
        stop: threading.Event | None = None,
        changes: Changes | None = None,
        gate: WordsGate | None = None,
        *,
        sentences: bool = True,
    ) -> RefreshStats:
        """Words first (every new or changed file committed in batches, so searches see more
        with each), then the vectors of chunks that have none, then (a model that takes a
        second look, and `sentences`) their sentences' vectors. `stop` set: end after the
        batch under way (the rest is done by the next refresh). `changes`: look only at
        these folders (what the OS reported changed); None: walk the whole collection.
        `gate`: between vector batches, a caller waiting for newer words gets them first."""
        t0 = time.monotonic()
        stats = RefreshStats()
        # The vector table is the model's before the words (they reuse its vectors by
        # hash), except in an index that has none yet: there it becomes the model's once
        # its graph has loaded (a graph that fails leaves it no one's).
        if self.embedder is not None and self.store.vector_key()[1] is not None:
            self._use_model()
        if gate is not None:
            gate.begin()
        # The OS reported nothing: nothing to look at.
        if (changes is None or changes) and not self._words(stats, progress, stop, changes, t0):
            return stats
        if gate is not None:
            gate.finish()
        if self.embedder is not None:
            self._fill_vectors(stats, progress, t0, stop, gate)
            if not stats.stopped and self.embedder.sentence_model is not None:
                if sentences:
                    self._fill_sentences(stats, progress, t0, stop, gate)
                elif self.reuse is not None:
                    self._reuse_sentences()
            # Every vector is in: what the model holds for indexing alone may go (not after
            # a refresh that embedded nothing: another collection's may be under way, nor
            # before the sentences a caller makes next).
            whole = sentences or self.embedder.sentence_model is None
            if (stats.chunks_embedded or stats.sentences_embedded) and whole and not stats.stopped:
                self.embedder.rest()
        stats.seconds = time.monotonic() - t0
        return stats

    def _words(
        self,
        stats: RefreshStats,
        progress: ProgressFn | None,
        stop: threading.Event | None,
        changes: Changes | None,
        t0: float,
    ) -> bool:
        """Index the words of what is new or changed (where `changes` says, else all);
        False when `stop` ended it."""
        found = scan(self.root) if changes is None else rescan(self.root, changes)
        stats.two_names |= found.two_names
        stats.walked |= changes is None
        scanned = found.files
        known = self.store.file_stats(changes)
        for unreadable in found.unreadable:
            stats.notices.append(
                Notice(NoticeKind.UNREADABLE_FOLDER, self.root.path, unreadable or ".")
            )
        if changes is None:  # what a whole walk found
            self.store.set_walk_facts(found.unreadable, found.ignored)
        if scanned == known:  # the common case, nothing changed, ends at this comparison
            return True
        todo = [rel for rel, st in scanned.items() if known.get(rel) != st]
        # A file in a folder that could not be read is not known to be gone.
        gone = [rel for rel in known if rel not in scanned and not found.unknown(rel)]
        prog = Progress("index", 0, len(todo), 0, None, t0)
        for batch in self._batches(todo, scanned, stats):
            if stop is not None and stop.is_set():
                stats.stopped = True
                return False
            self._write_batch(batch, stats)
            prog.files_done += len(batch)
            prog.chunks_done = stats.chunks_written
            if progress:
                progress(prog)
        if gone:
            self._delete(gone)
            stats.deleted += len(gone)
        return True

    # -- steps --------------------------------------------------------------------------

    def _delete(self, gone: list[str]) -> None:
        with self.store.write():
            for rel in gone:
                if (old := self.store.file_record(rel)) is not None:
                    self.store.delete_file(old.id)
            self.store.mark_updated()

    def _batches(
        self, todo: list[str], scanned: dict[str, FileStat], stats: RefreshStats
    ) -> Iterator[list[_Prepared]]:
        """Read, hash and chunk files, yielding groups of about `batch_chunks` chunks."""
        batch: list[_Prepared] = []
        size = 0
        touched: list[tuple[FileState, FileStat]] = []
        for rel in todo:
            st = scanned[rel]
            old = self.store.file_record(rel)
            data, note, detail = read_note(self.root, rel, self.tuning.max_file_bytes)
            h = _digest(data)
            if old is not None and old.hash == h and not note:
                touched.append((old, st))  # only the stat changed
                continue
            if note is FileNote.UNREADABLE:
                st = (-1, st[1])  # so the next refresh retries it
            parsed = (
                Note([], FrontMatter(), ())
                if note and note.skipped
                else parse_note(data.decode("utf-8", errors="replace"), self.tuning.chunk_max_chars)
            )
            if note:
                stats.notes.append((rel, note, detail))
            batch.append(
                _Prepared(
                    rel, st, old, h, note, parsed.chunks, parsed.front, parsed.tags, parsed.titled
                )
            )
            size += len(parsed.chunks)
            if size >= self.tuning.batch_chunks:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch
        if touched:
            with self.store.write():
                for old, st in touched:
                    self.store.touch_file(old.id, *st)
            stats.touched = len(touched)

    def _write_batch(self, batch: list[_Prepared], stats: RefreshStats) -> None:
        """Words of a batch of files, in one transaction; a chunk whose text the index knows
        gets its vector at once (a renamed or copied note is never embedded again)."""
        store = self.store
        hashes = [
            [chunk_hash(embedded_heading(p.lead, c.heading), c.text) for c in p.chunks]
            for p in batch
        ]
        vectors = store.vectors_for_hashes({h for hs in hashes for h in hs})
        with store.write():
            for p, p_hashes in zip(batch, hashes, strict=True):
                fid = store.upsert_file(p.rel, *p.stat, p.hash, p.note)
                # The note's names are found as its path is: in every chunk's heading words;
                # so are its other fields' words (measured against its first chunk's body and
                # its first chunk's heading: every chunk's heading ranked best).
                names = p.front.names
                named = " ".join([textnorm.path_text(p.rel), *names, p.front.words])
                # Each chunk's words in its language, its own or its note's.
                langs = passage_languages([f"{c.heading}\n{c.text}" for c in p.chunks])
                path_words = {lang: textnorm.normalize(named, lang) for lang in set(langs)}
                front = json.dumps({"names": names, "words": p.front.words}, ensure_ascii=False)
                front = front if names or p.front.words else ""
                # A chunk's words hold the note's names and fields too: when they changed,
                # no chunk keeps its old words (vectors are still reused by hash).
                same_front = store.file_front(fid) == front
                store.set_front(fid, front, p.tags, p.lead)
                old_ids: dict[tuple[str, str], list[int]] = {}
                # Read inside the transaction, not from the walk's snapshot: another process
                # may have indexed this file since, and its chunks must not be doubled.
                # A chunk is kept where its text and its words' language are (its note's
                # language may change with another part of it).
                for cid, h, lang in store.file_chunks(fid):
                    old_ids.setdefault((h, lang), []).append(cid)
                for seq, (c, h, lang) in enumerate(zip(p.chunks, p_hashes, langs, strict=True)):
                    if same_front and old_ids.get((h, lang)):
                        store.move_chunk(old_ids[h, lang].pop(0), seq, c.line, c.text_line)
                        continue
                    cid = store.insert_chunk(fid, seq, c, h, path_words[lang], lang)
                    stats.chunks_written += 1
                    if h in vectors:
                        store.set_vector(cid, vectors[h])
                        stats.chunks_vectored += 1
                store.delete_chunks(cid for ids in old_ids.values() for cid in ids)
                if p.old is None:
                    stats.added += 1
                else:
                    stats.changed += 1
            store.mark_updated()

    def _use_model(self) -> None:
        """The vector table made this model's (its old vectors dropped if another's)."""
        assert self.embedder is not None
        reader = self.embedder.sentence_model
        self.store.use_model(self.embedder.model_id, self.embedder.dim, reader.dim if reader else 0)

    def _fill_vectors(
        self,
        stats: RefreshStats,
        progress: ProgressFn | None,
        t0: float,
        stop: threading.Event | None,
        gate: WordsGate | None,
    ) -> None:
        """Embed the chunks that have no vector yet, in steps (each text once)."""
        import numpy as np  # with the first vectors: a refresh of words alone needs none

        assert self.embedder is not None
        embedder = self.embedder
        left = self.store.count_without_vectors()
        if not left:
            return
        before = self.store.count_chunks() - left
        prog = Progress("embed", 0, 0, before, before + left, t0, chunks_before=before)
        if progress:
            progress(prog)  # words are all in: from here on, vectors (a bar from the first)
        if not embedder.usable():  # waits for a graph still loading
            return
        self._use_model()

        def plan(rows: list[tuple[int, str, str, str, str]]) -> _Planned:
            known = self._known(Store.vectors_for_hashes, {h for _, _, _, h, _ in rows})
            texts = {
                h: self._embed_input(embedded_heading(lead, hd), tx)
                for _, hd, tx, h, lead in rows
                if h not in known
            }
            return known, texts

        def make(planned: _Planned) -> list[bytes]:
            vecs = embedder.embed(list(planned[1].values()))
            return [v.tobytes() for v in vecs.astype(np.float32)]

        def write(rows: list[tuple[int, str, str, str, str]], planned: _Planned, made: list) -> int:
            known, texts = planned
            known.update(zip(texts, made, strict=True))
            with self.store.write():
                for cid, _, _, h, _ in rows:
                    self.store.set_vector(cid, known[h])
                self.store.mark_updated()
            stats.chunks_embedded += len(texts)
            stats.chunks_vectored += len(rows)
            return len(texts)

        def between() -> bool:
            assert gate is not None  # asked only for a caller waiting on it
            return self._words_between(stats, progress, stop, gate, t0)

        self._steps(
            _Pass(self.store.chunks_without_vectors, plan, make, write,
                  self.store.count_without_vectors, between),
            prog, stats, progress, stop, gate,
        )  # fmt: skip

    def _words_between(
        self,
        stats: RefreshStats,
        progress: ProgressFn | None,
        stop: threading.Event | None,
        gate: WordsGate,
        t0: float,
    ) -> bool:
        """The words of what changed since, indexed between two batches of a later pass
        for a caller waiting on them; False: stopped meanwhile."""
        gate.begin()
        if not self._words(stats, progress, stop, gate.changes(), t0):
            return False
        gate.finish()
        return True

    def _fill_sentences(
        self,
        stats: RefreshStats,
        progress: ProgressFn | None,
        t0: float,
        stop: threading.Event | None,
        gate: WordsGate | None,
    ) -> None:
        """Embed the sentences of the chunks that have none yet, in steps (each passage's
        text once): the second look's vectors, made once every passage has its own."""

        from memo_core.index import vectors

        assert self.embedder is not None
        model = self.embedder.sentence_model
        left = self.store.count_without_sentences()
        if model is None or not left:
            return
        before = self.store.count_chunks() - left
        prog = Progress("sentences", 0, 0, before, before + left, t0, chunks_before=before)
        if progress:
            progress(prog)
        if not model.usable():
            return
        coming: set[str] = set()  # the sentences the step under way embeds
        came: dict[str, bytes] = {}  # and what it made of them, once it is written

        def plan(rows: list[tuple[int, str, str]]) -> _Sentences:
            known = self._known(Store.sentences_for_hashes, {h for _, _, h in rows})
            todo = {h: sentences(tx) for _, tx, h in rows if h not in known}
            # Each sentence once a refresh: pages of one site repeat theirs ("См. также",
            # boilerplate), over steps as well as within one (SENTENCES_KEPT). Taken now:
            # the step under way, written before this one, may let the oldest kept go.
            flat = dict.fromkeys(s for ss in todo.values() for s in ss)
            kept = {s: self._sentences[s] for s in flat if s in self._sentences}
            fresh = [s for s in flat if s not in kept and s not in coming]
            coming.clear()
            coming.update(fresh)
            return _Sentences(known, todo, kept, fresh)

        def make(planned: _Sentences) -> list[bytes]:
            return vectors.pack_rows(model.embed(planned.fresh)) if planned.fresh else []

        def write(rows: list[tuple[int, str, str]], planned: _Sentences, made: list[bytes]) -> int:
            new = dict(zip(planned.fresh, made, strict=True))
            rows_of = ChainMap(planned.kept, new, came)  # the rest: the step before's
            known = planned.known
            for h, ss in planned.todo.items():  # a passage with no text has none: None
                known[h] = vectors.join_rows([rows_of[s] for s in ss]) if ss else None
            self._keep_sentences(new)
            came.clear()
            came.update(new)
            with self.store.write():
                for cid, _, h in rows:
                    self.store.set_sentences(cid, known[h])
                self.store.mark_updated()
            stats.sentences_embedded += len(planned.fresh)
            return len(planned.todo)

        def between() -> bool:
            assert gate is not None  # asked only for a caller waiting on it
            if not self._words_between(stats, progress, stop, gate, t0):
                return False
            self._fill_vectors(stats, progress, t0, stop, gate)  # theirs come first too
            return not stats.stopped

        self._steps(
            _Pass(self.store.chunks_without_sentences, plan, make, write,
                  self.store.count_without_sentences, between),
            prog, stats, progress, stop, gate,
        )  # fmt: skip

    def _steps(
        self,
        work: _Pass[P, M],
        prog: Progress,
        stats: RefreshStats,
        progress: ProgressFn | None,
        stop: threading.Event | None,
        gate: WordsGate | None,
    ) -> None:
        """A pass in steps, each committed with its progress: a step's rows are planned and
        written here, what the model makes of them is made on a thread of the pass's own,
        and the next step's is under way while one is written, so the model's threads do
        not wait for the index (on 2 cores they did for about 5 % of `memo index`). `stop`
        set: end after the step under way; a caller waiting on `gate` gets the words first
        (`work.between`), then the pass goes on from its first row left."""
        from concurrent.futures import ThreadPoolExecutor  # with the first vectors

        steps = Steps(self.tuning.batch_chunks)
        after = 0  # the last row taken
        under_way: tuple[list, P, Future[tuple[M, float]]] | None = None
        ahead = ThreadPoolExecutor(1, thread_name_prefix="memo-pass")
        try:
            while True:
                halt = stop is not None and stop.is_set()
                wait = gate is not None and gate.due()
                rows = [] if halt or wait else work.rows(steps.size, after)
                nxt = None
                if rows:
                    after = rows[-1][0]
                    planned = work.plan(rows)
                    nxt = (rows, planned, ahead.submit(_timed, work.make, planned))
                if under_way is not None:
                    done, planned_then, future = under_way
                    made, seconds = future.result()
                    steps.took(work.write(done, planned_then, made), seconds)
                    prog.chunks_done += len(done)
                    if progress:
                        progress(prog)
                under_way = nxt
                if rows:
                    continue
                if halt:
                    stats.stopped = True
                    return
                if not wait or not work.between():
                    return
                after = 0  # the words may have added rows before the last one taken
                prog.chunks_total = prog.chunks_done + work.left()
                if progress:
                    progress(prog)  # back to this pass
        finally:
            # A pass cut short (an error, Ctrl-C) does not wait for the step under way:
            # what the model makes of it is let go, and the caller answers at once.
            ahead.shutdown(wait=False, cancel_futures=True)

    def _known(
        self, read: Callable[[Store, set[str]], dict[str, T]], hashes: set[str]
    ) -> dict[str, T]:
        """What `read` (`Store.vectors_for_hashes` or `Store.sentences_for_hashes`) finds for
        these passage hashes, here or in the index `reuse`d."""
        known = read(self.store, hashes)
        if self.reuse is not None and (missing := hashes - known.keys()):
            known |= read(self.reuse, missing)
        return known

    def _reuse_sentences(self) -> None:
        """The sentences' vectors the index `reuse`d holds for these passages' hashes, taken
        without the model: a rebuild's, before its index replaces the live one (whose own
        are gone then), the rest made after."""
        assert self.reuse is not None
        rows = self.store.hashes_without_sentences()
        known = self.reuse.sentences_for_hashes({h for _, h in rows})
        with self.store.write():
            for cid, h in rows:
                if h in known:
                    self.store.set_sentences(cid, known[h])

    def _keep_sentences(self, rows: dict[str, bytes]) -> None:
        """Keep these sentences' vectors for the rest of the refresh, the oldest kept let go
        past SENTENCES_KEPT (a dict keeps the order they came in)."""
        self._sentences |= rows
        for old in list(self._sentences)[: max(0, len(self._sentences) - SENTENCES_KEPT)]:
            del self._sentences[old]
