"""Files below a folder reached through descriptors (`memo_core.files.fsafe`), with the kernel's
openat2 and with memo's own walk name by name (what systems without openat2 get)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core.errors import FolderChangedError, PathNotFoundError
from memo_core.files import fsafe
from memo_core.files.fsafe import Escape, Folder, NotRegularFile, open_collection
from memo_core.files.walker import scan


@pytest.fixture(params=["openat2", "by-name"])
def lookup(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "openat2" and not fsafe.has_openat2():
        pytest.skip("this kernel has no openat2")
    if request.param == "by-name":
        monkeypatch.setattr(fsafe, "_OPENAT2", None)
    yield request.param


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A root with notes and links of every kind, and an outside folder with a secret."""
    base = Path(os.path.realpath(tmp_path))
    root = write_notes(base / "root", {"a/b/n.md": "inside", "top.md": "top"})
    outside = write_notes(base / "outside", {"secret.md": "SECRET"})
    links = {
        "rel.md": "a/b/n.md",
        "abs.md": str(root / "a/b/n.md"),
        "a/b/up.md": "../../top.md",
        "dir": "a",
        "out.md": str(outside / "secret.md"),
        "outrel.md": "../outside/secret.md",
        "climb.md": "../root/top.md",  # above the root and back: refused all the same
        "outdir": str(outside),
        "loop.md": "loop.md",
        "dangling.md": "a/none.md",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    return root, outside


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        ("a/b/n.md", b"inside"),
        ("rel.md", b"inside"),
        ("abs.md", b"inside"),
        ("a/b/up.md", b"top"),
        ("dir/b/n.md", b"inside"),
        ("a/../top.md", b"top"),
        ("./a//b/n.md", b"inside"),
    ],
)
def test_links_inside_the_root_are_followed(
    lookup: str, tree: tuple[Path, Path], rel: str, text: bytes
) -> None:
    with Folder(tree[0]) as folder:
        assert folder.read(rel, 100) == (text, len(text))


@pytest.mark.parametrize(
    "rel", ["out.md", "outrel.md", "climb.md", "outdir/secret.md", "../outside/secret.md", ".."]
)
def test_whatever_leads_outside_is_refused_unread(
    lookup: str, tree: tuple[Path, Path], rel: str
) -> None:
    with Folder(tree[0]) as folder, pytest.raises(Escape):
        folder.read(rel, 100)


def test_the_refusal_does_not_depend_on_what_lies_outside(
    lookup: str, tree: tuple[Path, Path]
) -> None:
    root, outside = tree
    (outside / "secret.md").unlink()  # the link now leads nowhere: the same answer
    with Folder(root) as folder, pytest.raises(Escape):
        folder.read("out.md", 100)


@pytest.mark.parametrize(
    ("rel", "error"),
    [("loop.md", errno.ELOOP), ("dangling.md", errno.ENOENT), ("none.md", errno.ENOENT)],
)
def test_loops_and_dangling_links_are_plain_errors(
    lookup: str, tree: tuple[Path, Path], rel: str, error: int
) -> None:
    with Folder(tree[0]) as folder, pytest.raises(OSError) as caught:
        folder.read(rel, 100)
    assert caught.value.errno == error


def test_a_fifo_is_never_read(lookup: str, tree: tuple[Path, Path]) -> None:
    os.mkfifo(tree[0] / "pipe.md")
    with Folder(tree[0]) as folder, pytest.raises(NotRegularFile):
        folder.read("pipe.md", 100)  # would block forever if it were opened for reading


def test_a_folder_on_the_roots_path_swapped_for_a_symlink_is_not_followed(
    lookup: str, tmp_path: Path
) -> None:
    base = Path(os.path.realpath(tmp_path))
    write_notes(base / "elsewhere" / "notes", {"x.md": "elsewhere"})
    (base / "mid").symlink_to(base / "elsewhere")  # was a folder when the path was resolved
    with pytest.raises(OSError) as caught:
        Folder(base / "mid" / "notes")
    assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)
    with pytest.raises(FolderChangedError, match="symbolic link"):
        open_collection(base / "mid" / "notes")
    with pytest.raises(PathNotFoundError, match="no longer exists"):
        open_collection(base / "gone")


def test_the_walk_takes_links_inside_and_never_outside(
    lookup: str, tree: tuple[Path, Path]
) -> None:
    found = scan(tree[0]).files
    assert sorted(found) == [
        "a/b/n.md",
        "a/b/up.md",
        "abs.md",
        "dir/b/n.md",
        "dir/b/up.md",
        "rel.md",
        "top.md",
    ]
