"""Whose database lies at a path, read from SQLite's files as bytes: nothing is written,
nothing locked, nothing played back (an ordinary read-only SQLite connection would rewrite
the WAL's shared-memory index, -shm, create a -wal, or stop at another program's journal).

memo's mark is SQLite's `application_id` ('memo') in the database header, plus an `app` row
in its `meta` table written when the index is made (indexes of memo 0.1 have only the row).
An index killed before its first checkpoint has the mark only in the copy of the header its
WAL holds, so the WAL is read too. A database is memo's only when its files say so: the
mark, regular files with one name each (through another name a write lands in a file
elsewhere), and no side file that SQLite would play back or overwrite and memo did not
leave. The file formats are SQLite's own (sqlite.org/fileformat2.html).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from urllib.parse import quote

import apsw

from memo_core.errors import IndexLocationError, IndexStoreError, MemoError
from memo_core.files.fsafe import out_of_files, too_many_files
from memo_core.index import schema
from memo_core.messages import Message

SIDE_SUFFIXES = ("-wal", "-shm", "-journal")  # SQLite's own files beside a database
LOCK_FILE = "refresh.lock"
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_LINK_ERRORS = frozenset({errno.ELOOP, errno.EMLINK})  # O_NOFOLLOW met a symlink (EMLINK: BSD)

# The database header ...
SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100
# ... the WAL's header and the header of each of its frames (a page and where it belongs) ...
WAL_MAGICS = (0x377F0682, 0x377F0683)
WAL_VERSION = 3007000
WAL_HEADER_SIZE = 32
FRAME_HEADER_SIZE = 24
PAGE_SIZES = frozenset(1 << n for n in range(9, 17))
# ... and a rollback journal's header.
JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")
JOURNAL_HEADER_SIZE = 28

NOT_SQLITE = Message("file.not_sqlite")
ANOTHER_PROGRAMS = Message("file.another_programs")


class Mark(Enum):
    NONE = "none"  # nothing there yet (no file, or one with no table): memo may make its index
    MEMO = "memo"
    FOREIGN = "foreign"


def inspect(path: Path, *, with_schema: bool = True) -> tuple[Mark, Message | None]:
    """Whose database is at `path`, found from its files' bytes without writing anything; for
    a foreign one, which file is not memo's and why, as a sentence. `with_schema` False: a file
    with memo's mark is memo's whatever its schema holds (for an opener, which checks the
    schema on its own connection, from the snapshot it reads: once is enough)."""
    mark, what = _database_mark(path, with_schema)
    if mark is Mark.FOREIGN:
        return mark, Message("file.left_alone", why=Message("file.is", path=path, what=what))
    if why := _foreign_side_file(path, mark):
        return Mark.FOREIGN, Message("file.left_alone", why=why)
    return mark, None


def owned(path: Path, *, with_schema: bool = True) -> Mark:
    """The mark at `path` when memo may use it (MEMO or NONE); IndexLocationError if not.
    `with_schema`: as for `inspect`."""
    mark, why = inspect(path, with_schema=with_schema)
    if mark is Mark.FOREIGN:
        assert why is not None
        raise IndexLocationError(why)
    return mark


def _database_mark(path: Path, with_schema: bool) -> tuple[Mark, Message | None]:
    """The mark of the database at `path` and, for a foreign one, what it is (a predicate)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _unreadable(path, e) from e
    if st is not None and (what := odd(st)):
        return Mark.FOREIGN, what
    header = _read_head(path, HEADER_SIZE) if st is not None else b""
    if header is None:
        return Mark.FOREIGN, Message("file.not_regular")  # swapped since the lstat
    if header and not _is_database_header(header):
        return Mark.FOREIGN, NOT_SQLITE
    if header and _app_id(header) == schema.APPLICATION_ID:
        # The mark, once in the file, stays: no need for the WAL. But a file that says it
        # is memo's may hold more than memo makes (planted triggers, views, tables).
        return _schema_mark(path) if with_schema else (Mark.MEMO, None)
    if header and _app_id(header):
        return Mark.FOREIGN, ANOTHER_PROGRAMS
    committed = _wal_header(path)
    latest = committed or header
    if committed is not None and _app_id(committed) == schema.APPLICATION_ID:
        # Beside an empty file SQLite drops the WAL: then it is only memo's leftover.
        return (Mark.MEMO if header else Mark.NONE), None
    if committed is not None and _app_id(committed):
        return Mark.FOREIGN, ANOTHER_PROGRAMS
    if not latest or _schema_cookie(latest) == 0:
        return Mark.NONE, None  # no table was ever made in it
    if not header:
        return Mark.FOREIGN, ANOTHER_PROGRAMS  # all of it in its WAL
    return _ask_sqlite(path)  # memo 0.1: the mark is a row


def _ask_sqlite(path: Path) -> tuple[Mark, Message | None]:
    """memo 0.1's mark, the `app` row in `meta`, as the database file alone has it: opened
    `immutable`, SQLite takes no lock and reads no WAL or journal, and so writes nothing."""
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_NOFOLLOW
    try:
        db = apsw.Connection(sqlite_uri(path, "immutable=1"), flags=flags)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'app'").fetchone()
        finally:
            db.close()
    except apsw.Error:
        row = None  # no such table, or no database SQLite can read: nothing of memo's
    if row == (schema.APP_ID,):
        return Mark.MEMO, None
    return Mark.FOREIGN, ANOTHER_PROGRAMS


def _schema_mark(path: Path) -> tuple[Mark, Message | None]:
    """MEMO when the database file at `path` (as committed to it, read `immutable`: no lock,
    no WAL, nothing written) holds exactly what memo's schema of its version makes; else
    FOREIGN, naming what else it holds. One newer than this memo is left to the opener."""
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_NOFOLLOW
    try:
        db = apsw.Connection(sqlite_uri(path, "immutable=1"), flags=flags)
        try:
            db.execute("PRAGMA trusted_schema=OFF")
            extra = unexpected(db)
        finally:
            db.close()
    except apsw.Error:
        return Mark.MEMO, None  # memo's mark on a file SQLite cannot read: the opener says damaged
    if extra:
        return Mark.FOREIGN, Message("file.not_memos_schema", extra=extra)
    return Mark.MEMO, None


def unexpected(db: apsw.Connection) -> str:
    """What the database holds that memo's schema of its version does not make ("" for
    nothing: a few names, said as `trigger t, view v`); a version newer than this memo's
    is the opener's to say."""
    row = db.execute("PRAGMA user_version").fetchone()
    version = int(row[0]) if row else 0
    if not 0 < version <= schema.SCHEMA_VERSION:
        return ""
    tables, vectors = schema.objects(version)
    found = schema.listed(db)
    if found in (tables, tables | vectors):
        return ""
    odd = sorted(found - tables - vectors) or sorted((tables | vectors) - found)
    return ", ".join(f"{kind} {name}" for kind, name in odd[:3])


def _foreign_side_file(path: Path, mark: Mark) -> Message | None:
    """Why a side file of the database at `path`, or the lock file beside it, is not memo's
    (a phrase naming the file), or None."""
    # As strings: a search over hundreds of collections checks each of these paths.
    base = os.fspath(path)
    lock = os.path.join(os.path.dirname(base), LOCK_FILE)
    for side in [*side_files(base), lock]:
        try:
            st = os.lstat(side)
        except FileNotFoundError:
            continue
        except OSError as e:
            return Message("file.side_unreadable", path=side, reason=e)
        if what := odd(st):
            return Message("file.is", path=side, what=what)
        if side == lock:
            if st.st_size:
                return Message("file.lock_holds_data", path=side)
        elif not os.path.lexists(base):
            # memo removes a database after its side files, and SQLite never removes one.
            return Message("file.side_alone", path=side)
    wal, _, journal = side_files(base)
    head = _read_head(wal, WAL_HEADER_SIZE)
    if head and not _is_wal_header(head):
        return Message("file.not_wal", path=wal)  # SQLite would overwrite it as an empty WAL
    journal_head = _read_head(journal, JOURNAL_HEADER_SIZE)
    if journal_head is not None and not (mark is Mark.NONE and _restores_nothing(journal_head)):
        return Message("file.foreign_journal", path=journal)
    return None


def odd(st: os.stat_result) -> Message | None:
    """What makes the file at one of memo's names one that memo never writes (a predicate:
    `file.is` puts it after the file's name)."""
    if stat.S_ISLNK(st.st_mode):
        return Message("file.symlink")
    if not stat.S_ISREG(st.st_mode):
        return Message("file.not_regular")
    if st.st_nlink > 1:
        return Message("file.hard_links")  # written through this one, it changes there
    return None


# -- SQLite's files, as bytes ----------------------------------------------------------------


def side_files(path: str | Path) -> list[str]:
    base = os.fspath(path)
    return [base + s for s in SIDE_SUFFIXES]


def _read_head(path: str | Path, size: int) -> bytes | None:
    """The first `size` bytes of the regular file at `path` (fewer if it is shorter); None
    when there is no regular file there. Never through a symlink, never blocking (a FIFO)."""
    with _reading(path) as fd:
        return _read(fd, size, 0) if fd is not None else None


def _read(fd: int, size: int, offset: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)  # os.pread is not on every system memo runs on
    return os.read(fd, size)


@contextmanager
def _reading(path: str | Path) -> Iterator[int | None]:
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as e:
        if isinstance(e, (FileNotFoundError, NotADirectoryError)) or e.errno in _LINK_ERRORS:
            yield None  # nothing there, or a symlink (which the lstat checks name as such)
            return
        raise _unreadable(path, e) from e
    try:
        yield fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)


def _is_database_header(header: bytes) -> bool:
    return len(header) == HEADER_SIZE and header.startswith(SQLITE_MAGIC)


def _app_id(header: bytes) -> int:
    return int.from_bytes(header[68:72], "big")


def _schema_cookie(header: bytes) -> int:
    """Changes whenever a table or index is made or dropped: 0 in a database that never had one."""
    return int.from_bytes(header[40:44], "big")


def _is_wal_header(head: bytes) -> bool:
    if len(head) != WAL_HEADER_SIZE:
        return False  # SQLite writes it whole, before any frame
    magic, version, page_size = (int.from_bytes(head[i : i + 4], "big") for i in (0, 4, 8))
    return magic in WAL_MAGICS and version == WAL_VERSION and page_size in PAGE_SIZES


def _wal_header(path: Path) -> bytes | None:
    """The database header as the WAL beside `path` last committed it, or None (no WAL, or
    none of its committed transactions wrote page 1).

    Frames belong to the WAL's current generation while their salts are the header's; a
    transaction counts from the frame that marks its commit. The frames' checksums are not
    verified (that would mean reading the whole WAL): what is read here is only whose
    database this is, and a frame of page 1 that is still being written (a crash, or a
    writer at work right now) shows itself by not starting with SQLite's magic, so the
    frames end there."""
    with _reading(side_files(path)[0]) as fd:
        if fd is None:
            return None
        head = _read(fd, WAL_HEADER_SIZE, 0)
        if not _is_wal_header(head):
            return None
        frame_size = FRAME_HEADER_SIZE + int.from_bytes(head[8:12], "big")
        salts = head[16:24]
        end = os.fstat(fd).st_size
        committed = pending = None
        offset = WAL_HEADER_SIZE
        while offset + frame_size <= end:
            frame = _read(fd, FRAME_HEADER_SIZE + HEADER_SIZE, offset)
            if frame[8:16] != salts:
                break  # a frame of an earlier generation: the WAL ends here
            if int.from_bytes(frame[:4], "big") == 1:
                page = frame[FRAME_HEADER_SIZE:]
                if not _is_database_header(page):
                    break
                pending = page
            if int.from_bytes(frame[4:8], "big"):  # the commit of a transaction
                committed, pending = pending or committed, None
            offset += frame_size
        return committed


def _restores_nothing(head: bytes) -> bool:
    """A journal of a database that was empty, as SQLite keeps it while a connection makes
    the database (memo's own, for a moment, when its new index switches to WAL); its magic
    is still zero until SQLite marks it complete. Played back, it can only empty the file."""
    if not head:
        return True
    return (
        len(head) == JOURNAL_HEADER_SIZE
        and head[:8] in (JOURNAL_MAGIC, bytes(8))
        and int.from_bytes(head[16:20], "big") == 0
    )


def sqlite_uri(path: Path, *options: str) -> str:
    """`path` as a URI for SQLite (open with SQLITE_OPEN_URI), with query `options`."""
    return f"file:{quote(os.fsencode(path))}?{'&'.join(options)}"


def _unreadable(path: str | Path, e: OSError) -> MemoError:
    """Why memo could not read its file at `path`: a limit (too many files open) or not."""
    if out_of_files(e):
        return too_many_files(str(path))
    return IndexStoreError("index.cannot_read", path=path, reason=e)
