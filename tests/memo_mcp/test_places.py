"""memo-mcp's places (memo_mcp/places.py): the file system a path lies on, found by its name
in the mount table, and the rule that one file system, however many of its folders calls
name, holds at most `DEVICE_WORKERS` of the threads (a dead mount leaves the rest to others).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from conftest import HANG_S

from memo_core.files.mounts import read_mountinfo, unescape
from memo_mcp import places as places_module
from memo_mcp.places import (
    DEVICE_WORKERS,
    FOLDER_WORKERS,
    WORKERS,
    FolderSlots,
    Mounts,
    SlotCall,
)

# As the kernel writes it: the root names itself as its parent, a space and a backslash are
# octal-escaped, a name need not be UTF-8, /srv/notes is a bind mount of /mnt/data's file
# system, and /mnt/data/over has two mounts, the one on top (24) listed first.
MOUNTINFO = (
    b"1 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
    b"20 1 8:2 / /mnt/data rw,relatime - ext4 /dev/sda2 rw\n"
    b"21 1 0:50 / /mnt/my\\040drive rw - fuse.sshfs host: rw,user_id=1000\n"
    b"22 1 0:51 / /mnt/back\\134slash rw - nfs nas:/x rw\n"
    b"24 23 0:53 / /mnt/data/over rw - nfs nas:/b rw\n"
    b"23 20 0:52 / /mnt/data/over rw - nfs nas:/a rw\n"
    b"25 1 8:2 /notes /srv/notes rw - ext4 /dev/sda2 rw\n"
    b"26 1 0:54 / /mnt/bad\xffname rw - tmpfs tmpfs rw\n"
    b"27 1 0:99 / /dead rw - fuse.sshfs gone: rw\n"
)


@pytest.fixture
def mountinfo(tmp_path: Path) -> Path:
    path = tmp_path / "mountinfo"
    path.write_bytes(MOUNTINFO)
    return path


def test_the_table_names_each_mount_point_as_the_kernel_means_it(mountinfo: Path) -> None:
    table = read_mountinfo(mountinfo)
    assert table[b"/"] == ("8:1", "ext4")
    assert table[b"/mnt/my drive"] == ("0:50", "fuse.sshfs")
    assert table[b"/mnt/back\\slash"] == ("0:51", "nfs")
    assert table[b"/mnt/bad\xffname"] == ("0:54", "tmpfs")
    assert table[b"/mnt/data/over"] == ("0:53", "nfs")  # the one on top, not the last listed
    assert table[b"/srv/notes"] == table[b"/mnt/data"] == ("8:2", "ext4")
    assert unescape(b"a\\040b\\011c\\012d\\134e") == b"a b\tc\nd\\e"


@pytest.mark.parametrize(
    ("path", "device"),
    [
        ("/", "8:1"),
        ("/home/me/notes", "8:1"),
        ("/mnt", "8:1"),
        ("/mnt/data", "8:2"),
        ("/mnt/data/notes/deep", "8:2"),
        ("/mnt/database/notes", "8:1"),  # a prefix of the name, not of its components
        ("/mnt/dat", "8:1"),
        ("/mnt/data/over/x", "0:53"),
        ("/mnt/data/overt", "8:2"),
        ("/mnt/my drive/notes", "0:50"),
        ("/mnt/my", "8:1"),
        ("/mnt/back\\slash/notes", "0:51"),
        (os.fsdecode(b"/mnt/bad\xffname/notes"), "0:54"),
        ("/srv/notes/a", "8:2"),
    ],
)
def test_a_path_lies_on_its_longest_mount_point(mountinfo: Path, path: str, device: str) -> None:
    assert Mounts(mountinfo).device(Path(path)) == device


def test_with_no_mount_table_each_folder_is_its_own(tmp_path: Path) -> None:
    folder = Path("/mnt/data/notes")
    assert Mounts(tmp_path / "no-proc").device(folder) == folder
    rootless = tmp_path / "rootless"  # a chroot's table need not list "/"
    rootless.write_bytes(b"30 29 0:60 / /mnt/data rw - tmpfs tmpfs rw\n")
    assert Mounts(rootless).device(Path("/home/me")) == Path("/home/me")
    assert Mounts(rootless).device(folder) == "0:60"


def test_the_table_is_read_again_only_after_a_while(mountinfo: Path) -> None:
    kept, fresh = Mounts(mountinfo, ttl_s=3600), Mounts(mountinfo, ttl_s=0)
    assert kept.device(Path("/mnt/new/x")) == fresh.device(Path("/mnt/new/x")) == "8:1"
    mountinfo.write_bytes(MOUNTINFO + b"40 1 0:70 / /mnt/new rw - nfs nas:/n rw\n")
    assert kept.device(Path("/mnt/new/x")) == "8:1"
    assert fresh.device(Path("/mnt/new/x")) == "0:70"
    mountinfo.unlink()  # unreadable for now (out of descriptors): the last table holds
    assert fresh.device(Path("/mnt/new/x")) == "0:70"


# -- the rule ---------------------------------------------------------------------------------


class Hanging:
    """Calls that hang until `gate` is set; how many at once (`now`), at most (`most`)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.now = self.most = 0

    def __call__(self) -> None:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        self.gate.wait()
        with self.lock:
            self.now -= 1


def on_dead(path: str | Path) -> bool:
    return str(path).startswith("/dead/")


async def test_folders_of_one_dead_mount_leave_threads_for_the_others(mountinfo: Path) -> None:
    places = FolderSlots(WORKERS, FOLDER_WORKERS, DEVICE_WORKERS, Mounts(mountinfo))
    hanging = Hanging()
    jobs: list[SlotCall[None]] = [places.submit(Path(f"/dead/f{i}"), hanging) for i in range(12)]
    try:
        with anyio.fail_after(HANG_S):
            assert await places.run(Path("/mnt/data/notes"), lambda: "found") == "found"
            assert await places.run(Path("/home/me"), lambda: "found") == "found"
        assert sum(job.started for job in jobs) == DEVICE_WORKERS
    finally:
        hanging.gate.set()
    with anyio.fail_after(HANG_S):
        for job in jobs:
            await places.wait(job)
    assert hanging.most <= DEVICE_WORKERS < WORKERS


def fake_confine(hanging: Hanging, resolved: list[str]) -> Callable[[str, object], Path]:
    """`confine` where resolving a path written on /dead hangs, and /mnt/data/link<i> is a
    symlink to /dead/f<i>."""

    def confine(path: str, roots: object) -> Path:
        if on_dead(path):
            hanging()
        resolved.append(path)
        return Path(path.replace("/mnt/data/link", "/dead/f"))

    return confine


async def test_a_confined_call_counts_where_the_path_is_written_then_where_it_leads(
    mountinfo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paths written on a dead mount hang as they are resolved, links from a healthy file
    system into it hang in the call: either way only the dead mount's places are held."""
    hanging, resolved = Hanging(), list[str]()
    monkeypatch.setattr(places_module, "confine", fake_confine(hanging, resolved))

    def use(real: Path) -> str:
        if on_dead(real):
            hanging()
        return str(real)

    places = FolderSlots(WORKERS, FOLDER_WORKERS, DEVICE_WORKERS, Mounts(mountinfo))
    roots = [Path("/")]
    links = [f"/mnt/data/link{i}" for i in range(10)]
    async with anyio.create_task_group() as tg:
        try:
            for path in [*links, *(f"/dead/g{i}" for i in range(10))]:
                tg.start_soon(places.confined, path, roots, use)
            with anyio.fail_after(HANG_S):
                while len(resolved) < len(links) or hanging.now < DEVICE_WORKERS:
                    await anyio.sleep(0.01)
                await anyio.wait_all_tasks_blocked()  # every link's call has asked for a place
                healthy = await places.confined("/mnt/data/notes", roots, use)
                assert healthy == "/mnt/data/notes"
                assert await places.confined("/home/me", roots, use) == "/home/me"
        finally:
            hanging.gate.set()
    assert hanging.most <= DEVICE_WORKERS
