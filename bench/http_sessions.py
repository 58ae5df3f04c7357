"""memo-mcp --http under a flood of `initialize`: memory, time, and whether the next client
still gets in; and a plain JSON-RPC POST against a session's three requests.

    python bench/http_sessions.py [--flood 10000] [--source DIR]

`--source` runs another checkout's memo-mcp (e.g. a worktree of an older commit) with this
environment's packages, for a before/after side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _floor import INITIALIZE  # noqa: E402

BOTH = "application/json, text/event-stream"


def post(url: str, body: dict, accept: str, headers: dict[str, str] | None = None):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Accept": accept, **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flood", type=int, default=10_000)
    ap.add_argument("--source", type=Path, help="a checkout whose memo_mcp to run")
    a = ap.parse_args(argv)
    out: dict = {}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = "import sys; from memo_mcp.server import main; sys.exit(main())"
    if a.source:  # ahead of this checkout's editable install, whose finder comes first
        code = (
            "import sys; sys.meta_path[:] = [f for f in sys.meta_path "
            "if 'editable' not in type(f).__module__ and 'editable' not in repr(f)]; "
            f"sys.path.insert(0, {str(a.source.resolve())!r}); " + code
        )
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        env["MEMO_CACHE_DIR"] = tmp
        proc = subprocess.Popen(
            [sys.executable, "-c", code, "--http", "--port", str(port)],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            for _ in range(200):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                    break
                except OSError:
                    time.sleep(0.05)
            plain = post(
                url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "application/json"
            )
            print(f"plain tools/list without a session: HTTP {plain[0]}")
            out["plain_tools_list"] = plain[0]
            before = rss_mb(proc.pid)
            t = time.perf_counter()
            refused = 0
            for _ in range(a.flood):
                status, _, _ = post(url, INITIALIZE, BOTH)
                refused += status != 200
            took = time.perf_counter() - t
            after = rss_mb(proc.pid)
            status, headers, _ = post(url, INITIALIZE, BOTH)
            print(
                f"{a.flood} initialize without DELETE: {took:.1f} s "
                f"({took / a.flood * 1000:.2f} ms each), {refused} refused; "
                f"RSS {before:.0f} → {after:.0f} MB "
                f"(+{(after - before) * 1024 / a.flood:.1f} KB a session)"
            )
            print(f"the next client's initialize: HTTP {status}")
            out |= {"flood": a.flood, "flood_s": took, "refused": refused, "rss_before_mb": before,
                    "rss_after_mb": after, "next_initialize": status}  # fmt: skip
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            times = []
            for _ in range(50):
                t = time.perf_counter()
                post(url, ping, "application/json")
                times.append(time.perf_counter() - t)
            print(f"plain ping: {statistics.median(times) * 1000:.2f} ms (median of 50)")
            out["ping_ms"] = statistics.median(times) * 1000
        finally:
            proc.terminate()
            proc.wait()
    return out


if __name__ == "__main__":
    main()
