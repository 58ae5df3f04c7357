"""Which folders memo may touch: a path chosen by a language model must stay inside them."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .discovery import resolve_path
from .errors import OutsideRootsError


def allowed_roots(extra: Iterable[str] = (), env: str | None = None) -> list[Path]:
    """`--root` folders plus `MEMO_ROOTS` (os.pathsep-separated); the home folder if none."""
    raw = [
        *extra,
        *(env if env is not None else os.environ.get("MEMO_ROOTS", "")).split(os.pathsep),
    ]
    roots = [Path(r).expanduser().resolve() for r in raw if r.strip()]
    return roots or [Path.home().resolve()]


def confine(path: str, roots: list[Path]) -> Path:
    """The real path of `path` (~, relative, .., symlinks resolved), if inside a root."""
    real = resolve_path(path)
    if any(real == r or real.is_relative_to(r) for r in roots):
        return real
    names = ", ".join(str(r) for r in roots)
    raise OutsideRootsError(
        f"{path} is outside the folders memo may use ({names}); "
        "add it with MEMO_ROOTS or --root when starting memo-mcp"
    )
