"""Bringing a collection's index up to date with its files (incremental refresh).

Cheap when nothing changed: one directory walk with stat, compared with the stored
(mtime_ns, size) of each file. Only files whose stat differs are read and hashed; only
chunks whose text changed are embedded (vectors are reused by content hash, across files,
so a rename re-embeds nothing).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import textnorm
from .chunking import Chunk, chunk_markdown
from .discovery import FileStat, scan
from .embedder import Embedder
from .store import FileState, Store

MAX_FILE_BYTES = 10 * 1024 * 1024  # larger files are cut here (and said so in status)
CHUNK_MAX_CHARS = 2000  # tuned on SciFact train (bench/tune.py): best hybrid nDCG@10
EMBED_MAX_CHARS = 2000  # the embedded text is cut here; FTS5 gets the whole chunk
BATCH_CHUNKS = 256  # chunks per write transaction


@dataclass
class Progress:
    """What a long refresh reports to its caller (CLI bar, MCP notifications)."""

    phase: str  # "index" or "embed"
    files_done: int
    files_total: int
    chunks_done: int
    chunks_total: int | None
    started: float

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


ProgressFn = Callable[[Progress], None]


@dataclass
class RefreshStats:
    added: int = 0
    changed: int = 0
    deleted: int = 0
    touched: int = 0  # stat changed, content did not
    chunks_written: int = 0
    chunks_embedded: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)  # where it was left to another refresher

    @property
    def changed_anything(self) -> bool:
        return bool(self.added or self.changed or self.deleted or self.chunks_embedded)


@dataclass
class _Prepared:
    rel: str
    stat: FileStat
    old: FileState | None
    hash: str
    note: str | None
    chunks: list[Chunk]


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def chunk_hash(c: Chunk) -> str:
    return _digest(f"{c.heading}\x00{c.text}".encode())


def embed_input(heading: str, text: str) -> str:
    return (f"{heading}\n{text}" if heading else text)[:EMBED_MAX_CHARS]


def read_note(path: Path) -> tuple[bytes, str | None]:
    """The file's bytes (possibly cut) and a note when it is skipped or cut."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        return b"", f"skipped: unreadable ({e.strerror or e})"
    if not data.strip():
        return data, "skipped: empty"
    if b"\x00" in data[:8192]:
        return data, "skipped: binary data"
    if len(data) > MAX_FILE_BYTES:
        return data[:MAX_FILE_BYTES], f"cut: only the first {MAX_FILE_BYTES >> 20} MB indexed"
    return data, None


class Indexer:
    """Refreshes one collection's store from its folder."""

    def __init__(self, root: Path, store: Store, embedder: Embedder | None) -> None:
        self.root = root
        self.store = store
        self.embedder = embedder

    def refresh(self, progress: ProgressFn | None = None) -> RefreshStats:
        t0 = time.monotonic()
        stats = RefreshStats()
        if self.embedder is not None:
            self.store.use_model(self.embedder.model_id, self.embedder.dim)
        scanned = scan(self.root)
        known = self.store.file_stats()
        if scanned != known:  # the common case, nothing changed, ends at this comparison
            todo = [rel for rel, st in scanned.items() if known.get(rel) != st]
            gone = [rel for rel in known if rel not in scanned]
            prog = Progress("index", 0, len(todo), 0, None, t0)
            for batch in self._batches(todo, scanned, stats):
                self._write_batch(batch, stats)
                prog.files_done += len(batch)
                prog.chunks_done = stats.chunks_written
                if progress:
                    progress(prog)
            if gone:
                self._delete(gone)
                stats.deleted = len(gone)
        if self.embedder is not None:
            self._fill_vectors(stats, progress, t0)
        stats.seconds = time.monotonic() - t0
        return stats

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
        """Read, hash and chunk files, yielding groups of about BATCH_CHUNKS chunks."""
        batch: list[_Prepared] = []
        size = 0
        touched: list[tuple[FileState, FileStat]] = []
        for rel in todo:
            st = scanned[rel]
            old = self.store.file_record(rel)
            data, note = read_note(self.root / rel)
            h = _digest(data)
            if old is not None and old.hash == h and not note:
                touched.append((old, st))  # only the stat changed
                continue
            if note and note.startswith("skipped: unreadable"):
                st = (-1, st[1])  # so the next refresh retries it
            chunks = (
                []
                if note and note.startswith("skipped")
                else chunk_markdown(data.decode("utf-8", errors="replace"), CHUNK_MAX_CHARS)
            )
            if note:
                stats.notes.append(f"{rel}: {note}")
            batch.append(_Prepared(rel, st, old, h, note, chunks))
            size += len(chunks)
            if size >= BATCH_CHUNKS:
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
        vectors, embedded = self._vectors_for([c for p in batch for c in p.chunks])
        stats.chunks_embedded += embedded
        store = self.store
        with store.write():
            for p in batch:
                fid = store.upsert_file(p.rel, *p.stat, p.hash, p.note)
                old_ids: dict[str, list[int]] = {}
                # Read inside the transaction, not from the walk's snapshot: another process
                # may have indexed this file since, and its chunks must not be doubled.
                for cid, h in store.file_chunks(fid):
                    old_ids.setdefault(h, []).append(cid)
                for seq, c in enumerate(p.chunks):
                    h = chunk_hash(c)
                    if old_ids.get(h):
                        store.move_chunk(old_ids[h].pop(0), seq, c.line)
                        continue
                    cid = store.insert_chunk(
                        fid,
                        seq,
                        c.line,
                        c.heading,
                        c.text,
                        h,
                        textnorm.normalize(c.heading),
                        textnorm.normalize(c.text),
                    )
                    stats.chunks_written += 1
                    if h in vectors:
                        store.set_vector(cid, vectors[h])
                store.delete_chunks(cid for ids in old_ids.values() for cid in ids)
                if p.old is None:
                    stats.added += 1
                else:
                    stats.changed += 1
            store.mark_updated()

    def _vectors_for(self, chunks: list[Chunk]) -> tuple[dict[str, bytes], int]:
        """Vectors by chunk hash, reused from the index where the text is known, else
        embedded; and how many were embedded."""
        if self.embedder is None:
            return {}, 0
        wanted = {chunk_hash(c): c for c in chunks}
        found = self.store.vectors_for_hashes(wanted)
        missing = [h for h in wanted if h not in found]
        if missing:
            texts = [embed_input(wanted[h].heading, wanted[h].text) for h in missing]
            vecs = self.embedder.embed(texts)
            found.update(zip(missing, (v.tobytes() for v in vecs.astype(np.float32)), strict=True))
        return found, len(missing)

    def _fill_vectors(self, stats: RefreshStats, progress: ProgressFn | None, t0: float) -> None:
        """Embed chunks that have no vector yet (indexed without a model, or model changed)."""
        assert self.embedder is not None
        total = self.store.count_without_vectors()
        if not total:
            return
        prog = Progress("embed", 0, 0, 0, total, t0)
        while rows := self.store.chunks_without_vectors(BATCH_CHUNKS):
            vecs = self.embedder.embed([embed_input(hd, tx) for _, hd, tx in rows])
            with self.store.write():
                for (cid, _, _), v in zip(rows, vecs, strict=True):
                    self.store.set_vector(cid, v)
                self.store.mark_updated()
            stats.chunks_embedded += len(rows)
            prog.chunks_done += len(rows)
            if progress:
                progress(prog)
