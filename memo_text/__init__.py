"""memo_text: the presentation layer the front ends (`memo`, `memo-mcp`) share.

The engine (`memo_core`) answers with data and keyed errors; every text a person reads is
worded here, in the reader's language (`Lang`: Russian unless MEMO_LANG says English), from
one table of texts (`lang.TEXTS`: the engine's own and the presentation's), and an answer
is fitted into a reader's budget as that reader reads it (`fit_to_budget`).
"""

from __future__ import annotations

from memo_text.formatting import (
    DEFAULT_MAX_CHARS,
    MAX_CHARS_RANGE,
    WordedParser,
    changes_data,
    char_budget,
    file_note_text,
    fit_to_budget,
    format_changes,
    format_hits,
    format_read,
    format_refresh,
    format_reindex,
    format_status,
    format_update,
    iso_time,
    listen_failed_text,
    note_text,
    notice_text,
    search_data,
    status_data,
)
from memo_text.lang import TEXTS, Lang, user_language, word_logs

__all__ = [
    "DEFAULT_MAX_CHARS",
    "MAX_CHARS_RANGE",
    "TEXTS",
    "Lang",
    "WordedParser",
    "changes_data",
    "char_budget",
    "file_note_text",
    "fit_to_budget",
    "format_changes",
    "format_hits",
    "format_read",
    "format_refresh",
    "format_reindex",
    "format_status",
    "format_update",
    "iso_time",
    "listen_failed_text",
    "note_text",
    "notice_text",
    "search_data",
    "status_data",
    "user_language",
    "word_logs",
]
