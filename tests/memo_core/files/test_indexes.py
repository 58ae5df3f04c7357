"""memo_core.files.indexes: where a collection's index lives by name (in its folder, or in
the cache folder where the folder cannot hold it), and whether a folder has one."""

from __future__ import annotations

import os
from pathlib import Path

from memo_core.files.indexes import (
    INDEX_DIR,
    INDEX_FILE,
    fallback_index_path,
    has_index,
    index_path,
)
from memo_core.settings import cache_dir


def test_an_index_lives_in_the_folder_or_else_in_the_cache(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    assert index_path(root) == root / INDEX_DIR / INDEX_FILE
    fallback = fallback_index_path(root)
    assert fallback.is_relative_to(cache_dir())
    assert fallback.name == INDEX_FILE
    assert fallback.parent.name.startswith("notes-")
    # Two folders of one name have two places; one folder always the same one.
    other = fallback_index_path(tmp_path / "elsewhere" / "notes")
    assert other != fallback and fallback == fallback_index_path(root)


def test_the_fallback_name_is_plain_characters(tmp_path: Path) -> None:
    odd = Path(os.fsdecode(str(tmp_path).encode() + b"/caf\xe9 \xd0\xb7 n:o\ntes"))
    name = fallback_index_path(odd).parent.name
    assert name.isascii() and name.isprintable()
    assert all(c.isalnum() or c in "_.-" for c in name)


def test_has_index_finds_either_place(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    assert not has_index(root)
    (root / INDEX_DIR / INDEX_FILE).mkdir(parents=True)  # a folder of that name: not one
    assert not has_index(root)
    (root / INDEX_DIR / INDEX_FILE).rmdir()
    (root / INDEX_DIR / INDEX_FILE).write_bytes(b"")
    assert has_index(root)
    other = tmp_path / "other"
    other.mkdir()
    fallback = fallback_index_path(other)
    fallback.parent.mkdir(parents=True)
    fallback.write_bytes(b"")
    assert has_index(other)
    assert not has_index(tmp_path / "missing")
    assert not has_index(str(tmp_path) + "/\0")  # a name no file has
