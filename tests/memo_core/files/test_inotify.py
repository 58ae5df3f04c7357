"""memo_core.files.inotify: the process's one inotify instance, shared by every listener
(a collection's change feed): real watches on real folders, each event handed to every
listener watching its folder, queued by the time the call that made the change returned."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import HANG_S

from memo_core.files.inotify import (
    IN_CREATE,
    IN_DELETE,
    IN_DELETE_SELF,
    IN_ISDIR,
    IN_MODIFY,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    LOCAL_FS,
    Inotify,
    Unavailable,
    add_watch,
)
from memo_core.files.mounts import mount_of, read_mountinfo
from memo_core.files.walker import Changes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


class Recorder:
    """A listener: every event it is handed, and the folders it saw change (as `pending`)."""

    def __init__(self) -> None:
        self.pending = Changes()
        self.new_folders: list[str] = []
        self.lost = False
        self.events: list[tuple[int, str, str]] = []

    def event(self, mask: int, name: str, folder: str) -> None:
        self.events.append((mask, name, folder))
        self.pending.dirs.add(folder)

    def names(self, flag: int) -> list[tuple[str, str]]:
        """(name, folder) of the events that carry `flag`."""
        return [(name, folder) for mask, name, folder in self.events if mask & flag]


@pytest.fixture
def inotify() -> Iterator[Inotify]:
    one = Inotify()
    yield one
    one.close()


def test_a_change_is_queued_by_the_time_the_call_that_made_it_returned(
    inotify: Inotify, tmp_path: Path
) -> None:
    listener = Recorder()
    assert inotify.watch(listener, str(tmp_path), "")
    (tmp_path / "a.md").write_text("x")  # create, modify, close: all queued already
    found, folders, lost = inotify.collect(listener)
    assert found.dirs == {""} and folders == [] and not lost
    assert ("a.md", "") in listener.names(IN_CREATE)
    assert ("a.md", "") in listener.names(IN_MODIFY)


def test_each_kind_of_change_reaches_the_listener_with_its_folder(
    inotify: Inotify, tmp_path: Path
) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "old.md").write_text("x")
    listener = Recorder()
    assert inotify.watch(listener, str(sub), "sub/")
    (sub / "old.md").rename(sub / "new.md")
    (sub / "new.md").unlink()
    (sub / "dir").mkdir()
    inotify.collect(listener)
    assert listener.names(IN_MOVED_FROM) == [("old.md", "sub/")]
    assert listener.names(IN_MOVED_TO) == [("new.md", "sub/")]
    assert ("new.md", "sub/") in listener.names(IN_DELETE)
    assert listener.names(IN_CREATE | IN_ISDIR) == [("dir", "sub/")]
    assert all(mask & IN_ISDIR for mask, name, _ in listener.events if name == "dir")


def test_a_name_that_is_not_utf8_reaches_the_listener_as_the_os_decodes_it(
    inotify: Inotify, tmp_path: Path
) -> None:
    listener = Recorder()
    assert inotify.watch(listener, str(tmp_path), "")
    with open(os.fsencode(tmp_path) + b"/caf\xe9\n.md", "wb"):
        pass
    inotify.collect(listener)
    assert (os.fsdecode(b"caf\xe9\n.md"), "") in listener.names(IN_CREATE)


def test_collect_takes_what_it_hands_over_and_quiet_takes_nothing(
    inotify: Inotify, tmp_path: Path
) -> None:
    listener = Recorder()
    assert inotify.watch(listener, str(tmp_path), "")
    assert inotify.quiet(listener)
    (tmp_path / "a.md").write_text("x")
    assert not inotify.quiet(listener)
    assert not inotify.quiet(listener)  # asked again: still there
    found, _, _ = inotify.collect(listener)
    assert found.dirs == {""}
    assert inotify.quiet(listener)
    assert not inotify.collect(listener)[0]  # taken: the next collect is empty


def test_listeners_of_one_folder_share_its_watch(inotify: Inotify, tmp_path: Path) -> None:
    one, two = Recorder(), Recorder()
    assert inotify.watch(one, str(tmp_path), "")
    assert inotify.watch(two, str(tmp_path), "notes/")  # its own name for the folder
    (tmp_path / "a.md").write_text("x")
    inotify.collect(one)  # the queue is read once, handed to both
    assert ("a.md", "") in one.names(IN_CREATE)
    assert ("a.md", "notes/") in two.names(IN_CREATE)
    assert inotify.collect(two)[0].dirs == {"notes/"}


def test_a_forgotten_listener_hears_nothing_and_the_others_still_do(
    inotify: Inotify, tmp_path: Path
) -> None:
    one, two = Recorder(), Recorder()
    for listener in (one, two):
        assert inotify.watch(listener, str(tmp_path), "")
    inotify.forget(one)
    (tmp_path / "a.md").write_text("x")
    inotify.collect(two)
    assert one.events == [] and two.names(IN_CREATE) == [("a.md", "")]
    inotify.forget(two)  # the last one: the watch itself goes
    (tmp_path / "b.md").write_text("x")
    inotify.collect(two)
    assert ("b.md", "") not in two.names(IN_CREATE)


def test_a_watched_folder_removed_says_so_and_its_watch_ends(
    inotify: Inotify, tmp_path: Path
) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    listener = Recorder()
    assert inotify.watch(listener, str(sub), "sub/")
    sub.rmdir()
    inotify.collect(listener)
    assert any(mask & IN_DELETE_SELF for mask, _, _ in listener.events)
    sub.mkdir()  # a new folder of that name is another folder: not watched
    (sub / "a.md").write_text("x")
    before = len(listener.events)
    inotify.collect(listener)
    assert len(listener.events) == before


def test_what_cannot_be_watched_is_not(inotify: Inotify, tmp_path: Path) -> None:
    listener = Recorder()
    (tmp_path / "file.md").write_text("x")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert not inotify.watch(listener, str(tmp_path / "missing"), "missing/")
    assert not inotify.watch(listener, str(tmp_path / "file.md"), "file.md/")  # folders only
    assert not inotify.watch(listener, str(tmp_path / "link"), "link/")  # never through links
    (tmp_path / "real" / "a.md").write_text("x")
    assert inotify.quiet(listener)


def test_wait_says_whether_events_are_queued(inotify: Inotify, tmp_path: Path) -> None:
    listener = Recorder()
    assert not inotify.wait(0)  # no instance yet: nothing can be queued
    assert inotify.watch(listener, str(tmp_path), "")
    assert not inotify.wait(0)
    (tmp_path / "a.md").write_text("x")
    assert inotify.wait(HANG_S)  # at once: it is queued already
    inotify.collect(listener)
    assert not inotify.wait(0)


def test_closing_the_instance_loses_every_listener_track(tmp_path: Path) -> None:
    inotify = Inotify()
    listener = Recorder()
    assert inotify.watch(listener, str(tmp_path), "")
    inotify.close()
    assert not inotify.wait(0)
    assert inotify.collect(listener)[2]  # lost: what happened meanwhile is unknown
    assert inotify.watch(listener, str(tmp_path), "")  # a new instance, on demand
    (tmp_path / "a.md").write_text("x")
    assert inotify.collect(listener)[0].dirs == {""}
    inotify.close()
    inotify.close()  # twice: no error


def test_add_watch_on_what_is_no_inotify_instance_is_unavailable(tmp_path: Path) -> None:
    fd = os.open(os.devnull, os.O_RDONLY)
    try:
        with pytest.raises(Unavailable):
            add_watch(fd, str(tmp_path))
    finally:
        os.close(fd)


def test_only_local_file_systems_are_supported(inotify: Inotify, tmp_path: Path) -> None:
    assert not inotify.supported("/proc/self")  # procfs changes without events
    mount = mount_of(read_mountinfo(), tmp_path)
    assert mount is not None
    assert inotify.supported(str(tmp_path)) is (mount.fs_type in LOCAL_FS)
    assert {"ext4", "tmpfs", "btrfs", "xfs", "overlay"} <= LOCAL_FS
    assert not {"nfs", "nfs4", "cifs", "fuse.sshfs", "9p"} & LOCAL_FS
