"""`memo_read` and `memo read`: a note's lines, numbered as an editor numbers them,
of the very text `memo://note` serves: confined, ignore-aware, bounded. The engine call, the
MCP tool in-process and the CLI, each against real notes."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_helpers import BACKUP, make_notes

from memo_cli.main import main
from memo_core import (
    AROUND_LINES,
    NOTE_LIMIT,
    Engine,
    InvalidArgumentError,
    MemoError,
    NotANoteError,
    OutsideRootsError,
)
from memo_mcp.resources import note_uri
from memo_mcp.server import build_server
from memo_text import Lang, format_read

LONG = "".join(f"line {i}\n" for i in range(1, 61))  # 60 lines: "line N" on line N


@pytest.fixture
def allowed(tmp_path: Path) -> Path:
    root = tmp_path / "allowed"
    root.mkdir()
    return root


@pytest.fixture
def notes(allowed: Path) -> Path:
    notes = make_notes(allowed)
    (notes / "long.md").write_text(LONG, encoding="utf-8")
    return notes


@pytest.fixture
def engine(allowed: Path) -> Iterator[Engine]:
    with Engine(roots=[allowed]) as engine:
        yield engine


def numbered(text: str) -> list[tuple[int, str]]:
    """The numbered lines of a `memo_read` answer (its head line and a cut line left out)."""
    pairs = []
    for line in text.split("\n")[1:]:  # not splitlines: a line may hold \x0c or \u2028
        number, tab, rest = line.partition("\t")
        if tab and number.strip().isdigit():
            pairs.append((int(number), rest))
    return pairs


def client(*roots: Path) -> Client:
    return Client(build_server(list(roots)), mode="legacy")


async def tool(c: Client, arguments: dict[str, Any]) -> tuple[bool, str]:
    r = await c.call_tool("memo_read", arguments)
    return bool(r.is_error), r.content[0].text


# -- spans --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "first", "last", "head"),
    [
        ({}, 1, 60, "строки 1–60 из 60"),
        ({"from_line": 3, "to_line": 5}, 3, 5, "строки 3–5 из 60"),
        ({"from_line": 7, "to_line": 7}, 7, 7, "строки 7–7 из 60"),
        ({"from_line": 58}, 58, 60, "строки 58–60 из 60"),
        ({"to_line": 2}, 1, 2, "строки 1–2 из 60"),
        ({"around": 30}, 30 - AROUND_LINES, 30 + AROUND_LINES, "строки 10–50 из 60"),
        ({"around": 3}, 1, 3 + AROUND_LINES, "строки 1–23 из 60"),
        # Past the end: cut to it, and said so.
        ({"from_line": 58, "to_line": 70}, 58, 60, "строки 58–60 из 60 (просили 58–70: дальше "),
        ({"around": 55}, 35, 60, "строки 35–60 из 60 (просили 35–75: дальше конец заметки)"),
        ({"to_line": 1000}, 1, 60, "строки 1–60 из 60 (просили 1–1000: дальше конец заметки)"),
    ],
)
def test_spans(
    engine: Engine, notes: Path, span: dict[str, int], first: int, last: int, head: str
) -> None:
    text = format_read(engine.read(notes, "long.md", **span))
    assert text.startswith(f"{notes / 'long.md'}: {head}")
    assert numbered(text) == [(n, f"line {n}") for n in range(first, last + 1)]


def test_numbers_are_right_aligned_behind_a_tab(engine: Engine, notes: Path) -> None:
    lines = format_read(engine.read(notes, "long.md", from_line=8, to_line=11)).splitlines()
    assert lines[1:] == [" 8\tline 8", " 9\tline 9", "10\tline 10", "11\tline 11"]


@pytest.mark.parametrize(
    "span",
    [{"from_line": 61}, {"from_line": 100, "to_line": 200}, {"around": 100}],
)
def test_a_span_wholly_past_the_end_is_no_error(
    engine: Engine, notes: Path, span: dict[str, int]
) -> None:
    text = format_read(engine.read(notes, "long.md", **span))
    assert text.startswith(f"{notes / 'long.md'}: за концом заметки (просили ")
    assert text.endswith("а строк в ней 60)\n") and numbered(text) == []


@pytest.mark.parametrize(
    ("note", "span", "message"),
    [
        ("long.md", {"from_line": 0}, "from must be a line number, 1 or more"),
        ("long.md", {"to_line": -3}, "to must be a line number, 1 or more"),
        ("long.md", {"around": 0}, "around must be a line number, 1 or more"),
        ("long.md", {"from_line": True}, "from must be a line number"),
        ("long.md", {"from_line": 5, "to_line": 3}, "from 5 is after to 3: give the first "),
        ("long.md", {"around": 5, "to_line": 9}, "give either a line to read around or from"),
        ("long.md:5", {"around": 9}, "long.md:5 names its line already: leave out from, to"),
        ("long.md:0", {}, "around must be a line number, 1 or more"),
        # A bad span is said before the note is looked for.
        ("nowhere.md", {"from_line": 2, "to_line": 1}, "from 2 is after to 1"),
    ],
)
def test_bad_spans_say_what_to_write(
    engine: Engine, notes: Path, note: str, span: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=re.escape(message)):
        engine.read(notes, note, **span)


@pytest.mark.parametrize(
    ("content", "lines"),
    [
        ("a\nb\n", ["a", "b"]),
        ("a\nb", ["a", "b"]),
        ("a\r\nb\r\n", ["a", "b"]),
        ("a\rb\r", ["a", "b"]),
        ("\ufeffa\nb\n", ["a", "b"]),  # the BOM is no text an editor shows
        ("a\x0cb\u2028c\x85d\n", ["a\x0cb\u2028c\x85d"]),  # editors break at \n and \r only
        ("a\n\n\nb\n", ["a", "", "", "b"]),
        ("", []),
    ],
)
def test_lines_are_counted_as_an_editor_counts_them(
    engine: Engine, notes: Path, content: str, lines: list[str]
) -> None:
    (notes / "odd.md").write_bytes(content.encode("utf-8"))
    text = format_read(engine.read(notes, "odd.md"))
    assert numbered(text) == list(enumerate(lines, 1))
    if not lines:
        assert text == f"{notes / 'odd.md'}: заметка пуста\n"


# -- which notes --------------------------------------------------------------------------


def test_a_hits_location_reads_around_its_line(engine: Engine, notes: Path) -> None:
    """`path:line` as memo_search gives it, absolute or relative: the hit's line is there."""
    [hit] = engine.search(notes, "restic", k=1, mode="lex")
    assert (hit.path, hit.line) == (str(notes / "home" / "backup.md"), 3)
    for note in (f"{hit.path}:{hit.line}", f"home/backup.md:{hit.line}"):
        got = dict(numbered(format_read(engine.read(notes, note))))
        assert got[hit.line] == "## Restic" and len(got) == len(BACKUP.splitlines())
    # A hit's absolute path is read from its own folder: any folder inside the roots will do.
    got = format_read(engine.read(notes / "home", str(notes / "garden.md")))
    assert got.startswith(f"{notes / 'garden.md'}: строки 1–15 из 15\n")


def test_a_colon_in_a_name_is_no_line(engine: Engine, notes: Path) -> None:
    (notes / "a:b.md").write_text("# colon\n")
    assert numbered(format_read(engine.read(notes, "a:b.md"))) == [(1, "# colon")]
    with pytest.raises(NotANoteError, match="not a Markdown note"):
        engine.read(notes, "long.md:x")


def _outside(tmp_path: Path, notes: Path) -> Path:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "s.md").write_text("# secret\n")
    os.symlink(secret, notes / "link-out")
    os.symlink(secret / "s.md", notes / "s.md")
    return secret


@pytest.mark.parametrize(
    ("where", "note", "error", "message"),
    [
        ("secret", "s.md", OutsideRootsError, "{secret} is outside the folders memo may use"),
        ("notes", "{secret}/s.md", OutsideRootsError, "{secret} is outside the folders memo"),
        ("notes", "{secret}/s.md:1", OutsideRootsError, "{secret} is outside the folders memo"),
        ("notes", "../secret/s.md", NotANoteError, "give the note's path relative to the "),
        ("notes", "home/../../secret/s.md", NotANoteError, "give the note's path relative"),
        ("notes", "link-out/s.md", NotANoteError, "link-out/s.md leads outside {notes}"),
        ("notes", "s.md", NotANoteError, "s.md leads outside {notes}"),
        ("notes", "{notes}/link-out/s.md", OutsideRootsError, "is outside the folders memo"),
    ],
)
def test_confined_like_every_path(
    engine: Engine,
    notes: Path,
    tmp_path: Path,
    where: str,
    note: str,
    error: type[MemoError],
    message: str,
) -> None:
    secret = _outside(tmp_path, notes)
    names = {"secret": secret, "notes": notes}
    with pytest.raises(error, match=re.escape(message.format(**names))):
        engine.read(names[where], note.format(**names))


def _ignored(notes: Path) -> None:
    (notes / ".memoignore").write_text("private/\n")
    (notes / "private").mkdir()
    (notes / "private" / "p.md").write_text("# private\n")
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "o.md").write_text("# obsidian\n")


@pytest.mark.parametrize(
    ("where", "note", "message"),
    [
        ("", "private/p.md", "left out by .gitignore or .memoignore"),
        ("private", "p.md", "left out by .gitignore or .memoignore"),  # judged from the index
        ("", "{notes}/private/p.md:1", "left out by .gitignore or .memoignore"),
        ("", ".obsidian/o.md", "hidden folder"),
        ("", ".memoignore", "not a Markdown note"),
    ],
)
def test_notes_a_search_leaves_out_are_refused(
    engine: Engine, notes: Path, where: str, note: str, message: str
) -> None:
    _ignored(notes)
    engine.refresh(notes, embed=False)
    with pytest.raises(NotANoteError, match=re.escape(message)):
        engine.read(notes / where, note.format(notes=notes))


def test_a_note_over_the_bound_is_cut_and_says_so(engine: Engine, notes: Path) -> None:
    (notes / "big.md").write_text("# Big\n" + "".join(f"строка {i}\n" for i in range(50)))
    r = engine.read(notes, "big.md", limit=100)
    text = format_read(r)
    head, *rest = text.splitlines()
    assert r.note.cut and head.startswith(f"{notes / 'big.md'}: строки 1–{r.total} из {r.total}")
    assert head.endswith(
        f"; заметка обрезана: прочитаны первые {r.note.kept} из {r.note.size} байт"
    )
    assert rest[-1] == (
        f"<!-- memo: здесь обрезано, первые {r.note.kept} из {r.note.size} байт; "
        f"остальное в {notes / 'big.md'} -->"
    )
    english = format_read(r, Lang.EN).splitlines()
    assert english[0].endswith(f"; the note is cut: its first {r.note.kept} of 796 bytes were read")
    assert english[-1] == (
        f"<!-- memo: cut here, the first {r.note.kept} of {r.note.size} bytes; "
        f"the rest is in {notes / 'big.md'} -->"
    )
    # Lines before the cut: the head says so, the cut line is where the cut is.
    early = format_read(engine.read(notes, "big.md", to_line=2, limit=100))
    assert "заметка обрезана" in early and "<!--" not in early


# -- over MCP -----------------------------------------------------------------------------


async def test_the_tool_is_listed_read_only_and_short(allowed: Path) -> None:
    async with client(allowed) as c:
        [t] = [t for t in (await c.list_tools()).tools if t.name == "memo_read"]
    assert t.annotations.read_only_hint is True and t.annotations.open_world_hint is False
    assert t.title and len(t.description) <= 100
    schema = t.input_schema
    assert sorted(schema["required"]) == ["note", "path"]
    assert list(schema["properties"]) == ["path", "note", "from_line", "to_line", "around"]
    for name in ("from_line", "to_line", "around"):
        assert {"type": "integer", "minimum": 1} in schema["properties"][name]["anyOf"]


async def test_the_tool_serves_what_the_resource_serves(allowed: Path, notes: Path) -> None:
    (notes / "crlf.md").write_bytes("\ufeff# CRLF\r\n\r\nтекст\r\n".encode())
    huge = notes / "huge.md"
    huge.write_text("# Huge\n" + "x" * 100 + "\n" + "y" * (NOTE_LIMIT + 10) + "\n")
    async with client(allowed) as c:
        for rel in ("garden.md", "home/backup.md", "crlf.md", "long.md", "huge.md"):
            [content] = (await c.read_resource(note_uri(notes, rel))).contents
            error, text = await tool(c, {"path": str(notes), "note": rel})
            assert not error, text
            served = content.text.replace("\r\n", "\n").removeprefix("\ufeff")
            shown = "".join(line + "\n" for _, line in numbered(text))
            if rel == "huge.md":  # cut: the same first lines, the same last line
                body, cut = served.rsplit("\n<!-- ", 1)
                assert body == shown == "# Huge\n" + "x" * 100 + "\n"
                assert text.splitlines()[-1] == "<!-- " + cut.rstrip("\n")
            else:
                assert shown == served, rel


async def test_the_tool_answers_ranges_and_locations(allowed: Path, notes: Path) -> None:
    async with client(allowed) as c:
        args = {"path": str(notes), "query": "restic", "mode": "lex", "k": 1}
        hit = await c.call_tool("memo_search", args)
        location = hit.content[0].text.split("  ", 1)[0]
        assert location == f"{notes / 'home' / 'backup.md'}:3"
        error, text = await tool(c, {"path": str(notes), "note": location})
        assert not error and dict(numbered(text))[3] == "## Restic"
        span = {"path": str(notes), "note": "long.md", "from_line": 59, "to_line": 99}
        error, text = await tool(c, span)
        assert not error and numbered(text) == [(59, "line 59"), (60, "line 60")]
        assert "просили 59–99: дальше конец заметки" in text.splitlines()[0]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"note": "long.md", "from_line": 5, "to_line": 3}, "from 5 позже, чем to 3: сначала "),
        ({"note": "long.md", "from_line": 0}, 'memo_read: плохое значение "from_line"'),
        ({"note": "long.md", "around": "5"}, 'memo_read: плохое значение "around"'),
        ({}, 'memo_read: не хватает обязательного аргумента "note"'),
        ({"note": "nowhere.md"}, "нет такой заметки: nowhere.md в {notes}"),
        ({"note": "private/p.md"}, "private/p.md исключена правилами .gitignore или .memoignore"),
        ({"note": "../secret/s.md"}, "укажите путь заметки относительно коллекции"),
        ({"note": "s.md"}, "s.md ведёт за пределы {notes}"),
        ({"note": "{secret}/s.md:1"}, "{secret} лежит вне папок, которые memo разрешено"),
        ({"path": "{secret}", "note": "s.md"}, "{secret} лежит вне папок, которые memo разрешено"),
    ],
)
async def test_the_tools_errors_are_error_results(
    allowed: Path, notes: Path, tmp_path: Path, arguments: dict[str, Any], message: str
) -> None:
    secret = _outside(tmp_path, notes)
    _ignored(notes)
    names = {"notes": notes, "secret": secret}
    args = {k: v.format(**names) if isinstance(v, str) else v for k, v in arguments.items()}
    async with client(allowed) as c:
        # memo_search makes the index: its ignore rules judge the notes of every sub-folder.
        await c.call_tool("memo_search", {"path": str(notes), "query": "x", "mode": "lex"})
        error, text = await tool(c, {"path": str(notes)} | args)
    assert error and text.startswith(message.format(**names)), text


async def test_the_tool_refuses_what_the_resource_refuses(allowed: Path, notes: Path) -> None:
    _ignored(notes)
    async with client(allowed) as c:
        await c.call_tool("memo_search", {"path": str(notes), "query": "x", "mode": "lex"})
        for rel in ("private/p.md", ".obsidian/o.md", "nowhere.md", "s.md"):
            with pytest.raises(MCPError) as refused:
                await c.read_resource(note_uri(notes, rel))
            error, text = await tool(c, {"path": str(notes), "note": rel})
            assert error and text == refused.value.error.message, rel


# -- the command line ---------------------------------------------------------------------


def test_memo_read_prints_the_same_text(notes: Path, engine: Engine, capsys) -> None:
    assert main(["read", str(notes), "long.md", "--from", "3", "--to", "4"]) == 0
    out = capsys.readouterr().out
    assert out == format_read(engine.read(notes, "long.md", from_line=3, to_line=4))
    assert out == f"{notes / 'long.md'}: строки 3–4 из 60\n3\tline 3\n4\tline 4\n"
    assert main(["read", str(notes), "long.md:40"]) == 0
    assert numbered(capsys.readouterr().out)[0] == (20, "line 20")
    assert main(["read", str(notes), "long.md", "--around", "2"]) == 0
    assert numbered(capsys.readouterr().out)[0] == (1, "line 1")


def test_memo_read_escapes_what_a_terminal_would_obey(notes: Path, capsys) -> None:
    (notes / "esc.md").write_text("# a\x1b[2Jb\tc\n")
    assert main(["read", str(notes), "esc.md"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "1\t# a\\x1b[2Jb\tc"


@pytest.mark.parametrize("where", ["above", "inside", "elsewhere"])
def test_memo_read_opens_every_hit_as_memo_search_printed_it(
    allowed: Path, notes: Path, capsys, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A hit's `path:line` as `memo search PATH` printed it (relative to the folder the search
    ran in, or absolute), given to `memo read PATH` from that same folder."""
    cwd = {"above": allowed, "inside": notes / "home", "elsewhere": allowed.parent}[where]
    monkeypatch.chdir(cwd)
    path = os.path.relpath(notes)  # PATH as the user typed it there
    assert main(["search", path, "line", "--mode", "lex", "-k", "5"]) == 0
    printed = re.findall(r"^(\S+:\d+)  ", capsys.readouterr().out, re.M)
    assert printed, "the search found nothing"
    for hit in printed:
        assert main(["read", path, hit]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        line = int(hit.rsplit(":", 1)[1])
        target = (cwd / hit.rsplit(":", 1)[0]).resolve()
        assert out.startswith(f"{target}: ") and line in dict(numbered(out))


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["long.md", "--from", "5", "--to", "3"], 2, "memo: from 5 позже, чем to 3"),
        (["long.md", "--around", "0"], 2, "memo: around — номер строки, от 1"),
        (["nowhere.md"], 1, "memo: нет такой заметки: nowhere.md в "),
        (["../x.md"], 1, "memo: укажите путь заметки относительно коллекции"),
        (["long.md", "--from", "x"], 2, "аргумент --from: не целое число: 'x'"),
        ([], 2, "не хватает аргументов: note"),
    ],
)
def test_memo_read_exit_codes(
    notes: Path, capsys, argv: list[str], code: int, message: str
) -> None:
    try:
        got = main(["read", str(notes), *argv])
    except SystemExit as e:  # argparse: a usage error
        got = e.code
    assert got == code
    assert message in capsys.readouterr().err


# -- names that lie -------------------------------------------------------------------------

ODD_NAMES = [
    b"bad\xffname.md",
    "gpj\u202e.md".encode(),
    b"tab\tin\x1bname.md",
    # Characters below U+0100 escaped in a name: not to be read back as undecodable bytes.
    "soft\u00adhyphen\u0085.md".encode(),
]


@pytest.mark.parametrize("raw", ODD_NAMES, ids=["not-utf8", "bidi", "controls", "latin1-format"])
async def test_a_hit_on_an_odd_name_opens_with_the_path_it_shows(
    allowed: Path, notes: Path, raw: bytes
) -> None:
    """The path an answer shows (text: escaped; structuredContent: the same escapes) opens
    that note through memo_read and `memo read`, as the resource URI does."""
    with open(os.fsencode(notes) + b"/" + raw, "wb") as f:
        f.write(b"# Odd\n\nquokka lives here\n")
    async with client(allowed) as c:
        r = await c.call_tool(
            "memo_search", {"path": str(notes), "query": "quokka", "mode": "lex", "k": 1}
        )
        text_path = r.content[0].text.split("\n")[0].rsplit("  ", 1)[0]
        data_path = (
            f"{r.structured_content['hits'][0]['path']}:{r.structured_content['hits'][0]['line']}"
        )
        for shown_path in (text_path, data_path):
            assert "\\" in shown_path and "\u202e" not in shown_path  # escaped, in order
            error, read = await tool(c, {"path": str(notes), "note": shown_path})
            assert not error, read
            assert "quokka lives here" in read
    with Engine(roots=[allowed]) as e:
        assert e.read(str(notes), text_path).lines[-1] == "quokka lives here"
