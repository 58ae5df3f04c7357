"""`memo-mcp --http`: the same server over the SDK's streamable HTTP transport.

- MCP at `/mcp`: streamable HTTP with sessions for the clients that open one, and one plain
  JSON-RPC exchange (POST, JSON in, JSON out) for any other request (http_routing.py).
- `GET /health` → `{"status": "ok", "name": "memo", "version": ..., "uptime_s": ...}` (always open).
- Loopback (127.0.0.1) by default; port `--port`, else `MEMO_HTTP_PORT`, else 27190.
- DNS-rebinding protection on: `/mcp` answers only requests whose Host (and Origin, when
  sent) names this server: the loopback names on a loopback bind; on another address, that
  address, the machine's own names (for 0.0.0.0 / ::) and each `--allow-host`.
- `MEMO_TOKEN` set: every request but `/health` must carry `Authorization: Bearer <token>`,
  else 401. A bind to a non-loopback address without a token refuses to start, and so does
  `MEMO_TOKEN` set to nothing (exit 2).
- The port is bound before "serving at" is said; one that cannot be (in use, an address
  not this machine's) is one line on stderr and exit 1.
- Connections are bounded in time and number (http_guard.py); SIGTERM stops the server
  within about a second, whatever its clients hold.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import ipaddress
import logging
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from memo_core import Message, SettingError, __version__, settings
from memo_text import Lang, listen_failed_text

from .http_guard import (
    REQUEST_TIMEOUT_S,
    Connections,
    QuietAccepts,
    connection_limit,
    guarded_protocol,
)
from .http_routing import SESSION_IDLE_S, McpRouter, SessionBook

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 27190
MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
OPEN_PATHS = frozenset({HEALTH_PATH})
# Requests under way (a tool call, a client's GET stream) get this long to end when the
# server stops; then they are cancelled.
SHUTDOWN_GRACE_S = 0.5


class HttpConfigError(Exception):
    """The HTTP options cannot work (bad port, public bind without a token): don't start.
    Its one argument is a Message, worded in the reader's language (`Lang.word`)."""


@dataclass(frozen=True)
class HttpConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    token: str | None = None
    allow_hosts: tuple[str, ...] = field(default=())
    session_idle_s: float = SESSION_IDLE_S  # a session with no request for this long ends
    timeout_s: float = REQUEST_TIMEOUT_S  # for a request's headers, then for its body


def add_http_options(parser: argparse.ArgumentParser, lang: Lang = Lang.RU) -> None:
    """`--http`, `--host`, `--port`, `--allow-host` (for `build_arg_parser`), described in
    `lang`."""
    t = lang.text
    g = parser.add_argument_group("HTTP", t("help.http_group", path=MCP_PATH))
    g.add_argument("--http", action="store_true", help=t("help.http"))
    g.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=t("help.host", default=DEFAULT_HOST, token=settings.TOKEN),
    )
    g.add_argument(
        "--port",
        type=settings.ascii_int,
        default=None,
        help=t("help.port", variable=settings.HTTP_PORT, default=DEFAULT_PORT),
    )
    g.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help=t("help.allow_host"),
    )


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def config_from_args(args: argparse.Namespace, env: settings.Env | None = None) -> HttpConfig:
    """The HTTP settings from the command line and the environment (`settings`; `env`:
    another environment to judge); HttpConfigError if unusable or unsafe."""
    try:
        port = args.port if args.port is not None else settings.http_port(env) or DEFAULT_PORT
        token = settings.token(env)
        idle = settings.http_seconds(settings.HTTP_SESSION_IDLE, SESSION_IDLE_S, env)
        timeout = settings.http_seconds(settings.HTTP_TIMEOUT, REQUEST_TIMEOUT_S, env)
    except SettingError as e:
        raise HttpConfigError(e.message) from e
    if not 0 < port < 65536:
        raise HttpConfigError(Message("http.port_range", port=port))
    host = args.host.strip().strip("[]")  # [::1] → ::1
    if not is_loopback(host) and token is None:
        raise HttpConfigError(
            Message("http.no_token", host=host, variable=settings.TOKEN, default=DEFAULT_HOST)
        )
    return HttpConfig(
        host=host,
        port=port,
        token=token,
        allow_hosts=tuple(args.allow_host),
        session_idle_s=idle,
        timeout_s=timeout,
    )


def http_config(
    parser: argparse.ArgumentParser, args: argparse.Namespace, lang: Lang = Lang.RU
) -> HttpConfig:
    """`config_from_args`, or exit 2 with `memo-mcp: ошибка: <why>` on stderr (in `lang`)."""
    try:
        return config_from_args(args)
    except HttpConfigError as e:
        parser.error(lang.word(e))


# -- Host / Origin checks ---------------------------------------------------------------------


def _host_port(name: str, port: int) -> str:
    name = name.strip()
    if ":" in name and not name.startswith("["):
        try:  # a bare IPv6 address
            ipaddress.IPv6Address(name)
            return f"[{name}]:{port}"
        except ValueError:
            return name  # NAME:PORT as given
    if name.startswith("[") and "]:" in name:
        return name
    return f"{name}:{port}"


def _own_names() -> set[str]:
    """This machine's host names and addresses (for a bind to every address)."""
    names = {socket.gethostname(), socket.getfqdn()}
    try:
        for *_, addr in socket.getaddrinfo(socket.gethostname(), None):
            names.add(str(addr[0]))
    except OSError:
        pass
    return {n for n in names if n}


def allowed_hosts(config: HttpConfig) -> list[str]:
    """The Host header values `/mcp` accepts, each NAME:PORT."""
    names = {"127.0.0.1", "localhost", "::1"}
    host = config.host.strip("[]")
    if not is_loopback(host):
        if host in ("0.0.0.0", "::", ""):
            names |= _own_names()
        else:
            names.add(host)
    hosts = {_host_port(n, config.port) for n in names}
    hosts |= {_host_port(n, config.port) for n in config.allow_hosts}
    return sorted(hosts)


def security_settings(config: HttpConfig) -> TransportSecuritySettings:
    hosts = allowed_hosts(config)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts],
    )


# -- bearer token -------------------------------------------------------------------------------


class BearerTokenGuard:
    """ASGI middleware: 401 unless `Authorization: Bearer <token>` (open paths excepted)."""

    def __init__(self, app: ASGIApp, token: str, open_paths: frozenset[str] = OPEN_PATHS):
        self.app = app
        self.token = token.encode()
        self.open_paths = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.open_paths:
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("authorization")
        scheme, _, given = (header or "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token):
            await self.app(scope, receive, send)
            return
        why = "wrong token" if header else "missing token"
        response = JSONResponse(
            {
                "error": "unauthorized",
                "message": f"{why}: send 'Authorization: Bearer <token>' with the token "
                f"memo-mcp was started with ({settings.TOKEN})",
            },
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="memo"'},
        )
        await response(scope, receive, send)


# -- the app ------------------------------------------------------------------------------------


def add_health_route(server: MCPServer) -> None:
    started = time.monotonic()

    @server.custom_route(HEALTH_PATH, methods=["GET"], include_in_schema=False)
    async def health(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "name": server.name,
                "version": __version__,
                "uptime_s": round(time.monotonic() - started, 3),
            }
        )


def build_app(server: MCPServer, config: HttpConfig) -> ASGIApp:
    """The ASGI app: `/mcp` (sessions and plain exchanges, see http_routing), `/health`,
    and the token check around both."""
    add_health_route(server)
    common: dict[str, Any] = {
        "streamable_http_path": MCP_PATH,
        "transport_security": security_settings(config),
        "host": config.host,
    }
    # The session app's own bound is a backstop: the router closes sessions long before.
    sessions = server.streamable_http_app(**common, session_idle_timeout=config.session_idle_s)
    plain = server.streamable_http_app(**common, stateless_http=True, json_response=True)
    streamed = server.streamable_http_app(**common, stateless_http=True)
    book = SessionBook(idle_s=config.session_idle_s)
    security = TransportSecurityMiddleware(common["transport_security"])
    app: ASGIApp = McpRouter(sessions, plain, streamed, MCP_PATH, book, security)
    if config.token:
        app = BearerTokenGuard(app, config.token)
    return app


def serve_http(server: MCPServer, config: HttpConfig, lang: Lang = Lang.RU) -> None:
    """Serve until SIGINT (KeyboardInterrupt) or SIGTERM (SystemExit(0)); the port is freed."""
    import uvicorn

    def on_sigterm(signum: int, frame: object) -> None:
        raise SystemExit(0)

    # uvicorn handles SIGTERM while it runs (a graceful stop), then restores this handler
    # and raises the signal again: the caller's `finally` runs and the exit status is 0.
    signal.signal(signal.SIGTERM, on_sigterm)
    # The SDK logs each plain exchange's end ("Terminating session: None") and each session
    # at INFO: keep stderr for what a person should read.
    for name in ("mcp.server.streamable_http", "mcp.server.streamable_http_manager"):
        logging.getLogger(name).setLevel(logging.WARNING)
    uv = uvicorn.Server(
        uvicorn.Config(
            build_app(server, config),
            host=config.host,
            port=config.port,
            log_level="warning",
            access_log=False,
            server_header=False,
            lifespan="on",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,  # type: ignore[arg-type]
            http=guarded_protocol(Connections(connection_limit(), config.timeout_s)),
        )
    )
    # Bound here, before the announcement, and handed to uvicorn: "serving" is said only of
    # a port this process holds (no other can take it between a check and the bind).
    address = _host_port(config.host, config.port)
    try:
        sockets = listening_sockets(config.host, config.port)
    except OSError as e:
        print(f"memo-mcp: {listen_failed_text(address, e, lang)}", file=sys.stderr)
        raise SystemExit(1) from None
    auth = lang.text("http.token_required" if config.token else "http.no_token_needed")
    url = f"http://{address}{MCP_PATH}"
    said = lang.text("http.serving", url=url, auth=auth, health=HEALTH_PATH)
    print(f"memo-mcp: {said}", file=sys.stderr)

    async def serve() -> None:
        asyncio.get_running_loop().set_exception_handler(QuietAccepts())
        await uv.serve(sockets=sockets)

    try:
        anyio.run(serve)
    finally:
        for sock in sockets:  # uvicorn closes them when it stops, not when its start fails
            sock.close()
    if not uv.started:
        raise SystemExit(1)  # uvicorn said why (the app's start failed)


def listening_sockets(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to `host`:`port` as asyncio's `create_server` binds them (one per
    address the name resolves to, IPv6 ones IPv6 only); OSError when one cannot be bound."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, addr in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            if os.name == "posix" and sys.platform != "cygwin":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(addr)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets
