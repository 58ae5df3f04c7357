"""Names and passages as any client may print them: control characters and bytes that are
not UTF-8 written as escapes. Every front end and every log line shows a name through here."""

from __future__ import annotations

import re

# C0 and C1 control characters and DEL: a terminal obeys them (\x1b[2J clears the screen,
# \x1b]0;…\x07 retitles the window), and a newline in a name could forge a hit line.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def shown(text: str) -> str:
    """`text` with bytes that are not UTF-8 (surrogates from the OS) and every control
    character written as escapes (`\xff`, `\n`, `\x1b`): for names and paths, in every
    front end, so that one name is always one line and any client can print it."""
    if text.isprintable():
        return text
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(_escape, text)


def for_terminal(text: str) -> str:
    """A passage as a terminal may print it: control characters escaped, but for newlines
    and tabs; bytes that are not UTF-8 escaped too."""
    if text.isprintable():
        return text
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL_BUT_LINES.sub(_escape, text)
