"""Who answers a request at `/mcp`: a session (streamable HTTP), or one plain exchange.

The SDK serves either sessions or single stateless exchanges, one mode per app; memo-mcp
runs three and routes each request:

- It carries `Mcp-Session-Id`, or is not a POST (a GET stream, a DELETE): the session app.
- A POST that opens a session (`initialize`) from a client that takes `text/event-stream`
  (MCP Inspector, Claude Code, the SDK's client): the session app, which gives it a session.
- Any other POST without a session: one exchange, no `initialize` needed. A client that
  takes `text/event-stream` gets SSE (progress notifications, then the answer); any other,
  curl or a script, gets one plain JSON answer.

Sessions are bounded, and a session that proved itself is never ended by newcomers. The
session app closes one idle for `SESSION_IDLE_S`. A session is proven once it makes a
request after its `initialize` (a `ping`, a `tools/call`: a notification does not count).
At `MAX_SESSIONS` open sessions, a new one takes the place of the least recently used
session that never made one; when every open session is proven, the newcomer is refused
(503, with Retry-After: when the least recently used one would end if it stays idle). So a
flood of `initialize` cannot lock out a client at work, nor end its session.

A POST body the SDK would take for a notification although it carries an id it cannot use
(an object, `null`, `true`, a string with a lone surrogate) gets no answer from the SDK (202):
it is answered here, -32600 with id null, as over stdio (stdio_guard.check_body); so are
other malformed bodies (-32700, -32600), with the request's id when it can be read: a batch,
a scalar, an object that is not a JSON-RPC message, a malformed response (which the SDK
would answer -32602 with a dump of its validation errors), an empty body. Bytes that are not
UTF-8 are read as stdio reads them (replaced), and the apps get the body as it was checked.
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from contextlib import AsyncExitStack
from typing import Any

from mcp.server.transport_security import TransportSecurityMiddleware
from mcp_types import INTERNAL_ERROR
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from .stdio_guard import check_body

SESSION_IDLE_S = 5 * 60
MAX_SESSIONS = 500
SESSION_HEADER = "mcp-session-id"
MAX_PEEK_BYTES = 4 * 1024 * 1024  # the SDK refuses longer bodies (413) itself


class SessionBook:
    """The open sessions this server handed out, each kept with its last use: those that
    never made a request after `initialize`, and the proven ones, each oldest first."""

    def __init__(self, limit: int = MAX_SESSIONS, idle_s: float = SESSION_IDLE_S) -> None:
        self.limit = limit
        self.idle_s = idle_s
        self._new: OrderedDict[str, float] = OrderedDict()  # id → last use
        self._proven: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._new) + len(self._proven)

    def wait_s(self) -> float | None:
        """None when a new session may open now; else how long until one may (at most):
        every place is held by a proven session, and the least recently used one ends
        after that long if it stays idle."""
        self._forget_idle()
        if len(self) < self.limit or self._new:
            return None
        oldest = next(iter(self._proven.values()))
        return max(1.0, oldest + self.idle_s - time.monotonic())

    def opened(self, sid: str) -> list[str]:
        """Record a new session; the sessions to close to stay within the bound (never a
        proven one: past the bound with only those, the caller refuses newcomers)."""
        self._forget_idle()
        self._new[sid] = time.monotonic()
        evicted = []
        while len(self) > self.limit and len(self._new) > 1:
            evicted.append(self._new.popitem(last=False)[0])
        return evicted

    def used(self, sid: str, request: bool) -> None:
        """A use of session `sid`; `request`: it made a request (it is proven now)."""
        now = time.monotonic()
        if sid in self._proven:
            self._proven.move_to_end(sid)
            self._proven[sid] = now
        elif sid in self._new:
            del self._new[sid]
            (self._proven if request else self._new)[sid] = now

    def closed(self, sid: str) -> None:
        self._new.pop(sid, None)
        self._proven.pop(sid, None)

    def _forget_idle(self) -> None:
        """Drop the sessions the session app has closed already, idle too long."""
        since = time.monotonic() - self.idle_s
        for book in (self._new, self._proven):
            while book and next(iter(book.values())) < since:
                book.popitem(last=False)


class McpRouter:
    """The ASGI app: routes `/mcp` as the module says; everything else (`/health`, 404s)
    goes to the session app; the lifespan starts and stops all three. `security` checks
    Host and Origin (as the SDK's apps do) before a malformed body is answered here."""

    def __init__(
        self,
        sessions: Starlette,
        plain: Starlette,
        streamed: Starlette,
        path: str,
        book: SessionBook,
        security: TransportSecurityMiddleware,
    ) -> None:
        self.sessions, self.plain, self.streamed = sessions, plain, streamed
        self.path = path
        self.book = book
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.sessions(scope, receive, send)
            return
        headers = Headers(scope=scope)
        sid = headers.get(SESSION_HEADER)
        if scope["method"] != "POST":
            await self._in_session(sid, False, scope, receive, send)
            return
        body, receive = await _peek(receive)
        # A body past MAX_PEEK_BYTES is the SDK's to refuse (413), not a malformed one.
        error = check_body(body.decode("utf-8", "replace")) if len(body) <= MAX_PEEK_BYTES else None
        if error is not None:
            refused = await self.security.validate_request(Request(scope), is_post=True)
            answer = error.model_dump_json(by_alias=True, exclude_unset=True)
            response = refused or Response(answer, 400, media_type="application/json")
            await response(scope, receive, send)
            return
        message = _loads(body)
        if sid is not None:
            await self._in_session(sid, _makes_request(message), scope, receive, send)
            return
        accept = {t.split(";")[0].strip().lower() for t in headers.get("accept", "").split(",")}
        sse = "text/event-stream" in accept
        if sse and _opens_session(message):
            await self._open_session(message, scope, receive, send)
        elif sse:
            await self.streamed(scope, receive, send)
        else:  # curl's */*, or no Accept at all: it takes JSON
            await self.plain(_accepting_json(scope), receive, send)

    async def _in_session(
        self, sid: str | None, request: bool, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if sid is None:
            await self.sessions(scope, receive, send)
            return
        self.book.used(sid, request)

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 404:
                self.book.closed(sid)  # expired or unknown
            await send(message)

        await self.sessions(scope, receive, watch)
        if scope["method"] == "DELETE":
            self.book.closed(sid)

    async def _open_session(self, message: Any, scope: Scope, receive: Receive, send: Send) -> None:
        wait = self.book.wait_s()
        if wait is not None:
            await _no_room(self.book, wait, message)(scope, receive, send)
            return
        evicted: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                sid = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                # Booked before the client can read its id and use it.
                evicted.extend(self.book.opened(sid) if sid is not None else [])
            await send(message)

        await self.sessions(scope, receive, watch)
        for old in evicted:
            await self._close(old, scope)

    async def _close(self, sid: str, like: Scope) -> None:
        """End a session as its client would (DELETE), with the headers of `like`'s request
        that the session app checks (Host, Origin, the token)."""
        keep = {b"host", b"origin", b"authorization"}
        headers = [(k, v) for k, v in like["headers"] if k.lower() in keep]
        scope = {
            **like,
            "method": "DELETE",
            "headers": [*headers, (b"mcp-session-id", sid.encode())],
        }

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            pass

        await self.sessions(scope, receive, discard)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        async with AsyncExitStack() as stack:
            try:
                for app in (self.sessions, self.plain, self.streamed):
                    await stack.enter_async_context(app.router.lifespan_context(app))
            except BaseException as e:
                await send({"type": "lifespan.startup.failed", "message": repr(e)})
                raise
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
            assert message["type"] == "lifespan.shutdown"
        await send({"type": "lifespan.shutdown.complete"})


async def _peek(receive: Receive) -> tuple[bytes, Receive]:
    """The request body (as far as MAX_PEEK_BYTES), and a `receive` that gives it again;
    a whole body with bytes that are not UTF-8 has them replaced, as stdio reads a line (the
    SDK would refuse it, -32700 in a shape of its own)."""
    chunks: list[bytes] = []
    size, more = 0, True
    while more and size <= MAX_PEEK_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            break  # the client went away: the app will see it too
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = message.get("more_body", False)
    body = b"".join(chunks)
    if not more:  # (a part could end inside a character)
        body = body.decode("utf-8", "replace").encode()
    replayed = False

    async def again() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return body, again


def _loads(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _opens_session(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "initialize"


def _makes_request(message: Any) -> bool:
    """Whether a body is a request of a session at work (not its `initialize`)."""
    return (
        isinstance(message, dict)
        and "id" in message
        and isinstance(message.get("method"), str)
        and message["method"] != "initialize"
    )


def _no_room(book: SessionBook, wait_s: float, message: Any) -> Response:
    """503 for a newcomer when every session is proven, saying when to try again."""
    rid = message.get("id") if isinstance(message, dict) else None
    text = (
        f"memo-mcp has {len(book)} sessions open, each in use (its limit): a session that "
        f"made a request is never ended for a new one; one idle for {book.idle_s:g} s ends. "
        "Try again later, or send this request without a session (a plain POST)"
    )
    body = {"jsonrpc": "2.0", "id": rid, "error": {"code": INTERNAL_ERROR, "message": text}}
    return Response(
        json.dumps(body),
        503,
        media_type="application/json",
        headers={"Retry-After": str(math.ceil(wait_s))},
    )


def _accepting_json(scope: Scope) -> Scope:
    """The scope with `Accept: application/json` (the SDK's JSON mode asks for it)."""
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept"]
    return {**scope, "headers": [*headers, (b"accept", b"application/json")]}
