"""memo_core.files.walker: what is a note, the one traversal policy (hidden and tool folders
skipped, ignore files obeyed, symlinks followed only inside the root, each folder once),
and the walk itself over real folders: notes with their stats, special files, folders that
could not be read, two names for one note."""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core.errors import ResourceLimitError
from memo_core.files.fsafe import Folder
from memo_core.files.indexes import INDEX_DIR, INDEX_FILE
from memo_core.files.walker import (
    Changes,
    Scan,
    Verdict,
    find_indexes,
    has_notes,
    is_note_name,
    is_note_path,
    is_within,
    judge_path,
    relevant_change,
    rescan,
    scan,
    skipped_name,
    subfolders,
)

# -- names and paths -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "note"),
    [
        ("plan.md", True),
        ("PLAN.MD", True),
        ("Plan.Md", True),
        ("plan.mD", True),
        ("план.md", True),
        (os.fsdecode(b"caf\xe9.md"), True),  # not UTF-8: still a note
        ("two\nlines.md", True),
        (".md", False),  # hidden
        (".draft.md", False),
        ("plan.markdown", False),
        ("plan.md.bak", False),
        ("plan.txt", False),
        ("md", False),
    ],
)
def test_a_note_is_a_visible_md_file(name: str, note: bool) -> None:
    assert is_note_name(name) is note


@pytest.mark.parametrize(
    ("name", "skipped"),
    [
        (".git", True),
        (".memo", True),
        (".obsidian", True),
        ("node_modules", True),
        ("venv", True),
        ("__pycache__", True),
        ("site-packages", True),
        ("notes", False),
        ("Node_Modules", False),  # tool folders by their exact names
        ("venv2", False),
    ],
)
def test_hidden_and_tool_folders_are_skipped(name: str, skipped: bool) -> None:
    assert skipped_name(name) is skipped


@pytest.mark.parametrize(
    ("rel", "note"),
    [
        ("a.md", True),
        ("deep/er/a.md", True),
        (".git/a.md", False),
        ("x/node_modules/y/a.md", False),
        ("x/.hidden/a.md", False),
        ("x/a.txt", False),
        ("node_modules.md", True),  # a tool folder's name, as a note's
    ],
)
def test_a_note_path_has_no_skipped_folder_on_the_way(rel: str, note: bool) -> None:
    assert is_note_path(rel) is note


@pytest.mark.parametrize(
    ("path", "folder", "within"),
    [
        ("/a/b", "/a", True),
        ("/a", "/a", True),
        ("/a/b", "/a/", True),
        ("/ab", "/a", False),  # a prefix of the name is not a folder above
        ("/a", "/a/b", False),
        ("/x", "/", True),
        (Path("/a/b/c"), Path("/a/b"), True),
    ],
)
def test_is_within_compares_whole_components(
    path: str | Path, folder: str | Path, within: bool
) -> None:
    assert is_within(path, folder) is within


# -- whether a folder holds notes (where an index lives: test_indexes.py) --------------------


def test_has_notes_looks_at_the_folder_itself(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "deep.md").write_text("x")
    (folder / ".hidden.md").write_text("x")
    (folder / "a.txt").write_text("x")
    (folder / "dir.md").mkdir()
    assert not has_notes(folder)
    (folder / "note.MD").write_text("x")
    assert has_notes(folder)
    assert not has_notes(tmp_path / "missing")


def test_subfolders_are_those_a_walk_may_enter(tmp_path: Path) -> None:
    for name in ("a", "b c", ".git", "node_modules", "z"):
        (tmp_path / name).mkdir()
    (tmp_path / "file.md").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert sorted(subfolders(tmp_path)) == [str(tmp_path / n) for n in ("a", "b c", "z")]
    assert subfolders(tmp_path / "missing") == []


def test_find_indexes_looks_as_deep_and_as_wide_as_it_is_told(tmp_path: Path) -> None:
    for rel in ("a", "a/b", "a/b/c", "d", ".hidden/e"):
        (tmp_path / rel / INDEX_DIR).mkdir(parents=True)
        (tmp_path / rel / INDEX_DIR / INDEX_FILE).write_bytes(b"")
    assert find_indexes([tmp_path], 1, 100) == [tmp_path / "a", tmp_path / "d"]
    assert find_indexes([tmp_path], 3, 100) == [
        tmp_path / "a",
        tmp_path / "a" / "b",
        tmp_path / "a" / "b" / "c",
        tmp_path / "d",
    ]
    assert len(find_indexes([tmp_path], 3, 2)) < 2  # the root and one folder looked at
    assert find_indexes([tmp_path / "a"], 0, 100) == [tmp_path / "a"]


# -- judging a path, and changes -----------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = write_notes(
        tmp_path / "root",
        {
            "top.md": "# Top\n",
            "a/one.md": "one\n",
            "a/b/two.md": "two\n",
            "a/skip.txt": "not a note\n",
            "drafts/d.md": "ignored\n",
            "a/keep.md": "kept\n",
            "a/tmp.md": "ignored in a\n",
            ".git/x.md": "hidden\n",
            "node_modules/pkg/readme.md": "tool\n",
            ".gitignore": "drafts/\n",
            "a/.memoignore": "tmp.md\n",
        },
    )
    return root


@pytest.mark.parametrize(
    ("rel", "is_dir", "judged"),
    [
        ("top.md", False, Verdict.TAKEN),
        ("a/b/two.md", False, Verdict.TAKEN),
        ("a/b", True, Verdict.TAKEN),
        ("drafts", True, Verdict.IGNORED),
        ("drafts/d.md", False, Verdict.IGNORED),  # a folder on the way left out
        ("a/tmp.md", False, Verdict.IGNORED),  # by a/.memoignore
        (".git/x.md", False, Verdict.SKIPPED),
        ("node_modules/pkg", True, Verdict.SKIPPED),
        ("a/skip.txt", False, Verdict.SKIPPED),
    ],
)
def test_judge_path_judges_each_folder_on_the_way(
    tree: Path, rel: str, is_dir: bool, judged: Verdict
) -> None:
    with Folder(tree) as root:
        assert judge_path(root, rel, is_dir)[0] is judged


def test_judge_path_fails_where_a_folder_on_the_way_is_missing(tree: Path) -> None:
    with Folder(tree) as root, pytest.raises(OSError):
        judge_path(root, "nowhere/x.md", False)


@pytest.mark.parametrize(
    ("rel", "deleted", "relevant"),
    [
        ("a/new.md", False, True),
        ("a/new.txt", False, False),
        ("a", False, True),  # a folder: its notes come or go
        ("gone", True, True),  # deleted: it may have been a folder
        ("gone.txt", False, False),
        (".git/x.md", False, False),
        ("node_modules/x.md", False, False),
        (".gitignore", False, True),  # new rules: notes may come or go
        ("a/.memoignore", False, True),
        (".git/.gitignore", False, False),
        ("..", False, False),
        (".", False, False),
    ],
)
def test_relevant_change(tree: Path, rel: str, deleted: bool, relevant: bool) -> None:
    assert relevant_change(tree, os.path.join(tree, rel), deleted=deleted) is relevant


def test_a_change_outside_the_root_is_not_its_own(tree: Path) -> None:
    assert not relevant_change(tree, str(tree.parent / "other" / "x.md"), deleted=False)


def test_a_collection_may_itself_sit_in_a_hidden_folder(tmp_path: Path) -> None:
    root = tmp_path / ".config" / "notes"
    root.mkdir(parents=True)
    assert relevant_change(root, str(root / "x.md"), deleted=False)


def test_changes_say_which_folders_to_look_at_again() -> None:
    assert not Changes()
    assert Changes(dirs={"a/"}) and Changes(trees={""})
    folders = sorted(["", "a/", "a/b/", "a/b/c/", "ab/", "z/"])
    assert sorted(Changes(dirs={"a/"}).covered(folders)) == ["a/"]
    assert sorted(Changes(trees={"a/"}).covered(folders)) == ["a/", "a/b/", "a/b/c/"]
    assert sorted(Changes(trees={""}).covered(folders)) == folders
    assert Changes(dirs={"gone/"}).covered(folders) == []


def test_a_scan_knows_which_paths_lie_in_unreadable_folders() -> None:
    found = Scan(unreadable=["a/", "b/c/"])
    assert found.unknown("a/x.md") and found.unknown("b/c/d/y.md")
    assert not found.unknown("b/x.md") and not found.unknown("ab/x.md")


# -- the walk -----------------------------------------------------------------------------


def test_a_walk_finds_the_notes_the_policy_takes(tree: Path) -> None:
    found = scan(tree)
    assert sorted(found.files) == ["a/b/two.md", "a/keep.md", "a/one.md", "top.md"]
    st = (tree / "a" / "one.md").stat()
    assert found.files["a/one.md"] == (st.st_mtime_ns, st.st_size)
    assert found.ignored == 2  # drafts/ and a/tmp.md; hidden and tool folders are no rules'
    assert found.special == [] and found.unreadable == [] and not found.two_names


def test_a_walk_of_an_open_folder_finds_the_same(tree: Path) -> None:
    with Folder(tree) as root:
        assert scan(root).files == scan(tree).files


@pytest.mark.parametrize(
    ("below", "deep", "notes"),
    [
        ("a/", True, ["a/b/two.md", "a/keep.md", "a/one.md"]),
        ("a/", False, ["a/keep.md", "a/one.md"]),
        ("", False, ["top.md"]),
        ("a/b/", True, ["a/b/two.md"]),
        ("drafts/", True, []),  # a folder no walk from the root enters
        (".git/", True, []),
        ("missing/", True, []),  # gone: its notes are gone
    ],
)
def test_a_walk_of_a_sub_folder(tree: Path, below: str, deep: bool, notes: list[str]) -> None:
    found = scan(tree, below, deep=deep)
    assert sorted(found.files) == notes
    assert found.unreadable == []


def test_a_walk_rescans_only_the_folders_named(tree: Path) -> None:
    with Folder(tree) as root:
        assert sorted(rescan(root, Changes(dirs={"a/"})).files) == ["a/keep.md", "a/one.md"]
        whole = rescan(root, Changes(trees={"a/", "a/b/"}, dirs={"a/b/", ""}))
        assert sorted(whole.files) == ["a/b/two.md", "a/keep.md", "a/one.md", "top.md"]
        assert rescan(root, Changes()).files == {}


def test_names_that_are_not_utf8_are_kept_as_the_os_gives_them(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path)
    os.makedirs(raw + b"/caf\xe9")
    with open(raw + b"/caf\xe9/n\xffote.md", "wb") as f:
        f.write(b"x")
    with open(raw + b"/tab\tand\nline.md", "wb") as f:
        f.write(b"y")
    assert sorted(scan(tmp_path).files) == sorted(
        [os.fsdecode(b"caf\xe9/n\xffote.md"), "tab\tand\nline.md"]
    )


def test_special_files_named_as_notes_are_found_but_marked(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("x")
    os.mkfifo(tmp_path / "fifo.md")
    with contextlib.closing(socket.socket(socket.AF_UNIX)) as sock:
        sock.bind(str(tmp_path / "sock.md"))
        found = scan(tmp_path)
    assert sorted(found.files) == ["fifo.md", "real.md", "sock.md"]
    assert sorted(found.special) == ["fifo.md", "sock.md"]


def test_symlinks_are_followed_only_inside_the_root(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "root", {"a/n.md": "n\n", "b/m.md": "m\n"})
    outside = write_notes(tmp_path / "outside", {"secret.md": "s\n", "dir/x.md": "x\n"})
    (root / "to_note.md").symlink_to(root / "a" / "n.md")
    (root / "to_dir").symlink_to(root / "b")
    (root / "out_note.md").symlink_to(outside / "secret.md")
    (root / "out_dir").symlink_to(outside / "dir")
    (root / "up.md").symlink_to("../outside/secret.md")
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    (root / "to_txt.md").symlink_to(root / "a")  # a folder, named as a note: entered
    found = scan(root)
    assert sorted(found.files) == [
        "a/n.md",
        "b/m.md",
        "to_dir/m.md",
        "to_note.md",
        "to_txt.md/n.md",
    ]
    assert found.two_names  # one note, two names: a change shows under one
    assert found.files["to_note.md"] == found.files["a/n.md"]


def test_link_loops_end_and_each_folder_is_walked_once_through_links(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "root", {"a/n.md": "n\n"})
    (root / "a" / "loop").symlink_to(root / "a")
    (root / "a" / "up").symlink_to(root)
    (root / "self").symlink_to("self")
    found = scan(root)
    # a/ is entered once through its link (a/loop/), whose own link is then met again;
    # a/up leads to the root the walk started from: not entered.
    assert sorted(found.files) == ["a/loop/n.md", "a/n.md"]
    assert found.two_names


def test_a_folder_swapped_for_a_symlink_is_not_entered_as_below(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "root", {"x.md": "x\n"})
    outside = write_notes(tmp_path / "outside", {"secret.md": "s\n"})
    (root / "sub").symlink_to(outside)
    assert scan(root, "sub/").files == {}  # the link leads out: nothing below it


def test_hard_links_are_two_names(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x")
    assert not scan(tmp_path).two_names
    os.link(tmp_path / "a.md", tmp_path / "b.md")
    found = scan(tmp_path)
    assert sorted(found.files) == ["a.md", "b.md"] and found.two_names


def test_ignore_rules_apply_below_their_folder_and_count(tmp_path: Path) -> None:
    root = write_notes(
        tmp_path / "root",
        {
            "a/x.md": "x\n",
            "a/y.md": "y\n",
            "b/x.md": "x\n",
            "a/.gitignore": "x.md\n",
            ".memoignore": "/b/\n!keep/\n",
            "c/keep/z.md": "z\n",
        },
    )
    found = scan(root)
    assert sorted(found.files) == ["a/y.md", "c/keep/z.md"]
    assert found.ignored == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_a_folder_that_cannot_be_read_is_unknown_not_empty(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "root", {"ok.md": "x\n", "locked/n.md": "n\n"})
    (root / "locked").chmod(0)
    try:
        found = scan(root)
    finally:
        (root / "locked").chmod(stat.S_IRWXU)
    assert sorted(found.files) == ["ok.md"]
    assert found.unreadable == ["locked/"]
    assert found.unknown("locked/n.md")


@contextlib.contextmanager
def out_of_descriptors() -> Iterator[None]:
    """Every descriptor this process may open taken (its soft limit lowered for a moment)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    taken: list[int] = []
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 16, hard))
    try:
        with contextlib.suppress(OSError):
            while True:
                taken.append(os.open(os.devnull, os.O_RDONLY))
        yield
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_out_of_descriptors_is_a_keyed_error_not_an_empty_folder(tree: Path) -> None:
    with Folder(tree) as root:
        with out_of_descriptors(), pytest.raises(ResourceLimitError) as walking:
            scan(root)
        with out_of_descriptors(), pytest.raises(ResourceLimitError) as looking:
            has_notes(tree)
        with out_of_descriptors(), pytest.raises(ResourceLimitError) as listing:
            subfolders(tree)
    for caught in (walking, looking, listing):
        assert caught.value.message.key == "os.out_of_files"
    assert sorted(scan(tree).files) == ["a/b/two.md", "a/keep.md", "a/one.md", "top.md"]
