"""memo_mcp.stdio_guard: the stdin lines (and HTTP bodies) the SDK would drop, answered;
the messages its writer could not encode, escaped; the client's pipe claimed.

The judging functions (`check_line`, `check_body`, `sendable`) and the wrappers
(`GuardedStdin`, `SendableWrites`, `claimed_stdin`) are driven directly: the real server
over its pipe is tests/stories/test_mcp_wire.py's and tests/stories/test_http_edges.py's.
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from conftest import HANG_S
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from memo_mcp import stdio_guard
from memo_mcp.stdio_guard import (
    GuardedStdin,
    SendableWrites,
    check_body,
    check_line,
    claimed_stdin,
    sendable,
)


def ping(rid: str) -> str:
    return '{"jsonrpc":"2.0","id":' + rid + ',"method":"ping"}'


def nested(depth: int) -> str:
    deep = "[" * depth + "]" * depth
    return '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":' + deep + "}}"


# -- check_line: what passes ------------------------------------------------------------------

GOOD = [
    ping("1"),
    ping('"text id"'),
    ping("-1"),
    ping("0"),
    ping("123456789012345678901234567890"),  # an integer, however long
    ping('"ёлка"'),
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":7,"result":{}}',  # a response to one of the server's requests
    '{"jsonrpc":"2.0","id":"r","error":{"code":1,"message":"m"}}',
    '  {"jsonrpc":"2.0","id":1,"method":"ping"}  \n',  # spaces around, the line's end
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\u0000"}}',
]


@pytest.mark.parametrize("line", GOOD)
def test_a_usable_message_passes_as_it_is(line: str) -> None:
    assert check_line(line) is None
    assert check_body(line) is None


@pytest.mark.parametrize("line", ["", "\n", "   ", " \t \r\n"])
def test_a_blank_line_is_skipped_without_an_answer(line: str) -> None:
    assert check_line(line) == ("blank line", None)


# -- check_line: what is answered, and how ----------------------------------------------------

# (line, the error code, the id the answer carries, words its data holds)
ANSWERED: list[tuple[str, int, Any, str]] = [
    ("{not json", PARSE_ERROR, None, "Invalid JSON"),
    (ping("1") + " trailing", PARSE_ERROR, None, "trailing characters"),
    ("\ufeff" + ping("1"), PARSE_ERROR, None, "Invalid JSON"),  # a BOM is not JSON
    ('"\\udcff"', PARSE_ERROR, None, "surrogate"),
    ("[" * 100_000, PARSE_ERROR, None, "recursion limit"),
    # Python reads what the SDK's parser does not: the id goes back with the error.
    ('{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"\\ud800"}}', PARSE_ERROR, 9, "hex"),
    (nested(300), PARSE_ERROR, 5, "recursion limit"),
    # Too deep for Python as well: the id cannot be read.
    (nested(5000), PARSE_ERROR, None, "recursion limit"),
    ("[]", INVALID_REQUEST, None, "a batch (JSON array)"),
    (f"[{ping('1')}, {ping('2')}]", INVALID_REQUEST, None, "a batch (JSON array)"),
    ("42", INVALID_REQUEST, None, "not a JSON-RPC object (got int)"),
    ('"ping"', INVALID_REQUEST, None, "not a JSON-RPC object (got str)"),
    ("null", INVALID_REQUEST, None, "not a JSON-RPC object (got NoneType)"),
    ("true", INVALID_REQUEST, None, "not a JSON-RPC object (got bool)"),
    ("{}", INVALID_REQUEST, None, "jsonrpc"),
    ('{"id":"bad","method":"ping"}', INVALID_REQUEST, "bad", "jsonrpc: Field required"),
    ('{"jsonrpc":"1.0","id":"bad","method":"ping"}', INVALID_REQUEST, "bad", "jsonrpc"),
    ('{"jsonrpc":"2.0","id":"bad","method":5}', INVALID_REQUEST, "bad", "method"),
    ('{"jsonrpc":"2.0","id":3,"method":"ping","params":[1]}', INVALID_REQUEST, 3, "params"),
    ('{"jsonrpc":"2.0","method":"ping","params":5}', INVALID_REQUEST, None, "params"),
    # An id that is neither a string nor an integer: the SDK would take a notification.
    (ping("1.5"), INVALID_REQUEST, None, "id must be a string or an integer (got 1.5)"),
    (ping("1e3"), INVALID_REQUEST, None, "id must be a string or an integer"),
    (ping("null"), INVALID_REQUEST, None, "(got null)"),
    (ping("true"), INVALID_REQUEST, None, "(got true)"),
    (ping('{"a": 1}'), INVALID_REQUEST, None, '(got {"a": 1})'),
    (ping("[1]"), INVALID_REQUEST, None, "(got [1])"),
    (ping("NaN"), INVALID_REQUEST, None, "(got NaN)"),
    ('{"jsonrpc":"2.0","id":{},"method":"notifications/x"}', INVALID_REQUEST, None, "got {}"),
    # A lone surrogate in the id: JSON can spell it, no answer could carry it back.
    (ping('"\\udcff"'), INVALID_REQUEST, None, "id must be text"),
]


@pytest.mark.parametrize(("line", "code", "rid", "words"), ANSWERED, ids=lambda v: repr(v)[:40])
def test_a_line_the_sdk_would_drop_is_answered(line: str, code: int, rid: Any, words: str) -> None:
    found = check_line(line)
    assert found is not None
    reason, answer = found
    assert isinstance(answer, JSONRPCError)
    assert (answer.jsonrpc, answer.id, answer.error.code) == ("2.0", rid, code)
    assert answer.error.message == ("Parse error" if code == PARSE_ERROR else "Invalid Request")
    assert words in answer.error.data and answer.error.data == reason
    # The answer is itself writable: one line of valid JSON, UTF-8.
    written = answer.model_dump_json(by_alias=True, exclude_unset=True)
    assert json.loads(written.encode("utf-8"))["error"]["code"] == code
    assert "pydantic" not in written and "\n" not in written


def test_a_long_bad_id_is_shown_cut_short() -> None:
    found = check_line(ping(json.dumps(list(range(200)))))
    assert found is not None
    reason, answer = found
    assert answer is not None and answer.id is None
    assert reason.startswith("id must be a string or an integer (got [0, 1, 2")
    assert reason.endswith("...)") and len(reason) < 120


def test_at_most_three_problems_are_said() -> None:
    line = '{"jsonrpc":"1.0","id":"x","method":5,"params":[1]}'
    found = check_line(line)
    assert found is not None
    reason, answer = found
    assert answer is not None and answer.id == "x"
    assert reason.split("; ") == [
        "jsonrpc: Input should be '2.0'",
        "method: Input should be a valid string",
        "params: Input should be an object",
    ]


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":"r","result":5}',
        '{"jsonrpc":"2.0","id":"r","error":{"code":"x"}}',
        '{"id":"r","result":{}}',
        '{"jsonrpc":"2.0","id":"\\udcff","result":{}}',
    ],
)
def test_a_malformed_response_is_never_answered_on_stdio_but_is_over_http(line: str) -> None:
    # A peer that answered the error could start an endless exchange of errors.
    found = check_line(line)
    assert found is not None
    reason, answer = found
    assert answer is None and "response" in reason
    # An HTTP body is answered in its own response, with id null (it is not a request's).
    error = check_body(line)
    assert error is not None and error.id is None
    assert error.error.code in (INVALID_REQUEST, PARSE_ERROR)


@pytest.mark.parametrize("body", ["", "   ", "\n"])
def test_a_blank_body_is_not_json(body: str) -> None:
    error = check_body(body)
    assert error is not None
    assert (error.id, error.error.code, error.error.message) == (None, PARSE_ERROR, "Parse error")


@pytest.mark.parametrize(("line", "code", "rid", "words"), ANSWERED, ids=lambda v: repr(v)[:40])
def test_a_body_gets_the_answer_its_line_gets(line: str, code: int, rid: Any, words: str) -> None:
    found = check_line(line)
    assert found is not None
    assert check_body(line) == found[1]


# -- GuardedStdin -----------------------------------------------------------------------------


async def lines_of(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line


class Replies:
    def __init__(self) -> None:
        self.sent: list[SessionMessage] = []

    async def __call__(self, message: SessionMessage) -> None:
        self.sent.append(message)


async def test_guarded_stdin_passes_good_lines_and_answers_bad_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    good = [ping("1") + "\n", '{"jsonrpc":"2.0","method":"notifications/initialized"}\n']
    stdin = GuardedStdin(
        lines_of(good[0], "\n", "{oops\n", ping("1.5") + "\n", '{"id":1,"result":5}\n', good[1])
    )
    stdin.reply = replies = Replies()
    with caplog.at_level(logging.WARNING, logger="memo_mcp"):
        passed = [line async for line in stdin]
    assert passed == good  # unchanged, in order
    answers = [r.message for r in replies.sent]
    assert [(a.id, a.error.code) for a in answers] == [  # type: ignore[union-attr]
        (None, PARSE_ERROR),
        (None, INVALID_REQUEST),
    ]
    # Each bad line is noted (the blank one is not), the line shown.
    noted = [r.getMessage() for r in caplog.records if r.name == "memo_mcp"]
    assert len(noted) == 3
    assert "'{oops'" in noted[0] and "1.5" in noted[1] and "not answered" in noted[2]


async def test_guarded_stdin_without_a_reply_yet_drops_bad_lines_and_keeps_reading() -> None:
    stdin = GuardedStdin(lines_of("{oops\n", "[]\n", ping("2") + "\n"))
    assert stdin.reply is None
    assert [line async for line in stdin] == [ping("2") + "\n"]


async def test_guarded_stdin_stops_when_the_transport_is_closing() -> None:
    async def closed(message: SessionMessage) -> None:
        raise anyio.ClosedResourceError

    stdin = GuardedStdin(lines_of(ping("1") + "\n", "{oops\n", ping("2") + "\n"))
    stdin.reply = closed
    assert [line async for line in stdin] == [ping("1") + "\n"]


async def test_guarded_stdin_lets_the_sdk_judge_when_checking_fails(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(line: str) -> None:
        raise RuntimeError("a bug in the check")

    monkeypatch.setattr(stdio_guard, "check_line", broken)
    stdin = GuardedStdin(lines_of("{oops\n", ping("3") + "\n"))
    stdin.reply = replies = Replies()
    with caplog.at_level(logging.ERROR, logger="memo_mcp"):
        assert [line async for line in stdin] == ["{oops\n", ping("3") + "\n"]
    assert replies.sent == []
    assert any("checking an incoming line failed" in r.getMessage() for r in caplog.records)


async def test_a_long_bad_line_is_noted_cut_short(caplog: pytest.LogCaptureFixture) -> None:
    line = "{" + "x" * 100_000 + "\n"
    stdin = GuardedStdin(lines_of(line))
    stdin.reply = Replies()
    with caplog.at_level(logging.WARNING, logger="memo_mcp"):
        assert [x async for x in stdin] == []
    [noted] = [r.getMessage() for r in caplog.records if r.name == "memo_mcp"]
    assert len(noted) < 1000 and "(100001 characters)" in noted


# -- sendable and SendableWrites --------------------------------------------------------------


def dumped(item: SessionMessage) -> str:
    return item.message.model_dump_json(by_alias=True, exclude_unset=True)


@pytest.mark.parametrize(
    "message",
    [
        JSONRPCResponse(jsonrpc="2.0", id=1, result={"text": "ёлка 🎄", "n": [1, None]}),
        JSONRPCRequest(jsonrpc="2.0", id="a", method="ping"),
        JSONRPCNotification(jsonrpc="2.0", method="notifications/progress"),
    ],
)
def test_a_message_that_can_be_written_goes_as_it_is(message: Any) -> None:
    item = SessionMessage(message)
    assert sendable(item) is item


def test_strings_that_are_not_text_go_escaped_keys_too() -> None:
    metadata = ServerMessageMetadata(related_request_id=7)
    item = SessionMessage(
        JSONRPCResponse(
            jsonrpc="2.0",
            id=1,
            result={"text": "a\udcffb", "k\ud800": ["x\udc80", 1, {"deep": "\udfff"}], "ok": "ё"},
        ),
        metadata=metadata,
    )
    fixed = sendable(item)
    assert fixed is not item and fixed.metadata is metadata
    assert isinstance(fixed.message, JSONRPCResponse) and fixed.message.id == 1
    assert json.loads(dumped(fixed).encode("utf-8"))["result"] == {
        "text": "a\\udcffb",
        "k\\ud800": ["x\\udc80", 1, {"deep": "\\udfff"}],
        "ok": "ё",
    }


def test_a_notification_with_a_lone_surrogate_goes_escaped() -> None:
    item = SessionMessage(
        JSONRPCNotification(
            jsonrpc="2.0", method="notifications/message", params={"data": "\udcff"}
        )
    )
    fixed = sendable(item)
    assert isinstance(fixed.message, JSONRPCNotification)
    assert json.loads(dumped(fixed))["params"] == {"data": "\\udcff"}


async def test_sendable_writes_pass_on_what_the_writer_can_encode() -> None:
    send, receive = anyio.create_memory_object_stream[SessionMessage](10)
    good = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=2, result={"t": "ok"}))
    bad = SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=3, result={"t": "\udcff"}))
    async with SendableWrites(send) as out:
        await out.send(good)
        await out.send(bad)
    with anyio.fail_after(HANG_S):
        first, second = await receive.receive(), await receive.receive()
    assert first is good
    assert json.loads(dumped(second))["result"] == {"t": "\\udcff"}
    # Leaving the block closed the stream under it.
    with pytest.raises(anyio.EndOfStream):
        await receive.receive()
    with pytest.raises(anyio.ClosedResourceError):
        await out.send(good)
    receive.close()


# -- claimed_stdin ----------------------------------------------------------------------------

CLAIM = """
import fcntl, os, stat, sys
from memo_mcp.stdio_guard import claimed_stdin

def kind():
    mode = os.fstat(0).st_mode
    return "fifo" if stat.S_ISFIFO(mode) else "chr" if stat.S_ISCHR(mode) else "other"

before = kind()
with claimed_stdin() as raw:
    during = kind()
    fd0 = os.read(0, 100)  # the null device: nothing for anyone else
    private = raw.fileno()
    cloexec = bool(fcntl.fcntl(private, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
    got = raw.read()
print(repr((before, during, kind(), private >= 3, cloexec, fd0, got)))
"""


def test_claimed_stdin_takes_the_pipe_and_leaves_fd_0_on_the_null_device() -> None:
    run = subprocess.run(
        [sys.executable, "-c", CLAIM],
        input=b"line one\nline two\n",
        capture_output=True,
        timeout=HANG_S,
    )
    assert run.returncode == 0, run.stderr.decode()
    before, during, after, own_fd, cloexec, fd0, got = eval(run.stdout)  # a tuple's repr
    assert (before, during, after) == ("fifo", "chr", "fifo")  # /dev/null meanwhile
    assert own_fd and cloexec  # a descriptor of its own, which a child does not inherit
    assert fd0 == b""  # nothing for anyone else on fd 0
    assert got == b"line one\nline two\n"


def test_claimed_stdin_falls_back_to_sys_stdin_when_it_is_not_fd_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = io.TextIOWrapper(io.BytesIO(b'{"jsonrpc":"2.0"}\n'))
    monkeypatch.setattr(sys, "stdin", fake)
    with claimed_stdin() as raw:
        assert raw is fake.buffer
        assert raw.read() == b'{"jsonrpc":"2.0"}\n'
