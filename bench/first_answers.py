"""What a newcomer meets first, on a busy machine: two CPU burners of this script's own run
beside every step (`--quiet`: none).

    python bench/first_answers.py [--rounds 2] [--quiet] [--json out.json]

1. A fresh memo-mcp's first `memo_search` ("how do I restore files from backup", English over
   the Russian backup note) of a fresh copy of examples/notes: `--rounds` times with no model
   installed yet (a fresh MEMO_CACHE_DIR: the model comes from the package registry), and
   `--rounds` times with the model installed and MEMO_REFRESH_BUDGET=0.05. Each: seconds,
   the first hit, whether the answer carries a notice, and the server's stderr tail.
2. `memo search` of a fresh copy with its output in a pipe and MEMO_REFRESH_BUDGET=0.05:
   the first hit, and whether it carries a notice.
3. `memo index` of 400 office-dev-ru pages and 8 empty notes, stdout and stderr to files:
   how many progress lines, and the lines about empty notes.
4. memo-mcp --http holding 300 slow clients: seconds from SIGTERM to its exit, `--rounds`
   times.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from _floor import INITIALIZE  # noqa: E402

QUERY = "how do I restore files from backup"
WANT = "backup-restic.md"
DATA = C.REPO.parent / "shared" / "data"


def _burn() -> None:
    while True:
        pass


class Burners:
    """`n` processes spinning on a core each while the block runs."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: list[multiprocessing.Process] = []

    def __enter__(self) -> Burners:
        self.procs = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(self.n)]
        for p in self.procs:
            p.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
            p.join()


def fresh_notes(work: Path) -> Path:
    notes = work / "notes"
    shutil.copytree(C.REPO / "examples" / "notes", notes)
    return notes


def mcp_first_search(work: Path, env: dict[str, str]) -> dict:
    notes = fresh_notes(work)
    log = work / "stderr.txt"
    with log.open("w") as err:
        s = C.Stdio({**os.environ, **env, "MEMO_ROOTS": str(work)}, stderr=err, cwd=C.REPO)
        s.call("initialize", INITIALIZE["params"])  # type: ignore[arg-type]
        seconds, text = s.tool("memo_search", {"path": str(notes), "query": QUERY, "k": 3})
        s.close()
    first = text.splitlines()[0] if text else ""
    return {"seconds": round(seconds, 1), "first_line": first, "found": WANT in first,
            "notice": first.startswith("("), "stderr_tail": log.read_text()[-300:]}  # fmt: skip


def pipe_search(work: Path) -> dict:
    notes = fresh_notes(work)
    t0 = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "search", str(notes), QUERY, "-k", "1"],
        capture_output=True,
        text=True,
        env={**os.environ, "MEMO_REFRESH_BUDGET": "0.05"},
        cwd=C.REPO,
    )
    first = run.stdout.splitlines()[0] if run.stdout else ""
    return {"seconds": round(time.perf_counter() - t0, 1), "first_line": first,
            "found": WANT in first, "notice": first.startswith("(")}  # fmt: skip


def index_output(work: Path) -> dict:
    files = sorted((DATA / "office-dev-ru").rglob("*.md"))
    folder = work / "pages"
    for f in random.Random(32).sample(files, 400):
        (folder / f.name).parent.mkdir(parents=True, exist_ok=True)
        (folder / f.name).write_bytes(f.read_bytes())
    for i in range(8):
        (folder / f"empty{i}.md").write_bytes(b"")
    with open(work / "out.txt", "w") as out, open(work / "err.txt", "w") as err:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memo_cli.main", "index", str(folder)],
                       stdout=out, stderr=err, check=True, cwd=C.REPO)  # fmt: skip
    lines = (work / "err.txt").read_text().splitlines()
    return {"seconds": round(time.perf_counter() - t0, 1),
            "progress_lines": sum("[" in line and "]" in line for line in lines),
            "empty_lines": [line.strip() for line in lines if "empty" in line or "пуст" in line],
            "summary": (work / "out.txt").read_text().strip()}  # fmt: skip


def sigterm_seconds(work: Path) -> float:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo_mcp", "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MEMO_ROOTS": str(work)},
        cwd=C.REPO,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    socks = []
    for i in range(300):  # half send a part of their headers, half a part of a body
        c = socket.create_connection(("127.0.0.1", port))
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        c.sendall(head if i % 2 else head + b"Content-Length: 100\r\n\r\n{")
        socks.append(c)
    time.sleep(0.5)
    t0 = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    took = time.perf_counter() - t0
    for c in socks:
        c.close()
    return round(took, 2)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--quiet", action="store_true", help="no CPU burners")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    out: dict = {"engine": C.engine_version(), "burners": 0 if args.quiet else 2}
    with Burners(0 if args.quiet else 2), tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        rounds = []
        for r in range(args.rounds):
            cache = base / f"cache{r}"
            rounds.append(
                ("no model yet", mcp_first_search(base / f"a{r}", {"MEMO_CACHE_DIR": str(cache)}))
            )
            rounds.append(
                ("budget 0.05", mcp_first_search(base / f"b{r}", {"MEMO_REFRESH_BUDGET": "0.05"}))
            )
        out["mcp_first_search"] = rounds
        for what, r in rounds:
            print(f"memo-mcp first search, {what}: {r['seconds']} s, found {r['found']}, "
                  f"notice {r['notice']}: {r['first_line'][:90]}")  # fmt: skip
        found = sum(r["found"] for _, r in rounds)
        print(f"  found the backup note {found} times in {len(rounds)}")
        out["pipe_search"] = ps = pipe_search(base / "pipe")
        print(f"memo search in a pipe, budget 0.05: {ps['seconds']} s, found {ps['found']}, "
              f"notice {ps['notice']}")  # fmt: skip
        out["index_output"] = io = index_output(base / "index")
        print(f"memo index of 400 pages + 8 empty notes: {io['seconds']} s, "
              f"{io['progress_lines']} progress lines, empty: {io['empty_lines']}")  # fmt: skip
        print(f"  {io['summary']}")
        out["sigterm_s"] = [sigterm_seconds(base) for _ in range(args.rounds)]
        print(f"memo-mcp --http, SIGTERM to exit with 300 slow clients: {out['sigterm_s']} s")
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
