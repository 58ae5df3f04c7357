"""memo_mcp.server's five tools called directly, as plain functions, over a real Engine (the
tiny ONNX model) and a tiny folder of notes: each gets a Context whose lifespan output is the
server's `MemoState`, as the SDK hands one to a tool. What a client sees over the wire is in
test_mcp_client and test_mcp_wire."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver.exceptions import ToolError

from memo_core import Embedder, Engine, ModelSource
from memo_mcp.server import (
    TOOLS,
    MemoContext,
    MemoState,
    build_server,
    memo_changes,
    memo_read,
    memo_reindex,
    memo_search,
    memo_status,
)


class Session:
    """The client's side of a tool call, as far as a tool reaches it: the progress sent."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        self.progress.append((progress, total, message))


@pytest.fixture
def engine(tiny_embedder: Embedder, tmp_path: Path) -> Iterator[Engine]:
    with Engine(models=ModelSource(tiny_embedder), roots=[tmp_path]) as e:
        yield e


@pytest.fixture
def state(engine: Engine, tmp_path: Path) -> MemoState:
    return MemoState.make([tmp_path], engine)


def call(state: MemoState) -> tuple[MemoContext, Session]:
    """A tool call's Context over `state` (what the lifespan yielded), and its client."""
    session = Session()
    request = ServerRequestContext(
        session=session,  # type: ignore[arg-type]
        lifespan_context=state,
        protocol_version="2025-11-25",
        method="tools/call",
    )
    return MemoContext(request_context=request), session


async def test_memo_search_gives_the_passage_as_text_and_data(
    state: MemoState, notes: Path
) -> None:
    ctx, session = call(state)
    answer = await memo_search(ctx, str(notes), "restic", k=1)
    backup = notes / "backup.md"
    assert answer.content[0].text == (
        f"{backup}:5  Бэкап > Восстановление\nКак восстановить файлы: restic restore latest.\n"
        "\n(показан 1; есть ещё: следующая страница — offset 1)\n"
    )
    data = answer.structured_content
    assert data is not None and data["next_offset"] == 1
    [hit] = data["hits"]
    assert (hit["path"], hit["line"], hit["end_line"]) == (str(backup), 5, 7)
    assert hit["found_by"] == ["lex", "vec"]
    # The first search indexed the folder, and said so as it went.
    assert session.progress == [
        (3.0, 3.0, f"индексация {notes}: 3/3 файлов проиндексировано"),
        (8.0, 8.0, f"индексация {notes}: 5/5 фрагментов с векторами"),
    ]


async def test_memo_search_keeps_to_its_scope(state: MemoState, notes: Path) -> None:
    ctx, _ = call(state)
    answer = await memo_search(ctx, str(notes), "soup", mode="lex", under="cooking")
    assert answer.structured_content is not None
    paths = [h["path"] for h in answer.structured_content["hits"]]
    assert paths == [str(notes / "cooking" / "soup.md")]


async def test_memo_status_only_reads_until_a_search_indexes(state: MemoState, notes: Path) -> None:
    ctx, _ = call(state)
    before = await memo_status(ctx, str(notes))
    assert before.startswith(
        f"{notes}: файлов 0, чанков 0, индекс нет, ещё не проиндексировано 3, "
    )
    assert not (notes / ".memo").exists()
    await memo_search(ctx, str(notes), "restic")
    assert (await memo_status(ctx, str(notes))).startswith(f"{notes}: файлов 3, чанков 5, индекс ")


async def test_memo_reindex_rebuilds_every_note(state: MemoState, notes: Path) -> None:
    ctx, session = call(state)
    assert await memo_reindex(ctx, str(notes)) == "переиндексировано файлов: 3"
    assert session.progress[-1][2] == f"переиндексация {notes}: 5/5 фрагментов с векторами"
    assert (await memo_status(ctx, str(notes))).startswith(f"{notes}: файлов 3, чанков 5, ")


async def test_memo_changes_gives_every_note_then_what_changed(
    state: MemoState, notes: Path
) -> None:
    ctx, _ = call(state)
    full = await memo_changes(ctx, str(notes))
    assert full.structured_content is not None
    assert full.structured_content["mode"] == "full"
    assert full.structured_content["files"] == [
        str(notes / "backup.md"),
        str(notes / "cooking" / "soup.md"),
        str(notes / "pets.md"),
    ]
    (notes / "pets.md").write_text("# Pets\n\nThe cat sleeps all day.\n", encoding="utf-8")
    delta = await memo_changes(ctx, str(notes), since=full.structured_content["to"])
    data = delta.structured_content
    assert data is not None
    assert (data["mode"], data["added"], data["changed"], data["removed"]) == (
        "delta",
        [],
        [str(notes / "pets.md")],
        [],
    )


async def test_memo_read_numbers_a_notes_lines(state: MemoState, notes: Path) -> None:
    ctx, _ = call(state)
    text = await memo_read(ctx, str(notes), "backup.md", from_line=1, to_line=3)
    assert text == (
        f"{notes / 'backup.md'}: строки 1–3 из 7\n"
        "1\t# Бэкап\n"
        "2\t\n"
        "3\tНастроить бэкап сервера: restic каждую ночь, проверка раз в месяц.\n"
    )


async def test_a_path_outside_the_roots_is_a_tool_error(state: MemoState, tmp_path: Path) -> None:
    """What the client reads (isError): the engine's words, in the reader's language."""
    ctx, _ = call(state)
    with pytest.raises(ToolError, match="лежит вне папок, которые memo разрешено использовать"):
        await memo_status(ctx, str(tmp_path.parent))
    assert not (tmp_path.parent / ".memo").exists()


async def test_the_server_lists_the_tool_functions_over_its_state(
    engine: Engine, tmp_path: Path
) -> None:
    server = build_server([tmp_path], engine)
    functions = [memo_search, memo_status, memo_reindex, memo_changes, memo_read]
    assert [t.fn for t in TOOLS] == functions
    assert [t.name for t in await server.list_tools()] == [f.__name__ for f in functions]
    async with server.state.serving(server) as yielded:
        assert yielded is server.state
