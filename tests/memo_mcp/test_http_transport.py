"""memo_mcp.http_transport: `--http`'s options and settings, the hosts `/mcp` accepts, the
bearer token guard, `/health`, and the sockets bound before "serving" is said.

Each function is called directly and the ASGI parts are driven as uvicorn drives them;
the real `memo-mcp --http` is tests/stories/test_mcp_http.py's and
tests/stories/test_http_edges.py's.
"""

from __future__ import annotations

import argparse
import json
import socket
from typing import Any

import pytest
from conftest import HANG_S
from mcp.server.mcpserver import MCPServer

from memo_core import __version__
from memo_mcp.http_transport import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    BearerTokenGuard,
    HttpConfig,
    HttpConfigError,
    add_http_options,
    allowed_hosts,
    build_app,
    config_from_args,
    http_config,
    is_loopback,
    listening_sockets,
    security_settings,
)
from memo_text import Lang


def parser(lang: Lang = Lang.RU) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="memo-mcp")
    add_http_options(p, lang)
    return p


def args(*argv: str) -> argparse.Namespace:
    return parser().parse_args(argv)


# -- options and settings --------------------------------------------------------------------------


def test_the_options_and_their_defaults() -> None:
    got = args()
    assert (got.http, got.host, got.port, got.allow_host) == (False, DEFAULT_HOST, None, [])
    got = args("--http", "--port", "8123", "--allow-host", "a.lan", "--allow-host", "b:1")
    assert (got.http, got.port, got.allow_host) == (True, 8123, ["a.lan", "b:1"])


@pytest.mark.parametrize("lang", [Lang.RU, Lang.EN])
def test_the_options_are_described_in_the_readers_language(lang: Lang) -> None:
    text = parser(lang).format_help()
    assert "--allow-host NAME[:PORT]" in text and "/mcp" in text
    cyrillic = any("а" <= ch.lower() <= "я" for ch in text)
    assert cyrillic is (lang is Lang.RU)


@pytest.mark.parametrize("port", ["８０", "1e3", "port", ""])
def test_a_port_that_is_not_ascii_digits_is_refused_by_the_parser(port: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args(["--port", port])
    assert exit_.value.code == 2


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("localhost.evil.example", False),
        ("", False),
        ("127.0.0.1.nip.io", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_session_and_request_times_come_from_the_environment() -> None:
    env = {"MEMO_HTTP_SESSION_IDLE_S": "30", "MEMO_HTTP_TIMEOUT_S": "2.5"}
    config = config_from_args(args(), env=env)
    assert (config.session_idle_s, config.timeout_s) == (30.0, 2.5)
    default = config_from_args(args(), env={})
    assert (default.session_idle_s, default.timeout_s) == (300, 10.0)


@pytest.mark.parametrize(
    ("argv", "env", "words"),
    [
        (["--port", "0"], {}, "port 0 is out of range"),
        (["--port", "-1"], {}, "port -1 is out of range"),
        (["--port", "65536"], {}, "port 65536 is out of range"),
        ([], {"MEMO_HTTP_PORT": "99999"}, "MEMO_HTTP_PORT"),
        ([], {"MEMO_HTTP_TIMEOUT_S": "0"}, "MEMO_HTTP_TIMEOUT_S"),
        ([], {"MEMO_HTTP_SESSION_IDLE_S": "soon"}, "MEMO_HTTP_SESSION_IDLE_S"),
        (["--host", "0.0.0.0"], {}, "without a token"),
        (["--host", " 10.0.0.1 "], {}, "10.0.0.1"),
        (["--host", "[::]"], {}, "without a token"),
    ],
)
def test_settings_that_cannot_work_are_refused(
    argv: list[str], env: dict[str, str], words: str
) -> None:
    with pytest.raises(HttpConfigError) as err:
        config_from_args(args(*argv), env=env)
    assert words in Lang.EN.word(err.value.args[0])


def test_a_public_bind_with_a_token_is_taken_as_written() -> None:
    config = config_from_args(
        args("--host", " [::] ", "--allow-host", "notes.lan"), env={"MEMO_TOKEN": "s3cret"}
    )
    assert (config.host, config.token, config.allow_hosts) == ("::", "s3cret", ("notes.lan",))


@pytest.mark.parametrize(
    ("lang", "said"), [(Lang.EN, "is out of range"), (Lang.RU, "вне диапазона")]
)
def test_http_config_exits_2_saying_why_in_the_readers_language(
    lang: Lang, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    p = parser(lang)
    with pytest.raises(SystemExit) as exit_:
        http_config(p, p.parse_args(["--port", "70000"]), lang)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: memo-mcp") and said in err and "70000" in err


def test_http_config_returns_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMO_HTTP_PORT", "8124")
    monkeypatch.delenv("MEMO_TOKEN", raising=False)
    p = parser()
    assert http_config(p, p.parse_args([])) == HttpConfig(port=8124)


# -- the hosts /mcp accepts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("allow", "want"),
    [
        ("notes.lan", "notes.lan:5000"),  # a name: the server's port
        ("notes.lan:8080", "notes.lan:8080"),  # NAME:PORT as given (a proxy's)
        ("fe80::1", "[fe80::1]:5000"),  # a bare IPv6 address
        ("[fe80::1]:8443", "[fe80::1]:8443"),
        ("[fe80::1]", "[fe80::1]:5000"),
        (" spaced.lan ", "spaced.lan:5000"),
    ],
)
def test_an_allowed_host_is_written_as_a_host_header_is(allow: str, want: str) -> None:
    hosts = allowed_hosts(HttpConfig(port=5000, allow_hosts=(allow,)))
    assert want in hosts
    assert {"127.0.0.1:5000", "localhost:5000", "[::1]:5000"} <= set(hosts)
    assert hosts == sorted(set(hosts))


def test_a_bind_to_one_address_accepts_that_address_and_loopback_only() -> None:
    hosts = allowed_hosts(HttpConfig(host="fd00::5", port=7, token="t"))
    assert hosts == sorted(["127.0.0.1:7", "localhost:7", "[::1]:7", "[fd00::5]:7"])


def test_the_origins_allowed_are_the_hosts_over_http_and_https() -> None:
    config = HttpConfig(port=5000, allow_hosts=("notes.lan",))
    settings = security_settings(config)
    hosts = allowed_hosts(config)
    assert settings.enable_dns_rebinding_protection is True
    assert settings.allowed_hosts == hosts
    assert sorted(settings.allowed_origins) == sorted(
        [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    )
    assert not any("*" in h for h in settings.allowed_hosts + settings.allowed_origins)


# -- ASGI: the token guard, /health ----------------------------------------------------------------


async def call(
    app: Any, path: str = "/mcp", headers: dict[str, str] | None = None, kind: str = "http"
) -> tuple[int, dict[str, str], bytes]:
    scope = {
        "type": kind,
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "server": ("127.0.0.1", 27190),
        "client": ("127.0.0.1", 40000),
    }
    got: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        got.append(message)

    await app(scope, receive, send)
    start = next(m for m in got if m["type"] == "http.response.start")
    heads = {k.decode().lower(): v.decode() for k, v in start.get("headers", [])}
    return start["status"], heads, b"".join(m.get("body", b"") for m in got[1:])


class Behind:
    """The app behind the guard: says it was reached."""

    def __init__(self) -> None:
        self.reached: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.reached.append(scope["type"])
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"in"})


TOKEN = "s3cret-token"


@pytest.mark.parametrize(
    "authorization",
    [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER {TOKEN}", f"Bearer  {TOKEN} "],
)
async def test_the_right_token_passes(authorization: str) -> None:
    behind = Behind()
    status, _, body = await call(
        BearerTokenGuard(behind, TOKEN), headers={"authorization": authorization}
    )
    assert (status, body, behind.reached) == (200, b"in", ["http"])


@pytest.mark.parametrize(
    ("authorization", "why"),
    [
        (None, "missing token"),
        ("", "missing token"),
        ("Bearer", "wrong token"),
        ("Bearer ", "wrong token"),
        ("Bearer wrong", "wrong token"),
        (f"Bearer {TOKEN}x", "wrong token"),
        (f"Bearer {TOKEN[:-1]}", "wrong token"),
        (f"Basic {TOKEN}", "wrong token"),
        (TOKEN, "wrong token"),  # no scheme
        (f"Token {TOKEN}", "wrong token"),
    ],
)
async def test_a_missing_or_wrong_token_is_401_without_reaching_the_app(
    authorization: str | None, why: str
) -> None:
    behind = Behind()
    headers = {} if authorization is None else {"authorization": authorization}
    status, heads, body = await call(BearerTokenGuard(behind, TOKEN), headers=headers)
    assert status == 401 and behind.reached == []
    assert heads["www-authenticate"] == 'Bearer realm="memo"'
    answer = json.loads(body)
    assert answer["error"] == "unauthorized"
    assert answer["message"].startswith(f"{why}: send 'Authorization: Bearer <token>'")
    assert "MEMO_TOKEN" in answer["message"] and TOKEN not in answer["message"]


async def test_open_paths_and_other_scopes_pass_without_a_token() -> None:
    behind = Behind()
    guard = BearerTokenGuard(behind, TOKEN)
    assert (await call(guard, "/health"))[0] == 200
    assert (await call(guard, "/healthz"))[0] == 401  # only the path named
    assert (await call(guard, "/other", kind="http"))[0] == 401

    async def nothing() -> dict[str, Any]:
        return {"type": "lifespan.startup"}

    async def ignore(message: dict[str, Any]) -> None:
        pass

    await guard({"type": "lifespan"}, nothing, ignore)
    assert behind.reached == ["http", "lifespan"]
    custom = BearerTokenGuard(Behind(), TOKEN, open_paths=frozenset({"/open"}))
    assert (await call(custom, "/open"))[0] == 200
    assert (await call(custom, "/health"))[0] == 401


async def test_the_app_answers_health_and_guards_mcp_with_the_token() -> None:
    server = MCPServer(name="memo")
    app = build_app(server, HttpConfig(port=5000, token=TOKEN))
    status, heads, body = await call(app, "/health", headers={"host": "127.0.0.1:5000"})
    assert (status, heads["content-type"]) == (200, "application/json")
    health = json.loads(body)
    assert (health["status"], health["name"], health["version"]) == ("ok", "memo", __version__)
    assert isinstance(health["uptime_s"], float) and health["uptime_s"] >= 0
    assert (await call(app, "/mcp", headers={"host": "127.0.0.1:5000"}))[0] == 401


async def test_without_a_token_the_app_is_not_guarded() -> None:
    app = build_app(MCPServer(name="memo"), HttpConfig(port=5000))
    assert not isinstance(app, BearerTokenGuard)
    status, _, body = await call(app, "/health", headers={"host": "127.0.0.1:5000"})
    assert status == 200 and json.loads(body)["status"] == "ok"


# -- listening sockets -----------------------------------------------------------------------------


def test_a_free_port_is_bound_and_can_listen() -> None:
    [sock] = listening_sockets("127.0.0.1", 0)
    try:
        assert sock.family == socket.AF_INET and sock.getsockname()[0] == "127.0.0.1"
        sock.listen()
        port = sock.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=HANG_S):
            pass
    finally:
        sock.close()


def test_every_address_of_a_name_is_bound_ipv6_ones_ipv6_only() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    try:
        sockets = listening_sockets("localhost", port)
    except OSError as e:  # the port was taken meanwhile, or ::1 is not configured here
        pytest.skip(f"cannot bind localhost:{port} here: {e}")
    try:
        families = {s.family for s in sockets}
        assert socket.AF_INET in families
        for s in sockets:
            assert s.getsockname()[1] == port
            assert s.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)
            if s.family == socket.AF_INET6:
                assert s.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY) == 1
    finally:
        for s in sockets:
            s.close()


def test_a_port_in_use_is_an_oserror() -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        with pytest.raises(OSError):
            listening_sockets("127.0.0.1", taken.getsockname()[1])
    finally:
        taken.close()


@pytest.mark.parametrize("host", ["192.0.2.1", "no-such-host.invalid"])
def test_an_address_not_of_this_machine_is_an_oserror(host: str) -> None:
    with pytest.raises(OSError):
        listening_sockets(host, DEFAULT_PORT)
