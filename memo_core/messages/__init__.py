"""What the engine says, as keys: a `Message` is a key and its parameters, and an error
carries one. The front ends word it in the reader's language (the presentation layer,
`memo_text`); `str()` of a message is its English text (logs, Python callers).

`TEXTS` holds the engine's own texts, `key: (Russian, English)`: its errors and what they
are made of (paths, notes, scopes, indexes, models, settings), the details it gives in
notices and the steps of a model install. A text ends without a period: it may be put
inside another. The presentation layer adds its own texts (answers, the front ends' words)
and words every key in either language.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping

from memo_core.messages import folders, models

TEXTS: Mapping[str, tuple[str, str]] = {**folders.TEXTS, **models.TEXTS}


# OS errors a user meets, worded in both languages; any other keeps the OS's own text.
_ERRNO_KEYS = {
    errno.EACCES: "os.denied",
    errno.EPERM: "os.denied",
    errno.ENOENT: "os.missing",
    errno.ENOTDIR: "os.not_dir",
    errno.EISDIR: "os.is_dir",
    errno.EIO: "os.io",
    errno.ENOSPC: "os.full",
    errno.EDQUOT: "os.full",
    errno.EROFS: "os.read_only",
    errno.ELOOP: "os.loop",
    errno.ENAMETOOLONG: "os.name_too_long",
    errno.EMFILE: "os.too_many_files",
    errno.ENFILE: "os.too_many_files",
    errno.EEXIST: "os.exists",
}


class Message(str):
    """A text for a reader not yet worded in the reader's language: as a `str` its English
    text (one of the engine's `TEXTS`; a key the presentation layer words stays its key
    here), and `key` and `params` to word it in any language."""

    key: str
    params: Mapping[str, object]

    def __new__(cls, key: str, /, **params: object) -> Message:
        self = super().__new__(cls, _english(key, params))
        self.key, self.params = key, params
        return self

    def __getnewargs_ex__(self) -> tuple[tuple[str], dict[str, object]]:
        # Copied or pickled, a Message is made again from its key and parameters.
        return (self.key,), dict(self.params)


def _english(key: str, params: Mapping[str, object]) -> str:
    texts = TEXTS.get(key)
    if texts is None:
        return key
    return texts[1].format_map({k: _english_of(v) for k, v in params.items()})


def _english_of(value: object) -> object:
    # A parameter that is an error carries its Message: its English text; numbers and plain
    # strings stay as they are, for format specs and conversions in the templates.
    if isinstance(value, OSError):
        return str(os_reason(value))
    if isinstance(value, BaseException):
        return str(error_text(value))
    return value


def error_text(e: BaseException) -> Message | str:
    """An error as a reader reads it: memo's own (a MemoError, or one carrying a Message)
    by its Message, to word in the reader's language; any other named by its type."""
    message = e.args[0] if len(e.args) == 1 else None
    if isinstance(message, Message):
        return message
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def os_reason(e: OSError) -> str:
    """Why an OS call failed, as a reader reads it: a Message for the errors memo words in
    both languages (permission denied, no space left...), else the OS's own text."""
    key = _ERRNO_KEYS.get(e.errno or 0)
    return Message(key) if key else str(e.strerror or e)
