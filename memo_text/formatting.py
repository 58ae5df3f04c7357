"""The texts a user reads, shared by the CLI and the MCP tools.

The engine answers with data (hits, statuses, notices, file notes); every word a user sees
is chosen here, once, for both front ends, from `lang`'s texts, in the reader's language
(`lang`: Russian unless a front end passes the one MEMO_LANG names), and an answer is fitted
into the reader's budget of characters as that reader reads it (`fit_to_budget`).
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import os
import re
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn

from memo_core import (
    CUT,
    ChangeReport,
    CollectionStatus,
    FileNote,
    Hit,
    Message,
    NoteLines,
    NoteText,
    Notice,
    NoticeKind,
    SearchResults,
    for_terminal,
    settings,
    shown,
    whole_number,
)
from memo_text.lang import Lang

if TYPE_CHECKING:  # annotations only: formatting stays light to import (memo-mcp's start)
    from memo_core import RefreshStats

_FILE_NOTE_KEYS = {
    FileNote.EMPTY: "filenote.empty",
    FileNote.BINARY: "filenote.binary",
    FileNote.UNREADABLE: "filenote.unreadable",
    FileNote.SPECIAL: "filenote.special",
    FileNote.CUT: "filenote.cut",
}
# Notices worded from their detail alone; the others count, or choose between two texts.
_NOTICE_KEYS = {
    NoticeKind.MODEL_UNAVAILABLE: "notice.model_unavailable",
    NoticeKind.REBUILDING: "notice.rebuilding",
    NoticeKind.BUSY: "notice.busy",
    NoticeKind.OTHER_MODEL: "notice.other_model",
    NoticeKind.UNREADABLE_FOLDER: "notice.unreadable_folder",
    NoticeKind.REFRESH_FAILED: "notice.refresh_failed",
}


def notice_text(n: Notice, lang: Lang = Lang.RU) -> str:
    where = f"{shown(n.collection)}: " if n.collection else ""
    detail = shown(lang.word(n.detail))  # a reason may be a Message: worded, then escaped
    if n.kind is NoticeKind.INDEXING:
        # Files not yet counted (a refresh waiting its turn, or still walking): no "0 of 0".
        if not n.total:
            return where + lang.text("notice.indexing_uncounted")
        return where + lang.text("notice.indexing", done=n.done, total=n.total)
    if n.kind is NoticeKind.NOT_INDEXED:
        named = _listed(n.folders, n.total, lang)
        return where + lang.text("notice.not_indexed", total=n.total, named=named, command=detail)
    if n.kind is NoticeKind.REFRESH_FAILED and n.total:
        named = _listed(n.folders, n.total, lang)
        return where + lang.text("notice.refresh_failed_in", total=n.total, named=named, why=detail)
    if n.kind is NoticeKind.NOT_SEARCHED:
        named = _listed(n.folders, n.total, lang)
        return where + lang.text("notice.not_searched", total=n.total, named=named, why=detail)
    if n.kind is NoticeKind.EMBEDDING:
        key = "notice.embedding" if n.done else "notice.embedding_none"  # not "part" of none
        return where + lang.text(key, done=n.done, total=n.total)
    if n.kind is NoticeKind.SENTENCES:
        return where + lang.text("notice.sentences", done=n.done, total=n.total)
    if n.kind is NoticeKind.BUSY and n.total:
        return where + lang.text("notice.busy_vectors", done=n.done, total=n.total)
    if n.kind is NoticeKind.REBUILDING and n.total:
        key = _rebuilding_key(n, "notice.rebuilding_files", "notice.rebuilding_vectors")
        return where + lang.text(key, done=n.done, total=n.total)
    if n.kind is NoticeKind.REBUILT:
        if isinstance(n.detail, Message):  # why, not which settings
            return where + lang.text("notice.rebuilt_because", detail=detail)
        if n.detail:
            return where + lang.text("notice.rebuilt_settings", detail=detail)
        return where + lang.text("notice.rebuilt_version")
    return where + lang.text(_NOTICE_KEYS[n.kind], detail=detail)


def _listed(names: Sequence[str], total: int, lang: Lang) -> str:
    """`names`, and how many more of `total` there are."""
    named = ", ".join(map(shown, names))
    more = total - len(names)
    return lang.text("list.and_more", named=named, more=more) if more > 0 else named


def file_note_text(note: FileNote, detail: str = "", lang: Lang = Lang.RU) -> str:
    text = lang.text(_FILE_NOTE_KEYS[note])
    return f"{text} ({lang.word(detail)})" if detail else text


def _shown_path(path: str, base: str | None) -> str:
    if base:
        rel = os.path.relpath(path, base)
        if not rel.startswith(".."):
            return rel
    return path


def format_hits(
    results: SearchResults,
    base: str | None = None,
    *,
    terminal: bool = False,
    lang: Lang = Lang.RU,
) -> str:
    """`<path>:<line>  <heading>\\n<text>\\n` for each hit, separated by blank lines.

    `base`: show paths relative to this folder when they lie inside it (the CLI passes the
    working directory); otherwise absolute paths, which any client can open. Paths are
    always `shown`; `terminal`: headings and passages are made safe to print too. A hit
    that carries its `explain` gets one more line, indented: `explain_text`.
    """
    blocks = [f"({notice_text(n, lang)})\n" for n in results.notices]
    blocks += [_hit_block(h, base, terminal, lang) for h in results]
    if not results:
        blocks.append(none_text(results.notices, lang, results.all_hits) + "\n")
    if results.next_offset is not None:
        blocks.append(_more_line(results, len(results), lang))
    return "\n".join(blocks)


def none_text(notices: list[Notice], lang: Lang = Lang.RU, all_hits: int | None = None) -> str:
    """What an answer without hits says: `ничего не найдено` only when its indexes were
    complete; while files or vectors are still coming, that nothing was found yet among
    what is in (a first index answers before it is done). A page past the last hit
    (`all_hits`: how many there are) says so: something was found, on earlier pages."""
    if all_hits:
        return lang.text("hits.none_past", total=all_hits)
    files = [n for n in notices if n.kind is NoticeKind.INDEXING]
    if files:
        if any(n.total <= 0 for n in files):
            return lang.text("hits.none_yet_uncounted")
        done, total = sum(n.done for n in files), sum(n.total for n in files)
        return lang.text("hits.none_yet_files", done=done, total=total)
    # Vectors being made here, or by another process (a busy notice that counts them).
    vectors = [
        n
        for n in notices
        if n.kind is NoticeKind.EMBEDDING or n.total and n.kind is NoticeKind.BUSY
    ]
    if vectors:
        done, total = sum(n.done for n in vectors), sum(n.total for n in vectors)
        key = "hits.none_yet_vectors" if done else "hits.none_yet_no_vectors"
        return lang.text(key, done=done, total=total)
    installing = [n for n in notices if getattr(n.detail, "key", "") == "model.installing"]
    if installing:
        return lang.text("hits.none_yet_model")
    return lang.text("hits.none")


def _hit_block(h: Hit, base: str | None, terminal: bool, lang: Lang = Lang.RU) -> str:
    heading, text = (shown(h.heading), for_terminal(h.text)) if terminal else (h.heading, h.text)
    also = ""
    if h.also_in:  # copies of this passage, which it stands for (memo_core's search.page)
        paths = ", ".join(shown(_shown_path(p, base)) for p in h.also_in)
        also = f"{lang.text('hits.also_in', paths=paths)}\n"
    why = f"  {explain_text(h, lang)}\n" if h.explain is not None else ""
    return f"{shown(_shown_path(h.path, base))}:{h.line}  {heading}\n{text}\n{also}{why}"


def _more_line(results: SearchResults, shown_hits: int, lang: Lang = Lang.RU) -> str:
    """The answer's last line when more hits exist: which were shown, where the next page
    starts (the `offset` argument of memo_search, `--offset` of `memo search`)."""
    first, after = results.offset + 1, results.offset + shown_hits
    if after > first:
        which = lang.text("hits.shown_range", first=first, last=after)
    else:
        which = lang.text("hits.shown_one", first=first)
    return f"({lang.text('hits.more', shown=which, offset=after)})\n"


# A search answer's text fits this many characters unless asked otherwise (`max_chars`):
# fewer hits, and a line saying where the next page starts, rather than a cut mid-line.
# 6,000: 8 hits of at most EXCERPT_CHARS (600) each, with their `path:line  heading` lines.
DEFAULT_MAX_CHARS = 6000
MAX_CHARS_RANGE = (500, 200_000)  # the budgets a caller may ask for


def char_budget(max_chars: object) -> int:
    """An answer's budget of characters (None: the default), once known to be good."""
    if max_chars is None:
        return DEFAULT_MAX_CHARS
    return whole_number("max_chars", max_chars, *MAX_CHARS_RANGE)


def fit_to_budget(
    page: SearchResults, max_chars: int | None = None, lang: Lang = Lang.RU
) -> SearchResults:
    """The hits of `page` that fit `max_chars` (None: the default budget; else checked,
    InvalidArgumentError) as `format_hits` writes them for a client in `lang` (absolute
    paths), best first: fewer hits rather than a cut, but at least the first (its text cut
    at a line end, or its one line cut, when even it alone does not fit). The result's
    `next_offset` follows its last hit wherever hits were left out or exist beyond."""
    budget = char_budget(max_chars)
    more = page.next_offset is not None
    head = [f"({notice_text(n, lang)})\n" for n in page.notices]
    sizes = [len(_hit_block(h, None, False, lang)) for h in page]

    def fitting(n: int) -> SearchResults:
        later = more or n < len(page)
        return SearchResults(
            page[:n],
            page.mode,
            page.notices,
            offset=page.offset,
            next_offset=page.offset + n if later else None,
            all_hits=page.all_hits,
        )

    def size(n: int) -> int:
        parts = [*map(len, head), *sizes[:n]]
        if n == 0:
            parts.append(len(none_text(page.notices, lang, page.all_hits)) + 1)
        if more or n < len(page):
            parts.append(len(_more_line(page, n, lang)))
        return sum(parts) + len(parts) - 1  # the blank lines between the blocks

    n = len(page)
    while n > 1 and size(n) > budget:
        n -= 1
    over = size(n) - budget
    if n == 0 or over <= 0:
        return fitting(n)
    first = page[0]
    kept = first.text[: max(0, len(first.text) - over)]
    if "\n" in kept:
        kept = kept[: kept.rfind("\n")]  # whole lines
    else:
        kept = kept[: max(0, len(kept) - len(CUT))] + CUT
    # The lines left out are the last ones (the first may start at its heading's line).
    end_line = first.end_line - (first.text.count("\n") - kept.count("\n"))
    cut = dataclasses.replace(first, text=kept, end_line=end_line)
    result = fitting(1)
    result[0] = cut
    return result


def explain_text(h: Hit, lang: Lang = Lang.RU) -> str:
    """Why a hit ranks where it does, on one line, from its `explain` (which must be set):
    the score's sum in hybrid, then each side's figures and the weight's origin (4
    significant digits: BM25 over a few chunks is tiny, FTS5's IDF floor)."""
    e = h.explain
    assert e is not None
    if e.bm25 is not None and e.lex is not None:
        words = lang.text(
            "explain.words",
            bm25=e.bm25,
            naming=e.naming,
            proximity=e.proximity,
            scale=e.scale,
            lex=e.lex,
        )
    else:
        words = lang.text("explain.words_none")
    if e.vec is not None:
        meaning = lang.text("explain.meaning", vec=e.vec)
    else:
        meaning = lang.text("explain.meaning_none")
    looked = e.second_look is not None and e.ranked is not None and e.placed is not None
    score = e.ranked if looked and e.ranked is not None else h.score
    w, lex_n, vec_n = e.dense_weight, e.lex_norm, e.vec_norm
    if w is None or lex_n is None or vec_n is None:  # lex or vec mode: one side's own score
        side = words if "lex" in h.found_by else meaning
        what = lang.text("explain.one_side", score=score, side=side)
    else:
        if e.strength is not None:
            origin = lang.text("explain.by_strength", strength=e.strength)
        else:
            origin = lang.text("explain.constant")
        what = lang.text(
            "explain.hybrid",
            score=score,
            lex_weight=1 - w,
            lex=lex_n,
            weight=w,
            vec=vec_n,
            words=words,
            meaning=meaning,
            origin=origin,
        )
    if looked:  # a question's first page looked at again: its place, then what it added
        what = lang.text(
            "explain.second_look",
            score=h.score,
            placed=e.placed,
            gain=e.second_look,
            sentence="—" if e.sentence is None else f"{e.sentence:.4g}",
            before=what,
        )
    return lang.text("explain.why", what=what)


def search_data(
    results: SearchResults, *, printable: bool = False, lang: Lang = Lang.RU
) -> dict[str, object]:
    """Search results as data (`memo search --json`, memo_search's structuredContent):
    each hit's fields, `explain` among them only where the search was asked to explain,
    `next_offset` (None: no more hits), and on a page past the last hit `all_hits` (how
    many there are in all). `printable`: names as `shown` writes them (JSON
    any client decodes); else exact, bytes that are not UTF-8 as surrogates."""
    name = shown if printable else str
    hits = []
    for h in results:
        data = dataclasses.asdict(h)
        data |= {"path": name(h.path), "relpath": name(h.relpath)}
        data |= {"collection": name(h.collection), "found_by": list(h.found_by)}
        data |= {"also_in": [name(p) for p in h.also_in]}
        if h.explain is None:
            del data["explain"]
        hits.append(data)
    answer: dict[str, object] = {
        "mode": results.mode,
        "notices": [notice_text(n, lang) for n in results.notices],
        "hits": hits,
        "next_offset": results.next_offset,
    }
    if results.all_hits is not None:
        answer["all_hits"] = results.all_hits
    return answer


def iso_time(ts: float | None, lang: Lang = Lang.RU) -> str:
    if ts is None:
        return lang.text("time.never")
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def status_data(s: CollectionStatus) -> dict[str, Any]:
    """A collection's status as data (`memo status --json`, `memo://collections`): its
    fields, the times as ISO 8601 text in local time with its offset (None: never)."""
    data = dataclasses.asdict(s)
    for key in ("updated_at", "refreshed_at"):
        ts = data[key]
        data[key] = None if ts is None else iso_time(ts)
    return data


def format_status(statuses: Sequence[CollectionStatus], lang: Lang = Lang.RU) -> str:
    return "\n".join(_status_line(s, lang) for s in statuses)


# What a status says of work under way: without a count, and with one.
_STATUS_ACTIVITY = {
    NoticeKind.INDEXING: ("status.indexing", "status.indexing_count"),
    NoticeKind.EMBEDDING: ("status.embedding", "status.embedding_count"),
    NoticeKind.SENTENCES: ("status.sentences", "status.sentences_count"),
}


def _rebuilding_key(n: Notice, files: str, vectors: str) -> str:
    """Of the texts of a rebuild under way that counts its files or its vectors, the one
    of the new index's pass (`n.detail`)."""
    return files if n.detail == "index" else vectors


def _activity_keys(n: Notice) -> tuple[str, str]:
    """What a status says of the work `n` is under way: without a count, and with one."""
    if n.kind is NoticeKind.REBUILDING:
        counted = _rebuilding_key(n, "status.rebuilding_files", "status.rebuilding_vectors")
        return "status.rebuilding", counted
    return _STATUS_ACTIVITY.get(n.kind, _STATUS_ACTIVITY[NoticeKind.EMBEDDING])


def _status_line(s: CollectionStatus, lang: Lang) -> str:
    """The status line `<collection>: файлов <N>, чанков <M>, индекс <time>`, then what else
    there is to know, each part only where it says something."""
    parts = [
        lang.text(
            "status.head",
            root=shown(s.root),
            files=s.files,
            chunks=s.chunks,
            updated=iso_time(s.updated_at, lang),
        )
    ]
    counts = [
        ("status.pending", s.pending),  # the index is not complete: how much is to come
        ("status.empty", s.empty),
        ("status.skipped", s.skipped),
        ("status.no_vectors", s.chunks_without_vectors),
        ("status.no_sentences", s.chunks_without_sentences),
        ("status.unreadable_folders", len(s.unreadable_folders)),
        ("status.ignored", s.ignored),
    ]
    parts += [lang.text(key, n=n) for key, n in counts if n]
    if s.model and s.chunks:  # what made its vectors (an index records it)
        parts.append(lang.text("status.model", model=shown(s.model)))
    if (n := s.indexing) is not None:
        plain, counted = _activity_keys(n)
        if n.total:
            parts.append(lang.text(counted, done=n.done, total=n.total))
        else:
            parts.append(lang.text(plain))
    if s.refresh_error is not None:
        parts.append(lang.text("status.refresh_failed", reason=shown(lang.word(s.refresh_error))))
    checked = iso_time(s.refreshed_at, lang)
    parts.append(lang.text("status.tail", fingerprint=s.fingerprint, checked=checked))
    line = ", ".join(parts)
    if s.location_note:
        line += f" ({shown(lang.word(s.location_note))})"
    return line


def format_reindex(files: int, lang: Lang = Lang.RU) -> str:
    return lang.text("reindex.done", files=files)


def format_refresh(stats: RefreshStats, lang: Lang = Lang.RU) -> str:
    """One line on what a refresh did (`memo index`, `memo watch`)."""
    return lang.text(
        "refresh.done",
        added=stats.added,
        changed=stats.changed,
        deleted=stats.deleted,
        written=stats.chunks_written,
        vectored=stats.chunks_vectored,
        embedded=stats.chunks_embedded,
        seconds=stats.seconds,
    )


def format_update(path: str, stats: RefreshStats, seconds: float, lang: Lang = Lang.RU) -> str:
    """One line on a watched folder's update (`memo watch`)."""
    return lang.text(
        "watch.update",
        path=shown(path),
        added=stats.added,
        changed=stats.changed,
        deleted=stats.deleted,
        embedded=stats.chunks_embedded,
        seconds=seconds,
    )


def format_changes(report: ChangeReport, lang: Lang = Lang.RU) -> str:
    """A change report for a reader: counts, then `+ path`, `~ path`, `- path` (a delta) or
    the paths (a full listing), every one of them: the answer is the whole list."""
    since = shown(report.since or "")  # a client's words, echoed
    if report.mode == "delta":
        head = lang.text(
            "changes.delta",
            since=since,
            added=len(report.added),
            changed=len(report.changed),
            removed=len(report.removed),
        )
        lines = [f"+ {shown(p)}" for p in report.added]
        lines += [f"~ {shown(p)}" for p in report.changed]
        lines += [f"- {shown(p)}" for p in report.removed]
    else:
        if report.reason == "unknown_fingerprint":
            head = lang.text("changes.all_unknown", since=since, files=len(report.files))
        else:
            head = lang.text("changes.all", files=len(report.files))
        lines = [shown(p) for p in report.files]
    notices = [f"({notice_text(n, lang)})" for n in report.notices]
    head = lang.text("changes.now", head=head, fingerprint=report.fingerprint)
    return "\n".join([*notices, head, *lines]) + "\n"


def changes_data(report: ChangeReport) -> dict[str, object]:
    """A change report as data (MCP's structuredContent, `memo changes --json`)."""
    data: dict[str, object] = {"mode": report.mode, "from": report.since, "to": report.fingerprint}
    if report.mode == "delta":
        for kind in ("added", "changed", "removed"):
            data[kind] = [shown(p) for p in getattr(report, kind)]
    else:
        data |= {"files": [shown(p) for p in report.files], "reason": report.reason}
    return data


def note_text(note: NoteText, where: str, lang: Lang = Lang.RU) -> str:
    """A note as `memo://note` serves it: its text, and when it was cut, a last line that
    says so and where the rest is (`where`: the note's path)."""
    if not note.cut:
        return note.text
    return note.text + f"\n{_cut_line(note, where, lang)}\n"


def _cut_line(note: NoteText, where: str, lang: Lang) -> str:
    return lang.text("read.cut_line", kept=note.kept, size=note.size, where=shown(where))


def format_read(r: NoteLines, lang: Lang = Lang.RU) -> str:
    """Lines of a note for a reader (`memo_read`, `memo read`): a head line naming the note,
    the lines shown and how many it has (a span past the end said so, not refused); then
    each line as an editor shows it: its number right-aligned, a tab, the line. Read up to a
    cut, the lines end with the line `memo://note` ends the note with."""
    where = shown(r.where)
    last = r.first + len(r.lines) - 1
    first, asked_last = r.asked
    asked = lang.text("read.from", first=first) if asked_last is None else f"{first}–{asked_last}"
    if r.lines:
        head = lang.text("read.lines", where=where, first=r.first, last=last, total=r.total)
        if asked_last is not None and asked_last > last:
            head = lang.text("read.asked_past_end", head=head, asked=asked)
    elif r.total:
        head = lang.text("read.beyond", where=where, asked=asked, total=r.total)
    else:
        head = lang.text("read.empty", where=where)
    if r.note.cut:
        head = lang.text("read.cut", head=head, kept=r.note.kept, size=r.note.size)
    width = len(str(last))
    body = [f"{n:>{width}}\t{line}" for n, line in enumerate(r.lines, r.first)]
    if r.note.cut and last == r.total:
        body.append(_cut_line(r.note, r.where, lang))
    return "\n".join([head, *body]) + "\n"


# -- memo-mcp --http: why it does not start ------------------------------------------------


def listen_failed_text(address: str, error: OSError, lang: Lang = Lang.RU) -> str:
    """Why `memo-mcp --http` cannot listen on `address` (HOST:PORT), and, for a port in
    use, what to do."""
    if error.errno == errno.EADDRINUSE:
        return lang.text("http.in_use", address=address)
    return lang.text("http.cannot_listen", address=address, reason=error)


# -- usage errors: argparse's own English, worded again --------------------------------------

# The messages argparse (Python 3.11 to 3.13) makes of a command line it cannot take, by the
# catalogue's key; groups name the text's parameters.
_ARGPARSE_TEXTS = [
    (r"invalid choice: (?P<value>.+) \(choose from (?P<choices>.+)\)", "usage.invalid_choice"),
    (r"invalid int value: (?P<value>.+)", "usage.invalid_int"),
    (r"invalid (?P<type>\w+) value: (?P<value>.+)", "usage.invalid_value"),
    (r"expected one argument", "usage.expected_one"),
    (r"ignored explicit argument (?P<value>.+)", "usage.ignored_value"),
    (r"the following arguments are required: (?P<arguments>.+)", "usage.required"),
    (r"unrecognized arguments: (?P<arguments>.+)", "usage.unrecognized"),
    (r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)", "usage.ambiguous"),
]


def usage_error_text(message: str, lang: Lang = Lang.RU) -> str:
    """argparse's message on a command line it cannot take, in `lang` (`memo`, `memo-mcp`);
    one the catalogue does not know stays argparse's."""
    if m := re.fullmatch(r"argument (?P<argument>.+?): (?P<problem>.+)", message, re.S):
        problem = usage_error_text(m["problem"], lang)
        return lang.text("usage.argument", argument=m["argument"], problem=problem)
    for pattern, key in _ARGPARSE_TEXTS:
        if m := re.fullmatch(pattern, message, re.S):
            return lang.text(key, **m.groupdict())
    return message


def _formatter() -> Callable[[str], argparse.HelpFormatter]:
    """argparse's help layout at the terminal's width as argparse reads it (COLUMNS, else
    stdout's terminal, else 80), read here once: argparse reads it through `shutil` for
    each argument added, and importing shutil (with its bz2 and lzma) was 4 ms of a
    one-shot search's 117."""
    try:
        columns = int(settings.columns() or "")
    except ValueError:
        columns = 0
    if columns <= 0:
        out = sys.__stdout__
        try:
            columns = os.get_terminal_size(out.fileno()).columns if out else 0
        except (ValueError, OSError):  # not a terminal, or closed
            columns = 0
    columns = columns if columns > 0 else 80
    return partial(argparse.HelpFormatter, width=columns - 2)  # argparse's own margin


class WordedParser(argparse.ArgumentParser):
    """argparse in the reader's language, for both front ends' command lines: its help
    option and section titles, and its usage errors (`prog: ошибка: ...`, exit 2, after
    the usage); "usage:" itself stays argparse's. Sub-commands get the language too: pass
    `lang=` to `add_parser`."""

    def __init__(self, *, lang: Lang = Lang.RU, **kwargs: Any) -> None:
        kwargs = {"formatter_class": _formatter(), **kwargs, "add_help": False}  # -h: below
        super().__init__(**kwargs)
        self.lang = lang
        self._positionals.title = lang.text("help.positionals")
        self._optionals.title = lang.text("help.options")
        self.add_argument("-h", "--help", action="help", help=lang.text("help.help"))

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.fail(message)

    def fail(self, message: str) -> NoReturn:
        """Exit 2 with argparse's `message` worded, on one line (no usage)."""
        said = shown(usage_error_text(message, self.lang))
        self.exit(2, self.lang.text("usage.error", prog=self.prog, message=said) + "\n")
