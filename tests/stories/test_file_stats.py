"""The file rows a refresh compares with the folder: kept between refreshes, each
write applied to them as it commits, and a refresh told of some folders reads the rows of
those folders only."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from memo_core.files.fsafe import Folder
from memo_core.files.walker import Changes
from memo_core.index.indexer import Indexer
from memo_core.index.store import Store
from memo_core.tuning import Tuning
from memo_core.values import FileNote

FOLDERS = ["", "a/", "a/b/", "a/b/c/", "ab/", "b/", "b/a/", "z/"]


def _covered(changes: Changes, rel: str) -> bool:
    """The rule by its definition: a note lies in a folder of `dirs` or below a tree."""
    folder = rel[: rel.rfind("/") + 1]
    return folder in changes.dirs or any(rel.startswith(t) for t in changes.trees)


def test_covered_folders_are_those_the_rule_names() -> None:
    rng = random.Random(7)
    folders = sorted(FOLDERS)
    for _ in range(300):
        changes = Changes(
            dirs=set(rng.sample(FOLDERS + ["q/"], rng.randint(0, 3))),
            trees=set(rng.sample(FOLDERS + ["q/"], rng.randint(0, 2))),
        )
        want = {f for f in folders if _covered(changes, f + "x.md")}
        assert set(changes.covered(folders)) == want, changes


def _fresh(path: Path) -> dict[str, tuple[int, int]]:
    other = Store.open_existing(path)
    assert other is not None
    try:
        return dict(other.file_stats())
    finally:
        other.close()


def test_kept_stats_follow_writes_rollbacks_and_other_connections(tmp_path: Path) -> None:
    """Random writes, some rolled back, some by another connection: what the store keeps
    is always what a fresh read finds, whole and by folder."""
    rng = random.Random(11)
    path = tmp_path / "i.db"
    store, other = Store.create(path), Store.create(path)
    names = [f + f"n{i}.md" for f in FOLDERS for i in range(3)]
    names.append("a/" + os.fsdecode(b"\xff.md"))  # a name that is not UTF-8: stored as hex
    try:
        for step in range(150):
            writer = other if rng.random() < 0.15 else store
            rel = rng.choice(names)
            try:
                with writer.write():
                    row = writer.file_record(rel)
                    roll = rng.random()
                    if row is None or roll < 0.4:
                        writer.upsert_file(rel, step, rng.randint(1, 9), f"h{step}", None)
                    elif roll < 0.7:
                        writer.touch_file(row.id, step, 5)
                    else:
                        writer.delete_file(row.id)
                    if rng.random() < 0.2:
                        raise KeyError("rolled back")
            except KeyError:
                pass
            fresh = _fresh(path)
            assert store.file_stats() == fresh, step
            changes = Changes(dirs=set(rng.sample(FOLDERS, 2)), trees={rng.choice(FOLDERS)})
            want = {rel: st for rel, st in fresh.items() if _covered(changes, rel)}
            assert store.file_stats(changes) == want, step
    finally:
        store.close()
        other.close()


def test_rows_replaced_by_a_rebuild_are_read_again(tmp_path: Path) -> None:
    live, fresh = Store.create(tmp_path / "live.db"), Store.create(tmp_path / "fresh.db")
    try:
        with live.write():
            live.upsert_file("old.md", 1, 1, "h", None)
        assert live.file_stats().keys() == {"old.md"}
        with fresh.write():
            fresh.upsert_file("new.md", 2, 2, "h2", FileNote.EMPTY)
        live.replace_with(fresh)
        assert live.file_stats() == {"new.md": (2, 2)}
    finally:
        live.close()
        fresh.close()


def test_a_refresh_told_of_one_folder_reads_no_other_file_row(tmp_path: Path) -> None:
    """One edit, reported in its folder: the refresh reads that folder's rows, not the
    other 400 (before: every row after every commit, then every path checked)."""
    notes = tmp_path / "notes"
    for i in range(400):
        folder = notes / f"f{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nword{i}\n", encoding="utf-8")
    store = Store.create(tmp_path / "i.db")
    try:
        with Folder(notes) as root:
            indexer = Indexer(root, store, None, Tuning())
            indexer.refresh()
            edited = notes / "f3" / "n3.md"
            for i in range(2):  # the second edit: after a commit of this connection's own
                edited.write_text(f"# Note 3\n\nedited{i}\n", encoding="utf-8")
                rows = 0

                def count(_cursor: object, row: tuple[object, ...]) -> tuple[object, ...]:
                    nonlocal rows
                    rows += 1
                    return row

                store.db.row_trace = count
                try:
                    stats = indexer.refresh(changes=Changes(dirs={"f3/"}))
                finally:
                    store.db.row_trace = None
                assert stats.changed == 1
                assert rows < 100, rows  # the edit's own reads (8): no file row kept
            assert store.file_stats() == _fresh(tmp_path / "i.db")
    finally:
        store.close()


@pytest.mark.parametrize("changes", [Changes(trees={""}), Changes(dirs={"f1/"}, trees={"f1/"})])
def test_a_whole_tree_told_of_is_every_note_in_it(tmp_path: Path, changes: Changes) -> None:
    store = Store.create(tmp_path / "i.db")
    try:
        with store.write():
            for rel in ("top.md", "f1/a.md", "f1/g/b.md", "f10/c.md"):
                store.upsert_file(rel, 1, 1, "h", None)
        want = {rel: st for rel, st in store.file_stats().items() if _covered(changes, rel)}
        assert store.file_stats(changes) == want
    finally:
        store.close()
