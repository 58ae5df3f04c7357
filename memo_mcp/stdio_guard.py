"""stdin for the SDK's stdio transport, with the lines the SDK would drop in silence answered.

The SDK (mcp 2.3) drops a line that is not JSON, not an object, or not a valid JSON-RPC message
without a word (not even on stderr), and it reads a request whose `id` is neither a string nor
an integer (`1.5`, `null`, `true`, `{}`) as a notification, so it never answers that either:
the client waits forever. JSON-RPC 2.0 wants an answer: `-32700 Parse error` for a line that is
not JSON, `-32600 Invalid Request` for the rest, with the request's id when it can be read,
else `null`. `GuardedStdin` sits between stdin and the SDK's reader: good lines pass through
unchanged, bad ones are answered here (never a line that is itself a response) and noted on
stderr; blank lines are skipped. Either way the server keeps serving.

An id must also be one the answer can carry: a string with a lone surrogate (`"\\udcff"`,
which JSON can spell but UTF-8 cannot encode) would make the answer unwritable, and the SDK's
writer dies on it, taking the server with it; such a request is refused (-32600, id null).
`SendableWrites` is the last guard on the way out: a message that cannot be encoded as it
is (a string that is not text) goes out with its strings escaped, never killing the writer.

`check_body` judges a POST body of `memo-mcp --http` the same way, so both transports answer
a malformed message alike (http_routing).
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

log = logging.getLogger("memo_mcp")

Problem = tuple[str, JSONRPCError | None]  # what is wrong (for stderr), the answer if any


def check_line(line: str) -> Problem | None:
    """None when the SDK can take `line` as it is; else why not, and what to answer
    (nothing to a blank line, nor to a malformed response: a peer that answered the error
    could start an endless exchange of errors)."""
    if not line.strip():
        return "blank line", None
    return _check(line, answer_responses=False)


def check_body(body: str) -> JSONRPCError | None:
    """The answer to an HTTP POST body that is not one message the SDK can take, as
    `check_line` answers the line (None: the SDK can take it). Here every such body is
    answered, in its HTTP response: a blank one is not JSON, a malformed response is an
    invalid request (else the SDK answers with a dump of its validation errors)."""
    problem = _check(body, answer_responses=True)
    return None if problem is None else problem[1]


def _check(text: str, answer_responses: bool) -> Problem | None:
    try:
        message = jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as e:
        return _invalid(text, e, answer_responses)
    if isinstance(message, JSONRPCNotification):
        obj = _loads(text)
        if isinstance(obj, dict) and "id" in obj:  # the SDK dropped an id it cannot use
            return _bad_id(obj["id"])
    return None


def _bad_id(rid: object) -> Problem:
    if isinstance(rid, str):
        detail = f"id must be text (got {_short(rid)}, with a lone surrogate)"
    else:
        detail = f"id must be a string or an integer (got {_short(rid)})"
    return detail, _error(None, INVALID_REQUEST, "Invalid Request", detail)


def _usable_id(rid: object) -> bool:
    """Whether an answer can carry `rid` back: an integer, or a string that is text."""
    if isinstance(rid, str):
        try:
            rid.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    return isinstance(rid, int) and not isinstance(rid, bool)


def _invalid(line: str, err: ValidationError, answer_responses: bool) -> Problem:
    errors = err.errors()
    obj = _loads(line)
    response = isinstance(obj, dict) and "method" not in obj and ("result" in obj or "error" in obj)
    if response and not answer_responses:
        return "a malformed response (not answered)", None
    rid = obj.get("id") if isinstance(obj, dict) else None
    if isinstance(obj, dict) and "method" in obj and "id" in obj and not _usable_id(rid):
        return _bad_id(rid)
    rid = rid if _usable_id(rid) else None
    unreadable = [e["msg"] for e in errors if e["type"] == "json_invalid"]
    if obj is _NOT_JSON or unreadable:
        # Python may read what the SDK's parser does not (a lone surrogate, deep nesting):
        # then the id is known and goes back with the error.
        detail = unreadable[0] if unreadable else "Invalid JSON"
        return detail, _error(rid, PARSE_ERROR, "Parse error", detail)
    if isinstance(obj, list):
        detail = "a batch (JSON array): send one message at a time"
        return detail, _error(None, INVALID_REQUEST, "Invalid Request", detail)
    if not isinstance(obj, dict):
        detail = f"not a JSON-RPC object (got {type(obj).__name__})"
        return detail, _error(None, INVALID_REQUEST, "Invalid Request", detail)
    if response:  # its id is not a request's: the error goes back with id null
        kind, rid = ("JSONRPCResponse" if "result" in obj else "JSONRPCError"), None
    else:
        kind = "JSONRPCRequest" if "id" in obj else "JSONRPCNotification"
    problems = [e for e in errors if e["loc"][:1] == (kind,)] or errors
    detail = "; ".join(
        f"{'.'.join(str(p) for p in e['loc'][1:]) or 'message'}: {e['msg']}" for e in problems[:3]
    )
    return detail, _error(rid, INVALID_REQUEST, "Invalid Request", detail)


_NOT_JSON = object()


def _loads(line: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if value is not _NOT_JSON else "?"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates too
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error(rid: int | str | None, code: int, message: str, detail: str) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message, data=detail)
    )


class GuardedStdin:
    """The lines of `lines` that the SDK can use; the others answered through `reply`."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        self._lines = lines
        # Set once the transport's write stream exists (before the first line is read).
        self.reply: Callable[[SessionMessage], Awaitable[None]] | None = None

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._lines:
            try:
                found = check_line(line)
            except Exception:  # a bug here must not cost the session: let the SDK judge
                log.exception("memo-mcp: checking an incoming line failed")
                found = None
            if found is None:
                yield line
                continue
            reason, answer = found
            if reason != "blank line":
                log.warning(
                    "memo-mcp: ignored a line that is not a usable JSON-RPC message (%s): %s",
                    reason,
                    _preview(line),
                )
            if answer is not None and self.reply is not None:
                try:
                    await self.reply(SessionMessage(answer))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the transport is closing


def _preview(line: str, limit: int = 200) -> str:
    line = line.rstrip("\n")
    if len(line) <= limit:
        return repr(line)
    return f"{line[:limit]!r}... ({len(line)} characters)"


class _Text(io.TextIOWrapper):
    """A text layer that never closes the pipe under it (as the SDK's own)."""

    def close(self) -> None:
        try:
            self.detach()
        except ValueError:
            pass


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The client's pipe on a private descriptor, with fd 0 on the null device meanwhile.

    What the SDK's transport does for its own reader: nothing else in the process (a thread,
    a child) can read the client's bytes. Falls back to `sys.stdin.buffer` where it cannot.
    """
    try:
        if sys.stdin is None or sys.stdin.buffer.fileno() != 0 or sys.platform == "win32":
            raise OSError("stdin is not fd 0")
        import fcntl

        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        yield sys.stdin.buffer
        return
    diverted = False
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
            diverted = True
        finally:
            os.close(null)
    except OSError:
        pass
    try:
        # closefd=False: a worker thread may still block on it after the session ends.
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        if diverted:
            try:
                os.dup2(private, 0)
            except OSError:
                pass


class SendableWrites:
    """The transport's write stream, passing on only messages its writer can encode."""

    def __init__(self, inner: WriteStream[SessionMessage]) -> None:
        self._inner = inner

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(sendable(item))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> SendableWrites:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def sendable(item: SessionMessage) -> SessionMessage:
    """`item`, or, when the writer could not encode it (a string that is not text: a lone
    surrogate), a copy with such strings escaped."""
    try:
        item.message.model_dump_json(by_alias=True, exclude_unset=True)
        return item
    except ValueError as e:  # PydanticSerializationError
        log.warning("memo-mcp: a message held text that is not UTF-8 (%s); sent escaped", e)
    data = _escaped(item.message.model_dump(by_alias=True, exclude_unset=True))
    fixed = jsonrpc_message_adapter.validate_python(data, by_name=False)
    return SessionMessage(fixed, metadata=item.metadata)


def _escaped(value: Any) -> Any:
    """`value` with lone surrogates in its strings (keys too) written as `\\udcXX`."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escaped(v) for v in value]
    return value


async def serve_stdio(server: Server[Any]) -> None:
    """`server` on stdin/stdout through the SDK's transport, stdin and stdout guarded."""
    with claimed_stdin() as raw:
        stdin = GuardedStdin(anyio.wrap_file(_Text(raw, encoding="utf-8", errors="replace")))
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
            out = SendableWrites(write_stream)
            stdin.reply = out.send
            await server.run(read_stream, out, server.create_initialization_options())
