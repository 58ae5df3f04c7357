"""The texts a user reads, shared by the CLI and the MCP tools (SPEC "Tool texts")."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime

from .results import CollectionStatus, SearchResults

NO_HITS = "ничего не найдено"


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
    blocks = [f"({n})\n" for n in results.notices]
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
