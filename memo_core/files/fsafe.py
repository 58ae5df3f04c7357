"""Files below a checked folder, reached through directory descriptors, never by path.

A path checked is not a path used: between a check and a use, whoever writes in a notes
folder can swap a note or a folder for a symlink to somewhere else. So memo opens a
collection's root once per operation, one name at a time from `/` without following any
symlink (the root's path is already symlink-free, so a symlink met now was swapped in:
an error, never a detour), and reaches everything below it relative to that descriptor:

- on Linux ≥ 5.6, in one `openat2` call with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (the
  kernel refuses any symlink and any step above the root);
- elsewhere, and whenever that call meets a symlink, one name at a time with O_NOFOLLOW.
  Symlinks inside the root are followed by memo itself: the link is read with `readlinkat`
  and its target walked from the descriptors already open, so a target that climbs above
  the root, or names an absolute path outside it, is refused whatever lies there.

A swap at any moment therefore gives an error or a skipped file, never another file's
bytes. Needs `openat` (os.supports_dir_fd): Linux, macOS and the BSDs; elsewhere (Windows)
the Engine refuses to start (`require_supported`).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
import sys

if sys.platform != "win32":  # Windows has no rlimits: there the package imports, and each
    import resource  # call says that memo needs WSL (UnsupportedPlatformError)

from memo_core.errors import (
    DiskFullError,
    FolderChangedError,
    MemoError,
    PathNotFoundError,
    ResourceLimitError,
    UnsupportedPlatformError,
)


def _flag(name: str) -> int:
    """os.O_<name>, or 0 where the OS has none (Windows: memo refuses to run there, see
    `require_supported`, but the package imports, so `memo --version` and that error work)."""
    return int(getattr(os, name, 0))


# A folder opened to be listed or to open names in it.
DIR_FLAGS = os.O_RDONLY | _flag("O_DIRECTORY") | _flag("O_NOFOLLOW") | _flag("O_CLOEXEC")
# A file opened to be read: never blocking (a FIFO swapped in would hang the reader).
READ_FLAGS = os.O_RDONLY | _flag("O_NOFOLLOW") | _flag("O_NONBLOCK") | _flag("O_CLOEXEC")
MAX_LINKS = 40  # as the kernel's own limit on links followed in one lookup
# What opening a symlink with O_NOFOLLOW gives: ELOOP, or ENOTDIR with O_DIRECTORY on
# Linux, EMLINK on FreeBSD.
_LINK_ERRORS = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})

Identity = tuple[int, int]  # (st_dev, st_ino): which file, whatever its name


class Escape(OSError):
    """A path below a folder that leads out of it (a symlink or `..` climbing above it)."""

    def __init__(self, rel: str) -> None:
        super().__init__(errno.EXDEV, "leads outside the folder", rel)


class NotRegularFile(OSError):
    """A FIFO, device or socket where a note was expected: never read (it could block)."""


def supported() -> bool:
    """Whether this OS gives what the confinement needs: folders opened as descriptors and
    names opened relative to them (`dir_fd`) without following a symlink. Not Windows."""
    # Not `os.open in os.supports_dir_fd`: a wrapped os.open (a test's, a tracer's) is
    # another function; Windows has an empty set and none of these flags.
    return bool(os.supports_dir_fd) and all(
        hasattr(os, name) for name in ("O_DIRECTORY", "O_NOFOLLOW", "O_NONBLOCK")
    )


def require_supported() -> None:
    """The engine's first step: on an OS without descriptors for folders, one clear error
    instead of failures deep inside (every file memo reads is reached through them)."""
    if not supported():
        raise UnsupportedPlatformError("os.unsupported", platform=sys.platform)


def identity(st: os.stat_result) -> Identity:
    return st.st_dev, st.st_ino


def open_collection(path: str | os.PathLike[str]) -> Folder:
    """The collection folder at the real path `path`, as a `Folder`; in memo's terms why
    not (removed, swapped for a symlink since it was resolved, unreadable)."""
    try:
        return Folder(path)
    except OSError as e:
        raise folder_error(os.fspath(path), e) from e


# Descriptors a probe asks for after a failure that did not say why: SQLite opens three
# for one index (the database, its WAL and shared memory), so one free descriptor after the
# fact does not mean it could have opened them (nor do a few freed by other threads since).
HEADROOM = 8


def out_of_files(e: OSError | None = None) -> bool:
    """Whether `e` says the process has too many files open; None: whether HEADROOM files
    cannot be opened now."""
    if e is None:
        opened: list[int] = []
        try:
            for _ in range(HEADROOM):
                opened.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
        except OSError as probe:
            return out_of_files(probe)
        finally:
            for fd in opened:
                os.close(fd)
        return False
    return e.errno in (errno.EMFILE, errno.ENFILE)


def descriptor_limit() -> int | None:
    """How many descriptors this process may have open at once (None: no limit, or none
    this system says)."""
    if sys.platform == "win32":
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_descriptor_limit() -> None:
    """Let this process open as many descriptors as the system allows it (the soft limit up
    to the hard one, as Go's runtime does at start): a search over hundreds of collections
    keeps a few open for each, and the usual soft limit (1024) is a relic of select(),
    which nothing in memo uses. For a process's entry point, not for a library's caller."""
    if sys.platform == "win32":
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):  # a system that refuses: as it was
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def too_many_files(where: str) -> ResourceLimitError:
    return ResourceLimitError("os.out_of_files", path=where)


def disk_full(e: OSError) -> bool:
    """Whether `e` says the file system (or the user's quota) has no room left."""
    return e.errno in (errno.ENOSPC, errno.EDQUOT)


def no_room(where: str) -> DiskFullError:
    """Nothing can be written at `where`: a disk with no room, or a file system mounted
    read-only (said as such); what the index saved answers either way."""
    key = "os.disk_read_only" if read_only(where) else "os.disk_full"
    return DiskFullError(key, path=where)


def read_only(path: os.PathLike[str] | str) -> bool:
    """Whether `path` (or, when it is not there, its folder) lies on a read-only mount."""
    for where in (path, os.path.dirname(os.fspath(path))):
        try:
            return bool(os.statvfs(where).f_flag & os.ST_RDONLY)
        except OSError:
            continue
    return False


# Below this much room for the user, a file system counts as full: SQLite fails there in
# ways that look like a place that cannot hold an index (it cannot open its WAL).
FULL_BELOW = 1 << 20


def out_of_room(path: os.PathLike[str] | str) -> bool:
    """Whether the file system holding `path` has (all but) no room left for the user, or
    none at all: mounted read-only."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return bool(st.f_flag & os.ST_RDONLY) or st.f_bavail * st.f_frsize < FULL_BELOW


def folder_error(path: str, e: OSError) -> MemoError:
    """What an OSError met while reaching the folder `path` means for the user."""
    if out_of_files(e):
        return too_many_files(path)
    if isinstance(e, FileNotFoundError):
        return PathNotFoundError("path.gone", path=path)
    if e.errno in _LINK_ERRORS:
        return FolderChangedError("path.changed_link", path=path)
    return FolderChangedError("path.cannot_open", path=path, reason=e)


# -- openat2 (Linux ≥ 5.6) ------------------------------------------------------------------

_SYS_OPENAT2 = 437  # one number on every Linux architecture (the unified syscall table)
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08


class _OpenHow(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


def _load_openat2() -> ctypes.CDLL | None:
    """libc, when the kernel has openat2 and lets memo call it (containers may forbid it)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = _call_openat2(libc, -100, b"/", DIR_FLAGS, _RESOLVE_NO_SYMLINKS)  # AT_FDCWD
    except (OSError, AttributeError):
        return None
    os.close(fd)
    return libc


def _call_openat2(
    libc: ctypes.CDLL, dirfd: int, path: bytes, flags: int, resolve: int, mode: int = 0
) -> int:
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, resolve)  # else EINVAL
    fd = int(
        libc.syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_long(dirfd),
            ctypes.c_char_p(path),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
    )
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), os.fsdecode(path))
    return fd


_OPENAT2 = _load_openat2()


def has_openat2() -> bool:
    """Whether lookups below a folder are done by the kernel in one `openat2` call."""
    return _OPENAT2 is not None


def _by_kernel(dirfd: int, path: str, flags: int, resolve: int, mode: int = 0) -> int | None:
    """`path` opened by the kernel with no symlink anywhere on the way (and with `resolve`);
    None where that cannot decide (no openat2, a symlink met, a rename racing `..`)."""
    if _OPENAT2 is None:
        return None
    try:
        return _call_openat2(_OPENAT2, dirfd, os.fsencode(path), flags, resolve, mode)
    except OSError as e:
        if e.errno in _LINK_ERRORS | {errno.EXDEV, errno.EAGAIN, errno.ENOSYS, errno.EPERM}:
            return None  # memo walks it itself: follows what may be followed, or refuses
        raise


# -- opening ------------------------------------------------------------------------------


def open_dir(path: str | os.PathLike[str]) -> int:
    """A descriptor of the folder at the absolute, symlink-free `path`, opened one name at a
    time from `/` without following any symlink: if a folder on the way was swapped for a
    symlink since the path was resolved, this fails (ELOOP/ENOTDIR) instead of following it."""
    raw = os.fspath(path)
    fd = _by_kernel(-100, raw, DIR_FLAGS, _RESOLVE_NO_SYMLINKS)  # -100: AT_FDCWD
    if fd is not None:
        return fd
    fd = os.open("/", DIR_FLAGS)
    try:
        for name in raw.split(os.sep):
            if name:
                fd = _step(fd, os.open(name, DIR_FLAGS, dir_fd=fd))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _step(old: int, new: int) -> int:
    os.close(old)
    return new


def open_below(
    dirfd: int, root_path: str, rel: str, flags: int = READ_FLAGS, mode: int = 0o644
) -> int:
    """`rel` ('/'-separated) below the folder `dirfd` (whose real path is `root_path`),
    opened with `flags` (and `mode`, if it is created). Symlinks are followed only while
    they stay below that folder; anything else is an `Escape`, whatever lies behind it."""
    flags |= os.O_NOFOLLOW  # the last name too: a link there is read and walked by memo
    fd = _by_kernel(dirfd, rel, flags, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS, mode)
    if fd is not None:
        return fd
    todo = [p for p in reversed(rel.split("/")) if p not in ("", ".")]
    if not todo:
        return os.open(".", flags | os.O_DIRECTORY, dir_fd=dirfd)
    stack = [os.dup(dirfd)]  # the folders from the root down to where the walk is
    links = 0
    try:
        while todo:
            name = todo.pop()
            if name == "..":
                if len(stack) == 1:
                    raise Escape(rel)
                os.close(stack.pop())
                continue
            last = not todo
            try:
                fd = os.open(name, flags if last else DIR_FLAGS, mode, dir_fd=stack[-1])
            except OSError as e:
                if e.errno not in _LINK_ERRORS:
                    raise
                target = _link_target(name, stack[-1], e)
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), rel) from e
                if target.startswith("/"):  # absolute: only a path below the root itself
                    inner = _relative_to(target, root_path)
                    if inner is None:
                        raise Escape(rel) from e
                    while len(stack) > 1:
                        os.close(stack.pop())
                    target = inner
                todo.extend(p for p in reversed(target.split("/")) if p not in ("", "."))
                continue
            if last:
                return fd
            stack.append(fd)
        return os.open(".", flags | os.O_DIRECTORY, dir_fd=stack[-1])  # rel ended in '..'
    finally:
        for fd in stack:
            os.close(fd)


def _link_target(name: str, dirfd: int, error: OSError) -> str:
    """What the symlink `name` in `dirfd` points to; `error` again when it is no symlink."""
    try:
        return os.readlink(name, dir_fd=dirfd)
    except OSError:
        raise error from None  # EINVAL: a real folder or file after all (or swapped back)


def _relative_to(target: str, root_path: str) -> str | None:
    """`target` below `root_path` by name, as a relative path ('' for the root itself)."""
    target = os.path.normpath(target)
    if target == root_path:
        return ""
    prefix = root_path.rstrip("/") + "/"
    return target[len(prefix) :] if target.startswith(prefix) else None


def read_fd(fd: int, limit: int, name: str) -> tuple[bytes, int]:
    """At most `limit` bytes of the open file `fd` and its size: only a regular file (a
    FIFO or device swapped in is refused, never read)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(f"{name} is not a regular file")
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks), st.st_size


class Folder:
    """A folder opened by descriptor, and the files below it reached only through it.

    `path` must be absolute and symlink-free (a confined real path); opening fails if it is
    not a folder reached without symlinks now. Use as a context manager, or `close()`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.fd = open_dir(self.path)
        try:
            st = os.fstat(self.fd)
        except BaseException:
            os.close(self.fd)
            raise
        self.identity = identity(st)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self, rel: str, flags: int = READ_FLAGS, mode: int = 0o644) -> int:
        """A descriptor of `rel` below this folder (symlinks followed only inside it)."""
        return open_below(self.fd, self.path, rel, flags, mode)

    def open_dir(self, rel: str) -> int:
        return self.open(rel, DIR_FLAGS) if rel.strip("/") else os.dup(self.fd)

    def read(self, rel: str, limit: int) -> tuple[bytes, int]:
        """At most `limit` bytes of the regular file `rel` below this folder, and its size."""
        try:
            fd = self.open(rel)
        except OSError as e:
            if e.errno == errno.ENXIO:  # a socket (or a device without a driver)
                raise NotRegularFile(f"{rel} is not a regular file") from e
            raise
        try:
            return read_fd(fd, limit, rel)
        finally:
            os.close(fd)

    def stat(self, rel: str) -> os.stat_result:
        """The stat of what `rel` leads to (symlinks followed only inside this folder)."""
        fd = self.open(rel)  # non-blocking: a FIFO opens at once, and is only looked at
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)


def listing(fd: int) -> list[os.DirEntry[str]]:
    """The entries of the open folder `fd` (their `stat()` is taken relative to it)."""
    with os.scandir(fd) as it:
        return list(it)
