"""memo_text.formatting: hits, statuses, changes and notes worded; answers fitted to a budget."""

from __future__ import annotations

import errno
import json
from dataclasses import replace
from datetime import datetime

import pytest

from memo_core import (
    CUT,
    ChangeReport,
    CollectionStatus,
    Explain,
    FileNote,
    Hit,
    InvalidArgumentError,
    Message,
    NoteLines,
    NoteText,
    Notice,
    NoticeKind,
    RefreshStats,
    SearchResults,
)
from memo_text.formatting import (
    DEFAULT_MAX_CHARS,
    MAX_CHARS_RANGE,
    WordedParser,
    changes_data,
    char_budget,
    explain_text,
    file_note_text,
    fit_to_budget,
    format_changes,
    format_hits,
    format_read,
    format_refresh,
    format_status,
    iso_time,
    listen_failed_text,
    none_text,
    note_text,
    notice_text,
    search_data,
    status_data,
    usage_error_text,
)
from memo_text.lang import Lang


def hit(n: int, text: str = "some text", **kw: object) -> Hit:
    base = dict(path=f"/notes/n{n}.md", relpath=f"n{n}.md", collection="/notes", line=n,
                end_line=n + text.count("\n"), heading=f"# Note {n}", text=text,
                score=1.0 / (n + 1), found_by=("lex",))  # fmt: skip
    return Hit(**{**base, **kw})  # type: ignore[arg-type]


def status(**kw: object) -> CollectionStatus:
    base = dict(root="/notes", files=3, chunks=7, skipped=0, empty=0, pending=0,
                updated_at=None, model=None, chunks_without_vectors=0,
                chunks_without_sentences=0, notes=[], index_path="/notes/.memo/index.db",
                location_note=None, fingerprint="fp1", refreshed_at=None,
                unreadable_folders=[], ignored=0)  # fmt: skip
    return CollectionStatus(**{**base, **kw})  # type: ignore[arg-type]


LANGS = pytest.mark.parametrize("lang", list(Lang))


# -- hits ----------------------------------------------------------------------------------


@LANGS
def test_hits_are_path_line_heading_then_text(lang: Lang) -> None:
    out = format_hits(SearchResults([hit(1), hit(2, "two\nlines")], "lex"), lang=lang)
    assert out == "/notes/n1.md:1  # Note 1\nsome text\n\n/notes/n2.md:2  # Note 2\ntwo\nlines\n"


def test_paths_inside_base_are_relative_and_others_absolute() -> None:
    out = format_hits(SearchResults([hit(1), hit(2, path="/else/x.md")], "lex"), base="/notes")
    assert out.startswith("n1.md:1") and "\n/else/x.md:2" in out


def test_names_are_escaped_and_on_a_terminal_passages_too() -> None:
    h = hit(1, "a\x1bb", heading="h\x1b", path="/notes/a\nb.md")
    plain = format_hits(SearchResults([h], "lex"))
    assert "/notes/a\\nb.md:1  h\x1b\na\x1bb" in plain  # a name is always one line
    term = format_hits(SearchResults([h], "lex"), terminal=True)
    assert "\x1b" not in term


@LANGS
def test_no_hits_says_so_and_more_hits_say_where_the_next_page_starts(lang: Lang) -> None:
    assert format_hits(SearchResults([], "lex"), lang=lang) == lang.text("hits.none") + "\n"
    page = SearchResults([hit(1), hit(2)], "lex", offset=10, next_offset=12)
    shown = lang.text("hits.shown_range", first=11, last=12)
    assert format_hits(page, lang=lang).endswith(
        f"({lang.text('hits.more', shown=shown, offset=12)})\n"
    )
    one = SearchResults([hit(1)], "lex", next_offset=1)
    assert lang.text("hits.shown_one", first=1) in format_hits(one, lang=lang)


def test_copies_of_a_passage_are_named_under_it() -> None:
    out = format_hits(SearchResults([hit(1, also_in=("/notes/c.md",))], "lex"), base="/notes")
    assert Lang.RU.text("hits.also_in", paths="c.md") in out


@pytest.mark.parametrize(
    ("notices", "key"),
    [
        ([], "hits.none"),
        ([Notice(NoticeKind.INDEXING, "/n", done=2, total=5)], "hits.none_yet_files"),
        ([Notice(NoticeKind.INDEXING, "/n")], "hits.none_yet_uncounted"),
        ([Notice(NoticeKind.EMBEDDING, "/n", done=3, total=9)], "hits.none_yet_vectors"),
        ([Notice(NoticeKind.EMBEDDING, "/n", done=0, total=9)], "hits.none_yet_no_vectors"),
        (
            [Notice(NoticeKind.MODEL_UNAVAILABLE, detail=Message("model.installing", name="m"))],
            "hits.none_yet_model",
        ),  # fmt: skip
        ([Notice(NoticeKind.BUSY, "/n")], "hits.none"),
        ([Notice(NoticeKind.BUSY, "/n", done=3, total=9)], "hits.none_yet_vectors"),
        ([Notice(NoticeKind.BUSY, "/n", done=0, total=9)], "hits.none_yet_no_vectors"),
    ],
)
def test_none_found_says_whether_the_index_was_complete(notices: list[Notice], key: str) -> None:
    n = notices[0] if notices else None
    params = {"done": n.done, "total": n.total} if n and n.total else {}
    assert none_text(notices, Lang.EN) == Lang.EN.text(key, **params)


@pytest.mark.parametrize("lang", [Lang.RU, Lang.EN])
def test_a_page_past_the_last_hit_says_how_many_were_found(lang: Lang) -> None:
    """An offset past the last hit is not "nothing found": the hits are on earlier pages,
    while indexing goes on too; a search with none at all still says nothing was found."""
    past = SearchResults([], "lex", offset=40, all_hits=3)
    assert format_hits(past, lang=lang) == lang.text("hits.none_past", total=3) + "\n"
    indexing = [Notice(NoticeKind.INDEXING, "/n", done=2, total=5)]
    assert none_text(indexing, lang, 3) == lang.text("hits.none_past", total=3)
    assert none_text([], lang, None) == lang.text("hits.none")
    fitted = fit_to_budget(past, lang=lang)
    assert fitted.all_hits == 3 and format_hits(fitted, lang=lang) == format_hits(past, lang=lang)


def test_counts_of_several_collections_are_summed() -> None:
    notices = [Notice(NoticeKind.INDEXING, "/a", done=1, total=4),
               Notice(NoticeKind.INDEXING, "/b", done=2, total=6)]  # fmt: skip
    assert none_text(notices, Lang.EN) == Lang.EN.text("hits.none_yet_files", done=3, total=10)


# -- notices and file notes ----------------------------------------------------------------


@LANGS
def test_a_notice_names_its_collection_and_words_its_detail(lang: Lang) -> None:
    n = Notice(NoticeKind.MODEL_UNAVAILABLE, "/notes", Message("model.disabled"))
    detail = lang.word(Message("model.disabled"))
    assert notice_text(n, lang) == "/notes: " + lang.text("notice.model_unavailable", detail=detail)
    whole = Notice(NoticeKind.BUSY, None, "x")
    assert notice_text(whole, lang) == lang.text("notice.busy", detail="x")
    for phase, key in (
        ("index", "notice.rebuilding_files"),
        ("embed", "notice.rebuilding_vectors"),
    ):
        rebuilding = Notice(NoticeKind.REBUILDING, "/notes", phase, done=2, total=7)
        assert notice_text(rebuilding, lang) == "/notes: " + lang.text(key, done=2, total=7)
    counted = Notice(NoticeKind.BUSY, "/notes", done=3, total=9)  # another process's vectors
    want = "/notes: " + lang.text("notice.busy_vectors", done=3, total=9)
    assert notice_text(counted, lang) == want and "3" in want and "9" in want


def test_a_notice_naming_folders_lists_a_few_and_counts_the_rest() -> None:
    n = Notice(NoticeKind.NOT_INDEXED, "/all", "memo index", total=5, folders=("a", "b"))
    named = Lang.EN.text("list.and_more", named="a, b", more=3)
    want = Lang.EN.text("notice.not_indexed", total=5, named=named, command="memo index")
    assert notice_text(n, Lang.EN) == "/all: " + want
    every = replace(n, total=2)
    assert "a, b" in notice_text(every, Lang.EN) and "3" not in notice_text(every, Lang.EN)


@pytest.mark.parametrize("kind", list(NoticeKind))
def test_every_kind_of_notice_is_worded_in_both_languages(kind: NoticeKind) -> None:
    n = Notice(kind, "/c", "detail", done=1, total=2, folders=("x",))
    ru, en = notice_text(n, Lang.RU), notice_text(n, Lang.EN)
    assert ru.startswith("/c: ") and en.startswith("/c: ") and ru != en


@LANGS
@pytest.mark.parametrize("note", list(FileNote))
def test_file_notes_are_worded_with_their_detail(lang: Lang, note: FileNote) -> None:
    plain = file_note_text(note, lang=lang)
    assert plain and file_note_text(note, "why", lang) == f"{plain} (why)"


# -- budgets -------------------------------------------------------------------------------


def test_the_budget_is_the_default_or_one_in_range() -> None:
    assert char_budget(None) == DEFAULT_MAX_CHARS
    assert char_budget(MAX_CHARS_RANGE[0]) == MAX_CHARS_RANGE[0]


@pytest.mark.parametrize("bad", [MAX_CHARS_RANGE[0] - 1, MAX_CHARS_RANGE[1] + 1, True, "600", 1.5])
def test_a_budget_out_of_range_is_an_invalid_argument(bad: object) -> None:
    with pytest.raises(InvalidArgumentError):
        char_budget(bad)


@LANGS
@pytest.mark.parametrize("budget", [500, 800, 2000])
def test_fitted_hits_fit_and_say_where_the_rest_begins(lang: Lang, budget: int) -> None:
    page = SearchResults([hit(i, "words " * 20) for i in range(20)], "lex")
    got = fit_to_budget(page, budget, lang)
    assert 1 <= len(got) < 20 and len(format_hits(got, lang=lang)) <= budget
    assert got.next_offset == len(got) and list(got) == page[: len(got)]


def test_a_page_that_fits_is_kept_whole() -> None:
    page = SearchResults([hit(1), hit(2)], "lex")
    got = fit_to_budget(page, None)
    assert list(got) == list(page) and got.next_offset is None


def test_a_first_hit_too_long_is_cut_at_a_line_end() -> None:
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(40))
    got = fit_to_budget(SearchResults([hit(1, text), hit(2)], "lex"), 500)
    assert len(got) == 1 and len(format_hits(got)) <= 500
    assert text.startswith(got[0].text) and not got[0].text.endswith("\n")
    assert got[0].end_line == got[0].line + got[0].text.count("\n")
    one_line = fit_to_budget(SearchResults([hit(1, "y" * 2000)], "lex"), 500)
    assert one_line[0].text.endswith(CUT) and len(format_hits(one_line)) <= 500


# -- explain, data -------------------------------------------------------------------------


def _explain(**kw: object) -> Explain:
    base = dict(bm25=1.5, naming=1.0, proximity=0.0, scale=1.0, lex=1.5, vec=0.8,
                lex_norm=0.9, vec_norm=0.7, strength=None, dense_weight=0.3)  # fmt: skip
    return Explain(**{**base, **kw})  # type: ignore[arg-type]


@LANGS
def test_explain_says_the_sum_of_both_sides(lang: Lang) -> None:
    h = hit(1, explain=_explain(), score=0.84, found_by=("lex", "vec"))
    out = explain_text(h, lang)
    assert "0.84" in out and "0.3" in out and "0.7" in out and "\n" not in out
    assert format_hits(SearchResults([h], "hybrid"), lang=lang).endswith(f"  {out}\n")


def test_explain_of_one_side_says_that_sides_score() -> None:
    h = hit(1, explain=_explain(dense_weight=None, vec=None), score=1.5)
    words = Lang.EN.text("explain.words", bm25=1.5, naming=1.0, proximity=0.0, scale=1.0, lex=1.5)
    assert explain_text(h, Lang.EN) == Lang.EN.text(
        "explain.why", what=Lang.EN.text("explain.one_side", score=1.5, side=words)
    )


def test_search_data_is_json_with_explain_only_where_asked() -> None:
    res = SearchResults([hit(1), hit(2, explain=_explain())], "hybrid",
                        [Notice(NoticeKind.BUSY, "/n", "x")], next_offset=2)  # fmt: skip
    data = json.loads(json.dumps(search_data(res, lang=Lang.EN)))
    assert data["mode"] == "hybrid" and data["next_offset"] == 2
    assert data["notices"] == [notice_text(res.notices[0], Lang.EN)]
    assert "explain" not in data["hits"][0] and data["hits"][1]["explain"]["bm25"] == 1.5
    assert data["hits"][0]["found_by"] == ["lex"] and data["hits"][0]["path"] == "/notes/n1.md"


def test_search_data_keeps_names_exact_unless_printable() -> None:
    res = SearchResults([hit(1, path="/notes/\udcff.md")], "lex")
    assert search_data(res)["hits"][0]["path"] == "/notes/\udcff.md"
    assert search_data(res, printable=True)["hits"][0]["path"] == "/notes/\\xff.md"


# -- statuses, refreshes, changes ----------------------------------------------------------


def test_iso_time_is_local_with_its_offset_or_never() -> None:
    assert iso_time(None, Lang.EN) == Lang.EN.text("time.never")
    got = datetime.fromisoformat(iso_time(1_700_000_000.0))
    assert got.utcoffset() is not None and got.timestamp() == 1_700_000_000.0


def test_status_data_is_the_fields_with_times_as_text() -> None:
    data = status_data(status(updated_at=1_700_000_000.0))
    assert data["updated_at"] == iso_time(1_700_000_000.0) and data["refreshed_at"] is None
    assert data["files"] == 3 and json.dumps(data)


@LANGS
def test_a_status_line_says_only_what_is_there(lang: Lang) -> None:
    line = format_status([status()], lang)
    never = iso_time(None, lang)
    head = lang.text("status.head", root="/notes", files=3, chunks=7, updated=never)
    assert line == f"{head}, {lang.text('status.tail', fingerprint='fp1', checked=never)}"
    more = format_status([status(pending=2, empty=1, model="m1", location_note="elsewhere")], lang)
    for part in (lang.text("status.pending", n=2), lang.text("status.empty", n=1),
                 lang.text("status.model", model="m1")):  # fmt: skip
        assert part in more
    assert more.endswith(" (elsewhere)")
    two = format_status([status(), status(root="/b")], lang)
    assert two.count("\n") == 1


def test_a_refresh_is_one_line() -> None:
    out = format_refresh(RefreshStats(added=2, changed=1, deleted=3, seconds=1.25), Lang.EN)
    want = Lang.EN.text("refresh.done", added=2, changed=1, deleted=3, written=0, vectored=0,
                        embedded=0, seconds=1.25)  # fmt: skip
    assert out == want and "\n" not in out


@LANGS
def test_a_delta_lists_each_path_by_its_change(lang: Lang) -> None:
    r = ChangeReport("delta", "old", "new", added=["a.md"], changed=["b.md"], removed=["c.md"])
    out = format_changes(r, lang)
    assert out.splitlines()[1:] == ["+ a.md", "~ b.md", "- c.md"]
    assert "new" in out.splitlines()[0]
    want = {"mode": "delta", "from": "old", "to": "new"}
    want |= {"added": ["a.md"], "changed": ["b.md"], "removed": ["c.md"]}
    assert changes_data(r) == want


def test_a_full_listing_says_why_and_lists_every_note() -> None:
    r = ChangeReport("full", "zz", "new", files=["a.md", "b\n.md"], reason="unknown_fingerprint")
    out = format_changes(r, Lang.EN)
    head = Lang.EN.text("changes.all_unknown", since="zz", files=2)
    assert out.splitlines() == [Lang.EN.text("changes.now", head=head, fingerprint="new"),
                                "a.md", "b\\n.md"]  # fmt: skip
    data = changes_data(r)
    assert data["files"] == ["a.md", "b\\n.md"] and data["reason"] == "unknown_fingerprint"


# -- notes read ----------------------------------------------------------------------------


def test_a_note_whole_is_its_text_and_a_cut_one_says_where_the_rest_is() -> None:
    assert note_text(NoteText("abc", 3, 3, False), "/n/a.md") == "abc"
    cut = note_text(NoteText("abc", 10, 3, True), "/n/a.md", Lang.EN)
    assert cut == "abc\n" + Lang.EN.text("read.cut_line", kept=3, size=10, where="/n/a.md") + "\n"


@LANGS
def test_lines_read_are_numbered_as_an_editor_numbers_them(lang: Lang) -> None:
    lines = [f"l{i}" for i in range(8, 12)]
    r = NoteLines("/n/a.md", NoteText("", 1, 1, False), 8, lines, 20, (8, 11))
    out = format_read(r, lang).splitlines()
    assert out[0] == lang.text("read.lines", where="/n/a.md", first=8, last=11, total=20)
    assert out[1:] == [" 8\tl8", " 9\tl9", "10\tl10", "11\tl11"]


@pytest.mark.parametrize(
    ("lines", "total", "asked", "key"),
    [([], 5, (9, None), "read.beyond"), ([], 0, (1, None), "read.empty")],
)
def test_lines_past_the_end_or_of_an_empty_note_say_so(lines, total, asked, key) -> None:
    r = NoteLines("/n/a.md", NoteText("", 0, 0, False), asked[0], lines, total, asked)
    head = format_read(r, Lang.EN).splitlines()[0]
    assert head.startswith("/n/a.md: ") and head.split(": ", 1)[0] == "/n/a.md"
    params = {"where": "/n/a.md"} | ({"asked": Lang.EN.text("read.from", first=9),
                                       "total": 5} if key == "read.beyond" else {})  # fmt: skip
    assert head == Lang.EN.text(key, **params)


# -- usage errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "key"),
    [
        ("invalid choice: 'x' (choose from 'a', 'b')", "usage.invalid_choice"),
        ("invalid int value: 'q'", "usage.invalid_int"),
        ("expected one argument", "usage.expected_one"),
        ("the following arguments are required: path", "usage.required"),
        ("unrecognized arguments: --zz", "usage.unrecognized"),
    ],
)
def test_argparses_messages_are_worded(message: str, key: str) -> None:
    got = usage_error_text(message, Lang.RU)
    assert got != message and got.startswith(Lang.RU.text(key, value="", choices="",
                                             arguments="")[:8])  # fmt: skip
    nested = usage_error_text(f"argument -k: {message}", Lang.RU)
    assert nested == Lang.RU.text("usage.argument", argument="-k", problem=got)


def test_a_message_argparse_may_add_stays_as_it_is() -> None:
    assert usage_error_text("something new", Lang.RU) == "something new"


def test_the_worded_parser_exits_2_in_one_line(capsys) -> None:
    p = WordedParser(prog="memo", lang=Lang.RU)
    p.add_argument("-k", type=int)
    with pytest.raises(SystemExit) as e:
        p.parse_args(["-k", "q"])
    assert e.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == Lang.RU.text("usage.error", prog="memo",
                                   message=usage_error_text("argument -k: invalid int value: 'q'",
                                                            Lang.RU))  # fmt: skip
    with pytest.raises(SystemExit):
        p.parse_args(["-h"])
    assert Lang.RU.text("help.options") in capsys.readouterr().out


def test_listening_fails_with_a_hint_for_a_port_in_use() -> None:
    busy = OSError(errno.EADDRINUSE, "in use")
    assert listen_failed_text("h:1", busy, Lang.EN) == Lang.EN.text("http.in_use", address="h:1")
    other = listen_failed_text("h:1", OSError(errno.EACCES, "no"), Lang.EN)
    assert other == Lang.EN.text("http.cannot_listen", address="h:1",
                                 reason=OSError(errno.EACCES, "no"))  # fmt: skip
