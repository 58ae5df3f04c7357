"""memo_core.index.location: where a collection's index lives, and the scratch a rebuild
builds in (cleared only where it is memo's)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from memo_core.errors import IndexLocationError
from memo_core.files.fsafe import Folder
from memo_core.files.indexes import INDEX_DIR, INDEX_FILE, fallback_index_path
from memo_core.index import location
from memo_core.index.opening import open_for_writing


def _memo_index(path: Path) -> Path:
    open_for_writing(path).close()
    return path


def _foreign_db(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE theirs(x)")
    db.commit()
    db.close()
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "notes").mkdir()
    return tmp_path / "notes"


def test_a_fresh_folder_keeps_its_own_index(root: Path) -> None:
    assert location.choose(root) == (root / INDEX_DIR / INDEX_FILE, None)
    assert not (root / INDEX_DIR).exists()  # deciding reads only


def test_an_index_already_in_the_cache_dir_stays_there(root: Path) -> None:
    fallback = _memo_index(fallback_index_path(root))
    path, why = location.choose(root)
    assert path == fallback
    assert why is not None and why.key == "place.could_not_hold"


def test_the_collections_own_index_wins_over_one_in_the_cache_dir(root: Path) -> None:
    _memo_index(fallback_index_path(root))
    own = _memo_index(root / INDEX_DIR / INDEX_FILE)
    assert location.choose(root) == (own, None)


def _memo_symlink(root: Path) -> None:
    (root.parent / "elsewhere").mkdir()
    (root / INDEX_DIR).symlink_to(root.parent / "elsewhere")


def _memo_file(root: Path) -> None:
    (root / INDEX_DIR).write_text("not a folder")


def _foreign_index(root: Path) -> None:
    _foreign_db(root / INDEX_DIR / INDEX_FILE)


def _foreign_scratch(root: Path) -> None:
    _foreign_db(root / INDEX_DIR / f"{INDEX_FILE}.rebuild")


@pytest.mark.parametrize(
    ("make", "key"),
    [
        (_memo_symlink, "place.through"),
        (_memo_file, "file.is"),
        (_foreign_index, "file.left_alone"),
        (_foreign_scratch, "file.left_alone"),
    ],
)
def test_a_place_that_cannot_hold_memos_index_sends_it_to_the_cache_dir(
    root: Path, make, key: str
) -> None:
    make(root)
    why = location.unusable(root)
    assert why is not None and why.key == key
    path, said = location.choose(root)
    assert path == fallback_index_path(root)
    assert said is not None and said.key == key


def test_a_folder_whose_name_is_not_utf8_cannot_hold_it(tmp_path: Path) -> None:
    root = Path(os.fsdecode(tmp_path / os.fsdecode(b"n\xff")))
    root.mkdir()
    why = location.unusable(root)
    assert why is not None and why.key == "place.not_utf8"
    path, _ = location.choose(root)
    path_str = str(path)
    path_str.encode("utf-8")  # the cache dir's name is plain characters
    assert path == fallback_index_path(root)


def test_memos_own_index_there_is_usable(root: Path) -> None:
    _memo_index(root / INDEX_DIR / INDEX_FILE)
    assert location.unusable(root) is None


def test_the_scratch_lies_beside_the_index(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    assert location.scratch_path(db) == tmp_path / "index.db.rebuild"
    assert not location.scratch_left(db)
    (tmp_path / "index.db.rebuild").symlink_to(tmp_path / "nowhere")  # even a dangling link
    assert location.scratch_left(db)


def test_fresh_scratch_clears_what_a_killed_rebuild_of_memo_left(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    scratch = _memo_index(location.scratch_path(db))
    Path(f"{scratch}-wal").write_bytes(b"")
    assert location.scratch_left(db)
    assert location.fresh_scratch(db) == scratch
    assert not scratch.exists() and not Path(f"{scratch}-wal").exists()
    assert not location.scratch_left(db)


def test_fresh_scratch_through_the_collections_descriptor(root: Path) -> None:
    db = root / INDEX_DIR / INDEX_FILE
    scratch = _memo_index(location.scratch_path(db))
    with Folder(root) as folder:
        assert location.fresh_scratch(db, folder) == scratch
    assert not scratch.exists()


def test_fresh_scratch_refuses_and_keeps_what_is_not_memos(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    foreign = _foreign_db(location.scratch_path(db))
    with pytest.raises(IndexLocationError) as caught:
        location.fresh_scratch(db)
    assert caught.value.message.key == "index.cannot_rebuild"
    assert foreign.is_file()


def test_clear_scratch_leaves_what_is_not_memos_without_a_word(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    foreign = _foreign_db(location.scratch_path(db))
    location.clear_scratch(db)  # no error
    assert foreign.is_file()
    mine = tmp_path / "other.db"
    _memo_index(location.scratch_path(mine))
    location.clear_scratch(mine)
    assert not location.scratch_left(mine)
