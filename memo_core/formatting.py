"""The texts a user reads, shared by the CLI and the MCP tools (SPEC "Tool texts").

The engine answers with data (hits, statuses, notices, file notes); every word a user sees
is chosen here, once, for both front ends.
"""

from __future__ import annotations

import dataclasses
import errno
import os
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from memo_core.results import SearchResults
from memo_core.text.escapes import for_terminal, shown
from memo_core.values import CUT, FileNote, Notice, NoticeKind

if TYPE_CHECKING:  # annotations only: formatting stays light to import (memo-mcp's start)
    from memo_core.files.notes import NoteLines, NoteText
    from memo_core.index.indexer import RefreshStats
    from memo_core.results import ChangeReport, CollectionStatus, Hit

NO_HITS = "ничего не найдено"
FILE_NOTE_TEXTS = {
    FileNote.EMPTY: "empty: nothing to search",
    FileNote.BINARY: "skipped: binary data",
    FileNote.UNREADABLE: "skipped: unreadable",
    FileNote.SPECIAL: "skipped: not a regular file",
    FileNote.CUT: "cut: indexed only in part",
}

_NOTICE_TEXTS = {
    NoticeKind.MODEL_UNAVAILABLE: "модель недоступна ({detail}); ответ только по словам",
    NoticeKind.REBUILDING: "{where}индекс перестраивается; ответ по прежнему индексу",
    NoticeKind.BUSY: "{where}индекс обновляется другим процессом; ответ по последнему снимку",
    NoticeKind.OTHER_MODEL: "{where}векторы индекса от другой модели; там ответ по словам",
    NoticeKind.UNREADABLE_FOLDER: "{where}папку {detail} не прочитать; её заметки оставлены "
    "в индексе как были",
    NoticeKind.REFRESH_FAILED: "{where}обновление индекса не удалось ({detail}); ответ по "
    "последнему снимку",
}


def notice_text(n: Notice) -> str:
    where = f"{shown(n.collection)}: " if n.collection else ""
    if n.kind is NoticeKind.INDEXING:
        # Files not yet counted (a refresh waiting its turn, or still walking): no "0 of 0".
        done = f"{n.done} из {n.total} файлов" if n.total else "файлы ещё считаются"
        return f"{where}индексация: {done}; ответ по уже проиндексированным"
    if n.kind is NoticeKind.NOT_INDEXED:
        more = n.total - len(n.folders)
        named = ", ".join(map(shown, n.folders)) + (f" и ещё {more}" if more > 0 else "")
        return (
            f"{where}пропущено папок с заметками без индекса: {n.total} ({named}); memo сам "
            f"не создаёт столько индексов: ищите в одной из них или проиндексируйте все: "
            f"`{n.detail}`"
        )
    if n.kind is NoticeKind.EMBEDDING:
        return (
            f"{where}векторы: {n.done} из {n.total} фрагментов; "
            "поиск по смыслу пока по части заметок"
        )
    if n.kind is NoticeKind.REBUILT:
        why = (
            f"изменились параметры ({shown(n.detail)})"
            if n.detail
            else "индекс от прежней версии memo"
        )
        return f"{where}индекс перестроен заново: {why}"
    return _NOTICE_TEXTS[n.kind].format(where=where, detail=shown(n.detail))


def file_note_text(note: FileNote, detail: str = "") -> str:
    return FILE_NOTE_TEXTS[note] + (f" ({detail})" if detail else "")


def _shown_path(path: str, base: str | None) -> str:
    if base:
        rel = os.path.relpath(path, base)
        if not rel.startswith(".."):
            return rel
    return path


def format_hits(results: SearchResults, base: str | None = None, *, terminal: bool = False) -> str:
    """`<path>:<line>  <heading>\\n<text>\\n` for each hit, separated by blank lines.

    `base`: show paths relative to this folder when they lie inside it (the CLI passes the
    working directory); otherwise absolute paths, which any client can open. Paths are
    always `shown`; `terminal`: headings and passages are made safe to print too. A hit
    that carries its `explain` gets one more line, indented: `explain_text`.
    """
    blocks = [f"({notice_text(n)})\n" for n in results.notices]
    blocks += [_hit_block(h, base, terminal) for h in results]
    if not results:
        blocks.append(NO_HITS + "\n")
    if results.next_offset is not None:
        blocks.append(_more_line(results, len(results)))
    return "\n".join(blocks)


def _hit_block(h: Hit, base: str | None, terminal: bool) -> str:
    heading, text = (shown(h.heading), for_terminal(h.text)) if terminal else (h.heading, h.text)
    why = f"  {explain_text(h)}\n" if h.explain is not None else ""
    return f"{shown(_shown_path(h.path, base))}:{h.line}  {heading}\n{text}\n{why}"


def _more_line(results: SearchResults, shown_hits: int) -> str:
    """The answer's last line when more hits exist: which were shown, where the next page
    starts (the `offset` argument of memo_search, `--offset` of `memo search`)."""
    first, after = results.offset + 1, results.offset + shown_hits
    which = f"показаны {first}–{after}" if after > first else f"показан {first}"
    return f"({which}; есть ещё: следующая страница — offset {after})\n"


def paged(page: SearchResults, more: bool, max_chars: int) -> SearchResults:
    """The hits of `page` that fit `max_chars` as `format_hits` writes them for a client
    (absolute paths), best first: fewer hits rather than a cut, but at least the first
    (its text cut at a line end, or its one line cut, when even it alone does not fit).
    `more`: hits exist beyond `page`; the result's `next_offset` follows its last hit
    wherever hits were left out or exist beyond."""
    head = [f"({notice_text(n)})\n" for n in page.notices]
    sizes = [len(_hit_block(h, None, False)) for h in page]

    def fitted(n: int) -> SearchResults:
        later = more or n < len(page)
        return SearchResults(
            page[:n],
            page.mode,
            page.notices,
            offset=page.offset,
            next_offset=page.offset + n if later else None,
        )

    def size(n: int) -> int:
        parts = [*map(len, head), *sizes[:n]]
        if n == 0:
            parts.append(len(NO_HITS) + 1)
        if more or n < len(page):
            parts.append(len(_more_line(page, n)))
        return sum(parts) + len(parts) - 1  # the blank lines between the blocks

    n = len(page)
    while n > 1 and size(n) > max_chars:
        n -= 1
    over = size(n) - max_chars
    if n == 0 or over <= 0:
        return fitted(n)
    first = page[0]
    kept = first.text[: max(0, len(first.text) - over)]
    if "\n" in kept:
        kept = kept[: kept.rfind("\n")]  # whole lines
    else:
        kept = kept[: max(0, len(kept) - len(CUT))] + CUT
    # The lines left out are the last ones (the first may start at its heading's line).
    end_line = first.end_line - (first.text.count("\n") - kept.count("\n"))
    cut = dataclasses.replace(first, text=kept, end_line=end_line)
    result = fitted(1)
    result[0] = cut
    return result


def explain_text(h: Hit) -> str:
    """Why a hit ranks where it does, on one line, from its `explain` (which must be set):
    the score's sum in hybrid, then each side's figures and the weight's origin (4
    significant digits: BM25 over a few chunks is tiny, FTS5's IDF floor)."""
    e = h.explain
    assert e is not None
    words = (
        f"слова: BM25 {e.bm25:.4g} × название {e.naming:.4g} + близость {e.proximity:.4g}, "
        f"× масштаб {e.scale:.4g} = {e.lex:.4g}"
        if e.bm25 is not None and e.lex is not None
        else "слова: не нашли"
    )
    meaning = f"смысл: косинус {e.vec:.4g}" if e.vec is not None else "смысл: не нашли"
    w, lex_n, vec_n = e.dense_weight, e.lex_norm, e.vec_norm
    if w is None or lex_n is None or vec_n is None:  # lex or vec mode: one side's own score
        side = words if "lex" in h.found_by else meaning
        return f"почему: итог {h.score:.4g}; {side}"
    origin = f"по силе слов {e.strength:.4g}" if e.strength is not None else "постоянный"
    return (
        f"почему: итог {h.score:.4g} = {1 - w:.4g} × слова {lex_n:.4g} + {w:.4g} × смысл "
        f"{vec_n:.4g}; {words}; {meaning}; вес смысла {w:.4g} {origin}"
    )


def search_data(results: SearchResults, *, printable: bool = False) -> dict[str, object]:
    """Search results as data (`memo search --json`, memo_search's structuredContent):
    each hit's fields, `explain` among them only where the search was asked to explain,
    and `next_offset` (None: no more hits). `printable`: names as `shown` writes them (JSON
    any client decodes); else exact, bytes that are not UTF-8 as surrogates."""
    name = shown if printable else str
    hits = []
    for h in results:
        data = dataclasses.asdict(h)
        data |= {"path": name(h.path), "relpath": name(h.relpath)}
        data |= {"collection": name(h.collection), "found_by": list(h.found_by)}
        if h.explain is None:
            del data["explain"]
        hits.append(data)
    return {
        "mode": results.mode,
        "notices": [notice_text(n) for n in results.notices],
        "hits": hits,
        "next_offset": results.next_offset,
    }


def iso_time(ts: float | None) -> str:
    if ts is None:
        return "нет"
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def format_status(statuses: Sequence[CollectionStatus]) -> str:
    lines = []
    for s in statuses:
        line = f"{shown(s.root)}: файлов {s.files}, чанков {s.chunks}, "
        line += f"индекс {iso_time(s.updated_at)}"
        if s.pending:  # the index is not complete: say how much is still to come
            line += f", ещё не проиндексировано {s.pending}"
        if s.empty:
            line += f", пустых {s.empty}"
        if s.skipped:
            line += f", пропущено файлов {s.skipped}"
        if s.chunks_without_vectors:
            line += f", без векторов {s.chunks_without_vectors}"
        if s.unreadable_folders:
            line += f", нечитаемых папок {len(s.unreadable_folders)}"
        if s.ignored:
            line += f", игнорируется {s.ignored}"
        if s.indexing is not None:
            n = s.indexing
            what = "индексация" if n.kind is NoticeKind.INDEXING else "расчёт векторов"
            unit = "файлов" if n.kind is NoticeKind.INDEXING else "фрагментов"
            line += f", идёт {what}" + (f": {n.done} из {n.total} {unit}" if n.total else "")
        if s.refresh_error is not None:
            line += f", обновление не удалось ({shown(s.refresh_error)})"
        line += f", отпечаток {s.fingerprint}, проверено {iso_time(s.refreshed_at)}"
        if s.location_note:
            line += f" ({shown(s.location_note)})"
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
        f"{shown(path)}: новых {stats.added}, изменённых {stats.changed}, "
        f"удалённых {stats.deleted}; векторов {stats.chunks_embedded} ({seconds:.2f} с)"
    )


def format_changes(report: ChangeReport) -> str:
    """A change report for a reader: counts, then `+ path`, `~ path`, `- path` (a delta) or
    the paths (a full listing), every one of them: the answer is the whole list."""
    since = shown(report.since or "")  # a client's words, echoed
    if report.mode == "delta":
        head = (
            f"изменения с {since}: добавлено {len(report.added)}, "
            f"изменено {len(report.changed)}, удалено {len(report.removed)}"
        )
        lines = [f"+ {shown(p)}" for p in report.added]
        lines += [f"~ {shown(p)}" for p in report.changed]
        lines += [f"- {shown(p)}" for p in report.removed]
    else:
        why = (
            f"отпечаток {since} неизвестен или устарел, поэтому все заметки"
            if report.reason == "unknown_fingerprint"
            else "все заметки"
        )
        head = f"{why}: {len(report.files)}"
        lines = [shown(p) for p in report.files]
    notices = [f"({notice_text(n)})" for n in report.notices]
    return "\n".join([*notices, f"{head}; отпечаток сейчас {report.fingerprint}", *lines]) + "\n"


def changes_data(report: ChangeReport) -> dict[str, object]:
    """A change report as data (MCP's structuredContent, `memo changes --json`)."""
    data: dict[str, object] = {"mode": report.mode, "from": report.since, "to": report.fingerprint}
    if report.mode == "delta":
        for kind in ("added", "changed", "removed"):
            data[kind] = [shown(p) for p in getattr(report, kind)]
    else:
        data |= {"files": [shown(p) for p in report.files], "reason": report.reason}
    return data


def note_text(note: NoteText, where: str) -> str:
    """A note as `memo://note` serves it: its text, and when it was cut, a last line that
    says so and where the rest is (`where`: the note's path)."""
    if not note.cut:
        return note.text
    return note.text + f"\n{_cut_line(note, where)}\n"


def _cut_line(note: NoteText, where: str) -> str:
    return (
        f"<!-- memo: cut here, the first {note.kept} of {note.size} bytes; "
        f"the rest is in {shown(where)} -->"
    )


def format_read(r: NoteLines) -> str:
    """Lines of a note for a reader (`memo_read`, `memo read`): a head line naming the note,
    the lines shown and how many it has (a span past the end said so, not refused); then
    each line as an editor shows it: its number right-aligned, a tab, the line. Read up to a
    cut, the lines end with the line `memo://note` ends the note with."""
    where = shown(r.where)
    last = r.first + len(r.lines) - 1
    first, asked_last = r.asked
    asked = f"с {first}" if asked_last is None else f"{first}–{asked_last}"
    if r.lines:
        head = f"{where}: строки {r.first}–{last} из {r.total}"
        if asked_last is not None and asked_last > last:
            head += f" (просили {asked}: дальше конец заметки)"
    elif r.total:
        head = f"{where}: за концом заметки (просили {asked}, а строк в ней {r.total})"
    else:
        head = f"{where}: заметка пуста"
    if r.note.cut:
        head += f"; заметка обрезана: прочитаны первые {r.note.kept} из {r.note.size} байт"
    width = len(str(last))
    body = [f"{n:>{width}}\t{line}" for n, line in enumerate(r.lines, r.first)]
    if r.note.cut and last == r.total:
        body.append(_cut_line(r.note, r.where))
    return "\n".join([head, *body]) + "\n"


# -- memo-mcp --http: why it does not start ------------------------------------------------


def listen_failed_text(address: str, error: OSError) -> str:
    """Why `memo-mcp --http` cannot listen on `address` (HOST:PORT), and, for a port in
    use, what to do."""
    if error.errno == errno.EADDRINUSE:
        return (
            f"cannot listen on {address}: address already in use (another memo-mcp?): stop "
            "the server that holds it, or choose another port (--port, or MEMO_HTTP_PORT)"
        )
    return f"cannot listen on {address}: {error.strerror or error}"


def empty_token_text(variable: str) -> str:
    """`variable` (MEMO_TOKEN) is set to nothing: not taken to mean "no token"."""
    return (
        f"{variable} is set but empty: put a token in it (for example "
        f"{variable}=$(openssl rand -hex 24)), or unset it to serve without a token"
    )
