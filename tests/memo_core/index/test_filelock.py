"""memo_core.index.filelock: one refresher per collection, across processes and within one."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import HANG_S

from memo_core.errors import IndexLocationError
from memo_core.files.fsafe import Folder
from memo_core.index.filelock import FileLock

# A child that tries the lock without waiting: exits 0 when it got it, 1 when it is held.
TRY_IN_CHILD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
except BlockingIOError:
    sys.exit(1)
sys.exit(0)
"""


def _free_in_another_process(path: Path) -> bool:
    run = subprocess.run([sys.executable, "-c", TRY_IN_CHILD, str(path)], timeout=HANG_S)
    return run.returncode == 0


def test_the_lock_file_is_made_and_held_until_released(tmp_path: Path) -> None:
    path = tmp_path / "refresh.lock"
    lock = FileLock(path)
    assert lock.acquire(wait=False)
    assert path.is_file()
    assert not _free_in_another_process(path)
    lock.release()
    assert _free_in_another_process(path)
    assert path.is_file()  # the file stays: only the lock goes


def test_a_second_holder_does_not_get_it_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / "refresh.lock"
    first, second = FileLock(path), FileLock(path)
    assert first.acquire(wait=False)
    try:
        assert not second.acquire(wait=False)
        assert not second.acquire(wait=False)  # again: still held, nothing leaked in between
    finally:
        first.release()
    assert second.acquire(wait=False)
    second.release()


def test_a_waiting_holder_gets_it_once_the_first_releases(tmp_path: Path) -> None:
    path = tmp_path / "refresh.lock"
    first, second = FileLock(path), FileLock(path)
    assert first.acquire(wait=True)
    got = threading.Event()

    def waiter() -> None:
        assert second.acquire(wait=True)
        got.set()

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    first.release()
    assert got.wait(HANG_S)
    thread.join(HANG_S)
    assert not first.acquire(wait=False)  # now the second's
    second.release()
    assert first.acquire(wait=False)
    first.release()


def test_releasing_twice_or_before_acquiring_is_harmless(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "refresh.lock")
    lock.release()
    assert lock.acquire(wait=False)
    lock.release()
    lock.release()
    assert FileLock(tmp_path / "refresh.lock").acquire(wait=False)


def test_a_lock_in_memo_folder_is_reached_through_the_collections_descriptor(
    tmp_path: Path,
) -> None:
    root = tmp_path / "notes"
    (root / ".memo").mkdir(parents=True)
    path = root / ".memo" / "refresh.lock"
    with Folder(root) as folder:
        lock = FileLock(path, folder)
        assert lock.acquire(wait=False)
        assert not FileLock(path).acquire(wait=False)  # the same file, by its path
        lock.release()


def test_a_symlink_at_the_lock_files_name_is_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("")
    path = tmp_path / "refresh.lock"
    path.symlink_to(target)
    with pytest.raises(IndexLocationError) as caught:
        FileLock(path).acquire(wait=False)
    assert caught.value.message.key == "index.cannot_open"
    assert os.path.islink(path)


def test_a_hard_linked_lock_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "refresh.lock"
    path.write_text("")
    os.link(path, tmp_path / "other-name")
    with pytest.raises(IndexLocationError) as caught:
        FileLock(path).acquire(wait=True)
    assert caught.value.message.key == "place.no_lock"
