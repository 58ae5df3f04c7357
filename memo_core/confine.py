"""Which folders memo may touch: a path chosen by a language model must stay inside them."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .discovery import resolve_path
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


def confine(path: str, roots: list[Path]) -> Path:
    """The real path of `path` (~, relative, .., symlinks resolved), if inside a root.

    The roots are checked before the path's existence, so a refusal says nothing about
    what exists outside them.
    """
    try:
        real = Path(os.path.realpath(os.path.expanduser(path)))
    except (ValueError, RuntimeError):
        real = None  # NUL bytes, ~nosuchuser: resolve_path explains
    if real is not None and any(is_within(real, r) for r in roots):
        return resolve_path(path)
    if real is None:
        resolve_path(path)
    names = ", ".join(str(r) for r in roots)
    raise OutsideRootsError(
        f"{path} is outside the folders memo may use ({names}); "
        "add it with MEMO_ROOTS or --root when starting memo-mcp"
    )
