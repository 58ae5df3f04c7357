"""Which folders are collections, and which files belong to one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import NoCollectionError, PathNotFoundError
from memo_core.files.discovery import SETTLED_NS, Discoveries, discover, resolve_path
from memo_core.files.indexes import fallback_index_path
from memo_core.files.walker import scan


def test_folder_with_md_is_one_collection_with_its_whole_subtree(tmp_path: Path) -> None:
    write_notes(tmp_path, {"n/a.md": "a", "n/sub/deeper/b.md": "b", "n/sub/c.md": "c"})
    assert discover(tmp_path / "n") == [tmp_path / "n"]


def test_home_with_two_collections(tmp_path: Path) -> None:
    write_notes(tmp_path, {"notes/a.md": "a", "work/wiki/b.md": "b", "work/wiki/x/c.md": "c"})
    assert discover(tmp_path) == [tmp_path / "notes", tmp_path / "work" / "wiki"]


def test_discovery_stops_after_two_levels(tmp_path: Path) -> None:
    write_notes(tmp_path, {"a/b/c/deep.md": "x"})
    with pytest.raises(NoCollectionError, match="no notes found"):
        discover(tmp_path)
    assert discover(tmp_path / "a") == [tmp_path / "a" / "b" / "c"]


def test_existing_index_makes_a_root(tmp_path: Path) -> None:
    (tmp_path / "c" / ".memo").mkdir(parents=True)
    (tmp_path / "c" / ".memo" / "index.db").write_bytes(b"")
    assert discover(tmp_path) == [tmp_path / "c"]


def test_hidden_folders_are_not_collections(tmp_path: Path) -> None:
    write_notes(tmp_path, {".obsidian/a.md": "a", "x/.git/b.md": "b"})
    with pytest.raises(NoCollectionError):
        discover(tmp_path)


@pytest.mark.parametrize("bad", ["does/not/exist", "file.md", ""])
def test_bad_paths_are_clear_errors(tmp_path: Path, bad: str) -> None:
    (tmp_path / "file.md").write_text("x")
    path = str(tmp_path / bad) if bad else ""
    with pytest.raises(PathNotFoundError) as e:
        resolve_path(path)
    assert str(e.value)


def test_relative_and_tilde_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_notes(tmp_path, {"n/a.md": "a"})
    monkeypatch.chdir(tmp_path)
    assert resolve_path("n") == tmp_path / "n"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_path("~/n") == tmp_path / "n"


def test_scan_finds_md_skips_hidden_and_other_files(tmp_path: Path) -> None:
    write_notes(
        tmp_path,
        {
            "a.md": "a",
            "B.MD": "b",
            "x/c.md": "c",
            ".git/d.md": "d",
            "x/.memo/e.md": "e",
            "notes.txt": "t",
            "x/y/z/f.md": "f",
        },
    )
    assert sorted(scan(tmp_path).files) == ["B.MD", "a.md", "x/c.md", "x/y/z/f.md"]
    st = scan(tmp_path).files["a.md"]
    assert st == ((tmp_path / "a.md").stat().st_mtime_ns, 1)


def test_symlinks_inside_followed_outside_not_loops_end(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "root", {"a.md": "a", "sub/b.md": "b"})
    outside = write_notes(tmp_path / "outside", {"secret.md": "s"})
    os.symlink(outside, root / "out")
    os.symlink(outside / "secret.md", root / "secret.md")
    os.symlink(root / "sub", root / "alias")
    os.symlink(root, root / "sub" / "loop")
    found = sorted(scan(root).files)
    assert "secret.md" not in found and not any(f.startswith("out/") for f in found)
    assert "alias/b.md" in found and "a.md" in found
    assert len(found) < 10  # the loop ended


def test_notes_too_deep_are_pointed_at_not_lost(tmp_path: Path) -> None:
    write_notes(tmp_path, {"a/b/c/d/deep.md": "x", "z/y/x/w/v/further.md": "y"})
    with pytest.raises(NoCollectionError) as e:
        discover(tmp_path)
    assert str(e.value).endswith(
        f"the nearest notes are in {tmp_path / 'a' / 'b' / 'c' / 'd'}: point memo at that folder"
    )


# -- findings kept between calls (Discoveries) -----------------------------------------------


def _settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every folder as changed long enough ago (no tick of a coarse clock left): the clock
    the findings are kept by runs SETTLED_NS ahead (a change's inode time cannot be set)."""
    ahead = time.time_ns() + 2 * SETTLED_NS
    monkeypatch.setattr(time, "time_ns", lambda: ahead)


def _index_in(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.db").write_bytes(b"")


CHANGES = {
    "a new collection": lambda base: write_notes(base, {"c/new.md": "x"}),
    "a collection's last note gone": lambda base: (base / "a" / "a.md").unlink(),
    "a note two levels down": lambda base: write_notes(base, {"e/inner/n.md": "x"}),
    "an index made in a .memo there before": lambda base: _index_in(base / "d" / ".memo"),
    "an index made in the cache": lambda base: _index_in(fallback_index_path(base / "d").parent),
    "a folder of notes renamed": lambda base: (base / "a").rename(base / "z"),
    "a folder's permissions changed": lambda base: (base / "b").chmod(0o700),
}


@pytest.mark.parametrize("change", CHANGES)
def test_kept_findings_see_every_change_that_decides_them(
    tmp_path: Path, change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = write_notes(tmp_path / "base", {"a/a.md": "a", "b/b.md": "b", "b/inner/x.txt": "x"})
    (base / "d" / ".memo").mkdir(parents=True)
    (base / "e" / "inner").mkdir(parents=True)
    cache = fallback_index_path(base / "d").parent.parent
    cache.mkdir(parents=True)
    _settle(monkeypatch)
    found = Discoveries()
    before = found.discover(base)
    assert before == discover(base) == [base / "a", base / "b"]
    listed: list[object] = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(path) or real(path))
    CHANGES[change](base)
    after = found.discover(base)
    assert listed  # read again
    assert after == discover(base)


def test_findings_are_kept_while_their_folders_stand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = write_notes(tmp_path / "base", {f"p{i}/docs/n.md": "x" for i in range(5)})
    _settle(monkeypatch)
    found = Discoveries()
    listed: list[object] = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(path) or real(path))
    first = found.discover(base)
    assert len(first) == 5 and listed
    listed.clear()
    (base / "p0" / "docs" / "n.md").write_text("changed", encoding="utf-8")  # not a folder
    assert found.discover(base) == first
    assert listed == []  # no folder read again


def test_a_folder_changed_within_a_tick_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Findings read from a folder changed less than SETTLED_NS ago are not kept: a second
    change in the same tick of a coarse clock leaves its time as it was."""
    base = write_notes(tmp_path / "base", {"a/a.md": "a"})
    assert time.time_ns() - os.stat(base).st_ctime_ns < SETTLED_NS
    found = Discoveries()
    assert found.discover(base) == [base / "a"]
    listed: list[object] = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": listed.append(path) or real(path))
    assert found.discover(base) == [base / "a"]
    assert listed  # not kept: the same tick could hold a change its time does not show
