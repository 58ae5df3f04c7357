"""memo_mcp.http_guard: connections bounded in time and number, the answers they get when
they are not served, and accept failures said once per interval.

The protocol runs in a real uvicorn server on a thread of this process, around a tiny ASGI
app (not memo's), spoken to over raw sockets; the limits are the ones a test gives
`Connections`. memo-mcp itself under slow clients is tests/stories/test_server_abuse.py's.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import h11
import pytest
import uvicorn
from conftest import HANG_S

from memo_mcp.http_guard import (
    MAX_CONNECTIONS,
    REQUEST_TIMEOUT_S,
    Connections,
    GuardedH11Protocol,
    QuietAccepts,
    connection_limit,
    guarded_protocol,
)

# -- connection_limit --------------------------------------------------------------------------

LIMITS = """
import resource
from memo_mcp.http_guard import connection_limit
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
for soft in (4096, 1000, 200, 40, 16, 10):
    if hard != resource.RLIM_INFINITY and soft > hard:
        print(soft, "skip")
        continue
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print(soft, connection_limit())
"""


def test_the_connection_limit_is_half_the_descriptors_between_8_and_the_maximum() -> None:
    run = subprocess.run(
        [sys.executable, "-c", LIMITS], capture_output=True, text=True, timeout=HANG_S
    )
    assert run.returncode == 0, run.stderr
    got = dict(line.split() for line in run.stdout.splitlines())
    want = {"4096": "500", "1000": "500", "200": "100", "40": "20", "16": "8", "10": "8"}
    assert {k: v for k, v in got.items() if v != "skip"} == {
        k: v for k, v in want.items() if got[k] != "skip"
    }
    assert got["40"] == "20" and got["10"] == "8"  # limits this low are always allowed


def test_the_connection_limit_here_is_within_its_bounds() -> None:
    assert 8 <= connection_limit() <= MAX_CONNECTIONS == 500


# -- Connections: the answers ------------------------------------------------------------------


def parsed(raw: bytes) -> tuple[h11.Response, bytes]:
    """An answer as a client reads it (h11, after a request of its own)."""
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="GET", target="/", headers=[("Host", "x")]))
    client.send(h11.EndOfMessage())
    client.receive_data(raw)
    response, body = client.next_event(), b""
    assert isinstance(response, h11.Response)
    while isinstance(event := client.next_event(), h11.Data):
        body += event.data
    assert isinstance(event, h11.EndOfMessage)
    return response, body


def headers_of(response: h11.Response) -> dict[str, str]:
    return {k.decode().lower(): v.decode() for k, v in response.headers}


@pytest.mark.parametrize(("timeout", "shown"), [(REQUEST_TIMEOUT_S, "10"), (2.5, "2.5")])
def test_a_timed_out_client_gets_408_in_json_and_a_closed_connection(
    timeout: float, shown: str
) -> None:
    response, body = parsed(Connections(limit=8, timeout_s=timeout).timed_out)
    assert (response.status_code, response.reason) == (408, b"Request Timeout")
    headers = headers_of(response)
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close" and "retry-after" not in headers
    answer = json.loads(body)
    assert answer["error"] == "request timeout"
    assert f"within {shown} s" in answer["message"]


def test_a_full_server_says_503_with_its_limit_and_when_to_try_again() -> None:
    response, body = parsed(Connections(limit=37).full)
    assert (response.status_code, response.reason) == (503, b"Service Unavailable")
    headers = headers_of(response)
    assert headers["retry-after"] == "1" and headers["connection"] == "close"
    answer = json.loads(body)
    assert answer["error"] == "service unavailable"
    assert "37 connections open" in answer["message"]


def test_each_guarded_protocol_class_shares_its_own_connections() -> None:
    first, second = Connections(limit=1), Connections(limit=2)
    a, b = guarded_protocol(first), guarded_protocol(second)
    assert issubclass(a, GuardedH11Protocol) and issubclass(b, GuardedH11Protocol)
    assert a is not b
    assert a.connections_shared is first and b.connections_shared is second
    assert first.waiting == {} and first.timeout_s == REQUEST_TIMEOUT_S


# -- the protocol, in a real server ------------------------------------------------------------

GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
OK = b"HTTP/1.1 200 OK"


class Served:
    """A uvicorn server on a thread of its own with memo's guarded protocol; `/block`
    answers once `gate` is set. uvicorn's own keep-alive timeout is left far out of reach,
    so any closing seen is the guard's."""

    def __init__(self, connections: Connections) -> None:
        self.connections = connections
        self.gate = threading.Event()
        self.requests = 0
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            http=guarded_protocol(connections),
            interface="asgi3",
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_keep_alive=3600,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=lambda: asyncio.run(self.server.serve(sockets=[sock])), daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + HANG_S
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "did not start"
            time.sleep(0.01)

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client went (or was sent) away before its request arrived
            more = message.get("more_body", False)
        self.requests += 1
        if scope["path"] == "/block":
            await asyncio.to_thread(self.gate.wait, HANG_S)
        start = {"type": "http.response.start", "status": 200}
        await send({**start, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    def connect(self) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", self.port))
        s.settimeout(HANG_S)
        return s

    def stop(self) -> None:
        self.gate.set()
        self.server.should_exit = True
        self.thread.join(HANG_S)
        assert not self.thread.is_alive()


def answer(s: socket.socket) -> bytes:
    """One whole answer of `Content-Length` bytes (the connection stays open)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        assert chunk, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(
        next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[
            1
        ]
    )
    while len(body) < length:
        body += s.recv(4096)
    return head.split(b"\r\n")[0]


def rest(s: socket.socket) -> bytes:
    """Everything until the server closes the connection."""
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return out
        if not chunk:
            return out
        out += chunk


@pytest.fixture
def quick() -> Iterator[Served]:
    served = Served(Connections(limit=16, timeout_s=0.3))
    yield served
    served.stop()


@pytest.mark.parametrize(
    "sent",
    [
        b"",  # nothing at all
        b"GET / HT",  # half a request line
        b"GET / HTTP/1.1\r\nHost: x\r\n",  # headers without their end
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",  # a body cut short
    ],
    ids=["nothing", "request-line", "headers", "body"],
)
def test_a_request_that_does_not_arrive_in_time_gets_408_and_is_closed(
    quick: Served, sent: bytes
) -> None:
    with quick.connect() as s:
        s.sendall(sent)
        assert rest(s) == quick.connections.timed_out
    assert quick.requests == 0


def test_a_body_that_arrives_is_answered(quick: Served) -> None:
    with quick.connect() as s:
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n")
        s.sendall(b"{}{}")
        assert answer(s) == OK


def test_an_idle_connection_after_its_answer_is_closed_without_a_408(quick: Served) -> None:
    with quick.connect() as s:
        s.sendall(GET)
        assert answer(s) == OK
        s.sendall(GET)  # keep-alive: a second request within the time is answered too
        assert answer(s) == OK
        assert rest(s) == b""  # then, idle: closed, no answer to a request never sent
    assert quick.requests == 2


def test_a_body_cut_short_on_a_kept_alive_connection_gets_408(quick: Served) -> None:
    with quick.connect() as s:
        s.sendall(GET)
        assert answer(s) == OK
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
        assert rest(s) == quick.connections.timed_out


def test_headers_cut_short_on_a_kept_alive_connection_get_408(quick: Served) -> None:
    with quick.connect() as s:
        s.sendall(GET)
        assert answer(s) == OK
        s.sendall(b"GET / HTTP/1.1\r\nHo")
        assert rest(s) == quick.connections.timed_out


def test_a_newcomer_past_the_limit_closes_the_connection_waiting_longest() -> None:
    served = Served(Connections(limit=2, timeout_s=HANG_S))
    try:
        with served.connect() as old, served.connect() as other:
            # `other` answered once: the server has taken `old` before it (connections are
            # accepted in order), and `old` has waited for its request longest.
            other.sendall(GET)
            assert answer(other) == OK
            with served.connect() as newcomer:
                assert rest(old) == served.connections.timed_out  # owed an answer: 408
                newcomer.sendall(GET)
                assert answer(newcomer) == OK
                # Now `other` (idle since its answer) waits longest: the next newcomer
                # closes it, without a 408 (it is owed nothing).
                with served.connect() as third:
                    assert rest(other) == b""
                    third.sendall(GET)
                    assert answer(third) == OK
                newcomer.sendall(GET)
                assert answer(newcomer) == OK
    finally:
        served.stop()


def test_a_newcomer_when_every_connection_is_busy_gets_503() -> None:
    served = Served(Connections(limit=1, timeout_s=HANG_S))
    try:
        with served.connect() as busy:
            busy.sendall(GET.replace(b"/ ", b"/block "))
            deadline = time.monotonic() + HANG_S
            while served.requests == 0:  # its request is in the app: it waits for nobody
                assert time.monotonic() < deadline
                time.sleep(0.01)
            with served.connect() as newcomer:
                assert rest(newcomer) == served.connections.full
            served.gate.set()
            assert answer(busy) == OK  # the busy one is served to the end
    finally:
        served.stop()


def test_stopping_closes_a_connection_waiting_for_its_client_at_once() -> None:
    served = Served(Connections(limit=8, timeout_s=HANG_S))  # no 408 could come in time
    with served.connect() as waiting:
        waiting.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        with served.connect() as s:  # the server has taken the first connection by now
            s.sendall(GET)
            assert answer(s) == OK
            served.stop()
            assert rest(waiting) == b""  # closed: a request that has not arrived is not answered


# -- QuietAccepts --------------------------------------------------------------------------------


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "memo_mcp"]


@pytest.mark.parametrize("code", [errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM])
def test_failed_accepts_are_counted_and_said_once_per_interval(
    loop: asyncio.AbstractEventLoop, caplog: pytest.LogCaptureFixture, code: int
) -> None:
    quiet = QuietAccepts(interval_s=3600)
    failed = {"message": "socket.accept() out of system resource", "exception": OSError(code, "x")}
    with caplog.at_level(logging.WARNING):
        for _ in range(50):
            quiet(loop, failed)
        assert len(said(caplog)) == 1
        assert "1 failed accepts" in said(caplog)[0]
        assert "cannot accept connections for now" in said(caplog)[0]
        quiet.interval_s = 0  # the interval is over: said again, with the count since
        quiet(loop, failed)
    assert len(said(caplog)) == 2 and "50 failed accepts" in said(caplog)[1]
    assert not [r for r in caplog.records if r.name == "asyncio"]


@pytest.mark.parametrize(
    "context",
    [
        {"message": "boom", "exception": RuntimeError("a bug")},
        {"message": "reset", "exception": OSError(errno.ECONNRESET, "reset")},
        {"message": "no exception at all"},
    ],
    ids=["error", "other-oserror", "none"],
)
def test_everything_else_is_logged_as_asyncio_would(
    loop: asyncio.AbstractEventLoop, caplog: pytest.LogCaptureFixture, context: dict[str, Any]
) -> None:
    with caplog.at_level(logging.DEBUG):
        QuietAccepts()(loop, context)
    assert said(caplog) == []
    [record] = [r for r in caplog.records if r.name == "asyncio"]
    assert context["message"] in record.getMessage()


def test_a_retry_after_the_server_stopped_is_not_said(
    loop: asyncio.AbstractEventLoop, caplog: pytest.LogCaptureFixture
) -> None:
    handle = loop.call_later(3600, lambda: None)
    handle.cancel()
    context = {
        "message": "Exception in callback",
        "exception": ValueError("I/O operation on closed socket"),
        "handle": "<TimerHandle BaseSelectorEventLoop._start_serving(...)>",
    }
    with caplog.at_level(logging.DEBUG):
        QuietAccepts()(loop, context)
    assert caplog.records == []
    # The same error from anything else is not hidden.
    with caplog.at_level(logging.DEBUG):
        QuietAccepts()(loop, {**context, "handle": repr(handle)})
    assert [r.name for r in caplog.records] == ["asyncio"]
