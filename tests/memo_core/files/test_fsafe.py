"""Files below a folder reached through descriptors (`memo_core.files.fsafe`), with the kernel's
openat2 and with memo's own walk name by name (what systems without openat2 get: where the
kernel has it, those tests run again in a process whose kernel calls refuse it)."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO, write_notes

from memo_core.errors import FolderChangedError, PathNotFoundError
from memo_core.files import fsafe
from memo_core.files.fsafe import Escape, Folder, NotRegularFile, open_collection
from memo_core.files.walker import scan


@pytest.fixture(params=["openat2", "by-name"])
def lookup(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "openat2" and not fsafe.has_openat2():
        pytest.skip("this kernel has no openat2")
    if request.param == "by-name" and fsafe.has_openat2():
        pytest.skip("run where openat2 is refused: test_lookups_by_name_where_openat2_is_refused")
    yield request.param


# A seccomp filter that makes the kernel refuse openat2 (ENOSYS, as on a kernel before 5.6;
# a container's profile may refuse it so): installed first, before memo is imported.
REFUSE_OPENAT2 = """
import ctypes, errno, struct
program = [
    (0x20, 0, 0, 0),  # load the system call's number
    (0x15, 0, 1, 437),  # openat2?
    (0x06, 0, 0, 0x00050000 | errno.ENOSYS),  # then fail with ENOSYS
    (0x06, 0, 0, 0x7FFF0000),  # else allow
]
code = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in program))
class Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0, "PR_SET_NO_NEW_PRIVS"
filtered = Program(len(program), ctypes.cast(code, ctypes.c_void_p))
assert libc.prctl(22, 2, ctypes.byref(filtered), 0, 0) == 0, "PR_SET_SECCOMP"
"""


@pytest.mark.skipif(not fsafe.has_openat2(), reason="the by-name tests ran here")
def test_lookups_by_name_where_openat2_is_refused() -> None:
    """This file's by-name tests, in a process whose kernel refuses openat2: memo finds
    it has none and walks name by name, refusing and following what openat2 would."""
    run_them = "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))"
    args = [__file__, "-q", "-p", "no:cacheprovider", "-n", "0", "-k", "by-name"]
    out = subprocess.run(
        [sys.executable, "-c", REFUSE_OPENAT2 + run_them, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    summary = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ passed, \d+ deselected in .*", summary), out.stdout


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
