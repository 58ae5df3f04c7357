"""memo-mcp over HTTP at its edges: bodies that are not one usable message, a port already
taken, an empty token.

A malformed body gets, over HTTP, the JSON-RPC error stdio gives the same line (the README
says the errors are the same): both real servers, the stdio one spoken to in raw lines.
Starting is checked on the real console script: a port in use, an address that is not
this machine's and `MEMO_TOKEN=''` each refuse in one line on stderr, before any "serving".
"""

from __future__ import annotations

import argparse
import itertools
import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import MEMO_MCP, WireServer, server_env
from test_http_plain import post
from test_mcp_http import TOKEN, HttpServer, bearer, free_port

from memo_mcp import http_transport as memo_http

PING = '{"jsonrpc":"2.0","id":%s,"method":"ping"}'


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path_factory.mktemp("edges-http"), free_port(), token=TOKEN)
    server.wait_ready()
    yield server
    assert server.stop() == 0, server.stderr()


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WireServer]:
    server = WireServer(server_env(tmp_path_factory.mktemp("edges-stdio")))
    assert "result" in server.initialize()
    yield server
    assert server.close() == 0, server.stderr_text()
    server.check_stdout()


_ping_ids = itertools.count(10_000)


def stdio_answers(server: WireServer, line: str | bytes) -> list[dict[str, Any]]:
    """What stdio answers `line` with: the answers written before a ping's sent after it."""
    server.send(line)
    rid = next(_ping_ids)
    server.send(PING % rid)
    _, before = server.until(rid)
    return [m for m in before if "method" not in m]


def http_answer(server: HttpServer, body: bytes) -> tuple[int, dict[str, Any]]:
    """A POST to /mcp as a script sends it: (status, the JSON answer)."""
    status, kind, raw, _ = post(server.url + "/mcp", body, headers=bearer())
    assert kind == "application/json", (status, raw)
    return status, json.loads(raw)


MALFORMED = [
    f"[{PING % 1}]",  # a batch: not in MCP 2025-06
    f"[{PING % 1}, {PING % 2}]",
    "[]",
    "{not json",
    "\ufeff" + PING % 1,
    "42",
    '"ping"',
    "null",
    "{}",
    '{"id":"bad","method":"ping"}',  # no jsonrpc
    '{"jsonrpc":"1.0","id":"bad","method":"ping"}',
    '{"jsonrpc":"2.0","id":"bad"}',
    '{"jsonrpc":"2.0","id":"bad","method":5}',
    '{"jsonrpc":"2.0","id":"bad","method":"ping","params":[1]}',
    PING % 1.5,
    PING % '{"a": 1}',
]


@pytest.mark.parametrize("line", MALFORMED, ids=lambda s: repr(s[:40]))
def test_a_malformed_body_gets_the_error_stdio_gives(
    http: HttpServer, stdio: WireServer, line: str
) -> None:
    [want] = stdio_answers(stdio, line)
    status, got = http_answer(http, line.encode())
    assert (status, got) == (400, want)
    assert "pydantic" not in json.dumps(got) and "Validation error" not in json.dumps(got)


@pytest.mark.parametrize(
    ("body", "code", "word"),
    [
        (b"", -32700, "EOF"),  # stdio skips a blank line; a POST must be answered
        (b" \n", -32700, "EOF"),
        # A malformed response (stdio never answers one back) was the SDK's -32602 with a
        # dump of pydantic's errors.
        (b'{"jsonrpc":"2.0","id":"r2","result":5}', -32600, "result"),
        (b'{"jsonrpc":"2.0","id":"r3","error":{"code":"x"}}', -32600, "error.code"),
        (b'{"id":"r4","result":{}}', -32600, "jsonrpc"),
    ],
)
def test_bodies_stdio_leaves_unanswered_get_a_json_rpc_error(
    http: HttpServer, body: bytes, code: int, word: str
) -> None:
    status, got = http_answer(http, body)
    assert status == 400 and got["id"] is None and got["error"]["code"] == code, got
    assert got["error"]["message"] == ("Parse error" if code == -32700 else "Invalid Request")
    assert word in got["error"]["data"], got


def test_a_good_response_is_still_taken(http: HttpServer) -> None:
    body = b'{"jsonrpc":"2.0","id":"r1","result":{}}'
    assert post(http.url + "/mcp", body, headers=bearer())[::2] == (202, b"")


def test_bytes_that_are_not_utf8_are_read_as_stdio_reads_them(
    http: HttpServer, stdio: WireServer
) -> None:
    line = b'{"jsonrpc":"2.0","id":"bytes","method":"ping","params":{"x":"\xff\xfe"}}'
    stdio.send(line)
    want = stdio.until("bytes")[0]
    assert http_answer(http, line) == (200, want) and want["result"] == {}


# -- starting -----------------------------------------------------------------------------


def start(tmp: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`memo-mcp --http ARGV` that must refuse to start (a timeout: it served instead)."""
    return subprocess.run(
        [str(MEMO_MCP), "--http", *argv],
        capture_output=True,
        env=env or server_env(tmp),
        timeout=20,
    )


def test_a_port_in_use_is_one_line_and_exit_1_before_serving(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = start(tmp_path, "--port", str(port))
    assert done.returncode == 1 and done.stdout == b""
    [line] = done.stderr.decode().splitlines()
    assert line.startswith(f"memo-mcp: не удаётся слушать 127.0.0.1:{port}: адрес уже занят")
    assert "--port" in line and "MEMO_HTTP_PORT" in line, line


def test_an_address_not_of_this_machine_is_one_line_and_exit_1(tmp_path: Path) -> None:
    env = server_env(tmp_path) | {"MEMO_TOKEN": TOKEN}
    port = free_port()
    done = start(tmp_path, "--host", "192.0.2.1", "--port", str(port), env=env)  # TEST-NET-1
    assert done.returncode == 1 and done.stdout == b""
    [line] = done.stderr.decode().splitlines()
    assert line.startswith(f"memo-mcp: не удаётся слушать 192.0.2.1:{port}: "), line


def test_an_empty_token_refuses_to_start(tmp_path: Path) -> None:
    done = start(
        tmp_path, "--port", str(free_port()), env=server_env(tmp_path) | {"MEMO_TOKEN": ""}
    )
    assert done.returncode == 2 and done.stdout == b""
    err = done.stderr.decode()
    assert "memo-mcp: ошибка: MEMO_TOKEN задан, но пуст" in err and "уберите его" in err, err
    assert "MCP доступен" not in err


@pytest.mark.parametrize("value", ["", "  ", "\t\n"])
def test_a_token_of_nothing_but_spaces_is_refused(value: str) -> None:
    parser = argparse.ArgumentParser()
    memo_http.add_http_options(parser)
    with pytest.raises(memo_http.HttpConfigError, match="MEMO_TOKEN is set but empty"):
        memo_http.config_from_args(parser.parse_args([]), env={"MEMO_TOKEN": value})
