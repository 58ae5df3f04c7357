"""Bounded answers: each hit shows the lines that best match the query, the whole
answer fits a budget, `offset` pages through the hits, and memo_search returns its hits as
structuredContent too. All through the real engine (and the real server)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from conftest import write_notes
from mcp import Client

from memo_cli.main import main
from memo_core import (
    Embedder,
    Engine,
    InvalidArgumentError,
    ModelSource,
    SearchResults,
)
from memo_core.text.excerpt import EXCERPT_CHARS, EXCERPT_LINES, excerpt
from memo_mcp.server import build_server
from memo_text import DEFAULT_MAX_CHARS, Lang, fit_to_budget, format_hits, search_data

HIT = re.compile(r"^(/.+?):(\d+)  (.*)$")  # `<path>:<line>  <heading>`
FILLER = [f"Строка {i}: про погоду и прочее." for i in range(40)]


def long_note() -> str:
    """A setext title over two lines, blank lines under it, then 40 lines with two spots."""
    body = list(FILLER)
    body[25] = "Здесь про restic: ночной бэкап сервера."
    body[26] = "И restic check раз в месяц."
    return "Бэкап\nсервера\n=====\n\n\n" + "\n".join(body) + "\n"


@pytest.fixture
def long_notes(tmp_path: Path) -> Path:
    root = tmp_path / "long"
    root.mkdir()
    (root / "backup.md").write_text(long_note(), encoding="utf-8")
    (root / "other.md").write_text("# Other\n\n" + "\n".join(FILLER) + "\n", encoding="utf-8")
    return root


def many_notes(root: Path, n: int = 24) -> Path:
    """`n` notes that all answer `restic` (in ranks that differ: more mentions, higher)."""
    return write_notes(
        root,
        {
            f"n{i:02}.md": f"# Note {i}\n\n" + "restic backup. " * (1 + i % 7) + f"\nline {i}\n"
            for i in range(n)
        },
    )


def engine(embedder: Embedder | None = None) -> Engine:
    return Engine(models=ModelSource(embedder, enabled=embedder is not None))


def first_shown(hit) -> int:
    """The note's line where the hit's text begins (it ends at `end_line`)."""
    return hit.end_line - hit.text.count("\n")


def shown_lines(hit) -> list[str]:
    """The note's own lines that the hit shows (its text ends at `end_line`), as the file
    holds them (universal newlines, as an editor counts), once its `line` is checked: the
    first line shown, or, for a hit that shows its passage from the start, its heading's
    line above it, with only the heading's lines and blank lines between."""
    lines = Path(hit.path).read_text(encoding="utf-8").split("\n")
    first = first_shown(hit)
    assert hit.line <= first
    if hit.line < first:
        assert lines[hit.line - 1].strip("# ") in hit.heading
        for between in lines[hit.line : first - 1]:
            rest = between.strip()
            assert not rest or not rest.strip("=-") or rest.strip("# ") in hit.heading
    return lines[first - 1 : hit.end_line]


# -- excerpts -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["lex", "hybrid"])
def test_a_hit_shows_the_matching_lines_at_their_real_numbers(
    long_notes: Path, tiny_embedder: Embedder, mode: str
) -> None:
    with engine(tiny_embedder) as e:
        [hit] = [h for h in e.search(long_notes, "restic check", mode=mode) if "backup" in h.path]
    assert hit.text.split("\n") == shown_lines(hit)
    assert hit.text.split("\n")[0] == "Здесь про restic: ночной бэкап сервера."
    assert hit.line == first_shown(hit) == 6 + 25  # title (2), underline, 2 blanks: body at 6
    assert hit.end_line - hit.line + 1 <= EXCERPT_LINES and len(hit.text) <= EXCERPT_CHARS


def test_a_short_passage_is_shown_whole_under_its_heading_line(notes: Path) -> None:
    with engine() as e:
        hits = e.search(notes, "restic restore", mode="lex")
    assert hits
    for h in hits:
        assert h.text.split("\n") == shown_lines(h)
        assert h.line <= h.end_line
    # The contract's `<path>:<line>  <heading>` as before: a section's passage cites its heading.
    [hit] = [h for h in hits if h.text.startswith("Как восстановить")]
    assert (hit.relpath, hit.line, hit.heading) == ("backup.md", 5, "Бэкап > Восстановление")
    assert hit.end_line == 7


# -- where the lines shown are in the note ------------------------------------------------

SECTIONS = (
    "Пролог без заголовка.\n"
    "\n"
    "Длинный\n"
    "заголовок\n"
    "---------\n"
    "\n"
    "\n"
    "\n"
    + "\n".join(FILLER[:20])
    + "\nЗдесь restic check по воскресеньям.\n"
    + "\n".join(FILLER[20:30])
    + "\n\n# Второй\n\n\nrestic restore latest: восстановление.\n"
)


def overlong_section(n: int = 120) -> str:
    """One section longer than a chunk: paragraphs of filler, the match far below it."""
    paras = [f"Абзац {i}: про погоду, дороги и прочее в этом городе." for i in range(n)]
    paras[n - 10] = "Абзац с restic prune и ничем другим."
    return "# Журнал\n\n" + "\n\n".join(paras) + "\n"


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize(
    ("text", "query", "heading", "from_start"),
    [
        (SECTIONS, "restic check", "Длинный заголовок", False),  # setext, blanks after it
        (SECTIONS, "restic restore", "Второй", True),  # ATX, blanks after it
        (overlong_section(), "restic prune", "Журнал", False),  # a later piece of a section
        ("# Один\n\n\n\nrestic alone", "restic", "Один", True),  # no newline at the end
    ],
)
def test_lines_shown_are_the_notes_own(
    tmp_path: Path, text: str, query: str, heading: str, from_start: bool, eol: str
) -> None:
    root = tmp_path / "n"
    root.mkdir()
    (root / "a.md").write_bytes(text.replace("\n", eol).encode())
    with engine() as e:
        hits = e.search(root, query, k=1, mode="lex")
    [hit] = hits
    assert hit.heading == heading
    assert hit.text.split("\n") == shown_lines(hit)
    assert (hit.line < first_shown(hit)) == from_start
    assert query.split()[0] in hit.text


def test_the_overlong_sections_first_piece_cites_its_heading(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "n", {"a.md": overlong_section()})
    with engine() as e:
        [hit] = e.search(root, "Абзац 0", k=1, mode="lex")
    assert (hit.line, first_shown(hit)) == (1, 3)
    assert hit.text.split("\n") == shown_lines(hit)


def test_lines_stay_right_when_a_kept_passage_moves(tmp_path: Path) -> None:
    """A passage whose text is unchanged keeps its row (and vector) when lines above it or
    between its heading and its text change: both its lines move with it."""
    root = write_notes(tmp_path / "n", {"a.md": SECTIONS})
    with engine() as e:
        before = e.search(root, "restic restore", k=1, mode="lex")[0]
        moved = "Новая строка.\n\n" + SECTIONS.replace("# Второй\n\n\n", "# Второй\n")
        (root / "a.md").write_text(moved, encoding="utf-8")
        after = e.search(root, "restic restore", k=1, mode="lex")[0]
        check = e.search(root, "restic check", k=1, mode="lex")[0]
    assert (after.line, after.end_line) == (before.line + 2, before.end_line)
    for hit in (after, check):
        assert hit.text.split("\n") == shown_lines(hit)


def test_a_search_reads_no_note(notes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines come from the index: a search does not read the notes it cites (a note may
    have changed since, or sit on a slow or stuck disk)."""
    from memo_core.files.fsafe import Folder

    with engine() as e:
        e.search(notes, "restic", mode="lex")  # indexed

        def read(self: Folder, rel: str, limit: int) -> tuple[bytes, int]:
            raise AssertionError(f"read {rel} while searching")

        monkeypatch.setattr(Folder, "read", read)
        hits = e.search(notes, "restic restore", mode="lex", refresh=False)
    assert hits and all(h.line <= first_shown(h) for h in hits)


@pytest.mark.parametrize(
    ("terms", "first"),
    [(set(), 0), ({"restic"}, 25), ({"check", "restic"}, 25), ({"nothing"}, 0)],
)
def test_excerpt_starts_where_the_words_are(terms: set[str], first: int) -> None:
    lines = long_note().split("\n")[5:]
    shown = excerpt(lines, terms)
    assert shown.first == first
    assert shown.text.split("\n") == lines[shown.first : shown.last + 1]


def test_a_line_longer_than_the_excerpt_is_shown_around_its_match() -> None:
    line = "word " * 400 + "restic here " + "word " * 400
    shown = excerpt([line], {"restic"})
    assert "restic" in shown.text and len(shown.text) <= EXCERPT_CHARS
    assert shown.text.startswith("…") and shown.text.endswith("…")


# -- budgets ------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", [Lang.RU, Lang.EN])
@pytest.mark.parametrize("max_chars", [500, 900, 2000, DEFAULT_MAX_CHARS, None])
def test_the_answer_fits_its_budget_with_at_least_one_hit(
    tmp_path: Path, max_chars: int | None, lang: Lang
) -> None:
    """The budget is the reader's: an English answer fits as an English reader reads it
    (measured on the Russian texts, English answers overshot by up to 44 characters)."""
    root = many_notes(tmp_path / "many")
    with engine() as e:
        found = e.search(root, "restic backup", k=20, mode="lex")
    results = fit_to_budget(found, max_chars, lang)
    text = format_hits(results, lang=lang)
    assert len(text) <= (max_chars or DEFAULT_MAX_CHARS)
    assert len(results) >= 1
    if len(results) < 20:  # cut by the budget: the last line says where to go on
        assert results.next_offset == len(results)
        assert text.endswith(f"offset {len(results)})\n")


def test_an_english_answer_with_notices_fits_its_budget(tmp_path: Path) -> None:
    """English notices run longer than Russian ones: every line counts in the reader's."""
    root = many_notes(tmp_path / "many")
    with engine() as e:
        found = e.search(root, "restic backup", k=20, mode="hybrid")  # no model: a notice
    assert found.notices
    for budget in range(500, 1400, 37):
        text = format_hits(fit_to_budget(found, budget, Lang.EN), lang=Lang.EN)
        assert len(text) <= budget, (budget, len(text))


def test_one_hit_too_big_for_the_budget_is_cut_at_a_line_end(tmp_path: Path) -> None:
    line = "restic и ещё немного слов про ночной бэкап сервера\n"
    root = write_notes(tmp_path / "big", {"a.md": "# A\n\n" + line * 60})
    with engine() as e:
        found = e.search(root, "restic", k=1, mode="lex")
    whole, results = fit_to_budget(found, 100_000), fit_to_budget(found, 500)
    [hit] = results
    assert len(format_hits(results)) <= 500 < len(format_hits(whole))
    assert hit.text.split("\n") == shown_lines(hit)  # whole lines, numbered as they are
    assert hit.line == whole[0].line and hit.end_line < whole[0].end_line


@pytest.mark.parametrize("offset", [-1, 10**6, True])
def test_bad_pages_are_clear_errors(notes: Path, offset: int) -> None:
    with engine() as e, pytest.raises(InvalidArgumentError, match="whole number"):
        e.search(notes, "restic", offset=offset)


@pytest.mark.parametrize("max_chars", [10, True, 10**9])
def test_bad_budgets_are_clear_errors(notes: Path, max_chars: int) -> None:
    with engine() as e:
        found = e.search(notes, "restic")
    with pytest.raises(InvalidArgumentError, match="whole number"):
        fit_to_budget(found, max_chars)


# -- pages --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["lex", "hybrid", "vec"])
@pytest.mark.parametrize("k", [3, 5])
def test_two_pages_are_the_first_2k_hits(
    tmp_path: Path, tiny_embedder: Embedder, mode: str, k: int
) -> None:
    root = many_notes(tmp_path / "many")
    big = 100_000
    with engine(tiny_embedder) as e:
        whole = fit_to_budget(e.search(root, "restic backup", k=2 * k, mode=mode), big)
        one = fit_to_budget(e.search(root, "restic backup", k=k, mode=mode), big)
        assert one.next_offset == k
        two = fit_to_budget(e.search(root, "restic backup", k=k, mode=mode, offset=k), big)
    key = [(h.path, h.line, h.end_line) for h in whole]
    assert [(h.path, h.line, h.end_line) for h in [*one, *two]] == key
    assert len(set(key)) == len(key) == 2 * k
    assert two.offset == k


def test_the_last_page_has_no_next(tmp_path: Path) -> None:
    root = many_notes(tmp_path / "many", 5)
    with engine() as e:
        assert e.search(root, "restic", k=5, mode="lex").next_offset is None
        assert e.search(root, "restic", k=4, mode="lex").next_offset == 4
        last = e.search(root, "restic", k=4, mode="lex", offset=4)
        past = e.search(root, "restic", k=4, mode="lex", offset=50)
        nothing = e.search(root, "zzqqxx", k=4, mode="lex", offset=50)
    assert len(last) == 1 and last.next_offset is None
    assert "offset" not in format_hits(last)
    assert list(past) == [] and past.next_offset is None
    # Past the last hit: not "nothing found", which a query with no hit at all says.
    assert past.all_hits == 5 and last.all_hits is None and nothing.all_hits is None
    assert format_hits(past) == "дальше ничего: всего найдено 5, с offset 0\n"
    assert format_hits(nothing) == "ничего не найдено\n"
    assert search_data(past)["all_hits"] == 5 and "all_hits" not in search_data(nothing)


# -- the text shape and the structured answer ---------------------------------------------


def blocks(text: str) -> list[tuple[str, int, str, str]]:
    """The contract's `<path>:<line>  <heading>\\n<text>\\n` blocks of an answer, as a client parses
    them (a block that does not start with a location is a notice or the page line)."""
    found = []
    for block in text.split("\n\n"):
        first, _, rest = block.partition("\n")
        if m := HIT.match(first):
            found.append((m[1], int(m[2]), m[3], rest.rstrip("\n")))
    return found


async def test_memo_search_text_and_structured_content_agree(tmp_path: Path) -> None:
    root = many_notes(tmp_path / "many")
    async with Client(build_server([tmp_path]), mode="legacy") as c:
        tool = next(t for t in (await c.list_tools()).tools if t.name == "memo_search")
        args = {"path": str(root), "query": "restic backup", "k": 4, "mode": "lex"}
        first = await c.call_tool("memo_search", args)
        second = await c.call_tool("memo_search", {**args, "offset": 4, "max_chars": 600})
        bad = await c.call_tool("memo_search", {**args, "offset": -1})
        past = await c.call_tool("memo_search", {**args, "offset": 900})
    assert bad.is_error and "offset" in bad.content[0].text
    for result in (first, second):
        assert not result.is_error
        data = result.structured_content
        jsonschema.validate(data, tool.output_schema)
        parsed = blocks(result.content[0].text)
        assert parsed == [(h["path"], h["line"], h["heading"], h["text"]) for h in data["hits"]]
        for h in data["hits"]:
            assert h["end_line"] >= h["line"] and h["found_by"] == ["lex"]
    assert first.structured_content["next_offset"] == 4
    jsonschema.validate(past.structured_content, tool.output_schema)
    assert past.structured_content["hits"] == [] and past.structured_content["all_hits"] > 4
    assert "всего найдено" in past.content[0].text
    assert len(second.content[0].text) <= 600
    assert second.structured_content["next_offset"] == 4 + len(second.structured_content["hits"])
    for name in ("offset", "max_chars"):
        assert tool.input_schema["properties"][name]["description"]


def test_cli_pages_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = many_notes(tmp_path / "many")
    assert main(["search", str(root), "restic", "-k", "2", "--mode", "lex", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["next_offset"] == 2 and all("end_line" in h for h in data["hits"])
    argv = ["search", str(root), "restic", "-k", "2", "--mode", "lex", "--offset", "2"]
    assert main([*argv, "--max-chars", "500"]) == 0
    out = capsys.readouterr().out
    assert len(out) <= 500 and "offset" in out.splitlines()[-1]
    assert main([*argv, "--max-chars", "5"]) == 2  # a usage error
    assert "max_chars — целое число от 500 до 200000, а дано 5" in capsys.readouterr().err


def test_results_keep_their_page() -> None:
    page = SearchResults([], "lex", offset=8, next_offset=None)
    assert page.offset == 8 and format_hits(page) == "ничего не найдено\n"
