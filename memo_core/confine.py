"""Which folders memo may touch: a path chosen by a language model must stay inside them."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from .discovery import check_dir, missing, resolve_path
from .errors import OutsideRootsError, PathNotFoundError
from .walker import is_within


def allowed_roots(extra: Iterable[str] = (), env: str | None = None) -> list[Path]:
    """`--root` folders plus `MEMO_ROOTS` (os.pathsep-separated); the home folder if none."""
    env = env if env is not None else os.environ.get("MEMO_ROOTS", "")
    roots: dict[Path, None] = {}
    for raw in [*extra, *env.split(os.pathsep)]:
        if raw.strip():
            try:
                roots.setdefault(Path(raw).expanduser().resolve(), None)
            except RuntimeError as e:  # ~user with no such user
                raise PathNotFoundError(f"allowed root {raw!r} cannot be resolved: {e}") from e
    return list(roots) or [Path.home().resolve()]


def confine(path: str, roots: Sequence[Path]) -> Path:
    """The real path of `path` (~, relative, .., symlinks resolved once), if inside a root.

    The path is resolved exactly once, and what is checked is what is returned (no second
    resolution a swapped symlink could redirect). The roots are checked before existence,
    so a refusal says nothing about what exists outside them, nor which users exist.
    """
    if not path.strip():
        return resolve_path(path)  # the empty-path error
    expanded = os.path.expanduser(path)
    if expanded.startswith("~"):  # ~user with no such user: like any path outside
        raise outside(path, roots)
    try:
        real = os.path.realpath(expanded)
    except ValueError as e:  # a NUL byte
        raise missing(path) from e
    if not any(is_within(real, r) for r in roots):
        raise outside(path, roots)
    check_dir(real, path)
    return Path(real)


def check_inside(real: Path, roots: Sequence[Path] | None, path: object) -> None:
    """OutsideRootsError unless the resolved `real` lies inside a root (None: anywhere)."""
    if roots is not None and not any(is_within(real, r) for r in roots):
        raise outside(str(path), roots)


def outside(path: str, roots: Sequence[Path]) -> OutsideRootsError:
    names = ", ".join(str(r) for r in roots)
    return OutsideRootsError(
        f"{path} is outside the folders memo may use ({names}); "
        "add it with MEMO_ROOTS or --root when starting memo-mcp"
    )
