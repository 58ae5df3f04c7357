"""The reader's language, and every text a user reads, keyed: the engine's own (its errors,
notices' details, install steps: `memo_core.messages`) and the presentation's (`answers`:
what `formatting` writes; `fronts`: the CLI's and the MCP server's own words), each
`key: (Russian, English)` with the same `{placeholders}` in both.

A `Lang` words a key, or a `Message` (a MemoError's too), its parameters worded alike (so no
English detail sits inside a Russian sentence). There is no module-wide language: each front
end chooses one (`user_language`) and passes it along.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from memo_core import ENGINE_TEXTS, Message, error_text, os_reason
from memo_text import answers, fronts

TEXTS: Mapping[str, tuple[str, str]] = {**ENGINE_TEXTS, **answers.TEXTS, **fronts.TEXTS}


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
            return self.word(error_text(value))
        return str(value)

    def _param(self, value: object) -> Any:
        # Numbers and plain strings stay as they are, for format specs (`{seconds:.1f}`)
        # and conversions (`{name!r}`) in the templates.
        return self.word(value) if isinstance(value, (Message, BaseException)) else value


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
