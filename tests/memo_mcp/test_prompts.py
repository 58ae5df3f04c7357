"""memo_mcp.prompts: the two prompts' texts, their arguments checked, their `path` confined
to the roots and made absolute, errors in the reader's language.

The functions are called directly (`notes_folder` in real `FolderSlots`); one in-process client
checks what the registration adds. tests/stories/test_mcp_prompts.py drives the whole server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from memo_mcp.places import FolderSlots
from memo_mcp.prompts import (
    PATH_PROMPTS,
    PROMPTS,
    notes_folder,
    register_prompts,
    required_text,
    search_notes_text,
    topic_brief_text,
)
from memo_text import Lang


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "notes" / "sub").mkdir(parents=True)
    (tmp_path / "root" / "note.md").write_text("# Note\n", encoding="utf-8")
    return tmp_path / "root"


# -- required_text -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kept"),
    [("q", "q"), ("  как поливать томаты?\n", "как поливать томаты?"), ("a  b", "a  b")],
)
def test_required_text_is_kept_stripped(value: str, kept: str) -> None:
    assert required_text("question", value, Lang.RU) == kept


@pytest.mark.parametrize("value", ["", " ", "\n\t ", "\u3000"])
@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (Lang.RU, "topic пуст: напишите, что искать"),
        (Lang.EN, "topic is empty: say what to look for"),
    ],
)
def test_an_empty_argument_is_refused_in_the_readers_language(
    value: str, lang: Lang, said: str
) -> None:
    with pytest.raises(MCPError) as err:
        required_text("topic", value, lang)
    assert err.value.error.code == INVALID_PARAMS
    assert err.value.error.message == said


# -- notes_folder --------------------------------------------------------------------------------


async def test_the_folder_is_made_absolute_and_real(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = str((root / "notes").resolve())
    (root / "link").symlink_to(root / "notes", target_is_directory=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("HOME", str(root))
    places = FolderSlots()
    for written in (
        str(root / "notes"),
        "notes",
        "./notes/",
        "notes/sub/..",
        "~/notes",
        str(root / "link"),  # a link inside the roots: the folder it leads to
    ):
        assert await notes_folder(written, [root], places, Lang.RU) == real, written
    assert await notes_folder(str(root), [root], places, Lang.RU) == str(root.resolve())


@pytest.mark.parametrize(
    ("written", "lang", "said"),
    [
        ("{outside}", Lang.EN, "{outside} is outside the folders memo may use ({root})"),
        ("{outside}", Lang.RU, "{outside} лежит вне папок, которые memo разрешено использовать"),
        ("{root}/link-out", Lang.EN, "is outside the folders memo may use"),
        ("{root}/../..", Lang.EN, "is outside the folders memo may use"),
        ("{root}/missing", Lang.EN, "path does not exist: {root}/missing"),
        ("{root}/missing", Lang.RU, "путь не существует: {root}/missing"),
        ("{root}/note.md", Lang.EN, "not a directory: {root}/note.md"),
        ("", Lang.EN, "path is empty"),
    ],
)
async def test_a_folder_that_may_not_be_used_is_an_invalid_params_error(
    root: Path, tmp_path: Path, written: str, lang: Lang, said: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link-out").symlink_to(outside, target_is_directory=True)
    names = {"root": root, "outside": outside}
    with pytest.raises(MCPError) as err:
        await notes_folder(written.format(**names), [root], FolderSlots(), lang)
    assert err.value.error.code == INVALID_PARAMS
    assert said.format(**names) in err.value.error.message


async def test_control_characters_in_a_path_are_escaped_in_the_error(root: Path) -> None:
    hostile = f"{root}/no\x1b[31mpe\x07"
    with pytest.raises(MCPError) as err:
        await notes_folder(hostile, [root], FolderSlots(), Lang.EN)
    message = err.value.error.message
    assert "\x1b" not in message and "\x07" not in message
    assert f"{root}/no\\x1b[31mpe\\x07" in message


async def test_a_folder_in_any_of_several_roots_is_taken(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    places = FolderSlots()
    assert await notes_folder(str(other), [root, other], places, Lang.EN) == str(other.resolve())
    with pytest.raises(MCPError):
        await notes_folder(str(other), [root], places, Lang.EN)


# -- the texts -----------------------------------------------------------------------------------


def test_search_notes_text_names_the_folder_for_every_call_and_keeps_the_question() -> None:
    question = "Как поливать томаты?\nИ как часто?"
    text = search_notes_text(question, "/home/me/notes")
    assert text.startswith(
        f"Answer this question from my Markdown notes in /home/me/notes:\n\n{question}\n"
    )
    assert text.count('path "/home/me/notes"') == 2  # memo_search and memo_read alike
    assert "memo_search" in text and "memo_read" in text and "memo://note/" in text
    assert '"lex"' in text and "Russian and English" in text
    assert "`path:line`" in text
    assert text.endswith("Answer in the language of the question.")


def test_topic_brief_text_names_the_folder_and_asks_for_a_sourced_brief() -> None:
    text = topic_brief_text("бэкапы", "/srv/wiki")
    assert text.startswith("Collect everything my Markdown notes in /srv/wiki say about: бэкапы\n")
    assert text.count('path "/srv/wiki"') == 2
    assert "k=15" in text and "`path:line`" in text
    for asked in ("summary", "contradicts", "out of date", "open questions"):
        assert asked in text
    assert text.endswith("Write in the language of the topic.")


@pytest.mark.parametrize("make", [search_notes_text, topic_brief_text])
def test_the_texts_are_plain_text_whatever_the_folder(make) -> None:
    folder = "/notes/с пробелом/ёж"
    text = make("q", folder)
    assert text.count(folder) == 3
    assert make("q", folder) == text  # the same every time: a client may cache it


# -- registration ----------------------------------------------------------------------------------


def test_the_path_prompts_are_the_registered_ones() -> None:
    assert len(PROMPTS) == len(PATH_PROMPTS) == 2


async def test_registered_prompts_answer_with_the_texts_and_errors_in_their_language(
    root: Path,
) -> None:
    server = MCPServer(name="prompts")
    register_prompts(server, [root], FolderSlots(), Lang.EN)
    folder = str((root / "notes").resolve())
    async with Client(server, mode="legacy") as c:
        listed = {p.name: p for p in (await c.list_prompts()).prompts}
        assert set(listed) == PATH_PROMPTS
        for name, first, make in (
            ("search_notes", "question", search_notes_text),
            ("topic_brief", "topic", topic_brief_text),
        ):
            result = await c.get_prompt(name, {first: "  beets \n", "path": str(root / "notes")})
            [message] = result.messages
            assert message.role == "user" and message.content.type == "text"
            assert message.content.text == make("beets", folder)
            with pytest.raises(MCPError) as err:
                await c.get_prompt(name, {first: " ", "path": str(root / "notes")})
            assert err.value.error.message == f"{first} is empty: say what to look for"
            with pytest.raises(MCPError) as err:
                await c.get_prompt(name, {first: "x", "path": str(root.parent)})
            assert "is outside the folders memo may use" in err.value.error.message


@pytest.mark.parametrize("register", PROMPTS)
async def test_a_prompt_registered_without_places_gets_its_own(register, root: Path) -> None:
    server = MCPServer(name="one")
    register(server, [root])  # places and lang left to their defaults
    async with Client(server, mode="legacy") as c:
        [prompt] = (await c.list_prompts()).prompts
        first = prompt.arguments[0].name
        result = await c.get_prompt(prompt.name, {first: "q", "path": str(root / "notes")})
        assert str((root / "notes").resolve()) in result.messages[0].content.text
        with pytest.raises(MCPError) as err:
            await c.get_prompt(prompt.name, {first: "", "path": str(root)})
        assert err.value.error.message == f"{first} пуст: напишите, что искать"  # Russian
