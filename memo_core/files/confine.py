"""Which folders memo may touch: a path chosen by a language model must stay inside them."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from memo_core import settings
from memo_core.errors import FolderChangedError, OutsideRootsError, PathNotFoundError
from memo_core.files.discovery import check_dir, missing, resolve_path
from memo_core.files.walker import is_within


def allowed_roots(extra: Iterable[str] = (), env: str | None = None) -> list[Path]:
    """`--root` folders plus `MEMO_ROOTS` (os.pathsep-separated); the home folder if none."""
    env = env if env is not None else settings.roots()
    roots: dict[Path, None] = {}
    for raw in [*extra, *env.split(os.pathsep)]:
        if raw.strip():
            try:
                roots.setdefault(settings.expanded(raw).resolve(), None)
            except RuntimeError as e:  # ~user with no such user
                raise PathNotFoundError("path.root_unresolved", raw=raw, reason=str(e)) from e
    return list(roots) or [Path.home().resolve()]


def confine(path: str, roots: Sequence[Path]) -> Path:
    """The real path of `path` (~, relative, .., symlinks resolved once), if inside a root.

    `..` is taken by name first, as a shell does, so what lies outside the roots on the
    way (`outside/link/../../notes`) is never looked at and cannot change the answer. The
    path is resolved exactly once, and what is checked is what is returned (no second
    resolution a swapped symlink could redirect). The roots are checked before existence,
    so a refusal says nothing about what exists outside them, nor which users exist.
    """
    if not path.strip():
        return resolve_path(path)  # the empty-path error
    expanded = os.path.expanduser(path)
    if expanded.startswith("~"):  # ~user with no such user: like any path outside
        raise outside(path, roots)
    if "\0" in expanded:
        raise missing(path)
    real = real_path(os.path.abspath(expanded))
    if not any(is_within(real, r) for r in roots):
        raise outside(path, roots)
    check_dir(real, path)
    return Path(real)


def real_path(path: str | os.PathLike[str]) -> str:
    """`os.path.realpath`, with a folder swapped while it is resolved (a symlink that is a
    folder by the time it is read) said in memo's terms, not as EINVAL."""
    try:
        return os.path.realpath(path)
    except OSError as e:
        raise FolderChangedError("path.changed_resolving", path=os.fspath(path)) from e


def check_inside(real: Path, roots: Sequence[Path] | None, path: object) -> None:
    """OutsideRootsError unless the resolved `real` lies inside a root (None: anywhere)."""
    if roots is not None and not any(is_within(real, r) for r in roots):
        raise outside(str(path), roots)


def outside(path: str, roots: Sequence[Path]) -> OutsideRootsError:
    names = ", ".join(str(r) for r in roots)
    return OutsideRootsError("path.outside", path=path, roots=names)
