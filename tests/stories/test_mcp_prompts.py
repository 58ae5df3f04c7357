"""memo-mcp prompts: `search_notes` and `topic_brief`, through the SDK's in-process client."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_helpers import make_notes

from memo_mcp import prompts
from memo_mcp.server import build_server


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return make_notes(tmp_path)


def client(*roots: Path) -> Client:
    return Client(build_server(list(roots)), mode="legacy")


async def prompt_text(c: Client, name: str, arguments: dict[str, str]) -> str:
    result = await c.get_prompt(name, arguments)
    [message] = result.messages
    assert message.role == "user" and message.content.type == "text"
    return message.content.text


async def test_prompts_are_listed_with_their_arguments(tmp_path: Path) -> None:
    async with client(tmp_path) as c:
        listed = {p.name: p for p in (await c.list_prompts()).prompts}
        assert c.server_capabilities.prompts is not None
    assert list(listed) == ["search_notes", "topic_brief"]
    for name, first in (("search_notes", "question"), ("topic_brief", "topic")):
        p = listed[name]
        assert p.title and p.description and len(p.description) <= 100
        assert [(a.name, a.required) for a in p.arguments] == [(first, True), ("path", True)]
        assert all(a.description for a in p.arguments)
    assert {n for n, p in listed.items() if "path" in {a.name for a in p.arguments}} == (
        prompts.PATH_PROMPTS
    )


async def test_search_notes_tells_the_model_to_search_read_and_cite(notes: Path) -> None:
    async with client(notes.parent) as c:
        text = await prompt_text(
            c, "search_notes", {"question": "Как поливать томаты?", "path": str(notes)}
        )
    assert f"my Markdown notes in {notes}:\n\nКак поливать томаты?\n" in text
    assert f'Call memo_search with path "{notes}"' in text
    assert "`path:line`" in text and "do not answer the question, say so" in text
    assert "memo://note/" in text
    assert f'call memo_read with path "{notes}" and the hit\'s `path:line` as the note' in text


async def test_topic_brief_asks_for_sources_contradictions_and_gaps(notes: Path) -> None:
    async with client(notes.parent) as c:
        text = await prompt_text(c, "topic_brief", {"topic": "бэкапы", "path": str(notes)})
    assert text.startswith(f"Collect everything my Markdown notes in {notes} say about: бэкапы")
    assert f'Call memo_search with path "{notes}" several times' in text
    for word in ("`path:line`", "contradicts", "open questions", "call memo_read"):
        assert word in text


async def test_the_path_is_confined_and_made_absolute(
    notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outside = tmp_path.parent
    async with client(tmp_path) as c:
        text = await prompt_text(c, "search_notes", {"question": "q", "path": "notes/../notes"})
        assert f'path "{notes}"' in text
        for name, first in (("search_notes", "question"), ("topic_brief", "topic")):
            with pytest.raises(MCPError) as err:
                await c.get_prompt(name, {first: "q", "path": str(outside)})
            assert err.value.error.message.startswith(
                f"{outside} лежит вне папок, которые memo разрешено использовать ({tmp_path})"
            )
        with pytest.raises(MCPError) as err:
            await c.get_prompt("search_notes", {"question": "q", "path": str(tmp_path / "no")})
        assert err.value.error.message.startswith("путь не существует:")
        with pytest.raises(MCPError) as err:
            await c.get_prompt("search_notes", {"question": "  ", "path": str(notes)})
        assert err.value.error.message == "question пуст: напишите, что искать"
        with pytest.raises(MCPError) as err:
            await c.get_prompt("search_notes", {"question": "q"})
        assert "path" in err.value.error.message


@pytest.mark.parametrize("register", prompts.PROMPTS)
async def test_each_prompt_registers_alone(register, tmp_path: Path) -> None:
    server = MCPServer(name="one")
    register(server, [tmp_path])
    async with Client(server, mode="legacy") as c:
        assert len((await c.list_prompts()).prompts) == 1
