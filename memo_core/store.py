"""The SQLite index of one collection: files, chunks, FTS5 words and sqlite-vec vectors.

One file, `<collection>/.memo/index.db`, opened through apsw because the stdlib `sqlite3`
of many Python builds cannot load extensions. Every change goes through `write()`, one
`BEGIN IMMEDIATE` transaction, so chunks, words and vectors never disagree on disk.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import apsw
import numpy as np
import sqlite_vec

from .errors import IndexLocationError, IndexStoreError
from .schema import APP_ID, MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_MS = 10_000
# BM25 column weights: a word in the heading path counts twice (SciFact train: 2 = 4 > 1).
HEADING_WEIGHT = 2.0
BODY_WEIGHT = 1.0


@dataclass(frozen=True, slots=True)
class FileState:
    id: int
    mtime_ns: int
    size: int
    hash: str


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str
    line: int
    heading: str
    text: str


class Store:
    """An open index database. Not shared between threads without the caller's lock."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path
        self._stats: dict[str, tuple[int, int]] = {}
        self._stats_key: tuple[int, int] | None = None
        try:
            db_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise IndexLocationError(f"cannot create {db_path.parent}: {e.strerror or e}") from e
        try:
            self.db = apsw.Connection(str(db_path))
        except apsw.Error as e:
            raise IndexLocationError(f"cannot open {db_path}: {e}") from e
        try:
            self._configure()
            self._migrate()
        except (apsw.ReadOnlyError, apsw.CantOpenError) as e:
            self.db.close()
            raise IndexLocationError(f"cannot write {db_path}: {e}") from e
        except apsw.Error as e:
            self.db.close()
            raise IndexStoreError(f"cannot use the index {db_path}: {e}") from e
        except BaseException:
            self.db.close()
            raise

    def _configure(self) -> None:
        db = self.db
        try:
            db.enable_load_extension(True)
            sqlite_vec.load(db)
            db.enable_load_extension(False)
            db.setbusytimeout(BUSY_TIMEOUT_MS)
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.IOError) as e:
            raise IndexLocationError(f"cannot write {self.path}: {e}") from e
        except apsw.Error as e:
            raise IndexStoreError(
                f"cannot open the index {self.path}: {e}; it is damaged or not memo's: "
                f"move {self.path.parent} away and search again to rebuild it"
            ) from e
        if mode != "wal":
            raise IndexLocationError(f"WAL journaling does not work in {self.path.parent}")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA mmap_size=268435456")

    def close(self) -> None:
        self.db.close()

    # -- schema -------------------------------------------------------------------------

    def _migrate(self) -> None:
        if self._scalar("PRAGMA user_version") == SCHEMA_VERSION:
            return  # the common case, without taking the write lock
        # Checked again under the write lock: two processes may create the index at once.
        with self.write():
            version = self._scalar("PRAGMA user_version")
            if version == 0 and self._scalar("SELECT count(*) FROM sqlite_master"):
                raise IndexStoreError(
                    f"{self.path} is not a memo index; memo leaves it alone: move it away and retry"
                )
            if version > SCHEMA_VERSION:
                raise IndexStoreError(
                    f"{self.path} was made by a newer memo (schema {version} > {SCHEMA_VERSION}); "
                    f"upgrade memo, or move {self.path.parent} away to rebuild it with this one"
                )
            for v in range(version, SCHEMA_VERSION):
                MIGRATIONS[v](self.db)
            if version == 0:
                self.set_meta("app", APP_ID)
                # Tells a reader's vector cache that this is another database, not an edit.
                self.set_meta("generation", os.urandom(8).hex())
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _scalar(self, sql: str, params: Sequence[object] = ()) -> object:
        row = self.db.execute(sql, params).fetchone()
        return row[0] if row else None

    def get_meta(self, key: str) -> str | None:
        return self._scalar("SELECT value FROM meta WHERE key = ?", (key,))  # type: ignore[return-value]

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    @contextmanager
    def write(self) -> Iterator[None]:
        """One immediate transaction: all of it lands or none of it does."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every query inside sees the same committed state."""
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def replace_with(self, other: Store) -> None:
        """Make this database a copy of `other`, atomically (SQLite's online backup).

        Readers in any process see the old content until the copy commits, then the new;
        a crash midway leaves the old content, since the copy is one write transaction.
        """
        with self.db.backup("main", other.db, "main") as b:
            b.step(-1)

    def mark_updated(self) -> None:
        self.set_meta("updated_at", repr(time.time()))

    # -- vectors' model -----------------------------------------------------------------

    def use_model(self, model_id: str, dim: int) -> bool:
        """Make the vector table belong to this model; True when old vectors were dropped."""
        if self.get_meta("vec_model") == model_id and self.get_meta("vec_dim") == str(dim):
            return False
        with self.write():
            self.db.execute("DROP TABLE IF EXISTS vec")
            self.db.execute(
                f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{int(dim)}] "
                "distance_metric=cosine)"
            )
            self.db.execute("UPDATE chunks SET has_vec = 0")
            self.set_meta("vec_model", model_id)
            self.set_meta("vec_dim", str(dim))
        return True

    # -- files and chunks ---------------------------------------------------------------

    def file_stats(self) -> dict[str, tuple[int, int]]:
        """(mtime_ns, size) of every indexed file by path; read-only for the caller.

        Kept between calls while nobody (this connection or another) has committed, so a
        refresh that finds nothing changed costs no query beyond that check.
        """
        key = (self.data_version(), self.db.total_changes())
        if self._stats_key != key:
            self._stats = {
                path: (mtime, size)
                for path, mtime, size in self.db.execute("SELECT path, mtime_ns, size FROM files")
            }
            self._stats_key = key
        return self._stats

    def file_record(self, path: str) -> FileState | None:
        row = self.db.execute(
            "SELECT id, mtime_ns, size, hash FROM files WHERE path = ?", (path,)
        ).fetchone()
        return FileState(*row) if row else None

    def touch_file(self, file_id: int, mtime_ns: int, size: int) -> None:
        self.db.execute(
            "UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?", (mtime_ns, size, file_id)
        )

    def upsert_file(self, path: str, mtime_ns: int, size: int, h: str, note: str | None) -> int:
        self.db.execute(
            "INSERT INTO files(path, mtime_ns, size, hash, note) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET mtime_ns = excluded.mtime_ns, "
            "size = excluded.size, hash = excluded.hash, note = excluded.note",
            (path, mtime_ns, size, h, note),
        )
        return self._scalar("SELECT id FROM files WHERE path = ?", (path,))  # type: ignore[return-value]

    def delete_file(self, file_id: int) -> None:
        self.delete_chunks([cid for cid, _ in self.file_chunks(file_id)])
        self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def file_chunks(self, file_id: int) -> list[tuple[int, str]]:
        """(chunk id, hash) of a file's chunks, in order."""
        return list(
            self.db.execute(
                "SELECT id, hash FROM chunks WHERE file_id = ? ORDER BY seq", (file_id,)
            )
        )

    def delete_chunks(self, ids: Iterable[int]) -> None:
        has_vec = self.has_vec_table()
        for cid in ids:
            self.db.execute("DELETE FROM chunks WHERE id = ?", (cid,))
            self.db.execute("DELETE FROM fts WHERE rowid = ?", (cid,))
            if has_vec:
                self.db.execute("DELETE FROM vec WHERE rowid = ?", (cid,))

    def insert_chunk(
        self,
        file_id: int,
        seq: int,
        line: int,
        heading: str,
        text: str,
        h: str,
        fts_heading: str,
        fts_body: str,
    ) -> int:
        self.db.execute(
            "INSERT INTO chunks(file_id, seq, line, heading, text, hash) VALUES (?, ?, ?, ?, ?, ?)",
            (file_id, seq, line, heading, text, h),
        )
        cid = self.db.last_insert_rowid()
        self.db.execute(
            "INSERT INTO fts(rowid, heading, body) VALUES (?, ?, ?)", (cid, fts_heading, fts_body)
        )
        return cid

    def move_chunk(self, chunk_id: int, seq: int, line: int) -> None:
        self.db.execute("UPDATE chunks SET seq = ?, line = ? WHERE id = ?", (seq, line, chunk_id))

    def set_vector(self, chunk_id: int, vector: np.ndarray | bytes) -> None:
        blob = vector if isinstance(vector, bytes) else np.asarray(vector, np.float32).tobytes()
        self.db.execute(
            "INSERT OR REPLACE INTO vec(rowid, embedding) VALUES (?, ?)", (chunk_id, blob)
        )
        self.db.execute("UPDATE chunks SET has_vec = 1 WHERE id = ?", (chunk_id,))

    def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, bytes]:
        """Stored vectors of chunks with these hashes, so unchanged text is never re-embedded."""
        if not self.has_vec_table():
            return {}
        found: dict[str, bytes] = {}
        for h in hashes:
            row = self.db.execute(
                "SELECT v.embedding FROM chunks c JOIN vec v ON v.rowid = c.id "
                "WHERE c.hash = ? AND c.has_vec = 1 LIMIT 1",
                (h,),
            ).fetchone()
            if row:
                found[h] = row[0]
        return found

    def chunks_without_vectors(self, limit: int) -> list[tuple[int, str, str]]:
        return list(
            self.db.execute(
                "SELECT id, heading, text FROM chunks WHERE has_vec = 0 ORDER BY id LIMIT ?",
                (limit,),
            )
        )

    def count_without_vectors(self) -> int:
        return self._scalar("SELECT count(*) FROM chunks WHERE has_vec = 0")  # type: ignore[return-value]

    # -- reading ------------------------------------------------------------------------

    def counts(self) -> tuple[int, int, int]:
        """(indexed files, chunks, skipped files)."""
        total, skipped = self.db.execute(
            "SELECT count(*), count(*) FILTER (WHERE note LIKE 'skipped:%') FROM files"
        ).fetchone()
        chunks = self._scalar("SELECT count(*) FROM chunks")
        return total - skipped, chunks, skipped  # type: ignore[return-value]

    def fingerprint(self) -> str:
        """A digest of every indexed file's path and content: equal iff the content is."""
        h = hashlib.blake2b(digest_size=12)
        for path, digest in self.db.execute("SELECT path, hash FROM files ORDER BY path"):
            h.update(f"{path}\x00{digest}\n".encode())
        return h.hexdigest()

    def notes(self) -> list[tuple[str, str]]:
        """(path, note) of every file that was skipped or cut."""
        return list(self.db.execute("SELECT path, note FROM files WHERE note IS NOT NULL"))

    def lex(self, match: str, limit: int) -> list[tuple[int, float]]:
        """Chunk ids and BM25 scores (higher is better) for an FTS5 MATCH expression."""
        rows = self.db.execute(
            "SELECT rowid, bm25(fts, ?, ?) AS r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT ?",
            (HEADING_WEIGHT, BODY_WEIGHT, match, limit),
        )
        return [(cid, -score) for cid, score in rows]

    def data_version(self) -> int:
        """Changes whenever another connection (thread or process) commits to this file."""
        return self._scalar("PRAGMA data_version")  # type: ignore[return-value]

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {
            cid: ChunkRow(cid, path, line, heading, text)
            for cid, path, line, heading, text in self.db.execute(
                "SELECT c.id, f.path, c.line, c.heading, c.text FROM chunks c "
                f"JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
                tuple(ids),
            )
        }

    def has_vec_table(self) -> bool:
        return bool(
            self._scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vec'")
        )
