"""Where the time goes, for the speed targets bench/speed.py misses; with prototypes of fixes.

    python bench/profile.py refresh /tmp/memo-bench/speed/office-dev-en
    python bench/profile.py search  /tmp/memo-bench/speed/office-dev-en [--mode hybrid]
    python bench/profile.py embed   /tmp/memo-bench/speed/office-dev-en [--texts 2000]
    python bench/profile.py embedmem /tmp/memo-bench/speed/office-dev-en [--texts 320]
    python bench/profile.py spin    /tmp/memo-bench/speed/office-dev-ru
    python bench/profile.py refreshadd /tmp/memo-bench/speed/office-dev-en [--no-model]
    python bench/profile.py mcp

ROOT is an already indexed copy (bench/speed.py leaves one under /tmp/memo-bench/speed/).
`refresh`: each step of an unchanged refresh against the bare walk, then a prototype of a
leaner check (tuples, the file states kept in memory between refreshes), then pyinstrument.
`search`: pyinstrument over searches without refresh, and a prototype KNN over an
in-memory numpy matrix. `embed`: the embedder on the same texts in different batch orders.
`embedmem`: peak RSS of the embedder on the longest texts per onnxruntime setting.
`spin`: search latency with onnxruntime's thread-pool spinning on (default) and off.
`refreshadd`: lex search, refresh alone and search with refresh, timed side by side.
`mcp`: the imports behind the `memo-mcp` cold start (python -X importtime).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402


def med_ms(fn, n: int = 15) -> float:
    xs = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        xs.append(time.perf_counter() - t)
    return statistics.median(xs) * 1000


def cmd_refresh(args: argparse.Namespace) -> None:
    import speed
    from pyinstrument import Profiler

    from memo_core.files.discovery import discover, resolve_path
    from memo_core.files.walker import scan

    root = str(args.root)
    s = C.searcher(args.root, C.get_embedder(args))
    s.refresh()
    coll = s.collections[0]
    with C.reading(coll) as store:
        known = store.file_stats()

    def file_stats() -> object:
        with C.reading(coll) as store:
            return store.file_stats()

    def select_stats() -> object:
        with C.reading(coll) as store:
            sql = "SELECT path, mtime_ns, size FROM files"
            return {p: (m, z) for p, m, z in store.db.execute(sql)}

    rows = {
        "walk + stat (floor)": lambda: speed.walk_stat(root),
        "Searcher.refresh (unchanged)": s.refresh,
        "  discover(path)": lambda: discover(resolve_path(root)),
        "  walker.scan": lambda: scan(args.root),
        "  Store.file_stats (kept between refreshes)": file_stats,
        "  SELECT path, mtime_ns, size -> tuples": select_stats,
    }
    # Interleaved rounds, so every row sees the same machine load.
    times: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(args.repeat):
        for name, fn in rows.items():
            t, _ = C.timed(fn)
            times[name].append(t)
    walk = statistics.median(times["walk + stat (floor)"])
    print(f"{len(known)} files; median of {args.repeat} interleaved rounds; load {os.getloadavg()}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"  {name:62} {m * 1000:7.1f} ms  {m / walk:5.2f}x walk")
    p = Profiler(interval=0.0005)
    p.start()
    for _ in range(10):
        s.refresh()
    p.stop()
    print(p.output_text(unicode=False, color=False))


def cmd_search(args: argparse.Namespace) -> None:
    import numpy as np
    import speed
    from pyinstrument import Profiler

    s = C.searcher(args.root, C.get_embedder(args))
    s.refresh()
    search = s.search
    qs = speed.note_titles(args.root, args.queries)
    for q in qs[:5]:
        search(q, k=8, mode=args.mode, refresh=False)
    p = Profiler(interval=0.0005)
    p.start()
    for q in qs:
        search(q, k=8, mode=args.mode, refresh=False)
    p.stop()
    print(p.output_text(unicode=False, color=False))
    # KNN: sqlite-vec's vec0 scan, the engine's, and numpy over float32 / float16 matrices.
    c = s.collections[0]
    emb = s.engine.models.get()
    with C.reading(c) as store:
        t, (ids, m32) = C.timed(lambda: store.vectors(emb.dim))
    m16 = m32.astype(np.float16)
    print(
        f"loading {len(ids)} vectors into memory: {t * 1000:.0f} ms, {m32.nbytes / 2**20:.0f} MiB"
    )
    qv = emb.embed(qs, query=True)

    def top(m, q, k=50):
        sc = m @ q.astype(m.dtype)
        idx = np.argpartition(-sc, k - 1)[:k]
        return ids[idx[np.argsort(-sc[idx])]]

    def engine(q, k):
        with C.reading(c) as store:
            return C.knn(c, store, q, k)

    def vec0(q, k):
        with C.reading(c) as store:
            return C.vec0_knn(store, q, k)

    times: dict[str, list[float]] = {}
    for q in qv:
        for name, fn in (
            ("sqlite-vec vec0", lambda q=q: vec0(q, 50)),
            ("engine knn", lambda q=q: engine(q, 50)),
            ("numpy float32", lambda q=q: top(m32, q)),
            ("numpy float16", lambda q=q: top(m16, q)),
        ):
            times.setdefault(name, []).append(C.timed(fn)[0])
    for name, ts in times.items():
        p50, p95 = C.pct(ts, 50) * 1000, C.pct(ts, 95) * 1000
        print(f"  k=50 {name:16} p50 {p50:6.2f} ms  p95 {p95:6.2f} ms")


def cmd_embed(args: argparse.Namespace) -> None:
    import apsw

    from memo_core import Tuning
    from memo_core.files.walker import index_path
    from memo_core.index.indexer import embed_input

    tuning = Tuning()
    batch_chunks = tuning.batch_chunks
    e = C.get_embedder(args)
    db = apsw.Connection(str(index_path(args.root)), flags=apsw.SQLITE_OPEN_READONLY)
    texts = [
        embed_input(h, t, tuning.embed_max_chars)
        for h, t in db.execute(
            "SELECT heading, text FROM chunks ORDER BY id LIMIT ?", (args.texts,)
        )
    ]
    bs = e.batch_size

    def run(order: str) -> None:
        if order == "sorted, all at once (floor)":
            e.embed(texts)
        elif order == f"sorted in groups of {batch_chunks} (pipeline)":
            for i in range(0, len(texts), batch_chunks):
                e.embed(texts[i : i + batch_chunks])
        else:
            for i in range(0, len(texts), bs):
                e.embed_batch(texts[i : i + bs])

    orders = [
        "sorted, all at once (floor)",
        f"sorted in groups of {batch_chunks} (pipeline)",
        f"file order, batches of {bs}, unsorted",
    ]
    times: dict[str, list[float]] = {o: [] for o in orders}
    for _ in range(args.repeat):
        for o in orders:
            times[o].append(C.timed(lambda o=o: run(o))[0])
    print(
        f"{len(texts)} texts, batch size {bs}; {args.repeat} interleaved rounds; "
        f"load {os.getloadavg()}"
    )
    for o, ts in times.items():
        best, med = len(texts) / min(ts), len(texts) / statistics.median(ts)
        print(f"  {o:42} best {best:6.1f} chunks/s, median {med:6.1f}")


MEM_VARIANTS = {
    "default": {},
    "arena off": {"arena": False},
    "batch 8": {"batch": 8},
    "arena off, batch 8": {"arena": False, "batch": 8},
    "mem pattern off": {"pattern": False},
    "spinning off": {"spin": False},
}


def cmd_embedmem(args: argparse.Namespace) -> None:
    """Peak RSS and speed of the embedder on the longest chunk texts, per session setting,
    each in a fresh child process (onnxruntime's arena keeps what it once took)."""
    if args.variant:
        print(_embedmem_child(args))
        return
    base = [sys.executable, str(Path(__file__).resolve()), "embedmem", str(args.root)]
    which = "longest" if args.order == "long" else "first (file order)"
    print(f"the {args.texts} {which} chunk texts of {args.root}; load {os.getloadavg()}")
    for name in args.variants.split(",") if args.variants else MEM_VARIANTS:
        r = subprocess.run(
            [*base, "--texts", str(args.texts), "--order", args.order, "--variant", name],
            capture_output=True,
            text=True,
        )
        print(f"  {name:20} {r.stdout.strip() or r.stderr.strip()[-300:]}")


def _embedmem_child(args: argparse.Namespace) -> str:
    import apsw
    import onnxruntime as ort

    from memo_core import Tuning
    from memo_core.files.walker import index_path
    from memo_core.index.indexer import embed_input

    v = MEM_VARIANTS[args.variant]
    plain = ort.SessionOptions

    def options():
        so = plain()
        if v.get("arena") is False:
            so.enable_cpu_mem_arena = False
        if v.get("pattern") is False:
            so.enable_mem_pattern = False
        if v.get("spin") is False:
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return so

    ort.SessionOptions = options  # the embedder builds its options through this name
    e = C.get_embedder(args)
    if "batch" in v:
        e.batch_size = v["batch"]
    loaded = C.peak_rss_mb()
    db = apsw.Connection(str(index_path(args.root)), flags=apsw.SQLITE_OPEN_READONLY)
    texts = [
        embed_input(h, t, Tuning().embed_max_chars)
        for h, t in db.execute(
            "SELECT heading, text FROM chunks ORDER BY "
            + ("length(text) DESC" if args.order == "long" else "id")
            + " LIMIT ?",
            (args.texts,),
        )
    ]
    t, _ = C.timed(lambda: e.embed(texts))
    return (
        f"peak RSS {C.peak_rss_mb():5.0f} MB (after model load {loaded:4.0f} MB); "
        f"{len(texts) / t:6.1f} chunks/s"
    )


def cmd_spin(args: argparse.Namespace) -> None:
    """Search latency without refresh with onnxruntime's thread pool spinning after each run
    (its default) and with spinning off; child processes, alternated."""
    if args.variant:
        print(_spin_child(args))
        return
    base = [sys.executable, str(Path(__file__).resolve()), "spin", str(args.root)]
    print(f"{args.queries} queries, k=8, no refresh; load {os.getloadavg()}")
    for r in range(args.repeat):
        for name in ("spinning (default)", "spinning off"):
            out = subprocess.run(
                [*base, "--queries", str(args.queries), "--variant", name],
                capture_output=True,
                text=True,
            )
            print(f"  round {r} {name:20} {out.stdout.strip() or out.stderr.strip()[-300:]}")


def _spin_child(args: argparse.Namespace) -> str:
    import onnxruntime as ort
    import speed

    plain = ort.SessionOptions

    def options():
        so = plain()
        if args.variant == "spinning off":
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return so

    ort.SessionOptions = options
    s = C.searcher(args.root, C.get_embedder(args))
    s.refresh()
    qs = speed.note_titles(args.root, args.queries)
    search = s.search
    times: dict[str, list[float]] = {"lex": [], "vec": [], "hybrid": []}
    for q in qs[:5]:
        search(q, k=8, mode="hybrid", refresh=False)
    for q in qs:
        for mode, ts in times.items():
            ts.append(C.timed(lambda q=q, m=mode: search(q, k=8, mode=m, refresh=False))[0])
    return "  ".join(f"{m} p50 {C.pct(ts, 50) * 1000:5.1f} ms" for m, ts in times.items())


def cmd_refreshadd(args: argparse.Namespace) -> None:
    """Does a refresh before a search cost more than the refresh alone? Lex searches, each
    query's refresh timed beside it in the same loop."""
    import speed

    use_model = not args.no_model
    s = C.searcher(args.root, C.get_embedder(args))
    s.refresh(embed=use_model)
    search = s.search
    a, r, b = [], [], []
    for q in speed.note_titles(args.root, args.queries):
        a.append(C.timed(lambda q=q: search(q, k=8, mode="lex", refresh=False))[0])
        r.append(C.timed(lambda: s.refresh(embed=use_model))[0])
        b.append(C.timed(lambda q=q: search(q, k=8, mode="lex", refresh=True))[0])
    m = [statistics.median(x) * 1000 for x in (a, r, b)]
    print(
        f"model loaded: {use_model}; p50 lex {m[0]:.1f} ms, refresh alone {m[1]:.1f} ms, "
        f"lex with refresh {m[2]:.1f} ms: excess {m[2] - m[0] - m[1]:.1f} ms"
    )


def cmd_mcp(args: argparse.Namespace) -> None:
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import memo_mcp.server"],
        capture_output=True,
        text=True,
    )
    rows: list[tuple[int, int, str]] = []
    for line in r.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if not line.startswith("import time:") or len(parts) != 3:
            continue
        try:
            rows.append((int(parts[1]), int(parts[0]), parts[2].rstrip()))
        except ValueError:
            continue  # the header line
    total = next((c for c, _, n in rows if n.strip() == "memo_mcp.server"), 0)
    print(f"import memo_mcp.server: {total / 1e6:.2f} s cumulative; load {os.getloadavg()}")
    for cum, self_, name in sorted(rows, key=lambda x: -x[0])[: args.top]:
        print(f"  {cum / 1000:8.1f} ms cumulative {self_ / 1000:8.1f} ms self  {name}")
    for mod in ("memo_core", "mcp.server.mcpserver", "numpy", "onnxruntime", "pydantic"):
        r = subprocess.run(
            [
                sys.executable,
                "-c",
                f"import time; t=time.perf_counter(); import {mod}; print(time.perf_counter()-t)",
            ],
            capture_output=True,
            text=True,
        )
        print(f"  alone: import {mod:22} {float(r.stdout.strip() or 'nan') * 1000:7.0f} ms")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.set_defaults(no_model=False)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("refresh")
    a.add_argument("root", type=Path)
    a.add_argument("--repeat", type=int, default=15)
    a = sub.add_parser("search")
    a.add_argument("root", type=Path)
    a.add_argument("--mode", default="hybrid")
    a.add_argument("--queries", type=int, default=200)
    a = sub.add_parser("embed")
    a.add_argument("root", type=Path)
    a.add_argument("--texts", type=int, default=2000)
    a.add_argument("--repeat", type=int, default=3)
    a = sub.add_parser("embedmem")
    a.add_argument("root", type=Path)
    a.add_argument("--texts", type=int, default=320)
    a.add_argument("--order", choices=("long", "id"), default="long")
    a.add_argument("--variants", default="", help="comma-separated; default: all")
    a.add_argument("--variant", default=None, help=argparse.SUPPRESS)
    a = sub.add_parser("spin")
    a.add_argument("root", type=Path)
    a.add_argument("--queries", type=int, default=200)
    a.add_argument("--repeat", type=int, default=2)
    a.add_argument("--variant", default=None, help=argparse.SUPPRESS)
    a = sub.add_parser("refreshadd")
    a.add_argument("root", type=Path)
    a.add_argument("--queries", type=int, default=200)
    a.add_argument("--no-model", action="store_true")
    a = sub.add_parser("mcp")
    a.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    cmds = {
        "refresh": cmd_refresh,
        "search": cmd_search,
        "embed": cmd_embed,
        "embedmem": cmd_embedmem,
        "spin": cmd_spin,
        "refreshadd": cmd_refreshadd,
        "mcp": cmd_mcp,
    }
    cmds[args.cmd](args)


if __name__ == "__main__":
    main()
