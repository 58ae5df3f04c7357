"""Confinement: every path is resolved before it is checked against the allowed roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memo_core import PathNotFoundError
from memo_core.errors import OutsideRootsError
from memo_core.files.confine import allowed_roots, confine


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "allowed" / "notes").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    os.symlink(tmp_path / "secret", tmp_path / "allowed" / "link-out")
    return tmp_path


def test_inside_is_allowed(tree: Path) -> None:
    roots = [tree / "allowed"]
    assert confine(str(tree / "allowed" / "notes"), roots) == tree / "allowed" / "notes"
    assert confine(str(tree / "allowed"), roots) == tree / "allowed"


@pytest.mark.parametrize(
    "path", ["secret", "allowed/../secret", "allowed/link-out", "allowed/notes/../../secret"]
)
def test_outside_is_refused_naming_the_roots(tree: Path, path: str) -> None:
    with pytest.raises(OutsideRootsError, match=str(tree / "allowed")):
        confine(str(tree / path), [tree / "allowed"])


def test_relative_and_tilde_paths_are_resolved_first(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree / "allowed")
    monkeypatch.setenv("HOME", str(tree / "allowed"))
    roots = [tree / "allowed"]
    assert confine("notes", roots) == tree / "allowed" / "notes"
    assert confine("~/notes", roots) == tree / "allowed" / "notes"
    with pytest.raises(OutsideRootsError):
        confine("../secret", roots)


def test_a_sibling_with_a_common_prefix_is_outside(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes-private").mkdir()
    with pytest.raises(OutsideRootsError):
        confine(str(tmp_path / "notes-private"), [tmp_path / "notes"])


def test_missing_path_is_a_path_error(tree: Path) -> None:
    with pytest.raises(PathNotFoundError):
        confine(str(tree / "allowed" / "nope"), [tree / "allowed"])


def test_roots_from_args_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert allowed_roots([], env="") == [tmp_path.resolve()]
    got = allowed_roots([str(tmp_path / "a")], env=f"{tmp_path / 'b'}{os.pathsep}~/c")
    assert got == [tmp_path / "a", tmp_path / "b", tmp_path / "c"]


def test_refusal_does_not_reveal_what_exists_outside(tree: Path) -> None:
    roots = [tree / "allowed"]
    for outside in (tree / "secret", tree / "no-such-thing"):
        with pytest.raises(OutsideRootsError):
            confine(str(outside), roots)


def test_duplicate_roots_are_listed_once(tmp_path: Path) -> None:
    assert allowed_roots([str(tmp_path), str(tmp_path / ".")], env=str(tmp_path)) == [tmp_path]


def test_a_dot_memo_symlink_leading_out_is_not_written(tmp_path: Path) -> None:
    from conftest import write_notes

    from memo_core import Searcher

    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat\n"})
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", notes / ".memo")
    with Searcher(notes, use_model=False) as s:
        assert s.search("cat", mode="lex")[0].relpath == "a.md"
        assert "is a symbolic link" in (s.status()[0].location_note or "")
    assert list((tmp_path / "elsewhere").iterdir()) == []
