"""Every text a user reads, once, keyed, in Russian (the default) and English (`MEMO_LANG=en`).

The texts live in this package's modules by where they are said (`errors`: the engine's
exceptions; `answers`: what `formatting` writes; `fronts`: the CLI's and the MCP server's
own words); each maps a key to `(Russian, English)`, with the same `{placeholders}` in both.

A `Lang` words a key. A `Message` is a text not yet worded for a reader: it is a `str` (its
English text, which `str()`, logs and repr show), and it keeps its key and parameters so a
front end can word it again in the reader's language, parameters that are Messages, memo's
errors or OS errors included (so no English detail sits inside a Russian sentence). There is
no module-wide language: each front end chooses one (`user_language`) and passes it along.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from enum import Enum
from typing import Any

from memo_core.catalogue import answers, errors, fronts

TEXTS: Mapping[str, tuple[str, str]] = {**errors.TEXTS, **answers.TEXTS, **fronts.TEXTS}

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


class Lang(str, Enum):
    """The language a reader reads: Russian unless MEMO_LANG says English."""

    RU = "ru"
    EN = "en"

    def text(self, key: str, /, **params: object) -> str:
        """The text `key` in this language, its placeholders filled; a parameter that is a
        Message or an exception is worded in this language too."""
        template = TEXTS[key][self is Lang.EN]
        return template.format_map({k: self._param(v) for k, v in params.items()})

    def word(self, value: object) -> str:
        """`value` as a reader of this language reads it: a Message (a MemoError's too) in
        this language, an OS error by its errno, another exception named; else str()."""
        if isinstance(value, Message):
            return self.text(value.key, **value.params)
        if isinstance(value, OSError):
            return self.word(os_reason(value))
        if isinstance(value, BaseException):
            message = value.args[0] if len(value.args) == 1 else None
            if isinstance(message, Message):  # memo's own errors: their message, worded
                return self.word(message)
            text = str(value)
            return f"{type(value).__name__}: {text}" if text else type(value).__name__
        return str(value)

    def _param(self, value: object) -> Any:
        # Numbers and plain strings stay as they are, for format specs (`{seconds:.1f}`)
        # and conversions (`{name!r}`) in the templates.
        return self.word(value) if isinstance(value, (Message, BaseException)) else value


class Message(str):
    """A text for a reader not yet worded in the reader's language: as a `str` its English
    text; `key` and `params` word it in any language (`Lang.word`)."""

    key: str
    params: Mapping[str, object]

    def __new__(cls, key: str, /, **params: object) -> Message:
        self = super().__new__(cls, Lang.EN.text(key, **params))
        self.key, self.params = key, params
        return self

    def __getnewargs_ex__(self) -> tuple[tuple[str], dict[str, object]]:
        # Copied or pickled, a Message is made again from its key and parameters.
        return (self.key,), dict(self.params)


def os_reason(e: OSError) -> str:
    """Why an OS call failed, as a reader reads it: a Message for the errors memo words in
    both languages (permission denied, no space left...), else the OS's own text."""
    key = _ERRNO_KEYS.get(e.errno or 0)
    return Message(key) if key else str(e.strerror or e)


def user_language(raw: str | None) -> tuple[Lang, Message | None]:
    """The language MEMO_LANG's value names (`en`, `EN`, `en_US.UTF-8`: English; unset or
    `ru…`: Russian), and, when it names no language memo speaks, Russian and a warning for
    the front end to print (a misspelt setting must not stop a server an agent started)."""
    code = (raw or "").strip().lower()
    if not code:
        return Lang.RU, None
    for lang in Lang:
        if code == lang.value or code.startswith(
            (lang.value + "_", lang.value + "-", lang.value + ".")
        ):
            return lang, None
    return Lang.RU, Message("lang.unknown", value=raw, known=", ".join(lang.value for lang in Lang))
