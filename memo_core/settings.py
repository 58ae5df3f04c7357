"""The environment variables memo reads, each read here and nowhere else: its name, its
default and how its value is taken, so a setting has one meaning wherever it is used.

One rule for every number: unset or blank is the default; anything else must be a number
within the variable's range, or it is a SettingError naming the variable (a value memo
cannot use is said, never quietly replaced). Each reader takes `env` (default: the
process's environment), so a caller can judge another environment."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path

from memo_core.errors import SettingError
from memo_core.messages import Message

MODEL_DIR = "MEMO_MODEL_DIR"  # a model directory to use instead of an installed model
MODEL = "MEMO_MODEL"  # which registry model memo uses (`memo model info` lists them)
CACHE_DIR = "MEMO_CACHE_DIR"  # where models and indexes that cannot live in a folder go
ROOTS = "MEMO_ROOTS"  # the folders memo-mcp may use (os.pathsep-separated)
REFRESH_BUDGET = "MEMO_REFRESH_BUDGET"  # seconds a search waits for its refresh
LANG = "MEMO_LANG"  # the language of every text a user reads: ru (the default) or en
HTTP_PORT = "MEMO_HTTP_PORT"  # memo-mcp --http's port when --port is not given
HTTP_SESSION_IDLE = "MEMO_HTTP_SESSION_IDLE_S"  # seconds an idle HTTP session lives
HTTP_TIMEOUT = "MEMO_HTTP_TIMEOUT_S"  # seconds for a request's headers, then its body
TOKEN = "MEMO_TOKEN"  # the bearer token memo-mcp --http requires on /mcp
COLUMNS = "COLUMNS"  # the terminal's width, where the shell says it (not memo's own)

Env = Mapping[str, str]


def _env(env: Env | None) -> Env:
    return os.environ if env is None else env


def model_dir() -> Path | None:
    """MEMO_MODEL_DIR, `~` expanded (`~user` of no such user: as written, a folder that is
    not there, which the model's loading says); None when it is not set (or empty)."""
    value = os.environ.get(MODEL_DIR)
    return expanded(value) if value else None


def expanded(value: str | os.PathLike[str]) -> Path:
    """A path a user gave, its leading `~` or `~user` expanded: the one rule for every path
    memo is given (settings, arguments, tools). One whose home cannot be found (`~nouser`)
    stays as written: a place that is not there, as whoever uses it says."""
    try:
        return Path(value).expanduser()
    except RuntimeError:  # "Could not determine home directory"
        return Path(value)


def model_name() -> str | None:
    """MEMO_MODEL; None when it is not set (or empty)."""
    return os.environ.get(MODEL) or None


def cache_dir() -> Path:
    """MEMO_CACHE_DIR, else $XDG_CACHE_HOME/memo or ~/.cache/memo (memo runs on POSIX only)."""
    get = os.environ.get
    return _cache_dir(get(CACHE_DIR), get("XDG_CACHE_HOME"), get("HOME"))


# Discovery asks where an index would be kept in the cache for every folder under a broad
# path (500 project folders: 500 times a search); the answer changes only with these three.
@functools.lru_cache(maxsize=8)
def _cache_dir(memo: str | None, xdg: str | None, home: str | None) -> Path:
    if memo:
        return expanded(memo)
    if xdg:
        return expanded(xdg) / "memo"
    return (Path(home) if home else Path.home()) / ".cache" / "memo"  # no HOME: the user's entry


def roots() -> str:
    """MEMO_ROOTS as given ('' when not set)."""
    return os.environ.get(ROOTS, "")


def columns() -> str | None:
    """COLUMNS as given (None when not set): the width help is laid out at, as argparse
    reads it (`memo_text.WordedParser`)."""
    return os.environ.get(COLUMNS)


def language() -> str | None:
    """MEMO_LANG as given (None when not set); the presentation layer reads it
    (`memo_text.user_language`)."""
    return os.environ.get(LANG)


def number(name: str, default: float, low: float, high: float, env: Env | None = None) -> float:
    """The variable `name` as a number from `low` to `high` (the one rule, above)."""
    raw = _env(env).get(name, "").strip()
    if not raw:
        return default
    try:
        # ASCII digits only: Python also reads "٨٠٨٠" as 8080, and a port or a budget
        # written in another script is more likely a mistake than a choice.
        value = float(raw) if raw.isascii() else float("nan")
    except ValueError:
        value = float("nan")
    if not low <= value <= high:
        raise SettingError(Message("setting.number", variable=name, raw=raw, low=low, high=high))
    return value


def ascii_int(text: str) -> int:
    """A whole number as a command line writes it, in ASCII digits (as `number`): argparse's
    `type` for every whole-number option (ValueError otherwise, which it says as a bad
    integer)."""
    if not text.isascii():
        raise ValueError(text)
    return int(text)


ascii_int.__name__ = "int"  # argparse names the type in its message: "invalid int value"


def refresh_budget(default: float, env: Env | None = None) -> float:
    """MEMO_REFRESH_BUDGET in seconds (0 to a day); `default` when it is not set."""
    return number(REFRESH_BUDGET, default, 0, 86400, env)


def http_port(env: Env | None = None) -> int | None:
    """MEMO_HTTP_PORT (1 to 65535); None when it is not set."""
    value = number(HTTP_PORT, 0, 1, 65535, env)  # 0: not set
    if value != int(value):
        raw = _env(env)[HTTP_PORT]
        raise SettingError(
            Message("setting.number", variable=HTTP_PORT, raw=raw, low=1, high=65535)
        )
    return int(value) or None


def http_seconds(name: str, default: float, env: Env | None = None) -> float:
    """MEMO_HTTP_SESSION_IDLE_S or MEMO_HTTP_TIMEOUT_S in seconds (a tenth to a day)."""
    return number(name, default, 0.1, 86400, env)


def token(env: Env | None = None) -> str | None:
    """MEMO_TOKEN; None when it is not set. Set to nothing (or spaces) is a token forgotten
    more likely than a choice to have none: an error; so is one that cannot travel in an
    HTTP header (printable ASCII, no spaces)."""
    raw = _env(env).get(TOKEN)
    if raw is None:
        return None
    if not raw.strip():
        raise SettingError(Message("http.empty_token", variable=TOKEN))
    value = raw.strip()
    if not (value.isascii() and value.isprintable() and " " not in value):
        raise SettingError(Message("http.token_ascii", variable=TOKEN))
    return value
