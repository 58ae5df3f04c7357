"""Speed and memory of memo on a folder of notes, each figure beside a floor measured in the
same run.

    python bench/speed.py ../shared/data/office-dev-en

Steps (the data set is copied to the work folder first; ../shared/data stays untouched):
 1. full index, in a child process: chunks/s end to end and peak RSS; floor: the embedder
    alone on the same (distinct) chunk texts, same batch size and threads, in another child;
 2. refresh with nothing changed, against a bare os.scandir walk + stat of the same tree;
 3. search latency p50/p95 per mode over the queries (note titles), warm, with and without
    the refresh step, with a per-step breakdown; `vec` KNN against numpy brute force;
 4. refresh after editing 1 and 100 files: time, and chunks re-embedded against the chunks
    whose text really changed;
 5. the copy grown to 10k files (copies of its notes: same texts, so no new embedding), and
    the unchanged refresh again;
 6. `memo-mcp` cold start: process start -> `initialize` answered (skipped if not runnable).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from _floor import INITIALIZE, walk_stat  # noqa: E402

MODES = ("lex", "vec", "hybrid")
SDK_IMPORT = "import mcp.server.mcpserver"
TARGETS = {
    "pipeline_vs_embedder": 0.8,
    "peak_rss_mb": 700,
    "refresh_vs_walk": 1.5,
    "refresh_10k_ms": 100,
    "p50_ms": {"lex": 10, "vec": 40, "hybrid": 50},
    "mcp_cold_start_s": 1.0,
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("dataset", type=Path, help="a folder of Markdown notes")
    p.add_argument("--queries", type=int, default=250, help="search queries (note titles)")
    p.add_argument("--k", type=int, default=8, help="hits per search (the default of memo)")
    p.add_argument("--repeat", type=int, default=15, help="runs of each refresh timing")
    p.add_argument("--edits", default="1,100", help="numbers of files to edit")
    p.add_argument("--ten-k", type=int, default=10_000, help="files in the grown copy (0: skip)")
    p.add_argument("--floor-fraction", type=float, default=1.0, help="share of chunks in the floor")
    p.add_argument(
        "--reuse", action="store_true", help="reuse the copy and index of a previous run"
    )
    p.add_argument("--skip-full", action="store_true", help="no full-index / floor figures")
    p.add_argument("--skip-mcp", action="store_true")
    p.add_argument("--mcp-runs", type=int, default=5)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--child", choices=("index", "floor"), help=argparse.SUPPRESS)
    C.add_model_args(p)
    return p.parse_args(argv)


# -- children (clean processes, so peak RSS is theirs alone) -------------------------------


def child_index(args: argparse.Namespace) -> dict:
    t0 = time.perf_counter()
    model = C.get_embedder(args)
    emb = C.TimedEmbedder(model) if model is not None else None
    s = C.searcher(args.dataset, emb)
    load = time.perf_counter() - t0
    t1, cpu1 = time.perf_counter(), cpu_seconds()
    st = s.refresh(embed=emb is not None)
    dt, cpu = time.perf_counter() - t1, cpu_seconds() - cpu1
    status = s.status()
    s.close()
    return {
        "model_load_s": load,
        "seconds": dt,
        "cpu_seconds": cpu,
        "files": sum(x.files for x in status),
        "chunks": sum(x.chunks for x in status),
        "chunks_embedded": st.chunks_embedded,
        "embed_seconds": emb.seconds if emb is not None else 0.0,
        "peak_rss_mb": C.peak_rss_mb(),
        "threads": _ort_threads(model),
        "batch_size": getattr(emb, "batch_size", None),
    }


def child_floor(args: argparse.Namespace) -> dict:
    import apsw

    from memo_core import Tuning
    from memo_core.files.discovery import discover, resolve_path
    from memo_core.files.indexes import index_path
    from memo_core.index.indexer import embed_input

    emb = C.get_embedder(args)
    cut = Tuning().embed_max_chars
    texts: list[str] = []
    for root in discover(resolve_path(args.dataset)):
        db = apsw.Connection(str(index_path(root)), flags=apsw.SQLITE_OPEN_READONLY)
        texts += [
            embed_input(h, t, cut)
            for h, t in db.execute(
                "SELECT heading, text FROM chunks WHERE id IN "
                "(SELECT min(id) FROM chunks GROUP BY hash) ORDER BY id"
            )
        ]
        db.close()
    if args.floor_fraction < 1.0:
        step = max(1, round(1 / args.floor_fraction))
        texts = texts[::step]
    t, cpu0 = time.perf_counter(), cpu_seconds()
    emb.embed(texts)
    dt, cpu = time.perf_counter() - t, cpu_seconds() - cpu0
    return {
        "chunks": len(texts),
        "seconds": dt,
        "cpu_seconds": cpu,
        "peak_rss_mb": C.peak_rss_mb(),
        "threads": _ort_threads(emb),
        "batch_size": emb.batch_size,
    }


def cpu_seconds() -> float:
    """CPU time of this process, all threads (onnxruntime's included), user + system."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _ort_threads(emb) -> object:
    sess = getattr(emb, "_session", None)
    if sess is None:
        return None
    n = sess.get_session_options().intra_op_num_threads
    return n or f"onnxruntime default ({os.cpu_count()} cpus)"


def run_child(kind: str, root: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), str(root), "--child", kind]
    if args.no_model:
        cmd.append("--no-model")
    if args.model_dir:
        cmd += ["--model-dir", str(args.model_dir)]
    cmd += ["--floor-fraction", str(args.floor_fraction)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"child {kind} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


# -- floors ------------------------------------------------------------------------------


def compare_refresh(s, root: Path, repeat: int) -> dict:
    """Unchanged refresh vs the bare walk, interleaved so both see the same machine load."""
    s.refresh()  # warm: model loaded, index open, page cache hot
    walk_stat(str(root))
    rt, wt = [], []
    files = 0
    for _ in range(repeat):
        t, files = C.timed(lambda: walk_stat(str(root)))
        wt.append(t)
        t, st = C.timed(s.refresh)
        rt.append(t)
        assert not st.changed_anything, "nothing changed, yet the refresh wrote"
    r, w = statistics.median(rt), statistics.median(wt)
    return {
        "files": files,
        "refresh_ms": r * 1000,
        "refresh_min_ms": min(rt) * 1000,
        "walk_ms": w * 1000,
        "walk_min_ms": min(wt) * 1000,
        "ratio": r / w if w else float("nan"),
    }


# -- queries -----------------------------------------------------------------------------


def note_titles(root: Path, n: int) -> list[str]:
    """Titles of notes (front matter `title:`, else the first `# ` heading), sampled."""
    from memo_core.files.walker import scan

    titles: list[str] = []
    for rel in sorted(scan(root).files):
        try:
            head = (root / rel).read_text(encoding="utf-8", errors="replace")[:3000]
        except OSError:
            continue
        title = None
        for line in head.splitlines():
            s = line.strip()
            if s.lower().startswith("title:"):
                title = s[6:].strip().strip("\"'")
                break
            if s.startswith("# "):
                title = s[2:].strip()
                break
        if title and len(title) > 3:
            titles.append(title)
    rng = random.Random(0)
    uniq = sorted(set(titles))
    return rng.sample(uniq, min(n, len(uniq)))


# -- search latency ----------------------------------------------------------------------


def latency(s, queries: list[str], modes: list[str], k: int) -> dict:
    """p50/p95 per mode, with and without refresh; interleaved query by query, so every
    variant sees the same machine load."""
    search = s.search
    variants = [(m, r) for m in modes for r in (False, True)]
    for q in queries[:5]:
        for mode, refresh in variants:
            search(q, k=k, mode=mode, refresh=refresh)
    times: dict[tuple[str, bool], list[float]] = {v: [] for v in variants}
    alone: list[float] = []  # the refresh by itself, in the same loop (same cache state)
    embed = any(m != "lex" for m in modes)
    for q in queries:
        for mode, refresh in variants:
            t, _ = C.timed(lambda q=q, m=mode, r=refresh: search(q, k=k, mode=m, refresh=r))
            times[(mode, refresh)].append(t)
        alone.append(C.timed(lambda: s.refresh(embed=embed))[0])
    out = {
        f"{mode}{'+refresh' if refresh else ''}": {
            "p50_ms": C.pct(ts, 50) * 1000,
            "p95_ms": C.pct(ts, 95) * 1000,
            "n": len(ts),
        }
        for (mode, refresh), ts in times.items()
    }
    out["refresh alone"] = {
        "p50_ms": C.pct(alone, 50) * 1000,
        "p95_ms": C.pct(alone, 95) * 1000,
        "n": len(alone),
    }
    return out


def breakdown(s, queries: list[str], k: int, mode: str) -> dict:
    """Median ms of each step of a search without refresh, taken one at a time with the
    engine's own pieces (query embedding, terms, FTS5 lex, KNN, fusion, rows), and of the
    whole search for comparison."""
    from memo_core.search.fusion import rank
    from memo_core.search.query import Query
    from memo_core.text import textnorm
    from memo_core.values import MAX_K

    steps: dict[str, list[float]] = {
        k_: [] for k_ in ("embed", "terms", "lex", "knn", "fuse", "rows", "sum", "search")
    }
    tuning = s.engine.tuning
    emb = s.engine.models.get() if mode != "lex" else None
    n = k if mode == "vec" else max(k, tuning.fusion_candidates)  # as the engine does
    for q in queries:
        t0 = time.perf_counter()
        qvec = emb.embed([q], query=True)[0] if emb is not None else None
        t1 = time.perf_counter()
        textnorm.query_terms(q)  # what the engine does first, timed alone
        t2 = time.perf_counter()
        lex_t = knn_t = fuse_t = rows_t = 0.0
        for c in s.collections:
            with C.reading(c) as store:
                a = time.perf_counter()
                asked = Query.of(q, min(k, MAX_K), "lex") if mode != "vec" else None
                found = (
                    C.candidates(c, store, asked, qvec=None, model_id=None, wanted=n)
                    if asked
                    else None
                )
                lex = found.lex if found else []
                b = time.perf_counter()
                vec = C.knn(c, store, qvec, n) if qvec is not None else []
                d = time.perf_counter()
                ranked = rank(lex, vec, mode, k, tuning.dense_weight)
                e = time.perf_counter()
                store.chunk_rows([cid for cid, _, _ in ranked])
                f = time.perf_counter()
            lex_t += b - a
            knn_t += d - b
            fuse_t += e - d
            rows_t += f - e
        total = time.perf_counter() - t0
        t, _ = C.timed(lambda q=q: s.search(q, k=k, mode=mode, refresh=False))
        for name, v in zip(
            steps, (t1 - t0, t2 - t1, lex_t, knn_t, fuse_t, rows_t, total, t), strict=True
        ):
            steps[name].append(v)
    return {k_: statistics.median(v) * 1000 for k_, v in steps.items()}


def knn_vs_numpy(s, queries: list[str], ks: tuple[int, ...]) -> dict:
    """The engine's KNN against numpy brute force (one float32 matrix product) over the same
    vectors, and sqlite-vec's vec0 KNN over them too; interleaved query by query."""
    import numpy as np

    emb = s.engine.models.get()
    qv = emb.embed(queries, query=True)
    out: dict = {}
    for c in s.collections:
        with C.reading(c) as store:
            ids, mat = store.vectors(emb.dim)
        if not len(ids):
            continue

        def engine(q, k, c=c):
            with C.reading(c) as store:
                return C.knn(c, store, q, k)

        def vec0(q, k, c=c):
            with C.reading(c) as store:
                return C.vec0_knn(store, q, k)

        times: dict[tuple[str, int], list[float]] = {}
        agree = dict.fromkeys(ks, 0)
        for q in qv:
            for k in ks:
                kk = min(k, len(ids))

                def brute(q=q, kk=kk, mat=mat, ids=ids):
                    sc = mat @ q
                    idx = np.argpartition(-sc, kk - 1)[:kk] if kk < len(sc) else np.arange(len(sc))
                    return ids[idx[np.argsort(-sc[idx])]]

                t, got = C.timed(lambda q=q, k=k, f=engine: f(q, k))
                times.setdefault(("engine", k), []).append(t)
                t, ref = C.timed(brute)
                times.setdefault(("numpy", k), []).append(t)
                t, _ = C.timed(lambda q=q, k=k: vec0(q, k))
                times.setdefault(("vec0", k), []).append(t)
                agree[k] += len({g for g, _ in got} & set(ref.tolist()))
        for k in ks:
            e, n, v = (statistics.median(times[(w, k)]) for w in ("engine", "numpy", "vec0"))
            out[f"k={k}"] = {
                "vectors": len(ids),
                "knn_ms": e * 1000,
                "numpy_ms": n * 1000,
                "ratio": e / n,
                "vec0_ms": v * 1000,
                "vec0_ratio": v / n,
                "overlap": agree[k] / (len(qv) * min(k, len(ids))),
            }
        out["matrix_mib"] = round(mat.nbytes / 2**20, 1)
    return out


# -- edits -------------------------------------------------------------------------------


def edit_files(s, root: Path, count: int, seed: int) -> dict:
    """Append a paragraph to `count` notes, refresh, and count what was embedded."""
    from memo_core.files.walker import scan
    from memo_core.index.indexer import chunk_hash
    from memo_core.text.chunking import parse_note
    from memo_core.text.titles import embedded_heading, lead_of

    with C.reading(s.collections[0]) as store:
        known = {h for (h,) in store.db.execute("SELECT hash FROM chunks")}
    rels = sorted(scan(root).files)
    rng = random.Random(seed)
    picked = rng.sample(rels, min(count, len(rels)))
    expect: set[str] = set()
    for i, rel in enumerate(picked):
        p = root / rel
        text = p.read_text(encoding="utf-8", errors="replace")
        text = text.rstrip("\n") + f"\n\nBenchmark edit {seed}-{i}: zq{seed}x{i} was added here.\n"
        p.write_text(text, encoding="utf-8")
        note = parse_note(text, s.engine.tuning.chunk_max_chars)
        lead = lead_of(rel, note.front.names, note.titled)
        expect |= {chunk_hash(embedded_heading(lead, c.heading), c.text) for c in note.chunks}
        expect -= known
    t, st = C.timed(s.refresh)
    return {
        "files": count,
        "refresh_ms": t * 1000,
        "changed": st.changed,
        "chunks_written": st.chunks_written,
        "chunks_embedded": st.chunks_embedded,
        "chunks_changed_expected": len(expect),
        "only_changed_embedded": st.chunks_embedded == len(expect),
    }


def grow(root: Path, target: int) -> int:
    """Copy notes into root/_copies/ until root holds `target` notes; the count added."""
    from memo_core.files.walker import scan

    rels = sorted(scan(root).files)
    need = target - len(rels)
    added = 0
    while added < need:
        for rel in rels:
            if added >= need:
                break
            dst = root / "_copies" / f"{added // len(rels)}" / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / rel, dst)
            added += 1
    return added


# -- memo-mcp ----------------------------------------------------------------------------


def mcp_cold_start(runs: int, cwd: Path) -> dict:
    try:
        runnable = importlib.util.find_spec("memo_mcp.server") is not None
    except (ImportError, ValueError):
        runnable = False
    exe = Path(sys.executable).parent / "memo-mcp"
    if not runnable:
        return {"skipped": "memo_mcp.server is not importable yet"}
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memo_mcp"]
    init = INITIALIZE
    times: list[float] = []
    answer = None
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            text=True,
        )
        got: list[str] = []
        reader = threading.Thread(
            target=lambda p=p, got=got: got.append(p.stdout.readline()), daemon=True
        )
        reader.start()
        try:
            p.stdin.write(json.dumps(init) + "\n")
            p.stdin.flush()
        except BrokenPipeError:
            pass
        reader.join(30)
        dt = time.perf_counter() - t0
        try:
            p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        err = p.stderr.read()[-800:] if p.stderr else ""
        if not got or not got[0].strip():
            return {"skipped": f"memo-mcp did not answer initialize ({' '.join(cmd)}): {err}"}
        try:
            answer = json.loads(got[0])
        except json.JSONDecodeError:
            return {"skipped": f"memo-mcp answered something that is not JSON: {got[0][:200]!r}"}
        times.append(dt)
    floors = {}
    for label, code in (("python -c pass", "pass"), ("import mcp.server.mcpserver", SDK_IMPORT)):
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], cwd=cwd, check=False)
            ts.append(time.perf_counter() - t0)
        floors[label] = statistics.median(ts)
    return {
        "command": " ".join(cmd),
        "floors_s": floors,
        "vs_sdk_import": statistics.median(times) / floors["import mcp.server.mcpserver"],
        "runs": len(times),
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "server": (answer or {}).get("result", {}).get("serverInfo"),
    }


# -- main --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    C.apply_model_args(args)
    if args.child:
        res = child_index(args) if args.child == "index" else child_floor(args)
        print(json.dumps(res))
        return res
    name = args.dataset.resolve().name
    root = args.workdir / "speed" / name
    out: dict = {
        "dataset": str(args.dataset),
        "copy": str(root),
        "targets": TARGETS,
        "cpus": os.cpu_count(),
        "engine": C.engine_version(),
        "loadavg_start": os.getloadavg(),
    }
    say = print
    say(f"engine {out['engine']}, {out['cpus']} cpus, load average {out['loadavg_start']}")

    # 1. full index and its floor
    if not (args.reuse and (root / ".memo" / "index.db").is_file()):
        C.copy_tree(args.dataset, root)
        args.reuse = False
    if not args.skip_full and not args.reuse:
        say(f"== full index of {root} (child process) ...")
        full = run_child("index", root, args)
        full["chunks_per_s"] = full["chunks_embedded"] / full["seconds"] if full["seconds"] else 0
        out["full_index"] = full
        say(
            f"   {full['files']} files, {full['chunks']} chunks ({full['chunks_embedded']} "
            f"embedded) in {full['seconds']:.1f} s: {full['chunks_per_s']:.1f} chunks/s; "
            f"embedding {full['embed_seconds']:.1f} s of it; "
            f"model load {full['model_load_s']:.2f} s; "
            f"peak RSS {full['peak_rss_mb']:.0f} MB (target <= {TARGETS['peak_rss_mb']})"
        )
        if not args.no_model:
            say("== floor: the embedder alone on the same chunk texts (child process) ...")
            fl = run_child("floor", root, args)
            fl["chunks_per_s"] = fl["chunks"] / fl["seconds"] if fl["seconds"] else 0
            out["embedder_floor"] = fl
            ratio = full["chunks_per_s"] / fl["chunks_per_s"] if fl["chunks_per_s"] else 0
            out["pipeline_vs_embedder"] = ratio
            # CPU time per chunk: what a busy shared machine disturbs least.
            cpu_ratio = (fl["cpu_seconds"] / fl["chunks"]) / (
                full["cpu_seconds"] / max(1, full["chunks_embedded"])
            )
            out["pipeline_vs_embedder_cpu"] = cpu_ratio
            say(
                f"   {fl['chunks']} chunks in {fl['seconds']:.1f} s: {fl['chunks_per_s']:.1f} "
                f"chunks/s, peak RSS {fl['peak_rss_mb']:.0f} MB; batch {fl['batch_size']}, "
                f"threads {fl['threads']}"
            )
            say(
                f"   pipeline / embedder alone = {ratio:.2f}x by wall clock (target >= 0.8), "
                f"{cpu_ratio:.2f}x by CPU time per chunk (pipeline {full['cpu_seconds']:.0f} s "
                f"CPU, embedder alone {fl['cpu_seconds']:.0f} s)"
            )
    elif args.reuse:
        say(f"== reusing {root}")

    with C.searcher(root, C.get_embedder(args)) as s:
        if args.reuse or args.skip_full:
            s.refresh(embed=not args.no_model)
        # 2. unchanged refresh vs walk
        say("== refresh with nothing changed vs os.scandir walk + stat ...")
        r = compare_refresh(s, root, args.repeat)
        out["refresh_unchanged"] = r
        say(
            f"   {r['files']} files: refresh {r['refresh_ms']:.1f} ms "
            f"(min {r['refresh_min_ms']:.1f}),"
            f" walk {r['walk_ms']:.1f} ms (min {r['walk_min_ms']:.1f}): {r['ratio']:.2f}x "
            "(target <= 1.5x)"
        )

        # 3. search latency
        modes = [m for m in MODES if not args.no_model or m == "lex"]
        queries = note_titles(root, args.queries)
        say(f"== search latency, k={args.k}, {len(queries)} queries (note titles), warm ...")
        lat = latency(s, queries, modes, args.k)
        out["latency"] = lat
        for key, v in lat.items():
            mode = key.split("+")[0]
            if mode in TARGETS["p50_ms"] and "+" not in key:
                extra = f" (target p50 <= {TARGETS['p50_ms'][mode]} ms)"
            elif "+" in key:
                added = v["p50_ms"] - lat[mode]["p50_ms"]
                extra = (
                    f" (refresh adds {added:.1f} ms; alone {lat['refresh alone']['p50_ms']:.1f})"
                )
            else:
                extra = " (in the same loop: the floor of what refresh may add)"
            say(f"   {key:15} p50 {v['p50_ms']:7.1f} ms  p95 {v['p95_ms']:7.1f} ms{extra}")
        out["breakdown_ms"] = {m: breakdown(s, queries, args.k, m) for m in modes}
        for m, b in out["breakdown_ms"].items():
            say(
                f"   steps {m:7} "
                + "  ".join(f"{k_} {v:.2f}" for k_, v in b.items())
                + " (median ms)"
            )
        if not args.no_model:
            kv = knn_vs_numpy(s, queries, (args.k, 50))
            out["knn_vs_numpy"] = kv
            for key, v in kv.items():
                if isinstance(v, dict):
                    say(
                        f"   vec KNN {key}: engine {v['knn_ms']:.2f} ms vs numpy "
                        f"{v['numpy_ms']:.2f} ms over {v['vectors']} vectors = {v['ratio']:.2f}x "
                        f"(same ids {v['overlap']:.0%}); sqlite-vec vec0 {v['vec0_ms']:.2f} ms "
                        f"= {v['vec0_ratio']:.1f}x"
                    )

        # 4. edits
        for i, n in enumerate(int(x) for x in args.edits.split(",") if x):
            e = edit_files(s, root, n, seed=i + 1)
            out[f"edit_{n}"] = e
            say(
                f"== edit {n} file(s): refresh {e['refresh_ms']:.1f} ms, {e['changed']} changed, "
                f"{e['chunks_embedded']} chunks embedded, {e['chunks_changed_expected']} "
                f"changed chunks expected: {'OK' if e['only_changed_embedded'] else 'MISMATCH'}"
            )

        # 5. 10k files
        if args.ten_k:
            added = grow(root, args.ten_k)
            t, st = C.timed(s.refresh)
            say(
                f"== grown to {args.ten_k} files (+{added} copies): refresh {t:.1f} s, "
                f"{st.chunks_embedded} chunks embedded"
            )
            r = compare_refresh(s, root, args.repeat)
            r.update(grow_refresh_s=t, grow_embedded=st.chunks_embedded)
            out["refresh_unchanged_10k"] = r
            say(
                f"   {r['files']} files: refresh {r['refresh_ms']:.1f} ms, walk "
                f"{r['walk_ms']:.1f} ms: {r['ratio']:.2f}x (targets <= 1.5x, < 100 ms)"
            )
    out["parent_peak_rss_mb"] = C.peak_rss_mb()
    out["loadavg_end"] = os.getloadavg()
    say(f"== load average at start {out['loadavg_start']}, at end {out['loadavg_end']}")

    # 6. memo-mcp
    if not args.skip_mcp:
        m = mcp_cold_start(args.mcp_runs, args.workdir)
        out["mcp_cold_start"] = m
        if "skipped" in m:
            say(f"== memo-mcp cold start: skipped: {m['skipped']}")
        else:
            say(
                f"== memo-mcp cold start ({m['command']}): median {m['median_s']:.2f} s "
                f"(min {m['min_s']:.2f}, max {m['max_s']:.2f}; target <= 1 s)"
            )
            f = m["floors_s"]
            say(
                f"   floors: bare python {f['python -c pass']:.2f} s, python importing the MCP "
                f"SDK alone ({SDK_IMPORT}) {f[SDK_IMPORT]:.2f} s: "
                f"memo-mcp = {m['vs_sdk_import']:.2f}x the SDK import"
            )
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
