"""The texts a user reads, shared by the CLI and the MCP tools (SPEC "Tool texts").

The engine answers with data (hits, statuses, notices, file notes); every word a user sees
is chosen here, once, for both front ends.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime

from .indexer import RefreshStats
from .results import CollectionStatus, SearchResults
from .values import FileNote, Notice, NoticeKind

NO_HITS = "ничего не найдено"

FILE_NOTE_TEXTS = {
    FileNote.EMPTY: "skipped: empty",
    FileNote.BINARY: "skipped: binary data",
    FileNote.UNREADABLE: "skipped: unreadable",
    FileNote.CUT: "cut: indexed only in part",
}

_NOTICE_TEXTS = {
    NoticeKind.MODEL_UNAVAILABLE: "модель недоступна ({detail}); ответ только по словам",
    NoticeKind.REBUILDING: "{where}индекс перестраивается; ответ по прежнему индексу",
    NoticeKind.BUSY: "{where}индекс обновляется другим процессом; ответ по последнему снимку",
    NoticeKind.OTHER_MODEL: "{where}векторы индекса от другой модели; там ответ по словам",
    NoticeKind.UNREADABLE_FOLDER: "{where}папку {detail} не прочитать; её заметки оставлены "
    "в индексе как были",
}


def notice_text(n: Notice) -> str:
    where = f"{n.collection}: " if n.collection else ""
    if n.kind is NoticeKind.REBUILT:
        why = f"изменились параметры ({n.detail})" if n.detail else "индекс от прежней версии memo"
        return f"{where}индекс перестроен заново: {why}"
    return _NOTICE_TEXTS[n.kind].format(where=where, detail=n.detail)


def file_note_text(note: FileNote, detail: str = "") -> str:
    return FILE_NOTE_TEXTS[note] + (f" ({detail})" if detail else "")


def _shown_path(path: str, base: str | None) -> str:
    if base:
        rel = os.path.relpath(path, base)
        if not rel.startswith(".."):
            return rel
    return path


def format_hits(results: SearchResults, base: str | None = None) -> str:
    """`<path>:<line>  <heading>\\n<text>\\n` for each hit, separated by blank lines.

    `base`: show paths relative to this folder when they lie inside it (the CLI passes the
    working directory); otherwise absolute paths, which any client can open.
    """
    blocks = [f"({notice_text(n)})\n" for n in results.notices]
    blocks += [f"{_shown_path(h.path, base)}:{h.line}  {h.heading}\n{h.text}\n" for h in results]
    if not results:
        blocks.append(NO_HITS + "\n")
    return "\n".join(blocks)


def iso_time(ts: float | None) -> str:
    if ts is None:
        return "нет"
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def format_status(statuses: Sequence[CollectionStatus]) -> str:
    lines = []
    for s in statuses:
        line = f"{s.root}: файлов {s.files}, чанков {s.chunks}, индекс {iso_time(s.updated_at)}"
        if s.skipped:
            line += f", пропущено файлов {s.skipped}"
        if s.chunks_without_vectors:
            line += f", без векторов {s.chunks_without_vectors}"
        line += f", отпечаток {s.fingerprint}, проверено {iso_time(s.refreshed_at)}"
        if s.location_note:
            line += f" ({s.location_note})"
        lines.append(line)
    return "\n".join(lines)


def format_reindex(files: int) -> str:
    return f"переиндексировано файлов: {files}"


def format_refresh(stats: RefreshStats) -> str:
    """One line on what a refresh did (`memo index`, `memo watch`)."""
    return (
        f"файлов: новых {stats.added}, изменённых {stats.changed}, удалённых {stats.deleted}; "
        f"чанков записано {stats.chunks_written}, векторов посчитано {stats.chunks_embedded}; "
        f"{stats.seconds:.1f} с"
    )


def format_update(path: str, stats: RefreshStats, seconds: float) -> str:
    """One line on a watched folder's update (`memo watch`)."""
    return (
        f"{path}: новых {stats.added}, изменённых {stats.changed}, удалённых {stats.deleted}; "
        f"векторов {stats.chunks_embedded} ({seconds:.2f} с)"
    )
