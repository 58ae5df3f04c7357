"""The environment variables memo reads, each read here and nowhere else: its name, its
default and how its value is taken, so a setting has one meaning wherever it is used."""

from __future__ import annotations

import os
from pathlib import Path

MODEL_DIR = "MEMO_MODEL_DIR"  # a model directory to use instead of an installed model
MODEL = "MEMO_MODEL"  # which registry model memo uses (`memo model info` lists them)
CACHE_DIR = "MEMO_CACHE_DIR"  # where models and indexes that cannot live in a folder go
ROOTS = "MEMO_ROOTS"  # the folders memo-mcp may use (os.pathsep-separated)
REFRESH_BUDGET = "MEMO_REFRESH_BUDGET"  # seconds a search waits for its refresh
LANG = "MEMO_LANG"  # the language of every text a user reads: ru (the default) or en


def model_dir() -> Path | None:
    """MEMO_MODEL_DIR, `~` expanded; None when it is not set (or empty)."""
    value = os.environ.get(MODEL_DIR)
    return Path(value).expanduser() if value else None


def model_name() -> str | None:
    """MEMO_MODEL; None when it is not set (or empty)."""
    return os.environ.get(MODEL) or None


def cache_dir() -> Path:
    """MEMO_CACHE_DIR, else $XDG_CACHE_HOME/memo or ~/.cache/memo (memo runs on POSIX only)."""
    if value := os.environ.get(CACHE_DIR):
        return Path(value).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "memo"


def roots() -> str:
    """MEMO_ROOTS as given ('' when not set)."""
    return os.environ.get(ROOTS, "")


def language() -> str | None:
    """MEMO_LANG as given (None when not set); `catalogue.user_language` reads it."""
    return os.environ.get(LANG)


def refresh_budget(default: float) -> float:
    """MEMO_REFRESH_BUDGET in seconds; `default` when it is not set or not a number ≥ 0."""
    try:
        value = float(os.environ.get(REFRESH_BUDGET, default))
    except ValueError:
        return default
    return value if value >= 0 else default
