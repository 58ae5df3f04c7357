"""`memo-mcp`: memo's MCP server (stdio), a thin layer over `memo_core`'s Engine.

Every tool calls the same engine calls and formatters as the `memo` CLI, so the two never
disagree. The server builds one Engine and keeps it for its whole life (the MCP server
lives for a whole agent session): indexes stay open and the model stays loaded.
That Engine, the allowed folders and the reader's language are the server's `MemoState`,
which its lifespan yields; the five tools are plain functions of this module that read it
from their Context, listed in `TOOLS`, so a test can call each one directly.
Engine work (model load, first index of a big collection) runs on worker threads, so the
server keeps answering other requests; its progress goes to the client as progress
notifications when the client asked for them (a `progressToken`).

Errors: an engine `MemoError` becomes the tool result's text, worded in the server's language
(`isError: true`); bad or missing arguments and unknown tools get readable texts (see
`MemoServer.call_tool`). Every text a tool answers is the catalogue's, in the language
MEMO_LANG names (Russian by default); tool descriptions, for the agent, stay English.
Nothing is printed at import time: stdout carries JSON-RPC only.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memo_core import (
    AROUND_LINES,
    DEFAULT_K,
    DEFAULT_MODE,
    MAX_K,
    MAX_OFFSET,
    MODES,
    MemoError,
    ModeName,
    NoCollectionError,
    PathNotFoundError,
    __version__,
    allowed_roots,
    for_terminal,
    settings,
)
from memo_core.process import end_process, raise_descriptor_limit
from memo_mcp.completions import register_completions
from memo_mcp.http_transport import add_http_options, http_config, serve_http
from memo_mcp.lazy import LazyEngine
from memo_mcp.places import DEVICE_WORKERS, FOLDER_WORKERS, WORKERS, FolderSlots
from memo_mcp.prompts import register_prompts
from memo_mcp.resources import register_resources
from memo_mcp.stdio_guard import serve_stdio
from memo_text import (
    DEFAULT_MAX_CHARS,
    MAX_CHARS_RANGE,
    Lang,
    WordedParser,
    changes_data,
    fit_to_budget,
    format_changes,
    format_hits,
    format_read,
    format_reindex,
    format_status,
    search_data,
    user_language,
    word_logs,
)

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
SERVER_STOP_WAIT_S = 0.5
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
    """One hit of memo_search's structuredContent (`memo_text.search_data`)."""

    path: str = Field(description="The note, absolute")
    relpath: str = Field(description="The note, relative to its collection")
    collection: str = Field(description="The collection's folder")
    line: int = Field(description="First line shown (1-based, as an editor counts)")
    end_line: int = Field(description="Last line shown")
    heading: str = Field(description="The heading path above the lines, e.g. Setup > Linux")
    text: str = Field(description="The lines line..end_line that best match the query")
    score: float
    found_by: list[Literal["lex", "vec"]] = Field(description="By words, by meaning or both")
    also_in: list[str] = Field(
        default_factory=list, description="Other notes holding a copy of this passage"
    )


class SearchAnswer(BaseModel):
    """memo_search's structuredContent: the same hits as its text."""

    mode: ModeName = Field(description="How it searched (hybrid falls back to lex without a model)")
    notices: list[str] = Field(description="What the reader should know about this answer")
    hits: list[SearchHit] = Field(description="Best first")
    next_offset: int | None = Field(description="The offset of the next page; null: no more hits")
    all_hits: int | None = Field(
        default=None,
        description="On a page past the last hit: how many hits there are in all (from offset 0)",
    )


class ChangesAnswer(BaseModel):
    """memo_changes' structuredContent (`memo_text.changes_data`): a delta since a
    fingerprint, or every note ("full": none given, or one memo does not know)."""

    model_config = ConfigDict(populate_by_name=True)

    mode: Literal["delta", "full"] = Field(description="delta: since `from`; full: every note")
    since: str | None = Field(alias="from", description="The fingerprint asked from")
    to: str = Field(description="The fingerprint now: ask from it next time")
    added: list[str] | None = Field(default=None, description="delta: notes added, absolute")
    changed: list[str] | None = Field(default=None, description="delta: notes changed")
    removed: list[str] | None = Field(default=None, description="delta: notes removed")
    files: list[str] | None = Field(default=None, description="full: every note, absolute")
    reason: Literal["no_fingerprint", "unknown_fingerprint"] | None = Field(
        default=None, description="full: why every note (none given, or an unknown one)"
    )


@dataclass(frozen=True)
class MemoState:
    """What the tools work with for the server's whole life, yielded by its lifespan (a tool
    reads it as `ctx.request_context.lifespan_context`): `roots`, the only folders they may
    touch (see `memo_core.files.confine`); `engines`, the one Engine that tools, resources
    and completions share, made on first use; `lang`, the reader's language; `places`,
    where every call that touches a folder runs (tools, resources, completions, prompts)."""

    roots: list[Path]
    engines: LazyEngine
    lang: Lang
    places: FolderSlots

    @classmethod
    def make(
        cls, roots: list[Path] | None = None, engine: Engine | None = None, lang: Lang | None = None
    ) -> MemoState:
        """Touching only `roots` (default: MEMO_ROOTS, else the home folder), working
        through `engine` (default: one made on first use, with the configured model) and
        answering in `lang` (default: the one MEMO_LANG names)."""
        roots = allowed_roots() if roots is None else list(roots)
        lang = lang or user_language(settings.language())[0]
        engines = LazyEngine(roots, engine, say=lambda step: _say_on_stderr(step, lang))
        return cls(roots, engines, lang, FolderSlots(WORKERS, FOLDER_WORKERS, DEVICE_WORKERS))

    @asynccontextmanager
    async def serving(self, _server: MCPServer[MemoState]) -> AsyncIterator[MemoState]:
        """The server's lifespan: this state while it runs; then its indexes are closed.
        The Engine stays usable, and is the same on every entry: `--http` enters the
        lifespan once for each of its transports, a test once for each in-process client."""
        try:
            yield self
        finally:
            await anyio.to_thread.run_sync(self.engines.close_within, SERVER_STOP_WAIT_S)

    async def run(
        self, path: str, fn: Callable[[Path], T], progress: ProgressBridge | None = None
    ) -> T:
        """`fn(real path)` in the folder's places once `path` is confined to the roots;
        MemoError (OutsideRootsError too) becomes the tool's error text. `progress`: the
        call's, which meanwhile also hears what the engine says (a model install's steps)."""
        try:
            with self.engines.listening(progress.said if progress is not None else None):
                return await self.places.confined(path, self.roots, fn)
        except MemoError as e:
            raise ToolError(_error_text(e, path, self.lang)) from e


# What a tool gets: its call's Context, whose lifespan output is the server's state.
MemoContext = Context[MemoState, Any]


def _arguments_text(tool: str, err: ValidationError, lang: Lang) -> str:
    """`memo_search: missing required argument "path"` and the like, one line per problem,
    then how the tool is called."""
    lines = []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "arguments"
        if e["type"] == "missing":
            lines.append(lang.text("mcp.arg_missing", tool=tool, field=field))
        else:
            got = repr(e.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            problem = _problem(e["type"], e.get("ctx") or {}, e["msg"], lang)
            lines.append(lang.text("mcp.arg_bad", tool=tool, field=field, problem=problem, got=got))
    return "\n".join(lines) + "\n" + _usage(tool, lang)


# pydantic's error types, worded by the catalogue (its English is pydantic's own words).
_PROBLEMS = {
    "int_type": "arg.int",
    "string_type": "arg.str",
    "list_type": "arg.list",
    "greater_than_equal": "arg.ge",
    "less_than_equal": "arg.le",
    "string_too_short": "arg.min_chars",
    "string_too_long": "arg.max_chars",
}


def _problem(kind: str, ctx: dict[str, Any], said: str, lang: Lang) -> str:
    """What is wrong with a value, from pydantic's error type and its context; a type
    memo's schemas do not make is pydantic's own (English) words."""
    if kind == "literal_error":  # "'hybrid', 'lex' or 'vec'": the last "or" is a word
        first, _, last = str(ctx.get("expected", "")).rpartition(" or ")
        expected = lang.text("list.or", first=first, last=last) if first else last
        return lang.text("arg.one_of", expected=expected)
    key = _PROBLEMS.get(kind)
    if key is None:
        return said
    limit = next((ctx[k] for k in ("ge", "le", "min_length", "max_length") if k in ctx), None)
    if key == "arg.min_chars" and limit == 1:
        key = "arg.min_chars_one"
    return lang.text(key, limit=limit)


_USAGE_KEYS = {
    "memo_status": "usage.memo_status",
    "memo_reindex": "usage.memo_reindex",
    "memo_changes": "usage.memo_changes",
    "memo_read": "usage.memo_read",
}


def _usage(tool: str, lang: Lang) -> str:
    """How `tool` is called, as a line of JSON-like arguments."""
    if tool != "memo_search":
        return lang.text(_USAGE_KEYS[tool])
    modes = " | ".join(f'"{m}"' for m in MODES)
    return lang.text(
        "usage.memo_search",
        k=f"1..{MAX_K}",
        default_k=DEFAULT_K,
        modes=modes,
        default_mode=f'"{DEFAULT_MODE}"',
        offset=f"0..{MAX_OFFSET}",
        max_chars=f"{MAX_CHARS_RANGE[0]}..{MAX_CHARS_RANGE[1]}",
        default_max_chars=DEFAULT_MAX_CHARS,
    )


# The protocol revision that deprecates MCP logging (SEP-2577); revisions are dates.
LOGGING_DEPRECATED = "2026-07-28"


class ProgressBridge:
    """An engine ProgressFn (called on worker threads) that sends MCP progress.

    MCP wants `progress` to grow with every notification; the engine reports stages (index,
    then embed, per collection; a search refreshes its collections side by side) that each
    count from zero. So each stage keeps its own count, and `progress` is their sum, `total`
    the sum of their totals, both taken under a lock: the stages report from their own
    threads at once. A stage is one Progress object, which the indexer makes for each pass
    (one collection's words, or its vectors) and updates in place as the pass goes on.
    """

    def __init__(self, ctx: MemoContext, what: str, lang: Lang) -> None:
        self.ctx = ctx
        self.what = what
        self.lang = lang
        # Made on the event loop; called from any thread (a tool's worker, or the engine's
        # background refresh), which reaches the loop through this token.
        self._token = anyio.lowlevel.current_token()
        self._lock = threading.Lock()
        # Per stage, by the id of its Progress (kept here, so that no id is reused): the
        # stage, its work done so far and its total.
        self._stages: dict[int, tuple[Progress, int, int]] = {}
        self._last_sent = 0.0
        self._sent = -1.0

    def said(self, step: object) -> None:
        """What the engine says meanwhile (a model install's steps: fetched, verified,
        converted), as a log message to this call's client, which may show no progress.
        Protocol revisions from LOGGING_DEPRECATED on deprecate MCP logging (SEP-2577, in
        favour of stderr): their clients get it on stderr only, as every client does."""
        version = self.ctx.protocol_version
        if version is not None and version >= LOGGING_DEPRECATED:
            return
        try:
            anyio.from_thread.run(
                partial(self.ctx.log, "info", self.lang.word(step), logger_name="memo"),
                token=self._token,
            )
        except Exception as e:  # a lost message must never stop the install
            log.debug("log notification failed: %r", e)

    def __call__(self, p: Progress) -> None:
        if p.phase == "embed":
            done, total, key = p.chunks_done, p.chunks_total or 0, "progress.chunks"
        elif p.phase == "sentences":
            done, total, key = p.chunks_done, p.chunks_total or 0, "progress.sentences"
        else:
            done, total, key = p.files_done, p.files_total, "progress.files"
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
                    self.lang.text(key, what=self.what, done=done, total=total),
                    token=self._token,
                )
            except Exception as e:  # a lost notification must never stop the index
                log.debug("progress notification failed: %r", e)


def _error_text(e: MemoError, path: str, lang: Lang) -> str:
    text = for_terminal(lang.word(e))  # names that are not UTF-8 could not even be sent
    p = path.strip()
    relative = p and not p.startswith("~") and not os.path.isabs(p)
    if isinstance(e, (PathNotFoundError, NoCollectionError)) and relative:
        # The agent cannot know where the server runs: say so.
        text += "\n(" + lang.text("mcp.relative_path", cwd=os.getcwd()) + ")"
    return text


def _say_on_stderr(step: object, lang: Lang) -> None:
    """A message of memo-mcp's engine (a step of a model install it started, a close that
    does not wait) on stderr: stdout is the protocol's."""
    print(f"memo-mcp: {for_terminal(lang.word(step))}", file=sys.stderr, flush=True)


# -- the tools ----------------------------------------------------------------------------
# Each is a plain function over its call's Context, registered as it is (TOOLS, below): the
# arguments' descriptions and bounds are the input schema the client sees. The state comes
# from the lifespan; work on a folder runs in its places (`MemoState.run`).


async def memo_search(
    ctx: MemoContext,
    path: PathArg,
    query: Annotated[
        str,
        Field(min_length=1, description="What to look for, in any words or language"),
    ],
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
    """The passages under `path` that best match `query`: text, and the same hits as data."""
    state = ctx.request_context.lifespan_context
    progress = ProgressBridge(ctx, state.lang.text("progress.indexing", path=path), state.lang)

    def search(p: Path) -> CallToolResult:
        from memo_core import Scope  # with the engine, on first use (not at start)

        scope = Scope.parse(under=under, tags=tags, after=after, before=before)
        found = state.engines.get().search(
            p, query, k, mode, progress=progress, offset=offset, scope=scope
        )
        results = fit_to_budget(found, max_chars, state.lang)  # the budget as this reader reads it
        text = TextContent(type="text", text=format_hits(results, lang=state.lang))
        data = search_data(results, printable=True, lang=state.lang)
        return CallToolResult(content=[text], structured_content=data)

    return await state.run(path, search, progress)


async def memo_status(ctx: MemoContext, path: PathArg) -> str:
    """One line per collection under `path`, as `memo status` prints; only reads."""
    state = ctx.request_context.lifespan_context
    return await state.run(path, lambda p: format_status(state.engines.get().status(p), state.lang))


async def memo_reindex(ctx: MemoContext, path: PathArg) -> str:
    """Every collection under `path` indexed again from scratch (the old index answering
    meanwhile); says how many files."""
    state = ctx.request_context.lifespan_context
    progress = ProgressBridge(ctx, state.lang.text("progress.reindexing", path=path), state.lang)
    return await state.run(
        path,
        lambda p: format_reindex(state.engines.get().reindex(p, progress=progress), state.lang),
        progress,
    )


async def memo_changes(
    ctx: MemoContext,
    path: PathArg,
    since: Annotated[
        str | None,
        Field(
            max_length=MAX_FINGERPRINT_CHARS,
            description="A fingerprint memo gave before; without it, every note",
        ),
    ] = None,
) -> Annotated[CallToolResult, ChangesAnswer]:
    """The notes under `path` added, changed and removed since the fingerprint `since`:
    text, and the same as data."""
    state = ctx.request_context.lifespan_context
    progress = ProgressBridge(ctx, state.lang.text("progress.indexing", path=path), state.lang)

    def changes(p: Path) -> CallToolResult:
        report = state.engines.get().changes(p, since, progress=progress)
        text = TextContent(type="text", text=format_changes(report, state.lang))
        return CallToolResult(content=[text], structured_content=changes_data(report))

    return await state.run(path, changes, progress)


async def memo_read(
    ctx: MemoContext,
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
    """A note's lines, numbered: what memo://note serves (Engine.note: confined,
    ignore-aware, bounded)."""
    state = ctx.request_context.lifespan_context
    return await state.run(
        path,
        lambda p: format_read(
            state.engines.get().read(p, note, from_line=from_line, to_line=to_line, around=around),
            state.lang,
        ),
    )


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# memo_reindex writes only memo's own index: the notes stay, and a second run does the same.
REBUILDS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@dataclass(frozen=True)
class Listing:
    """A tool as tools/list shows it, named after its function. `structured_output`: None
    when the return annotation says (a model: structuredContent); False for plain text."""

    fn: Callable[..., Awaitable[object]]
    title: str
    description: str
    annotations: ToolAnnotations
    structured_output: bool | None = None

    @property
    def name(self) -> str:
        return self.fn.__name__


# In the order tools/list gives them; descriptions are for the agent.
TOOLS = (
    Listing(
        memo_search,
        "Search notes",
        "Search Markdown notes by words and meaning (indexes them in .memo/); gives path:line",
        READ_ONLY,
    ),
    Listing(
        memo_status,
        "Index status",
        "Files, chunks and last index time of each notes collection under a path.",
        READ_ONLY,
        structured_output=False,
    ),
    Listing(
        memo_reindex,
        "Rebuild index",
        "Rebuild the search index of the notes under a path from scratch.",
        REBUILDS,
        structured_output=False,
    ),
    Listing(
        memo_changes,
        "What changed",
        "Notes added, changed and removed since a fingerprint (from memo_status).",
        READ_ONLY,
    ),
    Listing(
        memo_read,
        "Read a note",
        "A note's lines, numbered: all, from_line–to_line, or around a line (a hit's path:line)",
        READ_ONLY,
        structured_output=False,
    ),
)
TOOL_NAMES = frozenset(t.name for t in TOOLS)


class MemoServer(MCPServer[MemoState]):
    """The MCP server over one `MemoState` (its lifespan yields it), with the five tools,
    and memo's texts on unknown tools and bad arguments (the same words as every other
    error it says, in the reader's language)."""

    def __init__(self, state: MemoState) -> None:
        super().__init__(
            name="memo", version=__version__, instructions=INSTRUCTIONS, lifespan=state.serving
        )
        self.state = state
        for t in TOOLS:
            self.add_tool(
                t.fn,
                name=t.name,
                title=t.title,
                description=t.description,
                annotations=t.annotations,
                structured_output=t.structured_output,
            )

    @property
    def roots(self) -> list[Path]:
        """The only folders its tools, resources and prompts may touch."""
        return self.state.roots

    @property
    def engines(self) -> LazyEngine:
        """The one Engine they all use, made on first use."""
        return self.state.engines

    async def run_stdio_async(self) -> None:
        # The SDK's stdio transport, with lines it would drop in silence answered
        # (-32700/-32600). mcp 2.3 has no public way to serve an MCPServer on streams of
        # one's own (its own in-process Client reads this attribute too, marked to be made
        # public): the one read of the SDK's private state.
        await serve_stdio(self._lowlevel_server)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: MemoContext | None = None
    ) -> Any:
        # By name, not by listing the tools: a listing makes every tool's schema again.
        if name not in TOOL_NAMES:
            raise ToolError(self.state.lang.text("mcp.unknown_tool", name=name))
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: the SDK logs it and tells the client only the tool's name
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(_arguments_text(name, cause, self.state.lang)) from cause
            if isinstance(cause, ToolError):
                # Ours (an engine error): its text alone, without the SDK's prefix.
                raise ToolError(str(cause)) from cause
            raise


def build_server(
    roots: list[Path] | None = None, engine: Engine | None = None, lang: Lang | None = None
) -> MemoServer:
    """The server with its tools, resources, prompts and completions, over
    `MemoState.make(roots, engine, lang)`."""
    state = MemoState.make(roots, engine, lang)
    server = MemoServer(state)
    register_resources(server, state.roots, state.engines, state.places, state.lang)
    register_prompts(server, state.roots, state.places, state.lang)
    register_completions(server, state.roots, state.engines, state.places)
    return server


def build_arg_parser(lang: Lang = Lang.RU) -> argparse.ArgumentParser:
    parser = WordedParser(prog="memo-mcp", description=lang.text("help.mcp"), lang=lang)
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help=lang.text("help.root", separator=os.pathsep),
    )
    add_http_options(parser, lang)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Console script `memo-mcp`: stdio until the client closes the pipe; `--http`: HTTP."""
    lang, warning = user_language(settings.language())
    word_logs(lang)  # the engine's log lines (stderr) in the reader's language too
    if warning is not None:
        print(f"memo-mcp: {lang.word(warning)}", file=sys.stderr)
    raise_descriptor_limit()  # a search over hundreds of folders keeps a few open for each
    parser = build_arg_parser(lang)
    args = parser.parse_args(argv)
    http = http_config(parser, args, lang) if args.http else None
    try:
        roots = allowed_roots(args.root)
    except MemoError as e:
        parser.exit(1, f"memo-mcp: {for_terminal(lang.word(e))}\n")
    server = build_server(roots, lang=lang)
    try:
        if http is not None:
            serve_http(server, http, lang)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        server.engines.close_within(SERVER_STOP_WAIT_S)
    end_process(0)


if __name__ == "__main__":
    main()
