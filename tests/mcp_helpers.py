"""Helpers for the memo-mcp tests: small note collections and a raw JSON-lines stdio client.

`WireServer` runs the real `memo-mcp` console script as a subprocess and speaks JSON-RPC to
it one line at a time, keeping every line the server wrote so a test can check that stdout
carried nothing but JSON-RPC.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from conftest import REAL_MODEL_DIR

from memo_core.model.install import is_installed

# The installed default model (found before any test changes MEMO_CACHE_DIR), if any.
DEFAULT_MODEL_READY = is_installed(REAL_MODEL_DIR)

MEMO_MCP = Path(sys.executable).with_name("memo-mcp")
TIMEOUT_S = 60.0

GARDEN = """\
---
tags: [сад]
---
# Сад

Общие заметки о грядках и теплице.

## Полив томатов

Томаты поливаю утром тёплой отстоянной водой, два раза в неделю.
В жару — каждый день, но под корень, не по листьям.

## Обрезка малины

Старые побеги малины вырезаю осенью под корень.
"""

BACKUP = """\
# Backup

## Restic

Nightly restic snapshots go to the NAS; `restic check` runs every Sunday.

## Restore drill

Once a quarter I restore a random folder to make sure the backup works.
"""


def make_notes(root: Path) -> Path:
    """A collection of two notes (Russian and English) at `root/notes`."""
    notes = root / "notes"
    (notes / "home").mkdir(parents=True)
    (notes / "garden.md").write_text(GARDEN, encoding="utf-8")
    (notes / "home" / "backup.md").write_text(BACKUP, encoding="utf-8")
    return notes


def line_of(path: Path, prefix: str) -> int:
    """The 1-based number of the first line of `path` that starts with `prefix`."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith(prefix):
            return n
    raise AssertionError(f"{prefix!r} not in {path}")


def server_env(
    tmp: Path, model_dir: Path | None = None, roots: list[Path] | None = None
) -> dict[str, str]:
    """Environment for a memo-mcp subprocess: a private cache, an explicit model dir.

    `MEMO_ROOTS` (the folders its tools may use) is `roots`, by default `tmp`'s parent: the
    pytest session's base temp folder, which holds every `tmp_path` of the session.
    """
    env = dict(os.environ)
    env["MEMO_CACHE_DIR"] = str(tmp / "cache")
    env["MEMO_MODEL_DIR"] = str(model_dir or tmp / "no-model")
    env["MEMO_ROOTS"] = os.pathsep.join(str(r) for r in (roots or [tmp.parent]))
    env.pop("PYTHONSTARTUP", None)
    return env


# memo-mcp with every path call below $MEMO_TEST_STUCK hanging for good, as on a dead
# network drive mounted there (no FUSE needed): what the kernel does to a process whose NFS
# server is gone. Its mount table names the stuck folder as a mount point, of a device of
# its own.
STUCK_MEMO_MCP = """
import os, threading
stuck, never = os.fsencode(os.environ["MEMO_TEST_STUCK"]), threading.Event()

def hanging(call):
    def maybe(path, *args, **kwargs):
        if isinstance(path, (str, bytes, os.PathLike)) and os.fsencode(path).startswith(stuck):
            never.wait()
        return call(path, *args, **kwargs)
    return maybe

for name in ("stat", "lstat", "open", "scandir", "listdir"):
    setattr(os, name, hanging(getattr(os, name)))

from memo_core.process import Mount
from memo_mcp import places
mounted = places.read_mountinfo
places.read_mountinfo = lambda source: mounted(source) | {stuck: Mount("dead:0", "fuse.sshfs")}
from memo_mcp.server import main
main()
"""


class WireServer:
    """The real `memo-mcp` over stdio, spoken to in raw JSON lines (`command`: another
    way to start it, e.g. `[sys.executable, "-c", STUCK_MEMO_MCP]`)."""

    def __init__(
        self,
        env: dict[str, str],
        cwd: Path | None = None,
        args: list[str] | None = None,
        command: list[str] | None = None,
    ) -> None:
        self.proc = subprocess.Popen(
            [*(command or [str(MEMO_MCP)]), *(args or [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self.raw: list[bytes] = []  # every line written to stdout
        self.stderr: list[bytes] = []
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw.append(line)
            try:
                self._inbox.put(json.loads(line))
            except ValueError:
                pass  # check_stdout reports it

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    # -- sending ------------------------------------------------------------------------

    def send(self, message: dict[str, Any] | str | bytes) -> None:
        """One line: a message, a string as it is, or raw bytes (not checked to be UTF-8)."""
        assert self.proc.stdin is not None
        if isinstance(message, dict):
            message = json.dumps(message, ensure_ascii=False)
        data = message if isinstance(message, bytes) else message.encode("utf-8", "surrogatepass")
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        rid = next(self._ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    # -- receiving ----------------------------------------------------------------------

    def next_message(self, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        try:
            return self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no message from memo-mcp in {timeout}s; stderr:\n{self.stderr_text()}"
            ) from None

    def response(self, rid: int, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """The response to request `rid`; notifications met on the way are kept."""
        deadline = time.monotonic() + timeout
        while True:
            msg = self.next_message(max(0.01, deadline - time.monotonic()))
            if "id" in msg and "method" not in msg:
                assert msg["id"] == rid, f"expected the answer to {rid}, got {msg}"
                return msg
            self.notifications.append(msg)

    def responses(self, rids: list[int], timeout: float = TIMEOUT_S) -> dict[int, dict[str, Any]]:
        """The responses to several requests sent at once, in whatever order they come."""
        deadline = time.monotonic() + timeout
        got: dict[int, dict[str, Any]] = {}
        while len(got) < len(rids):
            msg = self.next_message(max(0.01, deadline - time.monotonic()))
            if "id" in msg and "method" not in msg:
                assert msg["id"] in rids and msg["id"] not in got, msg
                got[msg["id"]] = msg
            else:
                self.notifications.append(msg)
        return got

    def until(
        self, rid: int | str, timeout: float = TIMEOUT_S
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The answer to `rid`, and every other message that came before it (in order)."""
        deadline = time.monotonic() + timeout
        before: list[dict[str, Any]] = []
        while True:
            msg = self.next_message(max(0.01, deadline - time.monotonic()))
            got = msg.get("id")
            if got == rid and type(got) is type(rid) and "method" not in msg:
                return msg, before
            before.append(msg)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.response(self.request(method, params))

    def initialize(self, version: str = "2024-11-05") -> dict[str, Any]:
        answer = self.call(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "memo-tests", "version": "0"},
            },
        )
        self.notify("notifications/initialized")
        return answer

    def tool(
        self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The `result` of a tools/call (a JSON-RPC error fails the test)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        answer = self.call("tools/call", params)
        assert "result" in answer, answer
        return answer["result"]

    def text(self, name: str, arguments: dict[str, Any]) -> str:
        """The text of a tool call that must succeed."""
        result = self.tool(name, arguments)
        assert result["isError"] is False, result
        assert [c["type"] for c in result["content"]] == ["text"], result
        return result["content"][0]["text"]

    # -- end ----------------------------------------------------------------------------

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("memo-mcp did not exit after stdin closed") from None

    def stderr_text(self) -> str:
        return b"".join(self.stderr).decode(errors="replace")

    def check_stdout(self) -> None:
        """Every line memo-mcp wrote to stdout is one JSON-RPC 2.0 message."""
        for line in self.raw:
            try:
                msg = json.loads(line)
            except ValueError:
                raise AssertionError(f"not JSON on stdout: {line!r}") from None
            assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", line
            assert ("method" in msg) or ("id" in msg and ("result" in msg) != ("error" in msg)), (
                line
            )
