"""memo_core.files.mounts: the mount table read from mountinfo's bytes (the mount on top of
each point, names unescaped, not necessarily UTF-8), and the longest mount point holding a
path, by whole components."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from memo_core.files.mounts import MOUNTINFO, Mount, mount_of, read_mountinfo, unescape


def table_of(tmp_path: Path, text: bytes) -> dict[bytes, Mount]:
    source = tmp_path / "mountinfo"
    source.write_bytes(text)
    return read_mountinfo(source)


def test_each_point_is_named_with_its_device_and_type(tmp_path: Path) -> None:
    table = table_of(
        tmp_path,
        # optional fields (shared:, master:) come before the '-' that ends them
        b"1 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        b"30 1 0:40 / /home/me/share rw shared:7 master:2 - fuse.sshfs host:/x rw\n"
        b"31 1 0:41 / /mnt/tab\\011name rw - nfs4 nas:/a rw\n"
        b"32 1 259:3 /sub /srv/bind rw - xfs /dev/nvme0n1p3 rw\n",
    )
    assert table == {
        b"/": Mount("8:1", "ext4"),
        b"/home/me/share": Mount("0:40", "fuse.sshfs"),
        b"/mnt/tab\tname": Mount("0:41", "nfs4"),
        b"/srv/bind": Mount("259:3", "xfs"),  # a bind mount: the point, not the root it shows
    }


@pytest.mark.parametrize("top_first", [True, False])
def test_of_mounts_stacked_on_one_point_the_one_on_top_counts(
    tmp_path: Path, top_first: bool
) -> None:
    lower = b"40 1 0:60 / /mnt/stack rw - nfs nas:/lower rw\n"
    upper = b"41 40 0:61 / /mnt/stack rw - tmpfs tmpfs rw\n"  # mounted on 40
    top = b"42 41 0:62 / /mnt/stack rw - ext4 /dev/sdb1 rw\n"  # on 41: on top of all
    lines = [top, upper, lower] if top_first else [lower, upper, top]
    table = table_of(tmp_path, b"1 1 8:1 / / rw - ext4 /dev/sda1 rw\n" + b"".join(lines))
    assert table[b"/mnt/stack"] == Mount("0:62", "ext4")


def test_a_root_mounted_over_the_first_one_counts(tmp_path: Path) -> None:
    # The initial rootfs names itself as its parent; the real root is mounted on it.
    table = table_of(
        tmp_path,
        b"1 1 0:1 / / rw - rootfs rootfs rw\n20 1 8:1 / / rw - btrfs /dev/sda1 rw\n",
    )
    assert table == {b"/": Mount("8:1", "btrfs")}


def test_names_need_not_be_utf8_and_lines_without_a_type_are_left_out(tmp_path: Path) -> None:
    table = table_of(
        tmp_path,
        b"1 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        b"50 1 0:70 / /mnt/caf\xe9\\040bar rw - vfat /dev/sdc1 rw\n"
        b"\n"
        b"51 1 0:71 / /mnt/broken rw\n"  # cut short: no '-', no type
        b"52 1 0:72 / /mnt/odd rw - \xff\xfe /dev/x rw\n",  # a type that is not ASCII
    )
    assert table[b"/mnt/caf\xe9 bar"] == Mount("0:70", "vfat")
    assert b"/mnt/broken" not in table
    assert table[b"/mnt/odd"].fs_type == "\ufffd\ufffd"
    assert len(table) == 3


def test_a_table_that_cannot_be_read_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_mountinfo(tmp_path / "no-proc" / "mountinfo")
    with pytest.raises(OSError):
        read_mountinfo(tmp_path)  # a folder


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="procfs is Linux's")
def test_this_process_table_holds_the_root_and_proc(tmp_path: Path) -> None:
    table = read_mountinfo(MOUNTINFO)
    assert b"/" in table
    assert mount_of(table, tmp_path) is not None
    proc = mount_of(table, "/proc/self")
    assert proc is not None and proc.fs_type == "proc"
    assert proc.device == f"{os.major(os.stat('/proc').st_dev)}:{os.minor(os.stat('/proc').st_dev)}"


@pytest.mark.parametrize(
    ("field", "name"),
    [
        (b"/plain/path", b"/plain/path"),
        (b"/a\\040b", b"/a b"),
        (b"/a\\011b\\012c", b"/a\tb\nc"),
        (b"/back\\134slash", b"/back\\slash"),
        (b"/\\0401", b"/ 1"),  # three digits only: the fourth is a plain '1'
        (b"/\\400", b"/\\400"),  # not an octal byte: left as it is
        (b"/\\04", b"/\\04"),  # too short
        (b"/\\", b"/\\"),
        (b"/\\134040", b"/\\040"),  # a backslash written escaped, then plain text
    ],
)
def test_unescape_reads_octal_escapes_back(field: bytes, name: bytes) -> None:
    assert unescape(field) == name


TABLE = {
    b"/": "root",
    b"/mnt/data": "data",
    b"/mnt/data/deep/er": "deeper",
    b"/mnt/my drive": "drive",
    b"/mnt/caf\xe9": "latin1",
}


@pytest.mark.parametrize(
    ("path", "found"),
    [
        ("/", "root"),
        ("/home/me/notes", "root"),
        ("/mnt/data", "data"),
        ("/mnt/data/", "data"),
        ("/mnt/data/deep", "data"),
        ("/mnt/data/deep/er/x.md", "deeper"),
        ("/mnt/database", "root"),  # whole components: not in /mnt/data
        ("/mnt/dat", "root"),
        ("/mnt/my drive/notes", "drive"),
        (os.fsdecode(b"/mnt/caf\xe9/notes"), "latin1"),  # the bytes the OS named
        (Path("/mnt/data/x"), "data"),
    ],
)
def test_a_path_lies_on_the_longest_point_holding_it(path: str | Path, found: str) -> None:
    assert mount_of(TABLE, path) == found


def test_no_point_holds_a_path_outside_a_table_without_root() -> None:
    table = {b"/mnt/data": 1}
    assert mount_of(table, "/home/me") is None
    assert mount_of(table, "/mnt/data/x") == 1
    assert mount_of({}, "/") is None
