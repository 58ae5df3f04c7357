"""Plain JSON-RPC over HTTP, and sessions kept bounded.

A script that POSTs one JSON-RPC request and reads one JSON answer needs no `initialize`
and no session; a client that takes SSE gets progress and then the answer in one POST;
streamable-HTTP clients still get sessions, which end when idle and cannot be flooded.
The real `memo-mcp --http`, spoken to with the standard library's HTTP client.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import write_notes
from mcp_helpers import server_env
from test_mcp_http import (
    INIT,
    TOKEN,
    HttpServer,
    bearer,
    free_port,
    http_client,
    request,
    sse_messages,
)

from memo_mcp.http_routing import MAX_SESSIONS, SessionBook


def post(
    url: str,
    body: Any,
    accept: str | None = "application/json",
    headers: dict[str, str] | None = None,
) -> tuple[int, str, bytes, dict[str, str]]:
    """One POST: (status, content type, body, headers); `accept` None sends no Accept."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    if accept is not None:
        hdrs["Accept"] = accept
    req = urllib.request.Request(url, data=data, method="POST", headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            got = {k.lower(): v for k, v in r.headers.items()}
            return r.status, got.get("content-type", ""), r.read(), got
    except urllib.error.HTTPError as e:
        got = {k.lower(): v for k, v in e.headers.items()}
        return e.code, got.get("content-type", ""), e.read(), got


def call(method: str, params: dict[str, Any] | None = None, rid: int = 7) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    return message | ({"params": params} if params is not None else {})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tmp = tmp_path_factory.mktemp("plain")
    http = HttpServer(tmp, free_port(), token=TOKEN)
    http.wait_ready()
    yield http
    assert http.stop() == 0, http.stderr()
    assert "Terminating session" not in http.stderr()  # one line per exchange: noise


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_notes(
        tmp_path_factory.mktemp("plain-notes") / "notes",
        {"backup.md": "# Backup\n\nrestic runs every night.\n", "b.md": "# B\n\nbeta\n"},
    )


def plain(server: HttpServer, body: Any, accept: str | None = "application/json") -> Any:
    """The JSON answer to a plain POST (200, application/json, no session handed out)."""
    status, kind, raw, headers = post(server.url + "/mcp", body, accept, bearer())
    assert (status, kind) == (200, "application/json"), (status, raw)
    assert "mcp-session-id" not in headers
    return json.loads(raw)


@pytest.mark.parametrize("accept", ["application/json", "*/*", None])
def test_one_post_one_json_answer_without_a_session(server: HttpServer, accept: str | None):
    answer = plain(server, call("tools/list"), accept)
    assert answer["id"] == 7
    names = [t["name"] for t in answer["result"]["tools"]]
    assert names == ["memo_search", "memo_status", "memo_reindex", "memo_changes", "memo_read"]
    assert plain(server, call("ping", rid=8), accept) == {"jsonrpc": "2.0", "id": 8, "result": {}}


def test_tools_resources_and_prompts_over_plain_posts(server: HttpServer, notes: Path) -> None:
    found = plain(
        server,
        call(
            "tools/call",
            {
                "name": "memo_search",
                "arguments": {"path": str(notes), "query": "restic", "mode": "lex"},
            },
        ),
    )["result"]
    assert found["isError"] is False
    assert found["content"][0]["text"].startswith(f"{notes / 'backup.md'}:1  Backup\n")
    changes = plain(
        server, call("tools/call", {"name": "memo_changes", "arguments": {"path": str(notes)}})
    )
    data = changes["result"]["structuredContent"]
    assert data["mode"] == "full" and data["files"] == [
        str(notes / "b.md"),
        str(notes / "backup.md"),
    ]
    listed = plain(server, call("resources/list"))["result"]["resources"]
    assert [r["uri"] for r in listed] == ["memo://collections"]
    templates = plain(server, call("resources/templates/list"))["result"]["resourceTemplates"]
    assert len(templates) == 2
    read = plain(server, call("resources/read", {"uri": "memo://collections"}))["result"]
    assert str(notes) in read["contents"][0]["text"]
    prompts = plain(server, call("prompts/list"))["result"]["prompts"]
    assert [p["name"] for p in prompts] == ["search_notes", "topic_brief"]
    got = plain(
        server,
        call(
            "prompts/get",
            {"name": "search_notes", "arguments": {"question": "restic?", "path": str(notes)}},
        ),
    )["result"]
    assert "restic?" in got["messages"][0]["content"]["text"]


def test_plain_errors_are_json_rpc_errors(server: HttpServer) -> None:
    assert plain(server, call("memo/unknown"))["error"]["code"] == -32601
    unknown_tool = plain(server, call("tools/call", {"name": "nope", "arguments": {}}))["result"]
    assert unknown_tool["isError"] is True and "nope" in unknown_tool["content"][0]["text"]
    status, kind, raw, _ = post(server.url + "/mcp", b"{not json", headers=bearer())
    assert status == 400 and kind == "application/json"
    assert json.loads(raw)["error"]["code"] == -32700
    # A notification is acknowledged, with nothing to answer.
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    status, _, raw, _ = post(server.url + "/mcp", note, headers=bearer())
    assert (status, raw) == (202, b"")
    # Still behind the token.
    assert post(server.url + "/mcp", call("ping"))[0] == 401


def test_a_plain_initialize_answers_without_opening_a_session(server: HttpServer) -> None:
    answer = plain(server, INIT)
    assert answer["result"]["serverInfo"]["name"] == "memo"


def test_an_sse_client_without_a_session_gets_progress_then_the_answer(
    server: HttpServer, tmp_path: Path
) -> None:
    notes = write_notes(
        tmp_path / "fresh", {f"n{i}.md": f"# N{i}\n\nnote {i}\n" for i in range(30)}
    )
    body = call(
        "tools/call",
        {
            "name": "memo_search",
            "arguments": {"path": str(notes), "query": "note 3", "mode": "lex"},
            "_meta": {"progressToken": "p1"},
        },
    )
    status, kind, raw, headers = post(
        server.url + "/mcp", body, "application/json, text/event-stream", bearer()
    )
    assert (status, kind.split(";")[0]) == (
        200,
        "text/event-stream",
    ) and "mcp-session-id" not in headers
    messages = sse_messages(raw)
    progress = [m for m in messages if m.get("method") == "notifications/progress"]
    assert progress and all(m["params"]["progressToken"] == "p1" for m in progress)
    assert messages[-1]["id"] == 7 and messages[-1]["result"]["isError"] is False


async def test_streamable_clients_still_get_sessions(server: HttpServer, notes: Path) -> None:
    status, body, headers = request("POST", server.url + "/mcp", INIT, bearer())
    assert status == 200 and headers["mcp-session-id"]
    async with http_client(server.url + "/mcp", bearer()) as c:
        r = await c.call_tool("memo_changes", {"path": str(notes)})
        assert r.structured_content["mode"] == "full"


# -- sessions are bounded ---------------------------------------------------------------


def open_session(url: str) -> str:
    status, _, headers = request("POST", url, INIT)
    assert status == 200, status
    return headers["mcp-session-id"]


def session_ping(url: str, sid: str) -> int:
    return request("POST", url, call("ping"), {"Mcp-Session-Id": sid})[0]


@pytest.mark.slow  # 2,000 sessions, about 11 s: the book's rules run by default (below)
def test_a_flood_of_initialize_cannot_lock_clients_out(tmp_path: Path) -> None:
    http = HttpServer(tmp_path, free_port())
    http.wait_ready()
    try:
        url = http.url + "/mcp"
        early = open_session(url)
        request(
            "POST",
            url,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"Mcp-Session-Id": early},
        )
        assert session_ping(url, early) == 200  # in use: proven
        flood = [open_session(url) for _ in range(4 * MAX_SESSIONS)]  # 2,000, none closed
        fresh = open_session(url)
        assert session_ping(url, fresh) == 200  # the next client gets in, and works
        assert session_ping(url, flood[-1]) == 200  # the newest of the flood is still open
        assert session_ping(url, flood[0]) == 404  # the oldest unused ones were closed
        assert session_ping(url, early) == 200  # a session in use outlives the flood
        status, body = plain_ping(url)
        assert status == 200 and body["result"] == {}
    finally:
        assert http.stop() == 0, http.stderr()


def plain_ping(url: str) -> tuple[int, dict[str, Any]]:
    status, _, raw, _ = post(url, call("ping"))
    return status, json.loads(raw)


def test_an_idle_session_ends(tmp_path: Path) -> None:
    env = server_env(tmp_path) | {"MEMO_HTTP_SESSION_IDLE_S": "1"}
    http = HttpServer(tmp_path, free_port(), env=env)
    http.wait_ready()
    try:
        url = http.url + "/mcp"
        sid = open_session(url)
        assert session_ping(url, sid) == 200
        time.sleep(2.5)
        assert session_ping(url, sid) == 404  # the client must initialize again
        assert session_ping(url, open_session(url)) == 200
    finally:
        assert http.stop() == 0, http.stderr()


def test_the_session_book_closes_unproven_sessions_first() -> None:
    book = SessionBook(limit=3, idle_s=60)
    assert book.opened("a") == [] and book.opened("b") == []
    book.used("a", request=True)  # a request after initialize: a is proven
    book.used("b", request=False)  # a notification proves nothing
    assert book.opened("c") == [] and book.opened("d") == ["b"]
    assert book.opened("e") == ["c"]  # never a: it is in use
    assert book.opened("f") == ["d"]
    book.closed("e")
    assert book.opened("g") == [] and len(book) == 3
    # Only proven sessions open: no room for a newcomer, and when there may be some.
    only_proven = SessionBook(limit=1, idle_s=60)
    assert only_proven.wait_s() is None
    only_proven.opened("x")
    assert only_proven.wait_s() is None  # x has not proven itself: it would make room
    only_proven.used("x", request=True)
    assert 59 < (only_proven.wait_s() or 0) <= 60


def test_the_session_book_forgets_sessions_past_their_idle_time() -> None:
    book = SessionBook(limit=2, idle_s=0.05)
    book.opened("a")
    book.opened("b")
    time.sleep(0.1)
    assert book.opened("c") == [] and len(book) == 1  # a and b had ended already
