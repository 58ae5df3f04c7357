"""The connections of `memo-mcp --http`: bounded in time and in number, stopped at once.

uvicorn times out only idle keep-alive connections: a client that sends its headers or its
body a byte at a time holds a connection (and a file descriptor) for as long as it likes,
and enough of them exhaust the process's descriptors. So, on top of uvicorn's h11 protocol:

- A request's headers must arrive within `timeout_s` (REQUEST_TIMEOUT_S unless configured)
  of the connection opening (or of the previous answer on it), and its body within
  `timeout_s` more; else the client gets 408 and the connection is closed.
- At most `connection_limit()` connections are open (fewer where descriptors are few). A
  connection past the limit closes the one that has waited longest for its client (still
  sending a request, or idle between two); when every connection is busy with a request
  the newcomer gets 503.
- When accept() fails for want of descriptors, asyncio logs the error once per pending
  accept, about 2,000 times a second; `QuietAccepts` writes one line per interval instead.
- On SIGTERM (uvicorn calls `shutdown()` on each connection), a connection waiting for its
  client is closed at once: a request that has not arrived will not be answered.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import time
from collections import OrderedDict
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from memo_core.process import descriptor_limit

log = logging.getLogger("memo_mcp")

REQUEST_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 500
ACCEPT_LOG_INTERVAL_S = 10.0


def connection_limit() -> int:
    """MAX_CONNECTIONS, or half the descriptors the process may open if that is fewer (the
    other half for indexes, watches and what a burst of accepts takes before the limit
    closes them)."""
    soft = descriptor_limit()
    if soft is None:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft // 2))


def _raw_response(status: str, text: str, retry_after: int | None = None) -> bytes:
    body = json.dumps({"error": status.split(" ", 1)[1].lower(), "message": text}).encode()
    head = [
        f"HTTP/1.1 {status}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    if retry_after is not None:
        head.append(f"Retry-After: {retry_after}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class Connections:
    """What the connections of one server share: the limits, and those waiting for their
    client, longest waiting first (the first to close when a newcomer needs room)."""

    def __init__(self, limit: int, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
        self.limit = limit
        self.timeout_s = timeout_s
        self.waiting: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        self.timed_out = _raw_response(
            "408 Request Timeout",
            f"a request's headers must arrive within {timeout_s:g} s, and its body within "
            f"{timeout_s:g} s more",
        )
        self.full = _raw_response(
            "503 Service Unavailable",
            f"memo-mcp has {limit} connections open, each busy with a request: "
            "try again in a moment",
            retry_after=1,
        )


def guarded_protocol(connections: Connections) -> type[GuardedH11Protocol]:
    """The protocol class for uvicorn's `http` setting, sharing `connections`."""
    return type("MemoH11Protocol", (GuardedH11Protocol,), {"connections_shared": connections})


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the time limits and the bound the module describes."""

    connections_shared: Connections
    _phase: str | None = None  # "headers" or "body" while waiting for the client
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        shared = self.connections_shared
        if len(self.connections) > shared.limit:
            if not shared.waiting:
                transport.write(shared.full)
                self._close()
                return
            oldest = next(iter(shared.waiting))
            oldest.timed_out()
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._wait(None)
        super().connection_lost(exc)

    def shutdown(self) -> None:
        if self._phase is not None:
            self._close()
        else:
            super().shutdown()

    def timed_out(self) -> None:
        """Close the connection; a client still owed an answer gets 408."""
        # uvicorn makes a request's cycle only once its headers are whole: until then
        # `self.cycle` is the previous request's, already answered, and the next request's
        # bytes so far wait in h11's buffer. Those bytes tell a request begun (owed a 408)
        # from a connection idle between two (owed nothing).
        begun = self._phase == "headers" and bool(self.conn.trailing_data[0])
        if self.cycle is None or not self.cycle.response_started or begun:
            self.transport.write(self.connections_shared.timed_out)
        self._close()

    def _close(self) -> None:
        self._wait(None)
        self.transport.close()

    def _watch(self) -> None:
        """Start the clock when the connection begins to wait for its client (h11's view
        of the client's side: IDLE before a request's headers, SEND_BODY during its body)."""
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        self._wait("headers" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None)

    def _wait(self, phase: str | None) -> None:
        if phase == self._phase:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = phase
        shared = self.connections_shared
        shared.waiting.pop(self, None)
        if phase is not None:
            shared.waiting[self] = None
            self._timer = self.loop.call_later(shared.timeout_s, self.timed_out)


class QuietAccepts:
    """An event-loop exception handler: accept() failing for want of descriptors (or
    memory) is counted and said once per `interval_s`; everything else is logged as asyncio
    would. The failure itself is handled by asyncio: it stops accepting for a second."""

    def __init__(self, interval_s: float = ACCEPT_LOG_INTERVAL_S) -> None:
        self.interval_s = interval_s
        self._count = 0
        self._said_at = -float("inf")

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if _retry_after_stop(exc, context):
            return
        if not (isinstance(exc, OSError) and exc.errno in _OUT_OF):
            loop.default_exception_handler(context)
            return
        self._count += 1
        now = time.monotonic()
        if now - self._said_at >= self.interval_s:
            soft = descriptor_limit()
            log.warning(
                "memo-mcp: cannot accept connections for now (%s; open files limit %s): "
                "%d failed accepts; they wait until descriptors free up (slow clients time out)",
                exc,
                soft,
                self._count,
            )
            self._said_at, self._count = now, 0


_OUT_OF = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


def _retry_after_stop(exc: object, context: dict[str, Any]) -> bool:
    """After a failed accept asyncio tries again a second later, once per failure; a retry
    that finds the listening socket closed (the server has stopped) fails so: nothing to
    say about it."""
    return isinstance(exc, ValueError) and "_start_serving" in repr(context.get("handle", ""))
