"""memo_core.files.feed: what changed under a collection, learnt from the OS. A ChangeFeed
watches the folders a walk enters and names the folders to look at again, exactly, or says
it cannot (None: walk); Freshness decides between the feed and a walk."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core.files import feed
from memo_core.files.feed import ChangeFeed, Freshness
from memo_core.files.inotify import (
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_ISDIR,
    IN_MODIFY,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    Inotify,
)
from memo_core.files.walker import Changes

LINUX = sys.platform.startswith("linux")


# -- what one event tells (no OS needed) -------------------------------------------------


@pytest.mark.parametrize(
    ("mask", "name", "folder", "dirs", "trees", "new_folders", "lost"),
    [
        (IN_CREATE, "n.md", "a/", {"a/"}, set(), [], False),
        (IN_MODIFY, "N.MD", "", {""}, set(), [], False),
        (IN_DELETE, "n.md", "a/b/", {"a/b/"}, set(), [], False),
        (IN_MOVED_TO, "n.md", "", {""}, set(), [], False),
        (IN_CREATE, "n.txt", "a/", set(), set(), [], False),  # no note
        (IN_CREATE, ".n.md", "a/", set(), set(), [], False),  # hidden
        (IN_CREATE, "", "a/", set(), set(), [], False),
        (IN_CREATE | IN_ISDIR, "sub", "a/", set(), {"a/sub/"}, ["a/sub/"], False),
        (IN_MOVED_TO | IN_ISDIR, "sub", "", set(), {"sub/"}, ["sub/"], False),
        (IN_DELETE | IN_ISDIR, "sub", "", set(), {"sub/"}, [], False),
        (IN_MOVED_FROM | IN_ISDIR, "sub", "", set(), {"sub/"}, [], True),  # watches misname
        (IN_CREATE | IN_ISDIR, ".git", "", set(), set(), [], False),
        (IN_CREATE | IN_ISDIR, "node_modules", "", set(), set(), [], False),
        (IN_MODIFY, ".gitignore", "a/", set(), {"a/"}, ["a/"], False),  # rules changed
        (IN_DELETE, ".memoignore", "", set(), {""}, [""], False),
        (IN_DELETE_SELF, "", "a/", set(), {"a/"}, [], False),
        (IN_MOVE_SELF, "", "a/", set(), {"a/"}, [], False),
        (IN_DELETE_SELF, "", "", set(), {""}, [], True),  # the root itself went away
    ],
)
def test_an_event_names_what_to_look_at_again(
    tmp_path: Path,
    mask: int,
    name: str,
    folder: str,
    dirs: set[str],
    trees: set[str],
    new_folders: list[str],
    lost: bool,
) -> None:
    change_feed = ChangeFeed(tmp_path, Inotify())
    change_feed.event(mask, name, folder)
    assert change_feed.pending == Changes(dirs=dirs, trees=trees)
    assert change_feed.new_folders == new_folders
    assert change_feed.lost is lost


# -- a feed over real folders ------------------------------------------------------------


@pytest.fixture
def inotify(tmp_path: Path) -> Iterator[Inotify]:
    if not LINUX:
        pytest.skip("the OS reports changes through Linux inotify")
    one = Inotify()
    if not one.supported(str(tmp_path)):
        pytest.skip(f"{tmp_path} is on a file system whose changes the OS does not report")
    yield one
    one.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_notes(
        tmp_path / "root",
        {
            "top.md": "top\n",
            "a/one.md": "one\n",
            "a/b/two.md": "two\n",
            "drafts/d.md": "ignored\n",
            ".git/x.md": "hidden\n",
            ".gitignore": "drafts/\n",
        },
    )


@pytest.fixture
def started(root: Path, inotify: Inotify) -> Iterator[ChangeFeed]:
    change_feed = ChangeFeed(root, inotify)
    assert change_feed.start()
    assert change_feed.changes() == Changes()  # nothing yet
    yield change_feed
    change_feed.close()


def test_a_note_written_is_named_by_its_folder(started: ChangeFeed, root: Path) -> None:
    (root / "new.md").write_text("x")
    (root / "a" / "b" / "two.md").write_text("changed")
    assert started.changes() == Changes(dirs={"", "a/b/"})
    assert started.changes() == Changes()  # taken


@pytest.mark.parametrize(
    "act",
    [
        lambda root: (root / "a" / "notes.txt").write_text("x"),  # no note
        lambda root: (root / "a" / ".hidden.md").write_text("x"),
        lambda root: (root / ".git" / "y.md").write_text("x"),  # a hidden folder: unwatched
        lambda root: (root / "drafts" / "e.md").write_text("x"),  # an ignored one
    ],
)
def test_what_a_walk_leaves_out_changes_nothing(started: ChangeFeed, root: Path, act) -> None:
    act(root)
    assert started.quiet()
    assert started.changes() == Changes()


def test_a_new_folder_is_watched_and_walked_whole(started: ChangeFeed, root: Path) -> None:
    (root / "new" / "deep").mkdir(parents=True)
    (root / "new" / "deep" / "early.md").write_text("x")  # maybe before its watch
    assert started.changes() == Changes(trees={"new/"})
    (root / "new" / "deep" / "later.md").write_text("x")
    assert started.changes() == Changes(dirs={"new/deep/"})


def test_a_folder_the_rules_leave_out_is_not_watched_once_made(
    started: ChangeFeed, root: Path
) -> None:
    (root / "drafts" / "more").mkdir()
    (root / "node_modules").mkdir()
    assert started.changes() == Changes()  # inside an ignored folder, a tool folder
    (root / "drafts" / "more" / "x.md").write_text("x")
    (root / "node_modules" / "y.md").write_text("x")
    assert started.changes() == Changes()


def test_changed_rules_name_their_tree_and_start_watching_what_they_free(
    started: ChangeFeed, root: Path
) -> None:
    (root / ".gitignore").write_text("")  # drafts/ no longer ignored
    assert started.changes() == Changes(trees={""})
    (root / "drafts" / "now.md").write_text("x")
    assert started.changes() == Changes(dirs={"drafts/"})


def test_a_folder_moved_away_loses_track_once(started: ChangeFeed, root: Path) -> None:
    (root / "a").rename(root / "moved")  # watches below it now name other paths
    assert started.changes() is None
    (root / "moved" / "b" / "three.md").write_text("x")  # rewatched under its new name
    assert started.changes() == Changes(dirs={"moved/b/"})


def test_the_root_removed_loses_track(started: ChangeFeed, root: Path, tmp_path: Path) -> None:
    root.rename(tmp_path / "elsewhere")
    assert started.changes() is None


def test_a_folder_reached_through_a_symlink_is_not_watched(
    started: ChangeFeed, root: Path, tmp_path: Path
) -> None:
    outside = write_notes(tmp_path / "outside", {"o.md": "o\n"})
    (root / "link").symlink_to(outside)
    assert started.changes() == Changes()  # a symlink is no note and no folder made
    (outside / "new.md").write_text("x")
    assert started.quiet()


def test_quiet_takes_nothing(started: ChangeFeed, root: Path) -> None:
    assert started.quiet()
    (root / "a" / "x.md").write_text("x")
    assert not started.quiet()
    assert started.changes() == Changes(dirs={"a/"})
    assert started.quiet()


def test_two_feeds_of_one_instance_each_hear_their_own(root: Path, inotify: Inotify) -> None:
    one, two = ChangeFeed(root, inotify), ChangeFeed(root / "a", inotify)
    assert one.start() and two.start()
    try:
        (root / "a" / "b" / "n.md").write_text("x")
        (root / "top2.md").write_text("x")
        assert one.changes() == Changes(dirs={"a/b/", ""})
        assert two.changes() == Changes(dirs={"b/"})  # its own names for the folder
        two.close()
        (root / "a" / "m.md").write_text("x")
        assert one.changes() == Changes(dirs={"a/"})  # still watched for the other
    finally:
        one.close()
        two.close()


@pytest.mark.skipif(not LINUX, reason="the mount table is Linux's procfs")
def test_a_feed_where_the_os_does_not_report_changes_does_not_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    inotify = Inotify()
    try:
        change_feed = ChangeFeed(Path("/proc/self"), inotify)
        with caplog.at_level(logging.INFO, logger="memo"):
            assert not change_feed.start()
        assert not any(r.levelno >= logging.WARNING for r in caplog.records)  # no problem
        assert any("/proc/self" in r.getMessage() for r in caplog.records)
    finally:
        inotify.close()


def test_a_feed_whose_root_is_gone_does_not_start(
    inotify: Inotify, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    change_feed = ChangeFeed(tmp_path / "missing", inotify)
    with caplog.at_level(logging.WARNING, logger="memo"):
        assert not change_feed.start()
    assert any("missing" in r.getMessage() for r in caplog.records)


# -- Freshness: the feed or a walk ---------------------------------------------------------


def test_without_reports_every_refresh_walks(root: Path) -> None:
    freshness = Freshness(root, None)
    assert freshness.changes() is None and freshness.changes() is None
    assert not freshness.reported and not freshness.quiet()


def test_with_reports_the_first_refresh_walks_then_the_feed_tells(
    root: Path, inotify: Inotify
) -> None:
    freshness = Freshness(root, inotify)
    assert not freshness.reported
    assert freshness.changes() is None  # the first walk: the feed started before it
    assert freshness.reported
    assert freshness.quiet()
    (root / "a" / "new.md").write_text("x")
    assert not freshness.quiet()
    assert freshness.changes() == Changes(dirs={"a/"})
    assert freshness.changes() == Changes()
    freshness.close()
    assert not freshness.reported and not freshness.quiet()
    assert freshness.changes() is None  # a new feed: walk once more
    freshness.close()


def test_walk_next_walks_once(root: Path, inotify: Inotify) -> None:
    freshness = Freshness(root, inotify)
    assert freshness.changes() is None
    freshness.walk_next()
    assert not freshness.quiet()  # a walk is due
    assert freshness.changes() is None
    assert freshness.changes() == Changes()
    freshness.close()


def test_a_walk_is_due_every_so_often_whatever_the_feed_says(
    root: Path, inotify: Inotify, monkeypatch: pytest.MonkeyPatch
) -> None:
    freshness = Freshness(root, inotify)
    assert freshness.changes() is None
    monkeypatch.setattr(feed, "WALK_EVERY_S", -1.0)  # every walk is overdue at once
    assert not freshness.quiet()
    assert freshness.changes() is None
    monkeypatch.setattr(feed, "WALK_EVERY_S", 300.0)
    assert freshness.changes() == Changes()
    freshness.close()


def test_giving_up_walks_from_then_on(root: Path, inotify: Inotify) -> None:
    freshness = Freshness(root, inotify)
    assert freshness.changes() is None
    freshness.give_up()
    assert not freshness.notify and not freshness.reported
    (root / "a" / "new.md").write_text("x")
    assert freshness.changes() is None and freshness.changes() is None


@pytest.mark.skipif(not LINUX, reason="the mount table is Linux's procfs")
def test_where_the_os_does_not_report_freshness_walks_every_time() -> None:
    inotify = Inotify()
    try:
        freshness = Freshness(Path("/proc/self"), inotify)
        assert freshness.changes() is None
        assert not freshness.notify and not freshness.reported
        assert freshness.changes() is None
    finally:
        inotify.close()
