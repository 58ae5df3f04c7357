"""memo_mcp.http_routing: who answers a request at `/mcp`, malformed bodies answered before
any app sees them, and the book of sessions that bounds them.

`McpRouter` is driven as uvicorn drives it (an ASGI scope, `receive`, `send`) around three
small Starlette apps that say which of them answered and what they were given: the routing
decisions are the router's own. The SDK's real apps behind it are
tests/stories/test_http_plain.py's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memo_mcp.http_routing import (
    MAX_PEEK_BYTES,
    MAX_SESSIONS,
    SESSION_HEADER,
    SESSION_IDLE_S,
    McpRouter,
    SessionBook,
)
from memo_mcp.stdio_guard import check_body

HOST = "127.0.0.1:8000"
SSE = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


# -- SessionBook -------------------------------------------------------------------------------


def test_a_new_book_has_room_and_the_defaults() -> None:
    book = SessionBook()
    assert (book.limit, book.idle_s) == (MAX_SESSIONS, SESSION_IDLE_S) == (500, 300)
    assert len(book) == 0 and book.wait_s() is None


def test_sessions_within_the_limit_evict_nobody() -> None:
    book = SessionBook(limit=3, idle_s=60)
    assert [book.opened(s) for s in "abc"] == [[], [], []]
    assert len(book) == 3


def test_unproven_sessions_are_evicted_oldest_first_and_by_last_use() -> None:
    book = SessionBook(limit=2, idle_s=60)
    book.opened("a")
    book.opened("b")
    book.used("a", request=False)  # a notification: `a` stays unproven, used last
    assert book.opened("c") == ["b"]
    assert book.opened("d") == ["a"]
    assert len(book) == 2


def test_the_newest_session_is_never_evicted_for_itself() -> None:
    book = SessionBook(limit=1, idle_s=60)
    book.opened("a")
    book.used("a", request=True)
    # Only a proven one besides it: the book keeps both (the caller refuses newcomers
    # first, by wait_s), never evicting the newcomer nor the proven session.
    assert book.opened("b") == [] and len(book) == 2
    assert book.opened("c") == ["b"] and len(book) == 2


def test_proven_sessions_are_ordered_by_last_use() -> None:
    book = SessionBook(limit=2, idle_s=60)
    for sid in ("a", "b"):
        book.opened(sid)
        book.used(sid, request=True)
    assert book.wait_s() is not None  # full of proven sessions
    book.used("a", request=False)  # any use of a proven one counts as a use
    book.closed("b")
    assert book.wait_s() is None
    book.opened("c")
    assert book.wait_s() is None  # `c` is unproven: a newcomer would take its place


def test_uses_and_closes_of_unknown_sessions_change_nothing() -> None:
    book = SessionBook(limit=2, idle_s=60)
    book.opened("a")
    book.used("nobody", request=True)
    book.closed("nobody")
    book.closed("a")
    book.closed("a")  # twice: still nothing
    assert len(book) == 0 and book.wait_s() is None
    book.used("a", request=True)  # closed already: not brought back
    assert len(book) == 0


def test_wait_s_says_at_least_a_second() -> None:
    book = SessionBook(limit=1, idle_s=0.5)
    book.opened("a")
    book.used("a", request=True)
    wait = book.wait_s()
    assert wait is not None and wait >= 1.0


def test_idle_sessions_are_forgotten_proven_or_not() -> None:
    book = SessionBook(limit=1, idle_s=0.01)
    book.opened("a")
    book.used("a", request=True)
    time.sleep(0.05)  # past its idle time: the session app has closed it
    assert book.wait_s() is None and len(book) == 0


# -- the router ----------------------------------------------------------------------------------


@dataclass
class Seen:
    """What the apps behind the router were given, in order."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    lifespans: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)  # ids the session app handed out
    unknown: set[str] = field(default_factory=set)  # ids it answers 404 for


def app(name: str, seen: Seen) -> Starlette:
    async def endpoint(request: Request) -> Response:
        body = await request.body()
        seen.calls.append(
            {
                "app": name,
                "method": request.method,
                "path": request.url.path,
                "body": body,
                "accept": request.headers.getlist("accept"),
                "sid": request.headers.get(SESSION_HEADER),
                "host": request.headers.get("host"),
                "authorization": request.headers.get("authorization"),
            }
        )
        sid = request.headers.get(SESSION_HEADER)
        if sid in seen.unknown:
            return Response("no such session", 404)
        headers = {}
        if name == "sessions" and request.method == "POST" and sid is None:
            sid = f"s{len(seen.sessions) + 1}"
            seen.sessions.append(sid)
            headers[SESSION_HEADER] = sid
        return JSONResponse({"app": name}, headers=headers)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> Any:
        seen.lifespans.append(f"{name} up")
        try:
            yield
        finally:
            seen.lifespans.append(f"{name} down")

    routes = [Route("/mcp", endpoint, methods=["GET", "POST", "DELETE"])]
    routes.append(Route("/health", endpoint, methods=["GET"]))
    routes.append(Route("/elsewhere", endpoint, methods=["POST"]))
    return Starlette(routes=routes, lifespan=lifespan)


@dataclass
class Routed:
    router: McpRouter
    seen: Seen
    book: SessionBook

    def apps(self) -> list[str]:
        return [c["app"] for c in self.seen.calls]


def routed(book: SessionBook | None = None) -> Routed:
    seen = Seen()
    book = SessionBook(limit=4, idle_s=600) if book is None else book  # (empty: falsy)
    security = TransportSecurityMiddleware(
        TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[HOST],
            allowed_origins=[f"http://{HOST}"],
        )
    )
    router = McpRouter(
        app("sessions", seen), app("plain", seen), app("streamed", seen), "/mcp", book, security
    )
    return Routed(router, seen, book)


@pytest.fixture
def r() -> Iterator[Routed]:
    yield routed()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


async def request(
    router: McpRouter,
    method: str = "POST",
    body: bytes | dict[str, Any] | list[bytes] = b"",
    headers: dict[str, str] | None = None,
    path: str = "/mcp",
) -> Answer:
    """One request as uvicorn hands it over: the body in the parts given."""
    if isinstance(body, dict):
        body = json.dumps(body).encode()
    parts = body if isinstance(body, list) else [body]
    sent = {"host": HOST, "content-type": "application/json", **(headers or {})}
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in sent.items()],
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 40000),
    }
    messages = [
        {"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
        for i, part in enumerate(parts)
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    got: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        got.append(message)

    await router(scope, receive, send)
    start = next(m for m in got if m["type"] == "http.response.start")
    heads = {k.decode().lower(): v.decode() for k, v in start.get("headers", [])}
    body_out = b"".join(m.get("body", b"") for m in got if m["type"] == "http.response.body")
    return Answer(start["status"], heads, body_out)


@pytest.mark.parametrize(
    ("method", "body", "headers", "path", "to"),
    [
        ("GET", b"", {"accept": "text/event-stream"}, "/mcp", "sessions"),  # a GET stream
        ("DELETE", b"", {SESSION_HEADER: "s9"}, "/mcp", "sessions"),
        ("POST", PING, {SESSION_HEADER: "s9", "accept": SSE}, "/mcp", "sessions"),
        ("POST", PING, {SESSION_HEADER: "s9"}, "/mcp", "sessions"),  # a session, any Accept
        ("POST", INITIALIZE, {"accept": SSE}, "/mcp", "sessions"),  # opens a session
        ("POST", INITIALIZE, {"accept": "TEXT/EVENT-STREAM;q=0.9"}, "/mcp", "sessions"),
        ("POST", PING, {"accept": SSE}, "/mcp", "streamed"),  # SSE, no session
        ("POST", INITIALIZED, {"accept": SSE}, "/mcp", "streamed"),
        ("POST", INITIALIZE, {"accept": "application/json"}, "/mcp", "plain"),
        ("POST", PING, {"accept": "*/*"}, "/mcp", "plain"),  # curl
        ("POST", PING, {}, "/mcp", "plain"),  # no Accept at all
        ("POST", PING, {"accept": "text/event-streams"}, "/mcp", "plain"),  # not SSE
        ("GET", b"", {}, "/health", "sessions"),  # every other path: the session app's
        ("POST", b"{oops", {}, "/elsewhere", "sessions"),  # judged only at /mcp
    ],
)
async def test_each_request_goes_to_its_app(
    r: Routed,
    method: str,
    body: bytes | dict[str, Any],
    headers: dict[str, str],
    path: str,
    to: str,
) -> None:
    answer = await request(r.router, method, body, headers, path)
    assert answer.status == 200 and answer.json() == {"app": to}
    assert r.apps() == [to]
    sent = json.dumps(body).encode() if isinstance(body, dict) else body
    assert r.seen.calls[0]["body"] == sent  # the body as it came, read once by the router


@pytest.mark.parametrize("accept", [None, "*/*", "text/html, */*;q=0.8", "application/json"])
async def test_a_plain_exchange_is_told_the_client_takes_json(
    r: Routed, accept: str | None
) -> None:
    headers = {} if accept is None else {"accept": accept}
    await request(r.router, body=PING, headers=headers)
    assert r.seen.calls[0]["accept"] == ["application/json"]


async def test_a_body_in_parts_reaches_the_app_whole(r: Routed) -> None:
    whole = json.dumps(PING).encode()
    parts = [whole[:5], whole[5:6], b"", whole[6:]]
    answer = await request(r.router, body=parts)
    assert answer.json() == {"app": "plain"} and r.seen.calls[0]["body"] == whole


async def test_bytes_that_are_not_utf8_reach_the_app_replaced(r: Routed) -> None:
    body = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"\xff\xfe"}}'
    answer = await request(r.router, body=body)
    assert answer.json() == {"app": "plain"}
    assert r.seen.calls[0]["body"] == body.decode("utf-8", "replace").encode()
    assert "\ufffd\ufffd" in r.seen.calls[0]["body"].decode()


async def test_a_character_split_between_parts_is_kept(r: Routed) -> None:
    body = json.dumps({**PING, "id": "ёж"}, ensure_ascii=False).encode()
    cut = body.index("ж".encode()) + 1  # inside the two bytes of ж
    await request(r.router, body=[body[:cut], body[cut:]])
    assert r.seen.calls[0]["body"] == body


MALFORMED = [
    b"",
    b"   ",
    b"{oops",
    b"[]",
    b"42",
    b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":"\\udcff","method":"ping"}',
    b'{"jsonrpc":"2.0","id":7,"method":"ping","params":[1]}',
    b'{"jsonrpc":"2.0","id":"r","result":5}',  # a malformed response
    b"\xff\xfe",
]


@pytest.mark.parametrize("body", MALFORMED, ids=lambda b: repr(b[:30]))
@pytest.mark.parametrize("headers", [{}, {"accept": SSE}, {SESSION_HEADER: "s1"}])
async def test_a_malformed_body_is_answered_here_as_stdio_answers_it(
    r: Routed, body: bytes, headers: dict[str, str]
) -> None:
    answer = await request(r.router, body=body, headers=headers)
    want = check_body(body.decode("utf-8", "replace"))
    assert want is not None
    assert (answer.status, answer.headers["content-type"]) == (400, "application/json")
    assert answer.json() == json.loads(want.model_dump_json(by_alias=True, exclude_unset=True))
    assert r.apps() == []  # no app saw it
    assert len(r.book) == 0


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example:8000"}, 421),
        ({"origin": "http://evil.example"}, 403),
        ({"content-type": "text/plain"}, 400),
    ],
)
async def test_a_malformed_body_from_a_foreign_page_gets_the_security_refusal(
    r: Routed, headers: dict[str, str], status: int
) -> None:
    answer = await request(r.router, body=b"{oops", headers=headers)
    assert answer.status == status
    assert b"jsonrpc" not in answer.body  # nothing of the check is told
    assert r.apps() == []


async def test_a_body_past_the_peek_is_the_apps_to_judge(r: Routed) -> None:
    big = b"{" + b"x" * (MAX_PEEK_BYTES + (1 << 20)) + b"\xff"  # malformed, not UTF-8 at its end
    parts = [big[i : i + (1 << 20)] for i in range(0, len(big), 1 << 20)]
    answer = await request(r.router, body=parts)
    assert answer.json() == {"app": "plain"}
    assert r.seen.calls[0]["body"] == big  # whole, as it was sent: the SDK refuses it (413)


async def test_a_whole_body_just_past_the_limit_is_not_judged_but_read_as_text(r: Routed) -> None:
    big = b"{" + b"x" * MAX_PEEK_BYTES + b"\xff"  # read whole (the last part is small)
    parts = [big[i : i + (1 << 20)] for i in range(0, len(big), 1 << 20)]
    answer = await request(r.router, body=parts)
    assert answer.json() == {"app": "plain"}
    assert r.seen.calls[0]["body"] == big[:-1] + "\ufffd".encode()


# -- sessions through the router -----------------------------------------------------------------


async def open_session(r: Routed, **headers: str) -> str:
    answer = await request(r.router, body=INITIALIZE, headers={"accept": SSE, **headers})
    assert answer.status == 200, answer
    return answer.headers[SESSION_HEADER]


async def test_a_session_opened_is_booked_and_proven_by_a_request(r: Routed) -> None:
    sid = await open_session(r)
    assert len(r.book) == 1
    await request(r.router, body=INITIALIZED, headers={SESSION_HEADER: sid})  # proves nothing
    await request(r.router, body=PING, headers={SESSION_HEADER: sid, "accept": SSE})
    # Proven: a flood of initialize ends only the unproven sessions, never this one.
    for _ in range(10):
        await open_session(r)
    ended = [c["sid"] for c in r.seen.calls if c["method"] == "DELETE"]
    assert len(ended) == 7 and sid not in ended  # 11 opened, 4 kept
    assert len(r.book) == r.book.limit == 4
    answer = await request(r.router, body=PING, headers={SESSION_HEADER: sid})
    assert answer.status == 200


async def test_a_newcomer_past_the_limit_ends_the_oldest_unproven_session_as_a_client_would() -> (
    None
):
    r = routed(SessionBook(limit=2, idle_s=600))
    auth = {"authorization": "Bearer t0k", "origin": f"http://{HOST}"}
    first = await open_session(r, **auth)
    second = await open_session(r, **auth)
    await request(r.router, body=PING, headers={SESSION_HEADER: second, **auth})  # proven
    third = await open_session(r, **auth, **{"x-other": "not kept"})
    [delete] = [c for c in r.seen.calls if c["method"] == "DELETE"]
    assert delete["sid"] == first and delete["app"] == "sessions"
    assert (delete["host"], delete["authorization"]) == (HOST, "Bearer t0k")
    assert len(r.book) == 2 and third == "s3"


async def test_when_every_session_is_proven_a_newcomer_gets_503_saying_when(r: Routed) -> None:
    r = routed(SessionBook(limit=2, idle_s=120))
    for _ in range(2):
        sid = await open_session(r)
        await request(r.router, body=PING, headers={SESSION_HEADER: sid})
    calls = len(r.seen.calls)
    answer = await request(r.router, body={**INITIALIZE, "id": "new"}, headers={"accept": SSE})
    assert answer.status == 503
    assert 1 <= int(answer.headers["retry-after"]) <= 120
    error = answer.json()
    assert (error["jsonrpc"], error["id"], error["error"]["code"]) == ("2.0", "new", -32603)
    assert "2 sessions open" in error["error"]["message"]
    assert "plain POST" in error["error"]["message"]
    assert len(r.seen.calls) == calls  # the session app never saw it
    # A plain exchange still works meanwhile.
    assert (await request(r.router, body=PING)).json() == {"app": "plain"}


async def test_a_session_the_app_no_longer_knows_leaves_the_book(r: Routed) -> None:
    sid = await open_session(r)
    r.seen.unknown.add(sid)  # expired in the session app
    answer = await request(r.router, body=PING, headers={SESSION_HEADER: sid})
    assert answer.status == 404 and len(r.book) == 0


async def test_a_delete_closes_the_booked_session(r: Routed) -> None:
    sid = await open_session(r)
    await request(r.router, "DELETE", headers={SESSION_HEADER: sid})
    assert len(r.book) == 0


async def test_a_refused_initialize_books_nothing(r: Routed) -> None:
    r.seen.unknown.add(None)  # type: ignore[arg-type]  # the session app answers 404
    answer = await request(r.router, body=INITIALIZE, headers={"accept": SSE})
    assert answer.status == 404 and len(r.book) == 0


# -- lifespan ------------------------------------------------------------------------------------


async def test_the_lifespan_starts_and_stops_all_three_apps(r: Routed) -> None:
    incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[str] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])
        if message["type"] == "lifespan.startup.complete":
            assert r.seen.lifespans == ["sessions up", "plain up", "streamed up"]

    await r.router({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert r.seen.lifespans[3:] == ["streamed down", "plain down", "sessions down"]


async def test_a_failed_start_is_said_to_the_server() -> None:
    r = routed()

    @asynccontextmanager
    async def broken(_app: Starlette) -> Any:
        raise RuntimeError("cannot start")
        yield

    r.router.plain.router.lifespan_context = broken
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "lifespan.startup"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with pytest.raises(RuntimeError, match="cannot start"):
        await r.router({"type": "lifespan"}, receive, send)
    assert [m["type"] for m in sent] == ["lifespan.startup.failed"]
    assert "cannot start" in sent[0]["message"]
    assert r.seen.lifespans == ["sessions up", "sessions down"]  # the one started, stopped
