"""Who answers a request at `/mcp`: a session (streamable HTTP), or one plain exchange.

The SDK serves either sessions or single stateless exchanges, one mode per app; memo-mcp
runs three and routes each request:

- It carries `Mcp-Session-Id`, or is not a POST (a GET stream, a DELETE): the session app.
- A POST that opens a session (`initialize`) from a client that takes `text/event-stream`
  (MCP Inspector, Claude Code, the SDK's client): the session app, which gives it a session.
- Any other POST without a session: one exchange, no `initialize` needed. A client that
  takes `text/event-stream` gets SSE (progress notifications, then the answer); any other,
  curl or a script, gets one plain JSON answer.

Sessions are bounded: the session app closes one idle for `SESSION_IDLE_S`, and at
`MAX_SESSIONS` open sessions a new one closes the oldest that never got past its opening
(else the least recently used), so a flood of `initialize` cannot lock clients out.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from contextlib import AsyncExitStack

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.types import Message, Receive, Scope, Send

SESSION_IDLE_S = 5 * 60
MAX_SESSIONS = 500
# A session that made this many requests (initialize, initialized, one real call) is in use.
PROVEN_AFTER = 3
SESSION_HEADER = "mcp-session-id"
MAX_PEEK_BYTES = 4 * 1024 * 1024  # the SDK refuses longer bodies (413) itself


class SessionBook:
    """The open sessions this server handed out: new ones and ones in use, each oldest first."""

    def __init__(self, limit: int = MAX_SESSIONS, idle_s: float = SESSION_IDLE_S) -> None:
        self.limit = limit
        self.idle_s = idle_s
        self._new: OrderedDict[str, tuple[float, int]] = OrderedDict()  # id → (last use, uses)
        self._used: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._new) + len(self._used)

    def opened(self, sid: str) -> list[str]:
        """Record a new session; the sessions to close to stay within the bound."""
        now = time.monotonic()
        for book in (self._new, self._used):  # the session app has closed these already
            while book and next(iter(book.values()))[0] < now - self.idle_s:
                book.popitem(last=False)
        self._new[sid] = (now, 1)
        evicted = []
        while len(self) > self.limit:
            book = self._new if len(self._new) > 1 else self._used
            evicted.append(book.popitem(last=False)[0])
        return evicted

    def used(self, sid: str) -> None:
        for book in (self._new, self._used):
            if sid in book:
                uses = book.pop(sid)[1] + 1
                target = self._used if uses >= PROVEN_AFTER else book
                target[sid] = (time.monotonic(), uses)
                return

    def closed(self, sid: str) -> None:
        self._new.pop(sid, None)
        self._used.pop(sid, None)


class McpRouter:
    """The ASGI app: routes `/mcp` as the module says; everything else (`/health`, 404s)
    goes to the session app; the lifespan starts and stops all three."""

    def __init__(
        self,
        sessions: Starlette,
        plain: Starlette,
        streamed: Starlette,
        path: str,
        book: SessionBook,
    ) -> None:
        self.sessions, self.plain, self.streamed = sessions, plain, streamed
        self.path = path
        self.book = book

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.sessions(scope, receive, send)
            return
        headers = Headers(scope=scope)
        sid = headers.get(SESSION_HEADER)
        if sid is not None or scope["method"] != "POST":
            await self._in_session(sid, scope, receive, send)
            return
        body, receive = await _peek(receive)
        accept = {t.split(";")[0].strip().lower() for t in headers.get("accept", "").split(",")}
        sse = "text/event-stream" in accept
        if sse and _opens_session(body):
            await self._open_session(scope, receive, send)
        elif sse:
            await self.streamed(scope, receive, send)
        else:  # curl's */*, or no Accept at all: it takes JSON
            await self.plain(_accepting_json(scope), receive, send)

    async def _in_session(
        self, sid: str | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if sid is None:
            await self.sessions(scope, receive, send)
            return
        self.book.used(sid)

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 404:
                self.book.closed(sid)  # expired or unknown
            await send(message)

        await self.sessions(scope, receive, watch)
        if scope["method"] == "DELETE":
            self.book.closed(sid)

    async def _open_session(self, scope: Scope, receive: Receive, send: Send) -> None:
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                sid = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                opened.extend([sid] if sid is not None else [])
            await send(message)

        await self.sessions(scope, receive, watch)
        for sid in opened:
            for old in self.book.opened(sid):
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
    """The request body (as far as MAX_PEEK_BYTES), and a `receive` that gives it again."""
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
    replayed = False

    async def again() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return body, again


def _opens_session(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    batch = message if isinstance(message, list) else [message]
    return any(isinstance(m, dict) and m.get("method") == "initialize" for m in batch)


def _accepting_json(scope: Scope) -> Scope:
    """The scope with `Accept: application/json` (the SDK's JSON mode asks for it)."""
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept"]
    return {**scope, "headers": [*headers, (b"accept", b"application/json")]}
