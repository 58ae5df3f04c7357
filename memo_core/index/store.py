"""The SQLite index of one collection: files, chunks, FTS5 words and sqlite-vec vectors.

One file, `<collection>/.memo/index.db`, opened through apsw because the stdlib `sqlite3`
of many Python builds cannot load extensions. memo's queries on an index's notes are here,
word search (FTS5, BM25) among them; those on the history of its content are in `history`,
held as `Store.history`; what makes a file memo's index (recognising, opening, migrating) is
in `opening` and `schema`. Every change goes through `write()`, one `BEGIN IMMEDIATE`
transaction, so chunks, words, vectors and the history never disagree on disk.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import apsw

from memo_core.files.fsafe import Folder
from memo_core.files.walker import Changes, FileStat
from memo_core.index import opening
from memo_core.index.history import CONTENT, History
from memo_core.index.rows import (
    ChunkRow,
    FileState,
    FileStats,
    from_stored,
    note_title,
    stored,
)
from memo_core.index.schema import SCHEMA_VERSION, create_vectors_table, new_generation
from memo_core.text import textnorm
from memo_core.text.chunking import Chunk
from memo_core.text.frontmatter import normalize_tag
from memo_core.text.passagelang import ENGLISH, stored_language
from memo_core.text.textnorm import Group
from memo_core.values import FileNote

if TYPE_CHECKING:  # numpy and vec0's storage load with the first vectors read or written
    import numpy as np

    from memo_core.index.vecstorage import VectorSlots

log = logging.getLogger("memo")

T = TypeVar("T")


@lru_cache(maxsize=64)
def _languages(stored: Any) -> frozenset[str]:
    """The languages a stored count names (`Store.languages`), English always; a value that
    is not memo's JSON count is read as English alone."""
    try:
        counts = json.loads(stored or "{}")
    except (ValueError, TypeError):  # not text, or not JSON
        counts = None
    if not isinstance(counts, dict):
        counts = {}
    return frozenset(stored_language(lang) for lang, n in counts.items() if n) | {ENGLISH}


class Store:
    """An open index database. Not shared between threads without the caller's lock.

    `Store.create` opens for writing (making and migrating the file as needed);
    `Store.open_existing` opens for reading and never writes the index or its WAL;
    `Store.look` reads the last committed state and writes nothing at all.
    """

    def __init__(self, db: apsw.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self.history = History(db)  # the content's history: fingerprint, deltas
        self._stats: FileStats | None = None  # kept between refreshes (`file_stats`)
        self._stats_version: int | None = None  # `data_version` when they were read
        # This write transaction's changes to file rows (path: stat, None: gone), for
        # `_stats` once it commits; None: no write transaction is open.
        self._pending: dict[str, FileStat | None] | None = None
        self._chunks_changed = False  # in this write transaction: count the languages

    @classmethod
    def create(cls, path: Path, root: Folder | None = None) -> Store:
        """The index at `path` for writing, made and migrated as needed (`root`: the
        collection's folder, through which its `.memo` is reached)."""
        return cls(opening.open_for_writing(path, root), path)

    @classmethod
    def open_existing(cls, path: Path, root: Folder | None = None) -> Store | None:
        """The index at `path` for reading, or None when there is none (yet)."""
        db = opening.open_for_reading(path, root)
        return cls(db, path) if db is not None else None

    @classmethod
    def open_without_writing(cls, path: Path, root: Folder | None = None) -> Store | None:
        """The index at `path` read without writing a byte (`opening.open_without_writing`:
        a disk with no room left), or None when there is none."""
        db = opening.open_without_writing(path, root)
        return cls(db, path) if db is not None else None

    @classmethod
    def look(cls, path: Path, read: Callable[[Store | None], T], root: Folder | None = None) -> T:
        """What `read` finds in the index at `path` as last committed, read without writing
        a byte (None: there is none yet); `read` may run more than once (`opening.look`)."""
        return opening.look(path, lambda db: read(cls(db, path) if db is not None else None), root)

    def close(self) -> None:
        """Close the connection. One that cannot fold its WAL into the file as it closes (a
        full or read-only disk) loses nothing: what was committed stays in the WAL, which
        the next open reads. It is closed all the same, and that said in the log only."""
        try:
            self.db.close()
        except apsw.Error as e:
            log.debug("memo: closing %s: %r; its WAL is kept", self.path, e)
            self.db.close(True)

    def _scalar(self, sql: str, params: Sequence[object] = ()) -> Any:
        row = self.db.execute(sql, params).fetchone()
        return row[0] if row else None

    def get_meta(self, key: str) -> str | None:
        return opening.get_meta(self.db, key)

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def set_identity(self, identity: dict[str, Any]) -> None:
        with self.write():
            self.set_meta("identity", json.dumps(identity, sort_keys=True))

    def identity_change(self, want: dict[str, Any], model: str | None) -> str | None:
        """None when this index was made as `want` and `model` would make it; else what
        differs: names of settings, "model" for another model's vectors, or "" for an index
        made before memo recorded its settings. A new, empty index takes `want` as its own."""
        raw = self.get_meta("identity")
        have = json.loads(raw) if raw else None
        if have is None and not self._scalar("SELECT count(*) FROM files"):
            self.set_identity(want)  # nothing in it was made another way
            have = want
        if have is None:
            return ""
        changed = sorted(k for k in want.keys() | have.keys() if want.get(k) != have.get(k))
        if model is not None and self.get_meta("vec_model") not in (None, model):
            changed.append("model")  # rebuilt aside: the old vectors answer meanwhile
        return ", ".join(changed) or None

    def made_as(self, want: dict[str, Any]) -> bool:
        """Whether this index was made as `want` says (its settings), in this version's
        schema, read without writing: `identity_change` is the writer's, which also names
        what differs (and the writer migrates an older schema)."""
        if self._scalar("PRAGMA user_version") != SCHEMA_VERSION:
            return False
        raw = self.get_meta("identity")
        return raw is not None and json.loads(raw) == want

    def same_vectors(self, model: str, dim: int, want: dict[str, Any], keys: Sequence[str]) -> bool:
        """Whether a passage's vector here is what `model` (of `dim` dimensions) makes of a
        passage with the same hash in an index made as `want`: its vectors are the model's,
        and its identity agrees on `keys` (how the embedded text is made)."""
        if self.get_meta("vec_model") != model or self.get_meta("vec_dim") != str(dim):
            return False
        raw = self.get_meta("identity")
        have = json.loads(raw) if raw else {}
        return all(k in have and have[k] == want.get(k) for k in keys)

    def vectors_whole(self, model: str) -> bool:
        """Whether every passage has a vector and `model` made them (and, where it embeds
        sentences, every passage's sentences have theirs)."""
        if self.get_meta("vec_model") != model or self.count_without_vectors():
            return False
        return not self.sentence_dim() or not self.count_without_sentences()

    @contextmanager
    def write(self) -> Iterator[None]:
        """One immediate transaction: all of it lands or none of it does."""
        self.db.execute("BEGIN IMMEDIATE")
        self._pending = {}
        self._chunks_changed = False
        try:
            yield
            if self._chunks_changed:
                self._count_languages()
            self.history.close_version()  # the fingerprint this transaction led to
        except BaseException:
            self._pending = None
            self.history.drop_version()
            self.db.execute("ROLLBACK")
            raise
        pending, self._pending = self._pending, None
        try:
            self.db.execute("COMMIT")
        except BaseException:
            self._stats_version = None  # whether it landed is not known: read them again
            raise
        if self._stats is not None:
            for path, st in pending.items():
                self._stats.set(path, st)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every query inside sees the same committed state."""
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def replace_with(self, other: Store) -> None:
        """Make this database a copy of `other`, atomically (SQLite's online backup), the
        history of its content kept (the difference logged as one more version).

        Readers in any process see the old content until the copy commits, then the new;
        a crash midway leaves the old content, since the copy is one write transaction.
        """
        with other.write():
            other.history.adopt(self.history)
        self._stats_version = None  # every row replaced
        with self.db.backup("main", other.db, "main") as b:
            b.step(-1)

    def walk_facts(self) -> tuple[list[str], int]:
        """What the last walk found besides notes: folders it could not read, and how many
        entries ignore rules left out."""
        facts = json.loads(self.get_meta("walk") or "{}")
        return list(facts.get("unreadable", [])), int(facts.get("ignored", 0))

    def set_walk_facts(self, unreadable: list[str], ignored: int) -> None:
        if (sorted(unreadable), ignored) != self.walk_facts():
            with self.write():
                facts = {"unreadable": sorted(unreadable), "ignored": ignored}
                self.set_meta("walk", json.dumps(facts))

    def mark_updated(self) -> None:
        self.set_meta("updated_at", repr(time.time()))

    # -- vectors' model -----------------------------------------------------------------

    def use_model(self, model_id: str, dim: int, sentence_dim: int = 0) -> bool:
        """Make the vector table belong to this model (its sentence vectors too, of
        `sentence_dim` dimensions: 0, none); True when old vectors were dropped."""
        if self.get_meta("vec_model") == model_id and self.get_meta("vec_dim") == str(dim):
            return False
        with self.write():
            self.db.execute("DELETE FROM sentences")
            self.db.execute("UPDATE chunks SET has_sent = 0")
            self.set_meta("sent_dim", str(int(sentence_dim)))
            self.db.execute("DROP TABLE IF EXISTS vec")
            create_vectors_table(self.db, dim)
            self.db.execute("UPDATE chunks SET has_vec = 0")
            self.set_meta("vec_model", model_id)
            self.set_meta("vec_dim", str(dim))
            self.set_meta("generation", new_generation())
        return True

    def vector_key(self) -> tuple[str | None, str | None, int]:
        """(generation, model, dimension): while all three stay, a chunk id keeps its vector."""
        dim = self.get_meta("vec_dim")
        return self.get_meta("generation"), self.get_meta("vec_model"), int(dim or 0)

    def vectors(self, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, float32 matrix) of every vector, in vec0's storage order, as
        `vector_blocks` reads them (benchmarks; the cache keeps them block by block)."""
        import numpy as np

        blocks = list(self.vector_blocks(dim))
        if not blocks:
            return np.empty(0, np.int64), np.empty((0, dim), np.float32)
        return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])

    def vector_blocks(self, dim: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every vector, a block at a time: (chunk ids, float32 [n, dim]), in vec0's storage
        order (`vecstorage.blocks`; call inside a snapshot)."""
        from memo_core.index import vecstorage

        if self.has_vec_table():
            yield from vecstorage.blocks(self.db, dim)

    def vector_slots(self, chunk_ids: Sequence[int] | None = None) -> list[VectorSlots] | None:
        """vec0's storage chunks (all, or these), as they lie: which slot holds which
        chunk's vector. None: the table is not laid out as `vecstorage` reads it."""
        from memo_core.index import vecstorage

        return vecstorage.storage_slots(self.db, chunk_ids) if self.has_vec_table() else []

    def slot_vectors(self, chunk_id: int, dim: int, slots: np.ndarray | None = None) -> np.ndarray:
        """The vectors in these slots of one vec0 storage chunk, or in every slot: [slot, dim]."""
        from memo_core.index import vecstorage

        return vecstorage.slot_vectors(self.db, chunk_id, dim, slots)

    # -- files and chunks ---------------------------------------------------------------

    def file_stats(self, within: Changes | None = None) -> dict[str, FileStat]:
        """(mtime_ns, size) of every indexed file by path, or of those in the folders
        `within` names (as `rescan` looks at them); read-only for the caller, and as
        of now (this store's next commit changes the whole one in place); called outside
        write transactions.

        Kept between calls while no other connection has committed, and this one's own
        writes applied to them as they commit: a refresh costs no query beyond that check
        when nothing changed, and what changed otherwise (not a read of every row).
        """
        version = self.data_version()
        if self._stats is None or self._stats_version != version:
            # Read whole before a path is judged: a row memo never writes (BadRow) must not
            # leave a statement open on the connection the index is then made again through.
            rows = list(self.db.execute("SELECT path, mtime_ns, size FROM files"))
            self._stats = FileStats(
                {from_stored(path): (mtime, size) for path, mtime, size in rows}
            )
            self._stats_version = version
        return self._stats.all if within is None else self._stats.within(within)

    def _changed(self, stored_path: str, st: FileStat | None) -> None:
        """A file row was written (`st`) or deleted (None): for the kept `file_stats`."""
        if self._pending is None:
            self._stats_version = None  # written outside `write()`: read them again
        else:
            self._pending[from_stored(stored_path)] = st

    def file_record(self, path: str) -> FileState | None:
        row = self.db.execute(
            "SELECT id, mtime_ns, size, hash FROM files WHERE path = ?", (stored(path),)
        ).fetchone()
        return FileState(*row) if row else None

    def touch_file(self, file_id: int, mtime_ns: int, size: int) -> None:
        path = self._scalar(
            "UPDATE files SET mtime_ns = ?, size = ? WHERE id = ? RETURNING path",
            (mtime_ns, size, file_id),
        )
        if path is not None:
            self._changed(path, (mtime_ns, size))

    def upsert_file(
        self, path: str, mtime_ns: int, size: int, h: str, note: FileNote | None
    ) -> int:
        key = stored(path)
        old = self._scalar(f"SELECT {CONTENT} FROM files WHERE path = ?", (key,))
        self.db.execute(
            "INSERT INTO files(path, mtime_ns, size, hash, note) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET mtime_ns = excluded.mtime_ns, "
            "size = excluded.size, hash = excluded.hash, note = excluded.note",
            (key, mtime_ns, size, h, note.value if note else None),
        )
        self._changed(key, (mtime_ns, size))
        # What the row holds now, by the one rule (`CONTENT`: a FIFO has no content).
        self.history.log_change(
            key, old, self._scalar(f"SELECT {CONTENT} FROM files WHERE path = ?", (key,))
        )
        return int(self._scalar("SELECT id FROM files WHERE path = ?", (key,)))

    def delete_file(self, file_id: int) -> None:
        self.delete_chunks([cid for cid, _, _ in self.file_chunks(file_id)])
        sql = f"SELECT path, {CONTENT} FROM files WHERE id = ?"
        row = self.db.execute(sql, (file_id,)).fetchone()
        self.db.execute("DELETE FROM tags WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))
        if row:
            self._changed(row[0], None)
            self.history.log_change(row[0], row[1], None)

    def file_chunks(self, file_id: int) -> list[tuple[int, str, str]]:
        """(chunk id, hash, language of its words) of a file's chunks, in order."""
        sql = "SELECT id, hash, lang FROM chunks WHERE file_id = ? ORDER BY seq"
        return list(self.db.execute(sql, (file_id,)))

    def delete_chunks(self, ids: Iterable[int]) -> None:
        has_vec = self.has_vec_table()
        self._chunks_changed = True
        for cid in ids:
            self.db.execute("DELETE FROM chunks WHERE id = ?", (cid,))
            self.db.execute("DELETE FROM fts WHERE rowid = ?", (cid,))
            self.db.execute("DELETE FROM sentences WHERE chunk_id = ?", (cid,))
            if has_vec:
                self.db.execute("DELETE FROM vec WHERE rowid = ?", (cid,))

    def insert_chunk(
        self, file_id: int, seq: int, c: Chunk, h: str, path_words: str, lang: str
    ) -> int:
        """A new chunk whose Latin words are in `lang` (`passagelang.passage_languages`); FTS5
        gets its body and, as its heading, the heading path and the words of the note's path
        and front matter (`path_words`, normalised in `lang`), all as normalised words."""
        self.db.execute(
            "INSERT INTO chunks(file_id, seq, line, text_line, heading, text, hash, lang) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (file_id, seq, c.line, c.text_line, c.heading, c.text, h, lang),
        )
        cid = self.db.last_insert_rowid()
        heading = f"{textnorm.normalize(c.heading, lang)} {path_words}".strip()
        self.db.execute(
            "INSERT INTO fts(rowid, heading, body) VALUES (?, ?, ?)",
            (cid, heading, textnorm.normalize(c.text, lang)),
        )
        self._chunks_changed = True
        return cid

    def _count_languages(self) -> None:
        """Record how many chunks' words each language other than English has
        (`passagelang`), as the transaction leaves them (read from their partial index)."""
        sql = "SELECT lang, count(*) FROM chunks WHERE lang != 'english' GROUP BY lang"
        counts = dict(self.db.execute(sql))
        self.set_meta("languages", json.dumps(counts, sort_keys=True))

    def languages(self) -> frozenset[str]:
        """The languages this index's chunks' Latin words are stemmed in: those a query's
        words are stemmed in to be found (English always: an index made before memo
        counted them held only English)."""
        # One read of memo's own meta table (`get_meta` first asks whether it exists),
        # parsed once a value: this runs in every collection a search reads.
        return _languages(self._scalar(opening.META_VALUE, ("languages",)))

    def move_chunk(self, chunk_id: int, seq: int, line: int, text_line: int) -> None:
        """A kept chunk at its new place: its order in the note, its lines (`Chunk`'s)."""
        self.db.execute(
            "UPDATE chunks SET seq = ?, line = ?, text_line = ? WHERE id = ?",
            (seq, line, text_line, chunk_id),
        )

    def set_vector(self, chunk_id: int, vector: np.ndarray | bytes) -> None:
        if not isinstance(vector, bytes):
            import numpy as np

            vector = np.asarray(vector, np.float32).tobytes()
        self.db.execute(
            "INSERT OR REPLACE INTO vec(rowid, embedding) VALUES (?, ?)", (chunk_id, vector)
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

    def chunks_without_vectors(
        self, limit: int, after: int = 0
    ) -> list[tuple[int, str, str, str, str]]:
        """(id, heading, text, hash, the title leading its note's embedded headings) of
        chunks that have no vector yet, oldest first, from the id `after` on (not itself)."""
        sql = (
            "SELECT c.id, c.heading, c.text, c.hash, f.lead FROM chunks c JOIN files f "
            "ON f.id = c.file_id WHERE c.has_vec = 0 AND c.id > ? ORDER BY c.id LIMIT ?"
        )
        return list(self.db.execute(sql, (after, limit)))

    def count_chunks(self) -> int:
        return int(self._scalar("SELECT count(*) FROM chunks"))

    def count_without_vectors(self) -> int:
        return int(self._scalar("SELECT count(*) FROM chunks WHERE has_vec = 0"))

    # -- sentence vectors (the second look, `search.second_look`) ------------------------

    def sentence_dim(self) -> int:
        """The dimension of the sentence vectors (0: the model makes none)."""
        return int(self.get_meta("sent_dim") or 0)

    def chunks_without_sentences(self, limit: int, after: int = 0) -> list[tuple[int, str, str]]:
        """(id, text, hash) of chunks whose sentences have no vectors yet, oldest first,
        from the id `after` on (not itself)."""
        sql = "SELECT id, text, hash FROM chunks WHERE has_sent = 0 AND id > ? ORDER BY id LIMIT ?"
        return list(self.db.execute(sql, (after, limit)))

    def hashes_without_sentences(self) -> list[tuple[int, str]]:
        """(id, hash) of every chunk whose sentences have no vectors yet."""
        return list(self.db.execute("SELECT id, hash FROM chunks WHERE has_sent = 0"))

    def count_without_sentences(self) -> int:
        return int(self._scalar("SELECT count(*) FROM chunks WHERE has_sent = 0"))

    def sentences_for_hashes(self, hashes: Iterable[str]) -> dict[str, bytes | None]:
        """Sentence vectors (`vectors.pack`) of chunks with these hashes that have them
        (None: such a chunk has no sentence), so no text is embedded twice."""
        found: dict[str, bytes | None] = {}
        for h in hashes:
            row = self.db.execute(
                "SELECT c.id, s.vectors FROM chunks c LEFT JOIN sentences s ON s.chunk_id = c.id "
                "WHERE c.hash = ? AND c.has_sent = 1 LIMIT 1",
                (h,),
            ).fetchone()
            if row:
                found[h] = row[1]
        return found

    def set_sentences(self, chunk_id: int, packed: bytes | None) -> None:
        """A chunk's sentence vectors (`vectors.pack`; None: it has no sentence)."""
        if packed is not None:
            self.db.execute(
                "INSERT OR REPLACE INTO sentences(chunk_id, vectors) VALUES (?, ?)",
                (chunk_id, packed),
            )
        self.db.execute("UPDATE chunks SET has_sent = 1 WHERE id = ?", (chunk_id,))

    def sentence_vectors(self, chunk_ids: Sequence[int]) -> dict[int, bytes]:
        """The packed sentence vectors of those of these chunks that have some."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        sql = f"SELECT chunk_id, vectors FROM sentences WHERE chunk_id IN ({marks})"
        return dict(self.db.execute(sql, tuple(chunk_ids)))

    # -- front matter and tags ----------------------------------------------------------

    def file_front(self, file_id: int) -> str:
        """What `set_front` last stored for the file ("" when nothing)."""
        return str(self._scalar("SELECT front FROM files WHERE id = ?", (file_id,)) or "")

    def set_front(self, file_id: int, front: str, tags: Iterable[str], lead: str) -> None:
        """The file's front matter as indexed (`front`: JSON with its "names"), its tags
        (normalised, as `frontmatter.normalize_tag` makes them), replacing the old, and the
        title leading its passages' embedded headings (`lead`, `text.titles`)."""
        self.db.execute("UPDATE files SET front = ?, lead = ? WHERE id = ?", (front, lead, file_id))
        self.db.execute("DELETE FROM tags WHERE file_id = ?", (file_id,))
        self.db.executemany(
            "INSERT OR IGNORE INTO tags(file_id, tag) VALUES (?, ?)",
            [(file_id, t) for t in tags],
        )

    def names_of(self, chunk_ids: Sequence[int]) -> dict[int, list[str]]:
        """The names (front matter title and aliases) of these chunks' notes, by chunk id;
        chunks of notes without names are left out."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        rows = self.db.execute(
            "SELECT c.id, f.front FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE c.id IN ({marks}) AND f.front != ''",
            tuple(chunk_ids),
        )
        found = {cid: json.loads(front).get("names", []) for cid, front in rows}
        return {cid: names for cid, names in found.items() if names}

    def files_tagged(self, tags: Sequence[str]) -> set[int]:
        """Ids of the files that hold every one of `tags` (`#` optional, any case); a tag
        `a/b` is held by a file tagged `a/b` or anything nested below it (`a/b/c`). No tags:
        every file. Raises ValueError for a tag that is none ("#", "a b")."""
        wanted = []
        for raw in tags:
            tag = normalize_tag(raw)
            if not tag:
                raise ValueError(f"not a tag: {raw!r} (a tag is a word, or words joined by '/')")
            wanted.append(tag)
        found: set[int] | None = None
        for tag in dict.fromkeys(wanted):
            # `a/b` itself, or the range of tags starting `a/b/` ('0' follows '/' in code
            # points, so the range is exactly that prefix): both read from the tag index.
            rows = self.db.execute(
                "SELECT file_id FROM tags WHERE tag = ? OR (tag > ? AND tag < ?)",
                (tag, tag + "/", tag + "0"),
            )
            ids = {fid for (fid,) in rows}
            found = ids if found is None else found & ids
            if not found:
                return set()
        if found is None:
            return {fid for (fid,) in self.db.execute("SELECT id FROM files")}
        return found

    # -- word search (FTS5) ------------------------------------------------------------

    def lex(
        self,
        groups: Sequence[Group],
        limit: int,
        weights: tuple[float, float],
        *,
        scoped: bool = False,
    ) -> list[tuple[int, float]]:
        """Chunk ids and BM25 scores (higher is better) of the `limit` best chunks holding
        any of the query words' stems (`textnorm.query_groups`), best first; `weights`:
        BM25 weights of the heading and the body; `scoped`: among the chunks `scope_to`
        left in scope only."""
        stems = textnorm.group_stems(groups)
        if not stems:
            return []
        return self._best(" OR ".join(_quoted(stems)), limit, weights, scoped)

    def _best(
        self, match: str, limit: int, weights: tuple[float, float], scoped: bool
    ) -> list[tuple[int, float]]:
        """The `limit` best chunks for an FTS5 `match` by BM25 (negated: higher is better)."""
        # `+rowid`: a filter on what the match found. A bare `rowid IN` lets SQLite run the
        # match once per chunk in scope: 1.6-3.2 s against 1-5 ms (office-dev-en, half of it
        # in scope), where the filter is as fast as no scope or faster (fewer rows sorted).
        where = " AND +rowid IN temp.memo_scope" if scoped else ""
        sql = (
            "SELECT rowid, bm25(fts, ?, ?) AS r FROM fts "
            f"WHERE fts MATCH ?{where} ORDER BY r LIMIT ?"
        )
        return [(cid, -score) for cid, score in self.db.execute(sql, (*weights, match, limit))]

    def named(self, groups: Sequence[Group], among: Sequence[int]) -> list[int]:
        """Those of the chunks `among` whose heading column (their heading path and their
        note's path words) holds every query word (a stem of each of `groups`): the query
        names them."""
        if not groups or not among:
            return []
        # Every chunk so named, then those among the candidates: the same match restricted
        # by `rowid IN (…)` measured 160 times slower (39 ms against 0.24 ms, office-dev-en).
        match = f"heading : ({' AND '.join(_any(g) for g in groups)})"
        named = {
            cid for (cid,) in self.db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (match,))
        }
        return [cid for cid in among if cid in named]

    def near(
        self,
        groups: Sequence[Group],
        limit: int,
        weights: tuple[float, float],
        window: int,
        *,
        scoped: bool = False,
    ) -> dict[int, float]:
        """BM25 scores (higher is better) of the `limit` best chunks where two words that
        are adjacent in the query (a stem of each of their `groups`) stand within `window`
        words of each other; `scoped`: as in `lex`."""
        # FTS5's NEAR takes phrases, not ORs: a pair of groups is every pair of their stems.
        pairs = list(
            dict.fromkeys(
                f"NEAR({a} {b}, {int(window)})"
                for one, other in zip(groups, groups[1:], strict=False)
                for a in _quoted(one)
                for b in _quoted(other)
            )
        )
        if not pairs:
            return {}
        return dict(self._best(" OR ".join(pairs), limit, weights, scoped))

    # -- scopes -------------------------------------------------------------------------

    def files_changed_within(
        self, after_ns: int | None, before_ns: int | None
    ) -> list[tuple[int, str]]:
        """(id, path) of the files whose modification time lies within the bounds (each
        inclusive; None: open)."""
        rows = self.db.execute(
            "SELECT id, path FROM files WHERE mtime_ns BETWEEN ? AND ?",
            (
                -(2**63) if after_ns is None else after_ns,
                2**63 - 1 if before_ns is None else before_ns,
            ),
        )
        return [(fid, from_stored(path)) for fid, path in rows]

    def file_count(self) -> int:
        """How many files the index holds (skipped ones too)."""
        return int(self._scalar("SELECT count(*) FROM files"))

    def scope_to(self, file_ids: Iterable[int]) -> np.ndarray:
        """Put these files' chunks in scope for `lex` and `near` (`scoped=True`) until the
        next call; their chunk ids, sorted. A temporary table of this connection: reading
        never writes the index, and any number of files costs one statement to filter by."""
        import numpy as np  # a scope's chunk ids are an array, as the vectors' are

        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS memo_scope_files(id INTEGER PRIMARY KEY)")
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS memo_scope(id INTEGER PRIMARY KEY)")
        self.db.execute("DELETE FROM temp.memo_scope_files")
        self.db.execute("DELETE FROM temp.memo_scope")
        self.db.executemany(
            "INSERT INTO temp.memo_scope_files(id) VALUES (?)", ((int(i),) for i in file_ids)
        )
        self.db.execute(
            "INSERT INTO temp.memo_scope(id) SELECT c.id FROM chunks c "
            "JOIN temp.memo_scope_files f ON f.id = c.file_id"
        )
        ids = self.db.execute("SELECT id FROM temp.memo_scope ORDER BY id")
        return np.fromiter((cid for (cid,) in ids), np.int64)

    def term_stats(self, groups: Sequence[Group]) -> tuple[int, dict[str, int]]:
        """The number of chunks, and in how many each query word occurs, by the stem that
        leads its group (absent words left out): FTS5's own counts, a query a stem (an
        fts5vocab table reads them no faster and costs each connection about 100 KB: 55 MB
        over 500 collections). A word of several stems (several languages) counts as its
        most frequent, the passages of one language holding it."""
        stems = textnorm.group_stems(groups)
        found = {}
        for stem, quoted in zip(stems, _quoted(stems), strict=True):
            found[stem] = int(self._scalar("SELECT count(*) FROM fts WHERE fts MATCH ?", (quoted,)))
        docs = {g[0]: max(found[t] for t in g) for g in groups}
        return self.count_chunks(), {t: n for t, n in docs.items() if n}

    # -- reading ------------------------------------------------------------------------

    def counts(self) -> tuple[int, int, int]:
        """(indexed files, chunks, skipped files)."""
        total = self._scalar("SELECT count(*) FROM files")
        skipped = self._scalar(
            "SELECT count(*) FROM files WHERE note IS NOT NULL AND note NOT LIKE 'cut%'"
        )
        return total - skipped, self.count_chunks(), skipped

    def notes(self) -> list[tuple[str, FileNote]]:
        """(path, note) of every file that was skipped or cut."""
        rows = list(self.db.execute("SELECT path, note FROM files WHERE note IS NOT NULL"))
        return [(from_stored(path), FileNote.parse(note)) for path, note in rows]

    def data_version(self) -> int:
        """Changes whenever another connection (thread or process) commits to this file."""
        return int(self._scalar("PRAGMA data_version"))

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = {}
        found = self.db.execute(
            "SELECT c.id, f.path, c.line, c.heading, c.text, c.text_line, f.front, c.lang "
            f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            tuple(ids),
        )
        for cid, path, line, heading, text, text_line, front, lang in list(found):
            rel = from_stored(path)
            # text_line 0: written before schema 5 (until the rebuild): the passage's line.
            title = note_title(rel, front or "")
            lang = stored_language(lang)
            rows[cid] = ChunkRow(cid, rel, line, heading, text, text_line or line, title, lang)
        return rows

    def has_vec_table(self) -> bool:
        return bool(
            self._scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vec'")
        )


def _quoted(terms: Sequence[str]) -> list[str]:
    # Each term quoted, so no user text is FTS5 syntax (terms are \w+ runs: no quotes).
    return [f'"{t}"' for t in terms]


def _any(group: Group) -> str:
    """An FTS5 match of any stem of a query word's `group` (one stem: itself)."""
    quoted = _quoted(group)
    return quoted[0] if len(quoted) == 1 else f"({' OR '.join(quoted)})"
