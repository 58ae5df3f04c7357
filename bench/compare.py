"""Two versions of the engine side by side: unchanged refresh against a bare walk, search
latency without refresh, and `memo-mcp` cold start (process start to `initialize`
answered), in alternating rounds, so both see the same machine load.

    python bench/compare.py OLD_CHECKOUT OLD_COPY NEW_COPY [--rounds 3] [--queries 150]

OLD_CHECKOUT is a source tree of memo (e.g. `git worktree add /tmp/old <commit>`); the new
engine is this repository's. Each copy is a notes folder already indexed by its engine
(bench/speed.py leaves one under /tmp/memo-bench/speed/<data set>); an index of one schema
cannot serve the other, hence two copies. Each round runs each engine in a fresh process
(`Searcher(copy)` with the configured model: the API both versions have).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _floor import INITIALIZE, walk_stat  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
MODES = ("lex", "vec", "hybrid")


def titles(root: Path, n: int) -> list[str]:
    """First `# ` headings of the notes, sampled (the same for both copies of one set)."""
    found = []
    for p in sorted(root.rglob("*.md")):
        if ".memo" in p.parts:
            continue
        for line in p.read_text(encoding="utf-8", errors="replace")[:3000].splitlines():
            if line.startswith("# ") and len(line) > 5:
                found.append(line[2:].strip())
                break
    return random.Random(0).sample(sorted(set(found)), min(n, len(set(found))))


def child(root: str, queries: int, repeat: int) -> dict:
    from memo_core import Searcher  # whichever engine PYTHONPATH puts first

    s = Searcher(root)
    s.refresh()
    qs = titles(Path(root), queries)
    for q in qs[:5]:
        for m in MODES:
            s.search(q, k=8, mode=m, refresh=False)
    rt, wt = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        walk_stat(root)
        wt.append(time.perf_counter() - t)
        t = time.perf_counter()
        s.refresh()
        rt.append(time.perf_counter() - t)
    lat: dict[str, list[float]] = {m: [] for m in MODES}
    for q in qs:
        for m in MODES:
            t = time.perf_counter()
            s.search(q, k=8, mode=m, refresh=False)
            lat[m].append(time.perf_counter() - t)
    med = statistics.median
    out = {"refresh_ms": med(rt) * 1e3, "walk_ms": med(wt) * 1e3, "ratio": med(rt) / med(wt)}
    return out | {m: med(v) * 1e3 for m, v in lat.items()}


def cold_start(tree: Path) -> float:
    """Seconds from starting `python -m memo_mcp` (from `tree`) to its initialize answer."""
    env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [sys.executable, "-m", "memo_mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd="/",
        text=True,
    )
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(json.dumps(INITIALIZE) + "\n")
    p.stdin.flush()
    line = p.stdout.readline()
    dt = time.perf_counter() - t0
    p.stdin.close()
    p.wait(10)
    if '"serverInfo"' not in line:
        raise SystemExit(f"{tree}: memo-mcp did not answer initialize: {line!r}")
    return dt


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("old_checkout", type=Path)
    p.add_argument("old_copy", type=Path)
    p.add_argument("new_copy", type=Path)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--queries", type=int, default=150)
    p.add_argument("--repeat", type=int, default=15, help="refresh timings per round")
    p.add_argument("--cold-starts", type=int, default=7, help="memo-mcp starts each (0: none)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        res = child(str(args.new_copy), args.queries, args.repeat)
        print(json.dumps(res))
        return res
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    sides = {"before": (args.old_checkout, args.old_copy), "after": (REPO, args.new_copy)}
    print(f"load average {os.getloadavg()}")
    print(f"{'round':5} {'engine':7} {'refresh/walk':>12} {'lex':>8} {'vec':>8} {'hybrid':>8}")
    for r in range(args.rounds):
        for name, (tree, copy) in sides.items():
            env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
            cmd = [sys.executable, __file__, str(tree), str(copy), str(copy), "--child"]
            cmd += ["--queries", str(args.queries), "--repeat", str(args.repeat)]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            runs[name].append(res)
            print(
                f"{r + 1:<5} {name:7} {res['ratio']:>11.2f}x "
                + " ".join(f"{res[m]:>6.1f}ms" for m in MODES)
            )
    starts: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(args.cold_starts):
        for name, (tree, _) in sides.items():
            starts[name].append(cold_start(tree))
    for name, ts in starts.items():
        if ts:
            print(
                f"memo-mcp cold start {name}: median {statistics.median(ts):.2f} s "
                f"({min(ts):.2f}-{max(ts):.2f})"
            )
    print(f"load average {os.getloadavg()}")
    return {"runs": runs, "cold_start": starts}


if __name__ == "__main__":
    main()
