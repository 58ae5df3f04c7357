"""Shared helpers for the benchmark scripts in bench/ (not part of the product).

Everything a benchmark builds (copies of a data set, indexes) goes under a work folder,
/tmp/memo-bench by default: ../shared/data is read-only, and memo writes `.memo/` into the
collection it indexes, so a data set is always copied first.
"""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memo_core import Embedder, ModelSource, Searcher, Tuning

REPO = Path(__file__).resolve().parent.parent
DEFAULT_WORKDIR = Path(os.environ.get("MEMO_BENCH_DIR", "/tmp/memo-bench"))
# -- model -------------------------------------------------------------------------------


def add_model_args(p: Any) -> None:
    p.add_argument("--model-dir", help="model directory to use (sets MEMO_MODEL_DIR)")
    p.add_argument("--no-model", action="store_true", help="words only (lex; no vectors)")
    p.add_argument(
        "--workdir", type=Path, default=DEFAULT_WORKDIR, help="where copies and indexes go"
    )


def apply_model_args(args: Any) -> None:
    if args.model_dir:
        os.environ["MEMO_MODEL_DIR"] = str(Path(args.model_dir).expanduser().resolve())


def get_embedder(args: Any):
    """The configured model (never installed from here), or None with --no-model."""
    if args.no_model:
        return None
    return ModelSource(auto_install=False).get()


class TimedEmbedder(Embedder):
    """Wraps an embedder and adds up the seconds spent in it (for the share of index time)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id, self.dim = inner.model_id, inner.dim
        self.batch_size, self.max_batch_chars = inner.batch_size, inner.max_batch_chars
        self.min_similarity, self.min_margin = inner.min_similarity, inner.min_margin
        self.seconds = 0.0

    def embed_batch(self, texts: list[str], *, query: bool = False) -> Any:
        t = time.perf_counter()
        try:
            return self.inner.embed_batch(texts, query=query)
        finally:
            self.seconds += time.perf_counter() - t


# -- knobs (a Tuning built from the command line) ------------------------------------------


def tuning_from(
    *,
    chunk_chars: int | None = None,
    dense_weight: float | None = None,
    fusion_candidates: int | None = None,
    heading_weight: float | None = None,
    body_weight: float | None = None,
) -> Any:
    """The engine's default Tuning with the knobs given here changed."""
    import dataclasses

    given = {
        "chunk_max_chars": chunk_chars,
        "dense_weight": dense_weight,
        "fusion_candidates": fusion_candidates,
        "heading_weight": heading_weight,
        "body_weight": body_weight,
    }
    return dataclasses.replace(Tuning(), **{k: v for k, v in given.items() if v is not None})


def knobs_of(tuning: Any) -> dict[str, Any]:
    return {
        "chunk_chars": tuning.chunk_max_chars,
        "dense_weight": tuning.dense_weight,
        "fusion_candidates": tuning.fusion_candidates,
        "bm25": f"bm25(fts, {tuning.heading_weight}, {tuning.body_weight})",
    }


def searcher(root: Path, embedder: Any, tuning: Any = None) -> Any:
    """A Searcher over `root` with this model (None: words only) and tuning."""
    return Searcher(root, embedder=embedder, use_model=embedder is not None, tuning=tuning)


@contextmanager
def reading(coll: Any) -> Iterator[Any]:
    """A collection's read connection inside one snapshot (engine internals: bench only)."""
    with coll.snapshot() as store:
        if store is None:
            raise SystemExit(f"{coll.root} has no index yet")
        yield store


def candidates(coll: Any, store: Any, query: Any, **kw: Any) -> Any:
    """One collection's word and vector candidates for a query, as a search takes them (inside
    `reading`): `memo_core.search.candidates.candidates` where the engine has it, else the
    collection's own method of the same arguments (the engine before search moved above it)."""
    try:
        from memo_core.search.candidates import candidates as per_collection
    except ImportError:
        return coll.candidates(store, query, **kw)
    return per_collection(coll, store, query, **kw)


def knn(coll: Any, store: Any, vector: Any, k: int) -> list[tuple[int, float]]:
    """The engine's nearest-neighbour search of one collection (inside `reading`); its
    vector cache made as a search makes it (a collection holds none until then, or after
    it was released)."""
    if hasattr(coll, "vectors"):  # the collection lends them (since search moved above it)
        return coll.vectors(store).nearest(vector, k)
    from memo_core.index.vectors import VectorCache

    cache = coll._vectors = coll._vectors or VectorCache()
    cache.sync(store)
    return cache.nearest(vector, k)


def vec0_knn(store: Any, vector: Any, k: int) -> list[tuple[int, float]]:
    """sqlite-vec's own KNN over the vec0 table (the engine's first way to search vectors)."""
    import numpy as np

    rows = store.db.execute(
        "SELECT rowid, distance FROM vec WHERE embedding MATCH ? AND k = ? ORDER BY distance",
        (np.asarray(vector, np.float32).tobytes(), min(k, 4096)),
    )
    return [(cid, 1.0 - d if d is not None else 0.0) for cid, d in rows]


# -- data sets ---------------------------------------------------------------------------


def corpus_dir(dataset: Path) -> Path:
    """The folder of notes in a data set: `corpus/` when there is one, else the set itself."""
    return dataset / "corpus" if (dataset / "corpus").is_dir() else dataset


def copy_tree(src: Path, dst: Path) -> Path:
    """A plain copy (links resolved, no .memo) of src at dst, replacing what was there."""
    if dst.exists():
        shutil.rmtree(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, symlinks=False, ignore=shutil.ignore_patterns(".memo"))
    return dst


def deal(src: Path, dst: Path, folders: int) -> Path:
    """The notes of `src` dealt in turn into `dst/part0` … `part{folders-1}` (their own
    paths kept below), so they are that many sibling collections (a part with no note at
    its top gets a one-line `part.md`, which is what makes a folder a collection)."""
    if dst.exists():
        shutil.rmtree(dst)
    for i, p in enumerate(sorted(src.rglob("*.md"))):
        target = dst / f"part{i % folders}" / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)
    for i in range(folders):  # a part whose notes all sit in sub-folders: make it a root
        part = dst / f"part{i}"
        if not any(part.glob("*.md")):
            (part / "part.md").write_text(f"# Part {i}\n", encoding="utf-8")
    return dst


def load_queries(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                q = json.loads(line)
                out[str(q["id"])] = q["text"]
    return out


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as f:
        next(f, None)  # header
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3:
                continue
            qid, doc, rel = parts[0], parts[1], int(parts[2])
            out.setdefault(qid, {})[doc] = rel
    return out


def split_files(dataset: Path, split: str) -> tuple[Path, Path]:
    if split == "test":
        return dataset / "queries.jsonl", dataset / "qrels.tsv"
    return dataset / f"queries-{split}.jsonl", dataset / f"qrels-{split}.tsv"


# -- metrics -----------------------------------------------------------------------------


def files_in_order(paths: Iterable[str], k: int = 10) -> list[str]:
    """File names (basename) in the order of their first hit, at most k."""
    seen: dict[str, None] = {}
    for p in paths:
        name = p.replace("\\", "/").rsplit("/", 1)[-1]
        if name not in seen:
            seen[name] = None
            if len(seen) >= k:
                break
    return list(seen)


def ndcg(ranked: Sequence[str], rels: dict[str, int], k: int = 10) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall(ranked: Sequence[str], rels: dict[str, int], k: int = 10) -> float:
    good = {d for d, r in rels.items() if r > 0}
    return len(good.intersection(ranked[:k])) / len(good) if good else 0.0


def mrr(ranked: Sequence[str], rels: dict[str, int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def mean_ci(xs: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal confidence interval."""
    if not xs:
        return 0.0, 0.0
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, 0.0
    return m, 1.96 * statistics.stdev(xs) / math.sqrt(len(xs))


# -- timing ------------------------------------------------------------------------------


def pct(xs: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    pos = (len(s) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def peak_rss_mb() -> float:
    """This process's peak resident set size in MiB. On Linux its VmHWM: ru_maxrss also
    counts the parent's at the fork, which Linux keeps across exec (a bench child started
    by a big parent would report the parent's peak). macOS reports ru_maxrss in bytes."""
    if sys.platform == "linux":
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


# -- indexes, cached per data set, chunk size and model -----------------------------------


def index_digest() -> str:
    """A digest of the engine files that decide what an index holds: a cached index built by
    other code is rebuilt rather than trusted."""
    import hashlib

    h = hashlib.blake2b(digest_size=8)
    for name in (
        "text/chunking.py",
        "text/headings.py",
        "index/indexer.py",
        "text/textnorm.py",
        "index/store.py",
        "index/schema.py",
    ):
        p = REPO / "memo_core" / name
        h.update(p.read_bytes() if p.is_file() else b"")
    return h.hexdigest()


def cached_index(
    dataset: Path,
    workdir: Path,
    tuning: Any,
    embedder: Any,
    *,
    folders: int = 1,
    log: Callable = print,
) -> tuple[Path, dict[str, Any]]:
    """A copy of the data set's notes, indexed with `tuning`, reused when already built;
    with `folders` > 1 the notes are dealt into that many sibling folders (collections).

    Returns the copy's folder and what building it cost (empty when it came from the cache).
    """
    model = embedder.model_id if embedder is not None else "nomodel"
    src = corpus_dir(dataset)
    n_files = sum(1 for p in src.rglob("*.md"))
    split = f"-f{folders}" if folders > 1 else ""
    key = f"{dataset.resolve().name}-c{tuning.chunk_max_chars}{split}-{model}"
    root = workdir / "idx" / key
    marker = root.parent / f"{key}.json"
    want = {
        "source": str(src.resolve()),
        "files": n_files,
        "identity": tuning.identity(),
        "engine": index_digest(),
    }
    if marker.is_file() and root.is_dir():
        info = json.loads(marker.read_text())
        if {k: info.get(k) for k in want} == want:
            return root, {}
    copy_tree(src, root) if folders < 2 else deal(src, root, folders)
    log(f"indexing {src} -> {root} (chunks of {tuning.chunk_max_chars} chars, model {model}) ...")
    with searcher(root, embedder, tuning) as s:
        t0 = time.perf_counter()
        st = s.refresh(embed=embedder is not None)
        dt = time.perf_counter() - t0
        chunks = sum(st.chunks for st in s.status())
    built = {"seconds": dt, "chunks": chunks, "chunks_embedded": st.chunks_embedded}
    log(
        f"  {n_files} files, {chunks} chunks, {st.chunks_embedded} embedded in {dt:.1f} s "
        f"({chunks / dt if dt else 0:.0f} chunks/s)"
    )
    marker.write_text(json.dumps({**want, **built}))
    return root, built


def engine_version() -> str:
    """The commit the engine runs from, with `+dirty` when memo_core has local changes."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "memo_core"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head}{'+dirty' if dirty else ''}" if head else "unknown"


def write_json(path: Path | None, data: Any) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str))


class Stdio:
    """memo-mcp over stdio, one JSON line at a time; `stderr`: where its log goes (a file:
    a pipe nobody reads may fill and stall the server); `popen`: cwd, env."""

    def __init__(self, env: dict[str, str], stderr: Any = subprocess.DEVNULL, **popen: Any) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memo_mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            **popen,
        )
        self.ids = 0

    def call(self, method: str, params: dict) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.ids += 1
        msg = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.ids:
                return answer

    def tool(self, name: str, args: dict) -> tuple[float, str]:
        t = time.perf_counter()
        r = self.call("tools/call", {"name": name, "arguments": args})
        return time.perf_counter() - t, r["result"]["content"][0]["text"]

    def rss_mb(self) -> float:
        return self.memory_mb().get("VmRSS", float("nan"))

    def memory_mb(self) -> dict[str, float]:
        """The server's resident memory now (VmRSS) and at its peak (VmHWM), in MB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text().splitlines()
        return {
            line.split(":")[0]: int(line.split()[1]) / 1024
            for line in status
            if line.startswith(("VmHWM:", "VmRSS:"))
        }

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def serve_until_complete(
    env: dict[str, str], folder: Path, queries: Sequence[str], after: Sequence[str]
) -> dict[str, float]:
    """memo-mcp (in `env`) over `folder`: `memo_search` with `queries` in turn, 2 s apart,
    until an answer carries no notice (every pass done; indexing goes on between calls),
    then each of `after`: the seconds until complete, the searches that took, and the
    server's peak and resident memory at the end (MB)."""
    from _floor import INITIALIZE

    s = Stdio(env)
    s.call("initialize", INITIALIZE["params"])  # type: ignore[arg-type]
    t0 = time.perf_counter()
    try:
        searches = 0
        while True:
            query = queries[searches % len(queries)]
            _, text = s.tool("memo_search", {"path": str(folder), "query": query})
            searches += 1
            if not text.startswith("("):  # an answer with no notice: every pass is done
                break
            time.sleep(2)
        complete = time.perf_counter() - t0
        for q in after:
            s.tool("memo_search", {"path": str(folder), "query": q})
        mb = s.memory_mb()
    finally:
        s.close()
    return {
        "complete_after_s": round(complete, 1),
        "searches": searches,
        "peak_mb": round(mb["VmHWM"]),
        "rss_mb": round(mb["VmRSS"]),
    }
