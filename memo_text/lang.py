"""The reader's language, and every text a user reads, keyed: the engine's own (its errors,
notices' details, install steps: `memo_core.messages`) and the presentation's (`answers`:
what `formatting` writes; `fronts`: the CLI's and the MCP server's own words), each
`key: (Russian, English)` with the same `{placeholders}` in both.

A `Lang` words a key, or a `Message` (a MemoError's too), its parameters worded alike (so no
English detail sits inside a Russian sentence). There is no module-wide language: each front
end chooses one (`user_language`) and passes it along.
"""

from __future__ import annotations

import logging
import sys
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
        return template.format_map({k: self.word_param(v) for k, v in params.items()})

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

    def word_param(self, value: object) -> Any:
        """A template's or a log line's argument: a Message or an exception worded; numbers
        and plain strings as they are, for format specs (`{seconds:.1f}`, `%.1f`) and
        conversions (`{name!r}`)."""
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


class _WordedLines(logging.Handler):
    """memo's log lines on stderr (the stream of the moment: a test's capture, a redirect),
    a Message or an error among a record's arguments worded in the reader's language."""

    def __init__(self, lang: Lang) -> None:
        super().__init__(logging.WARNING)
        self.lang = lang

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if isinstance(record.args, tuple):
                record = logging.makeLogRecord(
                    {**record.__dict__, "args": tuple(map(self.lang.word_param, record.args))}
                )
            print(self.format(record), file=sys.stderr, flush=True)
        except Exception:  # logging's own rule: a line that cannot be said never raises
            self.handleError(record)


def word_logs(lang: Lang) -> None:
    """Say the engine's log lines (`memo` logger, warnings and errors) on stderr in `lang`,
    in place of Python's last-resort English; called once by each front end, again only
    to change the language (a test's main() after another's)."""
    logger = logging.getLogger("memo")
    for old in [h for h in logger.handlers if isinstance(h, _WordedLines)]:
        logger.removeHandler(old)
    logger.addHandler(_WordedLines(lang))
