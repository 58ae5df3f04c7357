"""The index's history of its content: every committed change of a note is logged with the
fingerprint it led to, so "what changed since fingerprint X?" has an exact answer.

The fingerprint is a sum, modulo 2^128, of one 128-bit digest per (path, content hash):
order-free, so each change updates it in O(1) (no walk over all files), equal exactly when
the content is (up to digest collisions), the same across runs and machines. Shown: its low
96 bits, 24 hex digits. A rename is a removal and an addition; a note changed and changed
back sums to what it was.

Kept: at least the last `KEEP_VERSIONS` versions and every version of the last `KEEP_DAYS`
days, whichever is more. The store holds one `History` (`Store.history`) on its own
connection and tells it of every change inside its write transactions (`Store.write`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import apsw

from memo_core.index.rows import from_stored
from memo_core.values import FileNote

KEEP_VERSIONS = 1000
KEEP_DAYS = 90
_MOD = 1 << 128
EMPTY_FINGERPRINT = f"{0:024x}"
# A file's content as the feed sees it: a FIFO, device or socket named *.md is never read,
# so it is no note (a client opening what the feed lists would hang on it): no content.
CONTENT = f"CASE WHEN note = '{FileNote.SPECIAL.value}' THEN NULL ELSE hash END"


def item(path: str, digest: str | None) -> int:
    """One note's share of the fingerprint (`path` as stored; no digest: no share)."""
    if digest is None:
        return 0
    raw = hashlib.blake2b(f"{path}\x00{digest}".encode(), digest_size=16).digest()
    return int.from_bytes(raw, "big")


def fingerprint_text(total: int) -> str:
    """A content sum as the fingerprint a user sees: 24 hex digits."""
    return f"{total % (1 << 96):024x}"


def start_history(db: apsw.Connection) -> None:
    """The first version of an index's history: the content it holds now, summed over all
    its files (the migration that added the history; every change after that updates the
    sum in O(1))."""
    total = content_sum(db)
    _store_sum(db, total)
    _add_version(db, total)


def content_sum(db: apsw.Connection) -> int:
    """The fingerprint sum of what `db` indexes, counted over all its files."""
    rows = db.execute(f"SELECT path, {CONTENT} FROM files")
    return sum(item(path, digest) for path, digest in rows) % _MOD


def _store_sum(db: apsw.Connection, total: int) -> None:
    db.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('fingerprint_sum', ?)",
        (f"{total:032x}",),
    )


def _add_version(db: apsw.Connection, total: int) -> None:
    """A version that changed no note: the content's fingerprint, now `total`, was recounted."""
    db.execute(
        "INSERT INTO history(fingerprint, at) VALUES (?, ?)", (fingerprint_text(total), time.time())
    )


@dataclass(frozen=True)
class Delta:
    """Relative paths added, changed and removed between two versions of the content."""

    added: list[str]
    changed: list[str]
    removed: list[str]

    def lists(self) -> tuple[list[str], list[str], list[str]]:
        return self.added, self.changed, self.removed


class History:
    """The history of one index's content, on the store's connection: the store logs each
    change of a note here inside its write transaction (`log_change`), then closes the
    version it made (`close_version`) or drops it with the transaction (`drop_version`)."""

    def __init__(self, db: apsw.Connection) -> None:
        self._db = db
        self._version: int | None = None  # this transaction's version, once it changed anything
        self._total = 0  # the fingerprint sum as this transaction has left it so far

    # -- writing, inside the store's write transactions -----------------------------------

    def log_change(self, path: str, old: str | None, new: str | None) -> None:
        """A note's content hash went from `old` to `new` (None: absent) in this transaction
        (`path` as stored)."""
        if old == new:
            return
        if self._version is None:
            self._total = self._sum()
            self._db.execute("INSERT INTO history(fingerprint, at) VALUES ('', ?)", (time.time(),))
            self._version = self._db.last_insert_rowid()
        self._db.execute(
            "INSERT INTO file_log(version, path, old_hash, new_hash) VALUES (?, ?, ?, ?)",
            (self._version, path, old, new),
        )
        self._total = (self._total - item(path, old) + item(path, new)) % _MOD

    def close_version(self) -> None:
        """At the end of a write transaction: record the fingerprint it led to."""
        if self._version is None:
            return
        self._db.execute(
            "UPDATE history SET fingerprint = ? WHERE version = ?",
            (fingerprint_text(self._total), self._version),
        )
        _store_sum(self._db, self._total)
        if self._version % 100 == 0:
            self._prune()
        self._version = None

    def drop_version(self) -> None:
        """The write transaction is rolled back: the version it made goes with it."""
        self._version = None

    def _prune(self) -> None:
        horizon = time.time() - KEEP_DAYS * 86400
        self._db.execute(
            "DELETE FROM history WHERE version < ? AND at < ?",
            ((self._version or 0) - KEEP_VERSIONS, horizon),
        )
        self._db.execute(
            "DELETE FROM file_log WHERE version < (SELECT coalesce(min(version), 0) FROM history)"
        )

    def adopt(self, live: History) -> None:
        """Take over `live`'s history, then log what differs from it as one more version
        (call inside a write transaction): this fresh index is about to replace `live`, and
        fingerprints given out before that still get exact deltas."""
        then = dict(live._db.execute(f"SELECT path, {CONTENT} FROM files"))
        now = dict(self._db.execute(f"SELECT path, {CONTENT} FROM files"))
        self._db.execute("DELETE FROM history")
        self._db.execute("DELETE FROM file_log")
        copy = [
            ("history", "version, fingerprint, at"),
            ("file_log", "version, path, old_hash, new_hash"),
        ]
        for table, columns in copy:
            marks = ", ".join("?" * (columns.count(",") + 1))
            rows = live._db.execute(f"SELECT {columns} FROM {table} ORDER BY rowid")
            self._db.executemany(f"INSERT INTO {table}({columns}) VALUES ({marks})", rows)
        # Counted again, not copied: an index migrated by a memo that counted FIFOs in its
        # sum gets the right one here, as a version of its own (so both the fingerprint it
        # gave out and the right one get exact deltas).
        total = content_sum(live._db)
        _store_sum(self._db, total)
        if total != live._sum():
            _add_version(self._db, total)
        for path in sorted(then.keys() | now.keys()):
            self.log_change(path, then.get(path), now.get(path))

    def _sum(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'fingerprint_sum'").fetchone()
        return int(row[0], 16) if row else 0

    # -- reading ----------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """The fingerprint of what is indexed now (O(1): kept up to date by every change)."""
        return fingerprint_text(self._sum())

    def paths(self) -> list[str]:
        """Every indexed note's relative path, sorted."""
        sql = f"SELECT path FROM files WHERE {CONTENT} IS NOT NULL"
        return sorted(from_stored(p) for (p,) in list(self._db.execute(sql)))

    def knows(self, fingerprint: str) -> bool:
        """Whether `delta_since(fingerprint)` has an answer, without working it out."""
        return fingerprint == self.fingerprint() or self._latest(fingerprint) is not None

    def _latest(self, fingerprint: str) -> int | None:
        """The latest version kept whose content had `fingerprint`."""
        row = self._db.execute(
            "SELECT max(version) FROM history WHERE fingerprint = ?", (fingerprint,)
        ).fetchone()
        return None if row is None else row[0]

    def delta_since(self, fingerprint: str) -> Delta | None:
        """What changed since the content had `fingerprint` (its latest such version);
        None when that fingerprint is unknown here or no longer kept."""
        if fingerprint == self.fingerprint():
            return Delta([], [], [])
        version = self._latest(fingerprint)
        if version is None:
            return None
        then: dict[str, str | None] = {}  # each path's content at that version
        for path, old in self._db.execute(
            "SELECT path, old_hash FROM file_log WHERE version > ? ORDER BY version, rowid",
            (version,),
        ):
            then.setdefault(path, old)
        added, changed, removed = [], [], []
        for path, old in then.items():
            sql = f"SELECT {CONTENT} FROM files WHERE path = ?"
            now = self._db.execute(sql, (path,)).fetchone()
            new = now[0] if now else None
            if old is None and new is not None:
                added.append(from_stored(path))
            elif old is not None and new is None:
                removed.append(from_stored(path))
            elif old != new:
                changed.append(from_stored(path))
        return Delta(sorted(added), sorted(changed), sorted(removed))
