"""memo_core.index.history: the content's fingerprint (an order-free sum, kept in O(1)) and
exact deltas since any fingerprint it gave out, as long as it is kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from memo_core.index import history
from memo_core.index.history import EMPTY_FINGERPRINT, History
from memo_core.index.opening import open_for_writing
from memo_core.index.rows import stored
from memo_core.values import FileNote


class Index:
    """memo's index file and its History, written as the store writes: a file row changed,
    then the history told, inside one transaction."""

    def __init__(self, path: Path) -> None:
        self.db = open_for_writing(path)
        self.history = History(self.db)

    def put(self, rel: str, digest: str, note: FileNote | None = None) -> None:
        key = stored(rel)
        old = self._content(key)
        self.db.execute(
            "INSERT INTO files(path, mtime_ns, size, hash, note) VALUES (?, 0, 0, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET hash = excluded.hash, note = excluded.note",
            (key, digest, note.value if note else None),
        )
        self.history.log_change(key, old, self._content(key))

    def remove(self, rel: str) -> None:
        key = stored(rel)
        old = self._content(key)
        self.db.execute("DELETE FROM files WHERE path = ?", (key,))
        self.history.log_change(key, old, None)

    def _content(self, key: str) -> str | None:
        sql = f"SELECT {history.CONTENT} FROM files WHERE path = ?"
        row = self.db.execute(sql, (key,)).fetchone()
        return row[0] if row else None

    def commit(self, *changes) -> str:
        """Each change (a callable) in one transaction; the fingerprint it led to."""
        self.db.execute("BEGIN IMMEDIATE")
        for change in changes:
            change()
        self.history.close_version()
        self.db.execute("COMMIT")
        return self.history.fingerprint()

    def versions(self) -> int:
        return self.db.execute("SELECT count(*) FROM history").fetchone()[0]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[Index]:
    made = Index(tmp_path / "index.db")
    yield made
    made.db.close()


def test_an_items_share_depends_on_its_path_and_its_content() -> None:
    assert history.item("a.md", None) == 0
    a = history.item("a.md", "h1")
    assert a == history.item("a.md", "h1")
    assert 0 < a < 1 << 128
    assert len({a, history.item("b.md", "h1"), history.item("a.md", "h2")}) == 3


def test_fingerprint_text_is_the_low_96_bits_in_24_hex_digits() -> None:
    assert history.fingerprint_text(0) == EMPTY_FINGERPRINT == "0" * 24
    assert history.fingerprint_text((1 << 96) + 5) == f"{5:024x}"
    assert history.fingerprint_text((1 << 96) - 1) == "f" * 24


def test_a_new_index_has_the_empty_fingerprint_and_no_notes(index: Index) -> None:
    assert index.history.fingerprint() == EMPTY_FINGERPRINT
    assert index.history.paths() == []
    assert index.history.knows(EMPTY_FINGERPRINT)
    assert index.history.delta_since(EMPTY_FINGERPRINT) == history.Delta([], [], [])


def test_the_fingerprint_is_the_sum_of_the_notes_shares(index: Index) -> None:
    got = index.commit(lambda: index.put("a.md", "h1"), lambda: index.put("b.md", "h2"))
    total = (history.item("a.md", "h1") + history.item("b.md", "h2")) % (1 << 128)
    assert got == history.fingerprint_text(total)
    assert history.content_sum(index.db) == total


def test_the_fingerprint_is_the_same_whatever_the_order_of_changes(tmp_path: Path) -> None:
    one, two = Index(tmp_path / "one.db"), Index(tmp_path / "two.db")
    try:
        one.commit(lambda: one.put("a.md", "h1"))
        one.commit(lambda: one.put("b.md", "h2"), lambda: one.put("c.md", "x"))
        one.commit(lambda: one.put("c.md", "h3"))
        two.commit(lambda: two.put("c.md", "h3"), lambda: two.put("b.md", "h2"))
        two.commit(lambda: two.put("a.md", "h1"))
        assert one.history.fingerprint() == two.history.fingerprint()
    finally:
        one.db.close()
        two.db.close()


def test_a_note_changed_and_changed_back_sums_to_what_it_was(index: Index) -> None:
    first = index.commit(lambda: index.put("a.md", "h1"))
    assert index.commit(lambda: index.put("a.md", "h2")) != first
    assert index.commit(lambda: index.put("a.md", "h1")) == first


def test_the_delta_names_what_was_added_changed_and_removed(index: Index) -> None:
    then = index.commit(
        lambda: index.put("keep.md", "k"),
        lambda: index.put("edit.md", "1"),
        lambda: index.put("gone.md", "g"),
    )
    index.commit(lambda: index.put("edit.md", "2"), lambda: index.put("new.md", "n"))
    index.commit(lambda: index.remove("gone.md"), lambda: index.put("edit.md", "3"))
    delta = index.history.delta_since(then)
    assert delta is not None
    assert delta.lists() == (["new.md"], ["edit.md"], ["gone.md"])


def test_a_rename_is_a_removal_and_an_addition(index: Index) -> None:
    then = index.commit(lambda: index.put("old.md", "h"))
    index.commit(lambda: index.remove("old.md"), lambda: index.put("new.md", "h"))
    assert index.history.delta_since(then) == history.Delta(["new.md"], [], ["old.md"])


def test_a_change_undone_since_is_in_no_list(index: Index) -> None:
    then = index.commit(lambda: index.put("a.md", "h1"), lambda: index.put("b.md", "x"))
    index.commit(lambda: index.put("a.md", "h2"), lambda: index.put("tmp.md", "t"))
    index.commit(
        lambda: index.put("a.md", "h1"),
        lambda: index.remove("tmp.md"),
        lambda: index.put("b.md", "y"),
    )
    assert index.history.delta_since(then) == history.Delta([], ["b.md"], [])


def test_an_unknown_fingerprint_has_no_delta(index: Index) -> None:
    index.commit(lambda: index.put("a.md", "h1"))
    assert not index.history.knows("f" * 24)
    assert index.history.delta_since("f" * 24) is None


def test_a_fingerprint_seen_twice_gives_the_delta_from_its_latest_version(index: Index) -> None:
    first = index.commit(lambda: index.put("a.md", "h1"))
    index.commit(lambda: index.put("b.md", "b"))
    index.commit(lambda: index.remove("b.md"))  # back to `first`
    index.commit(lambda: index.put("c.md", "c"))
    assert index.history.delta_since(first) == history.Delta(["c.md"], [], [])


def test_a_change_that_changes_nothing_makes_no_version(index: Index) -> None:
    index.commit(lambda: index.put("a.md", "h1"))
    versions = index.versions()
    index.commit(lambda: index.put("a.md", "h1"))
    index.commit()
    assert index.versions() == versions


def test_a_rolled_back_version_leaves_the_fingerprint_as_it_was(index: Index) -> None:
    before = index.commit(lambda: index.put("a.md", "h1"))
    versions = index.versions()
    index.db.execute("BEGIN IMMEDIATE")
    index.put("a.md", "h2")
    index.history.drop_version()
    index.db.execute("ROLLBACK")
    assert index.history.fingerprint() == before
    assert index.versions() == versions
    after = index.commit(lambda: index.put("b.md", "b"))  # the next version is whole
    assert index.history.delta_since(before) == history.Delta(["b.md"], [], [])
    assert index.history.knows(after)


def test_a_special_file_has_no_content_and_no_path(index: Index) -> None:
    empty = index.commit(lambda: index.put("fifo.md", "h", FileNote.SPECIAL))
    assert empty == EMPTY_FINGERPRINT
    assert index.history.paths() == []
    index.commit(lambda: index.put("a.md", "h", FileNote.CUT))  # cut: still content
    assert index.history.paths() == ["a.md"]


def test_paths_are_sorted_and_read_back_as_the_os_gives_them(index: Index) -> None:
    odd = "d/n\udcff.md"  # an undecodable byte, as os.fsdecode gives it
    then = index.commit(
        lambda: index.put("b.md", "1"), lambda: index.put("a.md", "2"), lambda: index.put(odd, "3")
    )
    assert index.history.paths() == ["a.md", "b.md", odd]
    index.commit(lambda: index.put(odd, "4"))
    assert index.history.delta_since(then) == history.Delta([], [odd], [])


def test_a_fresh_index_that_adopts_the_live_history_answers_its_fingerprints(
    tmp_path: Path,
) -> None:
    live, fresh = Index(tmp_path / "live.db"), Index(tmp_path / "fresh.db")
    try:
        given = live.commit(lambda: live.put("a.md", "1"), lambda: live.put("b.md", "2"))
        live.commit(lambda: live.put("b.md", "3"))
        fresh.commit(lambda: fresh.put("a.md", "1"), lambda: fresh.put("c.md", "4"))
        fresh.db.execute("BEGIN IMMEDIATE")
        fresh.history.adopt(live.history)
        fresh.history.close_version()
        fresh.db.execute("COMMIT")
        # Its own content, fingerprinted as any index holding it would be ...
        own = history.content_sum(fresh.db)
        assert fresh.history.fingerprint() == history.fingerprint_text(own)
        # ... and what the live one gave out still answered, up to the fresh content.
        assert fresh.history.delta_since(given) == history.Delta(["c.md"], [], ["b.md"])
        assert fresh.history.knows(live.history.fingerprint())
    finally:
        live.db.close()
        fresh.db.close()


def test_versions_are_pruned_only_past_both_the_count_and_the_days_kept(index: Index) -> None:
    first = index.commit(lambda: index.put("a.md", "0"))
    index.db.execute("BEGIN IMMEDIATE")
    for n in range(1, history.KEEP_VERSIONS + 150):
        index.put("a.md", str(n))
        index.history.close_version()
    index.db.execute("COMMIT")
    assert index.history.knows(first)  # more than the count, but all recent: all kept
    recent = index.history.fingerprint()
    index.db.execute("UPDATE history SET at = 0")  # as if every version were years old
    index.db.execute("BEGIN IMMEDIATE")
    for n in range(100):  # up to the next hundredth version, which prunes
        index.put("b.md", str(n))
        index.history.close_version()
    index.db.execute("COMMIT")
    assert not index.history.knows(first)
    assert index.history.delta_since(first) is None
    assert index.history.delta_since(recent) == history.Delta(["b.md"], [], [])
    assert history.KEEP_VERSIONS <= index.versions() <= history.KEEP_VERSIONS + 100
    left = index.db.execute("SELECT min(version) FROM history").fetchone()[0]
    logged = index.db.execute("SELECT min(version) FROM file_log").fetchone()[0]
    assert logged >= left  # the log of what was pruned went with it


def test_start_history_counts_the_content_already_there(tmp_path: Path) -> None:
    db = apsw.Connection(":memory:")
    try:
        db.execute(
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE files(path TEXT, hash TEXT, note TEXT);"
            "CREATE TABLE history(version INTEGER PRIMARY KEY AUTOINCREMENT, "
            "fingerprint TEXT NOT NULL, at REAL NOT NULL);"
            "INSERT INTO files VALUES ('a.md', 'h', NULL), ('f.md', 'x', 'special')"
        )
        history.start_history(db)
        assert History(db).fingerprint() == history.fingerprint_text(history.item("a.md", "h"))
        assert db.execute("SELECT fingerprint FROM history").fetchall() == [
            (History(db).fingerprint(),)
        ]
    finally:
        db.close()
