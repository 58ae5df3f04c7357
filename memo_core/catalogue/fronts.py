"""The front ends' own words: the `memo` command line (help, usage errors, model lines)
and the MCP server (argument errors, start-up lines); `key: (Russian, English)`."""

from __future__ import annotations

TEXTS: dict[str, tuple[str, str]] = {
    "lang.unknown": (
        "MEMO_LANG={value!r}: такого языка memo не знает (есть {known}); тексты на русском",
        "MEMO_LANG={value!r}: memo does not speak that language (it speaks {known}); "
        "texts are in Russian",
    ),
}
