"""Names and passages as any client may print them: control characters, format characters
that reorder or hide text, and bytes that are not UTF-8 written as escapes. Every front end
and every log line shows a name through here; `unshown` reads such a name back."""

from __future__ import annotations

import re
import unicodedata

# C0 and C1 control characters and DEL: a terminal obeys them (\x1b[2J clears the screen,
# \x1b]0;…\x07 retitles the window), and a newline in a name could forge a hit line.
# Bidirectional controls: U+202E in `gpj.md` shows `dm.jpg`, a path read backwards
# (the "Trojan Source" characters). Escaped in passages too; other format characters
# (zero-width joiners in emoji, soft hyphens) stay in a passage, where they are text.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROL_BUT_LINES = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}]")


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def _format_or_control(ch: str) -> bool:
    """Whether a name shows `ch` as an escape: every control and format character (Cc,
    Cf: bidirectional controls, zero-width spaces and joiners, the BOM), which show as
    nothing or move what follows."""
    return unicodedata.category(ch) in ("Cc", "Cf")


def shown(text: str) -> str:
    """`text` with bytes that are not UTF-8 (surrogates from the OS) and every control or
    format character written as escapes (`\xff`, `\n`, `\x1b`, `\u202e`): for names and
    paths, in every front end, so that one name is always one line, reads in its order,
    and any client can print it."""
    if text.isprintable():
        return text
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(_escaped(ch) if _format_or_control(ch) else ch for ch in text)


def _escaped(ch: str) -> str:
    r"""A control or format character as an escape; one from U+0080 to U+00FF as `\u00NN`,
    since `\xNN` from there up is an undecodable byte (`unshown` reads it back as one)."""
    if 0x80 <= ord(ch) <= 0xFF:
        return f"\\u{ord(ch):04x}"
    return ch.encode("unicode_escape").decode("ascii")


def for_terminal(text: str) -> str:
    """A passage as a terminal may print it: control characters escaped, but for newlines
    and tabs, and the bidirectional controls that reorder a line; bytes that are not UTF-8
    escaped too."""
    if text.isprintable():
        return text
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL_BUT_LINES.sub(_escape, text)


_ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[ntr])")
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r"}


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code in _SIMPLE:
        return _SIMPLE[code]
    value = int(code[1:], 16)
    # `shown` writes a byte that is not UTF-8 as \x80-\xff: the OS's surrogate for it.
    return chr(0xDC00 + value) if code[0] == "x" and value >= 0x80 else chr(value)


def unshown(text: str) -> str:
    """The name `shown` wrote as `text`: its escapes read back (a byte that is not UTF-8
    as the OS's surrogate), so that a path copied from an answer opens the note it names.
    A name may hold a real backslash: callers try the text as it is first."""
    return _ESCAPE.sub(_unescape, text)
