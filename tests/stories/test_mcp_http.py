"""memo-mcp over streamable HTTP: the real console script on a free loopback port.

The first tests run over both transports (stdio and HTTP with a bearer token) through the
SDK's own client, so the tools answer the same texts and errors either way. Then what only
HTTP has: `/health`, the token (401), Host/Origin checks, raw JSON-RPC over HTTP, refusing a
public bind without a token, and the port being free again after the server stops.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_helpers import MEMO_MCP, line_of, make_notes, server_env

import memo_core
from memo_mcp import http_transport as memo_http
from memo_text import Lang

TOKEN = "test-token-7f3a"
STATUS = re.compile(
    r"^(/.+): файлов (\d+), чанков (\d+), индекс (\S+)(, без векторов \d+)?"
    r"(?:, векторы модели \S+)?"
    r", отпечаток ([0-9a-f]{24}), проверено (\S+)$"
)
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "memo-tests", "version": "0"},
    },
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """`memo-mcp --http` as a subprocess; stderr goes to a file (read it on failure).
    `command`: another way to start memo-mcp (e.g. with a lower limit on open files)."""

    def __init__(
        self,
        tmp: Path,
        port: int | None,
        *,
        token: str | None = None,
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        command: tuple[str, ...] = (str(MEMO_MCP),),
    ) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        env = dict(env or server_env(tmp))
        env.pop("MEMO_TOKEN", None)
        if token:
            env["MEMO_TOKEN"] = token
        tmp.mkdir(parents=True, exist_ok=True)
        self.stderr_path = tmp / f"stderr-{time.monotonic_ns()}.txt"
        port_args = ("--port", str(port)) if port else ()
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [*command, "--http", *port_args, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                cwd=tmp,
            )

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"memo-mcp exited {self.proc.returncode}:\n{self.stderr()}")
            try:
                status, body, _ = request("GET", self.url + "/health")
                if status == 200:
                    return json.loads(body)
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"memo-mcp --http not ready in {timeout}s:\n{self.stderr()}")

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("memo-mcp --http did not stop on SIGTERM") from None


def request(
    method: str, url: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes, dict[str, str]]:
    """A plain HTTP request: (status, body, headers), also for 4xx answers."""
    data = None if body is None else json.dumps(body).encode()
    hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs | (headers or {}))
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read(), {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return e.code, e.read(), {k.lower(): v for k, v in e.headers.items()}


def sse_messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a text/event-stream (or plain JSON) answer."""
    text = body.decode()
    if text.lstrip().startswith("{"):
        return [json.loads(text)]
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def bearer(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One `memo-mcp --http` with a token for the module (no model: words only)."""
    tmp = tmp_path_factory.mktemp("http")
    server = HttpServer(tmp, free_port(), token=TOKEN)
    server.wait_ready()
    yield server
    assert server.stop() == 0, server.stderr()


@asynccontextmanager
async def http_client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http)) as c:
            yield c


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, tmp_path: Path):
    """`connect()` → an SDK Client to memo-mcp over the transport under test."""
    if request.param == "http":
        server: HttpServer = request.getfixturevalue("http_server")
        return lambda: http_client(server.url + "/mcp", bearer())
    params = StdioServerParameters(command=str(MEMO_MCP), env=server_env(tmp_path), cwd=tmp_path)
    return lambda: Client(params)


def text_of(result) -> str:
    assert [c.type for c in result.content] == ["text"], result
    return result.content[0].text


# -- the same answers over stdio and HTTP -------------------------------------------------


async def test_identity_tools_resources_prompts(connect) -> None:
    async with connect() as c:
        assert (c.server_info.name, c.server_info.version) == ("memo", memo_core.__version__)
        tools = [t.name for t in (await c.list_tools()).tools]
        assert tools == ["memo_search", "memo_status", "memo_reindex", "memo_changes", "memo_read"]
        assert [r.uri for r in (await c.list_resources()).resources] == ["memo://collections"]
        templates = (await c.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == [
            "memo://note/{collection}/{+path}",
            "memo://changes/{collection}{?since}",
        ]
        prompts = [p.name for p in (await c.list_prompts()).prompts]
        assert prompts == ["search_notes", "topic_brief"]


async def test_search_texts(connect, tmp_path: Path) -> None:
    notes = make_notes(tmp_path)
    backup = notes / "home" / "backup.md"
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connect() as c:
        r = await c.call_tool(
            "memo_search",
            {"path": str(notes), "query": "restore", "mode": "lex", "k": 1},
            progress_callback=on_progress,
        )
        assert not r.is_error, text_of(r)
        assert text_of(r) == (
            f"{backup}:{line_of(backup, '## Restore drill')}  Backup > Restore drill\n"
            "Once a quarter I restore a random folder to make sure the backup works.\n"
        )
        assert seen and seen[-1][:2] == (2, 2), seen
        r = await c.call_tool("memo_search", {"path": str(notes), "query": "zzzqqq", "mode": "lex"})
        assert (r.is_error, text_of(r)) == (False, "ничего не найдено\n")
        r = await c.call_tool("memo_search", {"path": str(notes), "query": "малина"})
        assert text_of(r).startswith("(модель недоступна (")  # no model: words, and it says so


async def test_status_and_reindex_texts(connect, tmp_path: Path) -> None:
    notes = make_notes(tmp_path)
    async with connect() as c:
        await c.call_tool("memo_search", {"path": str(notes), "query": "x", "mode": "lex"})
        m = STATUS.match(text_of(await c.call_tool("memo_status", {"path": str(notes)})))
        assert m and (m[1], m[2]) == (str(notes), "2"), m
        r = await c.call_tool("memo_reindex", {"path": str(notes)})
        assert (r.is_error, text_of(r)) == (False, "переиндексировано файлов: 2")


async def test_errors_are_the_same_texts(connect, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    async with connect() as c:
        r = await c.call_tool("memo_nope", {"path": "/"})
        assert (r.is_error, text_of(r)) == (True, "unknown tool: memo_nope")
        r = await c.call_tool("memo_search", {"query": "x"})
        assert r.is_error
        assert text_of(r).startswith(
            'memo_search: не хватает обязательного аргумента "path"\nиспользование: '
        )
        r = await c.call_tool("memo_status", {"path": str(missing)})
        assert (r.is_error, text_of(r)) == (
            True,
            f"путь не существует: {missing}; укажите существующую папку с заметками, "
            "например ~/notes",
        )
        r = await c.call_tool("memo_status", {"path": "/"})
        assert r.is_error and text_of(r).startswith("/ лежит вне папок, которые memo разрешено")


# -- HTTP only: health, token, Host/Origin, raw JSON-RPC -----------------------------------


def test_health_is_open_and_says_version_and_uptime(http_server: HttpServer) -> None:
    status, body, headers = request("GET", http_server.url + "/health")
    assert status == 200 and headers["content-type"] == "application/json"
    health = json.loads(body)
    assert health["status"] == "ok"
    assert (health["name"], health["version"]) == ("memo", memo_core.__version__)
    assert isinstance(health["uptime_s"], float) and health["uptime_s"] >= 0


@pytest.mark.parametrize("headers", [{}, bearer("wrong"), {"Authorization": TOKEN}])
def test_mcp_without_the_token_is_401(http_server: HttpServer, headers: dict[str, str]) -> None:
    status, body, got = request("POST", http_server.url + "/mcp", INIT, headers)
    assert status == 401
    assert got["www-authenticate"].startswith("Bearer")
    answer = json.loads(body)
    assert answer["error"] == "unauthorized" and "MEMO_TOKEN" in answer["message"]
    assert TOKEN not in body.decode()


async def test_sdk_client_with_a_wrong_token_gets_nothing(http_server: HttpServer) -> None:
    with pytest.raises(Exception) as err:  # noqa: B017 - the SDK wraps the 401 in task groups
        async with http_client(http_server.url + "/mcp", bearer("wrong")) as c:
            await c.list_tools()
    inner: BaseException = err.value
    while getattr(inner, "exceptions", None):  # an exception group (3.10: the backport)
        inner = inner.exceptions[0]  # type: ignore[attr-defined]
    assert isinstance(inner, MCPError), err.value


def test_raw_jsonrpc_over_http(http_server: HttpServer) -> None:
    url = http_server.url + "/mcp"
    status, body, headers = request("POST", url, INIT, bearer())
    assert status == 200, body
    [answer] = sse_messages(body)
    assert answer["result"]["protocolVersion"] == "2024-11-05"
    assert answer["result"]["serverInfo"] == {"name": "memo", "version": memo_core.__version__}
    session = {"Mcp-Session-Id": headers["mcp-session-id"], **bearer()}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    status, body, _ = request("POST", url, note, session)
    assert (status, body) == (202, b"")  # a notification gets no answer
    unknown = {"jsonrpc": "2.0", "id": 2, "method": "memo/unknown", "params": {}}
    status, body, _ = request("POST", url, unknown, session)
    [answer] = sse_messages(body)
    assert answer["error"]["code"] == -32601 and answer["id"] == 2
    status, _, _ = request("DELETE", url, None, session)
    assert status == 200


@pytest.mark.parametrize(
    "headers, code",
    [
        ({"Host": "evil.example:80"}, 421),
        ({"Host": "attacker.test"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://localhost:1"}, 403),
    ],
)
def test_foreign_host_or_origin_is_refused(
    http_server: HttpServer, headers: dict[str, str], code: int
) -> None:
    status, _, _ = request("POST", http_server.url + "/mcp", INIT, bearer() | headers)
    assert status == code


def test_own_origin_is_accepted(http_server: HttpServer) -> None:
    origin = {"Origin": f"http://localhost:{http_server.port}"}
    status, body, _ = request("POST", http_server.url + "/mcp", INIT, bearer() | origin)
    assert status == 200, body


async def test_resources_over_http(http_server: HttpServer, tmp_path: Path) -> None:
    notes = make_notes(tmp_path)
    async with http_client(http_server.url + "/mcp", bearer()) as c:
        await c.call_tool("memo_search", {"path": str(notes), "query": "x", "mode": "lex"})
        listing = json.loads((await c.read_resource("memo://collections")).contents[0].text)
        [entry] = [e for e in listing["collections"] if e["path"] == str(notes)]
        uri = entry["note_uri"] + "home/backup.md"
        text = (await c.read_resource(uri)).contents[0].text
    assert text == (notes / "home" / "backup.md").read_text(encoding="utf-8")


# -- starting and stopping ------------------------------------------------------------------


def test_public_bind_without_token_refuses_to_start(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    env.pop("MEMO_TOKEN", None)
    done = subprocess.run(
        [str(MEMO_MCP), "--http", "--host", "0.0.0.0", "--port", str(free_port())],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == b""
    err = done.stderr.decode()
    assert "не слушаю 0.0.0.0 без токена" in err and "MEMO_TOKEN" in err


def test_bad_port_in_env_refuses_to_start(tmp_path: Path) -> None:
    env = server_env(tmp_path) | {"MEMO_HTTP_PORT": "http"}
    done = subprocess.run([str(MEMO_MCP), "--http"], capture_output=True, env=env, timeout=60)
    assert done.returncode == 2 and "MEMO_HTTP_PORT='http': укажите число от 1 до 65535" in (
        done.stderr.decode()
    )


def test_stop_frees_the_port_for_the_next_start(tmp_path: Path) -> None:
    port = free_port()
    first = HttpServer(tmp_path, port)
    first.wait_ready()
    # The port is taken while it runs: a second server says so and exits non-zero.
    clash = HttpServer(tmp_path, port)
    assert clash.proc.wait(timeout=60) != 0
    assert "адрес уже занят" in clash.stderr()
    assert first.stop() == 0, first.stderr()
    # Started again on the same port (from MEMO_HTTP_PORT this time), without a token.
    again = HttpServer(tmp_path, None, env=server_env(tmp_path) | {"MEMO_HTTP_PORT": str(port)})
    again.url = f"http://127.0.0.1:{port}"
    try:
        assert again.wait_ready()["status"] == "ok"
        status, body, _ = request("POST", again.url + "/mcp", INIT)
        assert status == 200 and sse_messages(body)[0]["result"]["serverInfo"]["name"] == "memo"
    finally:
        assert again.stop() == 0, again.stderr()


# -- the settings, without a server -------------------------------------------------------


def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    memo_http.add_http_options(parser)
    return parser.parse_args(argv)


def _says(text: str) -> Callable[[BaseException], bool]:
    """Whether an error's message, in English, holds `text`."""
    return lambda e: text in Lang.EN.word(e.args[0])


def test_settings_defaults_and_sources() -> None:
    config = memo_http.config_from_args(args("--http"), env={})
    assert (config.host, config.port, config.token) == ("127.0.0.1", 27190, None)
    config = memo_http.config_from_args(args(), env={"MEMO_HTTP_PORT": "8123", "MEMO_TOKEN": "t"})
    assert (config.port, config.token) == (8123, "t")
    assert memo_http.config_from_args(args("--port", "9"), env={"MEMO_HTTP_PORT": "8"}).port == 9
    for host in ("localhost", "::1", "127.0.0.2"):
        assert memo_http.config_from_args(args("--host", host), env={}).host == host
    assert memo_http.config_from_args(args("--host", "[::1]"), env={}).host == "::1"
    with pytest.raises(memo_http.HttpConfigError, check=_says("without a token")):
        memo_http.config_from_args(args("--host", "192.168.1.5"), env={})
    with pytest.raises(memo_http.HttpConfigError, check=_says("printable ASCII")):
        memo_http.config_from_args(args(), env={"MEMO_TOKEN": "пароль"})
    with pytest.raises(memo_http.HttpConfigError, check=_says("out of range")):
        memo_http.config_from_args(args("--port", "70000"), env={})


def test_allowed_hosts() -> None:
    loop = memo_http.allowed_hosts(memo_http.HttpConfig(port=5000))
    assert loop == ["127.0.0.1:5000", "[::1]:5000", "localhost:5000"]
    lan = memo_http.HttpConfig(
        host="192.168.1.5", port=5000, token="t", allow_hosts=("notes.lan", "wsl:8080")
    )
    hosts = memo_http.allowed_hosts(lan)
    assert {"192.168.1.5:5000", "notes.lan:5000", "wsl:8080", "localhost:5000"} <= set(hosts)
    everywhere = memo_http.allowed_hosts(memo_http.HttpConfig(host="0.0.0.0", port=1, token="t"))
    assert f"{socket.gethostname()}:1" in everywhere
    settings = memo_http.security_settings(lan)
    assert settings.enable_dns_rebinding_protection
    assert "http://notes.lan:5000" in settings.allowed_origins
