"""`memo-mcp`: memo's MCP server (stdio), a thin layer over `memo_core`'s Engine.

Every tool calls the same engine calls and formatters as the `memo` CLI, so the two never
disagree. The server builds one Engine and keeps it for its whole life (the MCP server
lives for a whole agent session): indexes stay open and the model stays loaded.
Engine work (model load, first index of a big collection) runs on worker threads, so the
server keeps answering other requests; its progress goes to the client as progress
notifications when the client asked for them (a `progressToken`).

Errors: an engine `MemoError` becomes the tool result's text as it is (`isError: true`);
bad or missing arguments and unknown tools get readable texts (see `MemoServer.call_tool`).
Nothing is printed at import time: stdout carries JSON-RPC only.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from memo_core import (
    AROUND_LINES,
    DEFAULT_K,
    DEFAULT_MAX_CHARS,
    DEFAULT_MODE,
    MAX_CHARS_RANGE,
    MAX_K,
    MAX_OFFSET,
    MODES,
    MemoError,
    ModeName,
    NoCollectionError,
    PathNotFoundError,
    __version__,
    allowed_roots,
    changes_data,
    for_terminal,
    format_changes,
    format_hits,
    format_read,
    format_reindex,
    format_status,
    search_data,
)
from memo_mcp.completions import register_completions
from memo_mcp.http_transport import add_http_options, http_config, serve_http
from memo_mcp.lazy import LazyEngine
from memo_mcp.places import FOLDER_WORKERS, WORKERS, Places
from memo_mcp.prompts import register_prompts
from memo_mcp.resources import register_resources
from memo_mcp.stdio_guard import serve_stdio

if TYPE_CHECKING:
    from memo_core import Engine, Progress

log = logging.getLogger("memo_mcp")

INSTRUCTIONS = (
    "memo searches the user's folders of Markdown notes (Russian and English) "
    "by words and by meaning.\n"
    "Call memo_search with the notes folder (e.g. ~/notes) and a question; "
    "each hit is `path:line  heading` and the passage."
)

# Progress notifications at most this often (the index reports every ~256 chunks).
PROGRESS_INTERVAL_S = 0.25
# How long a stopping server waits for its indexes to close: a refresh stuck in a dead
# drive holds its index, and must not keep the server from stopping.
CLOSE_WAIT_S = 0.5
# Per collection: 24 hex digits, and its folder below the path (base64url), joined by ".".
MAX_FINGERPRINT_CHARS = 256_000

PathArg = Annotated[
    str,
    Field(
        description="Folder of Markdown notes, or a folder of such folders: absolute, ~/..., "
        "or relative to the server's working directory. E.g. ~/notes"
    ),
]

T = TypeVar("T")


class SearchHit(BaseModel):
    """One hit of memo_search's structuredContent (`memo_core.search_data`)."""

    path: str = Field(description="The note, absolute")
    relpath: str = Field(description="The note, relative to its collection")
    collection: str = Field(description="The collection's folder")
    line: int = Field(description="First line shown (1-based, as an editor counts)")
    end_line: int = Field(description="Last line shown")
    heading: str = Field(description="The heading path above the lines, e.g. Setup > Linux")
    text: str = Field(description="The lines line..end_line that best match the query")
    score: float
    found_by: list[Literal["lex", "vec"]] = Field(description="By words, by meaning or both")


class SearchAnswer(BaseModel):
    """memo_search's structuredContent: the same hits as its text."""

    mode: ModeName = Field(description="How it searched (hybrid falls back to lex without a model)")
    notices: list[str] = Field(description="What the reader should know about this answer")
    hits: list[SearchHit] = Field(description="Best first")
    next_offset: int | None = Field(description="The offset of the next page; null: no more hits")


class MemoServer(MCPServer):
    """MCPServer with the texts SPEC.md asks for on unknown tools and bad arguments.

    `roots`: the only folders its tools may touch (see `memo_core.files.confine`); `engines`:
    the one Engine all tools, resources and completions use, made on first use.
    """

    roots: list[Path]
    engines: LazyEngine

    async def run_stdio_async(self) -> None:
        # The SDK's stdio transport, with lines it would drop in silence answered (-32700/-32600).
        await serve_stdio(self._lowlevel_server)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        if name not in {t.name for t in await self.list_tools()}:
            raise ToolError(f"unknown tool: {name}")
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: the SDK logs it and tells the client only the tool's name
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(_arguments_text(name, cause)) from cause
            if isinstance(cause, ToolError):
                # Ours (an engine error): its text alone, without the SDK's prefix.
                raise ToolError(str(cause)) from cause
            raise


def _arguments_text(tool: str, err: ValidationError) -> str:
    """`memo_search: missing argument "path" (...)` and the like, one line per problem."""
    lines = []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "arguments"
        if e["type"] == "missing":
            lines.append(f'{tool}: missing required argument "{field}"')
        else:
            got = repr(e.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            lines.append(f'{tool}: bad value for "{field}": {e["msg"]} (got {got})')
    return "\n".join(lines) + f"\n{_USAGE[tool]}"


_MODES_TEXT = " | ".join(f'"{m}"' for m in MODES)
_USAGE = {
    "memo_search": 'usage: {"path": "~/notes", "query": "what to find", '
    f'"k": 1..{MAX_K} (default {DEFAULT_K}), "mode": {_MODES_TEXT} (default "{DEFAULT_MODE}"), '
    f'"offset": 0..{MAX_OFFSET} (default 0), "max_chars": '
    f"{MAX_CHARS_RANGE[0]}..{MAX_CHARS_RANGE[1]} (default {DEFAULT_MAX_CHARS}), "
    '"under": "projects", "tags": ["work"], "after": "2024-05-01", "before": "2024-05-31" '
    "(optional)}",
    "memo_status": 'usage: {"path": "~/notes"}',
    "memo_reindex": 'usage: {"path": "~/notes"}',
    "memo_changes": 'usage: {"path": "~/notes", "since": "<fingerprint>" (optional)}',
    "memo_read": 'usage: {"path": "~/notes", "note": "home/backup.md", "from_line": 1, '
    '"to_line": 40 (both optional)} or {"path": "~/notes", "note": "/home/me/notes/a.md:12"}',
}


class ProgressBridge:
    """An engine ProgressFn (called on worker threads) that sends MCP progress.

    MCP wants `progress` to grow with every notification; the engine reports stages (index,
    then embed, per collection; a search refreshes its collections side by side) that each
    count from zero. So each stage keeps its own count, and `progress` is their sum, `total`
    the sum of their totals, both taken under a lock: the stages report from their own
    threads at once. A stage is one Progress object, which the indexer makes for each pass
    (one collection's words, or its vectors) and updates in place as the pass goes on.
    """

    def __init__(self, ctx: Context, what: str) -> None:
        self.ctx = ctx
        self.what = what
        # Made on the event loop; called from any thread (a tool's worker, or the engine's
        # background refresh), which reaches the loop through this token.
        self._token = anyio.lowlevel.current_token()
        self._lock = threading.Lock()
        # Per stage, by the id of its Progress (kept here, so that no id is reused): the
        # stage, its work done so far and its total.
        self._stages: dict[int, tuple[Progress, int, int]] = {}
        self._last_sent = 0.0
        self._sent = -1.0

    def __call__(self, p: Progress) -> None:
        if p.phase == "embed":
            done, total, unit = p.chunks_done, p.chunks_total or 0, "chunks embedded"
        else:
            done, total, unit = p.files_done, p.files_total, "files indexed"
        # Held while sending too: notifications from two threads must not overtake each other.
        with self._lock:
            before = self._stages.get(id(p))
            done = max(done, before[1]) if before else done  # a stage reported again late
            self._stages[id(p)] = (p, done, total)
            now = time.monotonic()
            if done < total and now - self._last_sent < PROGRESS_INTERVAL_S:
                return
            progress = float(sum(d for _, d, _ in self._stages.values()))
            if progress <= self._sent:
                return
            self._last_sent, self._sent = now, progress
            overall = float(sum(t for _, _, t in self._stages.values()))
            try:
                anyio.from_thread.run(
                    self.ctx.report_progress,
                    progress,
                    overall,
                    f"{self.what}: {done}/{total} {unit}",
                    token=self._token,
                )
            except Exception as e:  # a lost notification must never stop the index
                log.debug("progress notification failed: %r", e)


def _error_text(e: MemoError, path: str) -> str:
    text = for_terminal(str(e))  # names that are not UTF-8 could not even be sent
    p = path.strip()
    relative = p and not p.startswith("~") and not os.path.isabs(p)
    if isinstance(e, (PathNotFoundError, NoCollectionError)) and relative:
        # The agent cannot know where the server runs: say so.
        text += (
            f"\n(a relative path is taken from memo-mcp's working directory, {os.getcwd()}; "
            "pass an absolute path such as /home/me/notes or ~/notes)"
        )
    return text


@asynccontextmanager
async def _closing_engine(server: MCPServer) -> AsyncIterator[None]:
    """While the server runs; then its indexes are closed (the Engine stays usable)."""
    try:
        yield None
    finally:
        if isinstance(server, MemoServer):
            await anyio.to_thread.run_sync(server.engines.close_within, CLOSE_WAIT_S)


def build_server(roots: list[Path] | None = None, engine: Engine | None = None) -> MemoServer:
    """The server; its tools touch only `roots` (default: MEMO_ROOTS, else the home folder)
    and work through `engine` (default: one made on first use, with the configured model)."""
    roots = allowed_roots() if roots is None else list(roots)
    engines = LazyEngine(roots, engine)
    server = MemoServer(
        name="memo",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=_closing_engine,
    )
    server.roots = roots
    server.engines = engines
    # Where every call that touches a folder runs (tools, resources, completions, prompts).
    places = Places(WORKERS, FOLDER_WORKERS)

    async def run(path: str, fn: Callable[[Path], T]) -> T:
        """`fn(real path)` in the folder's places once `path` is confined to the roots;
        MemoError (OutsideRootsError too) becomes the tool's error text."""
        try:
            return await places.confined(path, roots, fn)
        except MemoError as e:
            raise ToolError(_error_text(e, path)) from e

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(
        name="memo_search",
        title="Search notes",
        description="Search Markdown notes by words and meaning (indexes them in .memo/); "
        "gives path:line",
        annotations=read_only,
    )
    async def memo_search(
        path: PathArg,
        query: Annotated[
            str,
            Field(min_length=1, description="What to look for, in any words or language"),
        ],
        ctx: Context,
        k: Annotated[
            int, Field(strict=True, ge=1, le=MAX_K, description="How many passages")
        ] = DEFAULT_K,
        mode: Annotated[
            ModeName,
            Field(description="hybrid: words + meaning; lex: words only; vec: meaning only"),
        ] = DEFAULT_MODE,
        offset: Annotated[
            int,
            Field(
                strict=True,
                ge=0,
                le=MAX_OFFSET,
                description="Skip this many hits: the next page (an answer says its offset)",
            ),
        ] = 0,
        max_chars: Annotated[
            int,
            Field(
                strict=True,
                ge=MAX_CHARS_RANGE[0],
                le=MAX_CHARS_RANGE[1],
                description="The answer's size in characters at most (fewer hits if need be)",
            ),
        ] = DEFAULT_MAX_CHARS,
        under: Annotated[
            str | None,
            Field(description="Only notes in this sub-folder or glob, relative to path"),
        ] = None,
        tags: Annotated[
            list[str] | None,
            Field(description="Only notes with all these tags (a/b matches a/b/c)"),
        ] = None,
        after: Annotated[
            str | None,
            Field(description="Only notes changed on or after: 2024-05-01 or 2024-05-01T14:30"),
        ] = None,
        before: Annotated[
            str | None, Field(description="Only notes changed on or before (as after)")
        ] = None,
    ) -> Annotated[CallToolResult, SearchAnswer]:
        progress = ProgressBridge(ctx, f"indexing {path}")

        def search(p: Path) -> CallToolResult:
            from memo_core import Scope  # with the engine, on first use (not at start)

            scope = Scope.parse(under=under, tags=tags, after=after, before=before)
            results = engines.get().search(
                p,
                query,
                k,
                mode,
                progress=progress,
                offset=offset,
                max_chars=max_chars,
                scope=scope,
            )
            text = TextContent(type="text", text=format_hits(results))
            data = search_data(results, printable=True)
            return CallToolResult(content=[text], structured_content=data)

        return await run(path, search)

    @server.tool(
        name="memo_status",
        title="Index status",
        description="Files, chunks and last index time of each notes collection under a path.",
        annotations=read_only,
        structured_output=False,
    )
    async def memo_status(path: PathArg) -> str:
        return await run(path, lambda p: format_status(engines.get().status(p)))

    @server.tool(
        name="memo_reindex",
        title="Rebuild index",
        description="Rebuild the search index of the notes under a path from scratch.",
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        structured_output=False,
    )
    async def memo_reindex(path: PathArg, ctx: Context) -> str:
        progress = ProgressBridge(ctx, f"reindexing {path}")

        return await run(
            path, lambda p: format_reindex(engines.get().reindex(p, progress=progress))
        )

    @server.tool(
        name="memo_changes",
        title="What changed",
        description="Notes added, changed and removed since a fingerprint (from memo_status).",
        annotations=read_only,
        structured_output=False,
    )
    async def memo_changes(
        path: PathArg,
        ctx: Context,
        since: Annotated[
            str | None,
            Field(
                max_length=MAX_FINGERPRINT_CHARS,
                description="A fingerprint memo gave before; without it, every note",
            ),
        ] = None,
    ) -> CallToolResult:
        progress = ProgressBridge(ctx, f"indexing {path}")

        def changes(p: Path) -> CallToolResult:
            report = engines.get().changes(p, since, progress=progress)
            text = TextContent(type="text", text=format_changes(report))
            return CallToolResult(content=[text], structured_content=changes_data(report))

        return await run(path, changes)

    @server.tool(
        name="memo_read",
        title="Read a note",
        description="A note's lines, numbered: all, from_line–to_line, or around a line "
        "(a hit's path:line)",
        annotations=read_only,
        structured_output=False,
    )
    async def memo_read(
        path: PathArg,
        note: Annotated[
            str,
            Field(
                min_length=1,
                description="The note's path inside `path` (home/backup.md), or a hit's "
                "path:line from memo_search",
            ),
        ],
        from_line: Annotated[
            int | None, Field(strict=True, ge=1, description="First line to show (default 1)")
        ] = None,
        to_line: Annotated[
            int | None,
            Field(strict=True, ge=1, description="Last line to show (default: the note's end)"),
        ] = None,
        around: Annotated[
            int | None,
            Field(strict=True, ge=1, description=f"Show {AROUND_LINES} lines each side of it"),
        ] = None,
    ) -> str:
        # What memo://note serves (Engine.note: confined, ignore-aware, bounded), numbered.
        return await run(
            path,
            lambda p: format_read(
                engines.get().read(p, note, from_line=from_line, to_line=to_line, around=around)
            ),
        )

    register_resources(server, roots, engines, places)
    register_prompts(server, roots, places)
    register_completions(server, roots, engines, places)
    return server


def build_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memo-mcp", description="memo's MCP server: search folders of Markdown notes."
    )
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder the tools may use (repeatable); added to MEMO_ROOTS "
        f"({os.pathsep}-separated). Default when neither is given: your home folder",
    )
    add_http_options(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Console script `memo-mcp`: stdio until the client closes the pipe; `--http`: HTTP."""
    parser = build_arg_parser()
    args = parser.parse_args(argv)
    http = http_config(parser, args) if args.http else None
    try:
        roots = allowed_roots(args.root)
    except MemoError as e:
        parser.exit(1, f"memo-mcp: {for_terminal(str(e))}\n")
    server = build_server(roots)
    try:
        if http is not None:
            serve_http(server, http)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        server.engines.close_within(CLOSE_WAIT_S)
    sys.exit(0)


if __name__ == "__main__":
    main()
