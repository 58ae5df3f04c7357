"""memo at scale: generated vaults of 20k and 50k notes, and the first answer on a real set.

    python bench/scale.py [--sizes 20000,50000] [--office ../shared/data/office-dev-en]

For each size (a generated vault of small notes in 50 folders), with `--old CHECKOUT` side
by side with that source tree of memo (e.g. `git worktree add /tmp/memo-old <commit>`), each
engine in a child process of its own:
 1. the first full index from scratch (words only unless --model), then serving it (lex
    searches, edits seen by the next search): seconds, peak RSS indexing and once it served;
 2. with --model: one-shot `memo search` in the default mode, a selective and a generic
    query, each a fresh process (median seconds, peak RSS), and the model's load alone;
 3. freshness when nothing changed, side by side in one loop: a bare stat walk, a refresh
    that walks, a refresh told by the OS (inotify), and a warm `lex` search with either;
    edits, creates and deletes made just before a call: the share seen by that call;
 4. memo-mcp from a start: its first lex search (and with --model a hybrid one), resident
    memory after each;
 5. vectors (unless --no-vectors), with a stand-in model (a fixed unit vector per text, so
    the model's cost is left out; the index is rebuilt with it): reading every vector
    through vec0's cursor and from its storage, the first vector search after a start, and
    what one edit adds to the next lex and hybrid search (the same index serves both trees
    while the schema stays); resident memory serving, and once the vault stayed unused for
    the engine's idle_s (2 s here: its vectors given back).
Then, with --office: a fresh copy of that set, memo-mcp from cold, the first `memo_search`
(time, and its first line), `memo_status` and a second search, and the time until a
search answers in full.

    python bench/scale.py --shapes 50000 [--old CHECKOUT]

only measures `n` notes in two shapes, one collection and n/100 sibling collections of 100
notes (`proj000/docs/`...: a folder of projects), indexed with the stand-in model; in a fresh
process each (an engine with the OS's change reports): the first lex answer, a second with
nothing changed, the first hybrid, peak memory; then warm hybrid searches and what one edit
adds to the next (the median of each round's difference), against a bare walk of the tree,
and how many edits were found (`--rounds` / 3 rounds).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from _floor import INITIALIZE, walk_stat  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def make_vault(root: Path, n: int) -> Path:
    if (root / "done").is_file() and (root / "done").read_text() == str(n):
        return root
    if root.exists():
        shutil.rmtree(root)
    for i in range(n):
        folder = root / f"area{i % 50:02}" / f"topic{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note{i}.md").write_text(
            f"# Note {i}\n\nA note about topic {i % 7} in area {i % 50}: word{i} and more.\n\n"
            f"## Details\n\nDetails of note {i}, mentioning w{i % 997}.\n",
            encoding="utf-8",
        )
    (root / "README.md").write_text("# Vault\n", encoding="utf-8")
    (root / "done").write_text(str(n))
    return root


# A child's own peak resident memory: ru_maxrss would also count the parent's at the fork
# (Linux keeps it across exec), VmHWM is this process image's alone.
PEAK_MB = """
def peak_mb():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) / 1024
"""

# Run in a child process with the memo_core of a source tree in PYTHONPATH: index the
# vault from scratch, then serve it (words searches, an edit and the search seeing it);
# argv: root, "model" or "words".
INDEX_CHILD = (
    PEAK_MB
    + """
import json, sys, time
from pathlib import Path
import memo_core
from memo_core import Engine, ModelSource
root = Path(sys.argv[1])
out = {'memo_core': memo_core.__file__}
with Engine(models=ModelSource(enabled=sys.argv[2] == 'model')) as e:
    t = time.perf_counter(); s = e.refresh(root); out['seconds'] = time.perf_counter() - t
    out.update(added=s.added, chunks=s.chunks_written)
    out['index_peak_mb'] = peak_mb()
    note = root / 'area00' / 'topic0' / 'served.md'
    for i in range(20):
        e.search(root, f'word{i * 37}', mode='lex')
        note.write_text(f'# Served\\n\\nserved{i}x\\n', encoding='utf-8')
        assert e.search(root, f'served{i}x', mode='lex'), 'an edit was not seen'
    note.unlink()
    e.refresh(root)
out['peak_rss_mb'] = max(out['index_peak_mb'], peak_mb())  # VmHWM lags a drop
print(json.dumps(out))
"""
)


def child_index(root: Path, model: bool, checkout: Path | None = None) -> dict:
    """INDEX_CHILD from scratch, with this repository's memo_core or `checkout`'s: its
    seconds, the peak resident memory indexing, and that peak once it also served."""
    shutil.rmtree(root / ".memo", ignore_errors=True)
    cmd = [sys.executable, "-c", INDEX_CHILD, str(root), "model" if model else "words"]
    return in_tree(cmd, checkout)


def tree(checkout: Path | None, env: dict[str, str] | None = None) -> dict:
    """How a child runs with this repository's memo_core or `checkout`'s: its cwd and its
    environment (`env`, default this one's, with PYTHONPATH the tree)."""
    src = checkout or REPO
    return {"cwd": src, "env": {**(os.environ if env is None else env), "PYTHONPATH": str(src)}}


def in_tree(cmd: list[str], checkout: Path | None) -> dict:
    """Run `cmd` with this repository's memo_core or `checkout`'s; its last line as JSON."""
    where = tree(checkout)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, **where)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(got["memo_core"]).is_relative_to(where["cwd"]), got["memo_core"]
    return got


def freshness(root: Path, rounds: int) -> dict:
    from memo_core import Engine, ModelSource

    words = ModelSource(enabled=False)
    with (
        Engine(models=words, notify=True) as fed,
        Engine(models=words, notify=False) as walking,
    ):
        fed.refresh(root)  # starts the feed (and walks once)
        walking.refresh(root)
        times: dict[str, list[float]] = {
            k: []
            for k in ("walk", "refresh (walk)", "refresh (OS)", "search (walk)", "search (OS)")
        }
        for i in range(rounds):
            q = f"word{i * 37 % 1000}"
            for name, fn in (
                ("walk", lambda: walk_stat(str(root))),
                ("refresh (walk)", lambda: walking.refresh(root)),
                ("refresh (OS)", lambda: fed.refresh(root)),
                ("search (walk)", lambda q=q: walking.search(root, q, mode="lex")),
                ("search (OS)", lambda q=q: fed.search(root, q, mode="lex")),
            ):
                t, _ = C.timed(fn)
                times[name].append(t)
        assert not fed.refresh(root).walked, "the OS feed was not in use"
        seen = tries = 0
        for i in range(rounds):
            for kind in ("edit", "create", "delete"):
                path = root / "area00" / "topic0" / f"fresh{i}.md"
                if kind == "delete":
                    path.unlink()
                else:
                    path.write_text(f"# Fresh\n\n{kind}{i}x\n", encoding="utf-8")
                hits = fed.search(root, f"{'create' if kind == 'delete' else kind}{i}x", mode="lex")
                tries += 1
                seen += (len(hits) == 0) if kind == "delete" else bool(hits)
    walk = statistics.median(times["walk"])
    out = {
        k: {"p50_ms": C.pct(v, 50) * 1e3, "p95_ms": C.pct(v, 95) * 1e3} for k, v in times.items()
    }
    for k in times:
        out[k]["vs_walk"] = statistics.median(times[k]) / walk
    out["fresh_seen"] = seen / tries
    return out


# Run in a child process by `vectors`, with the memo_core of the source tree in PYTHONPATH:
# argv: root, rounds, the bench folder, "index", "measure", "memory" or "idle".
VECTOR_CHILD = (
    PEAK_MB
    + """
import hashlib, json, statistics, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[3])
import memo_core
from memo_core import Embedder, Engine, ModelSource
from _floor import walk_stat

class StandIn(Embedder):
    model_id, dim = "stand-in-384", 384

    def embed_batch(self, texts, *, query=False):
        out = np.empty((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            seed = hashlib.blake2b(t.encode(), digest_size=8).digest()
            out[i] = np.random.default_rng(int.from_bytes(seed, 'little')).standard_normal(384)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

root, rounds = Path(sys.argv[1]), int(sys.argv[2])
out = {'memo_core': memo_core.__file__}
with Engine(models=ModelSource(StandIn()), notify=True) as e:
    t = time.perf_counter()
    if sys.argv[4] == 'index':
        e.refresh(root)
        out['index_s'] = time.perf_counter() - t
        print(json.dumps(out))
        sys.exit()
    rss = lambda: int(Path('/proc/self/statm').read_text().split()[1]) * 4096 / 2**20
    if sys.argv[4] == 'memory':  # resident MB serving words only, then the vectors too
        e.search(root, 'word7', mode='lex')
        out['rss_lex_mb'] = rss()
        e.search(root, 'note about word7', mode='vec')
        out['rss_vec_mb'] = rss()
        out['peak_mb'] = peak_mb()
        print(json.dumps(out))
        sys.exit()
    if sys.argv[4] == 'idle':  # what a collection unused for idle_s gives back, unasked
        e.idle_s = IDLE_S = 2.0  # an engine without a memory budget ignores it
        e.search(root, 'note about word7', mode='vec')
        out['rss_vec_mb'] = rss()
        time.sleep(IDLE_S + 3)
        out['rss_idle_mb'] = rss()
        t = time.perf_counter()
        e.search(root, 'note about word7', mode='vec')
        out['vec_again_s'] = time.perf_counter() - t
        print(json.dumps(out))
        sys.exit()
    e.search(root, 'word7', mode='lex')
    out['first_lex_s'] = time.perf_counter() - t
    t = time.perf_counter()
    e.search(root, 'note about word7', mode='vec')
    out['first_vec_s'] = time.perf_counter() - t
    times = {k: [] for k in ('walk', 'lex', 'lex after edit', 'hybrid', 'hybrid after edit')}
    note = root / 'area00' / 'topic0' / 'edited.md'
    seen = 0

    def timed(key, fn):
        t = time.perf_counter()
        got = fn()
        times[key].append(time.perf_counter() - t)
        return got

    for i in range(rounds):
        for mode in ('lex', 'hybrid'):
            timed('walk', lambda: walk_stat(str(root)))
            e.search(root, f'word{i}', mode=mode)  # settles the other mode's edit
            timed(mode, lambda: e.search(root, f'word{i + 1}', mode=mode))
            note.write_text(f'# Edited\\n\\n{mode}{i}x edited\\n', encoding='utf-8')
            hits = timed(mode + ' after edit', lambda: e.search(root, f'{mode}{i}x', mode=mode))
            seen += bool(hits) and hits[0].relpath.endswith('edited.md')
    note.unlink()
    e.refresh(root)
    out['ms'] = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    out['edits_seen'] = seen / (2 * rounds)
print(json.dumps(out))
"""
)


def make_siblings(root: Path, n: int, per: int = 100) -> Path:
    """The notes of `make_vault(n)` as n // per sibling collections of `per` notes each, a
    folder of project folders with their docs (`root/projNNN/docs/`): what `memo index
    ~/projects` makes."""
    if (root / "done").is_file() and (root / "done").read_text() == f"{n}/{per}":
        return root
    if root.exists():
        shutil.rmtree(root)
    for i in range(n):
        folder = root / f"proj{i // per:03}" / "docs"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note{i}.md").write_text(
            f"# Note {i}\n\nA note about topic {i % 7} in area {i % 50}: word{i} and more.\n\n"
            f"## Details\n\nDetails of note {i}, mentioning w{i % 997}.\n",
            encoding="utf-8",
        )
    (root / "done").write_text(f"{n}/{per}")
    return root


# A shape measured in fresh processes through the public API, words and a stand-in model:
# the first lex answer, a second with nothing changed and the first hybrid (one engine, with
# the OS's notifications as a long-lived one has them), peak memory; then a long-lived
# engine: warm hybrid searches, and what one edit adds to the next one, against a bare walk
# of the tree. argv: root, rounds, the source tree.
SHAPE_CHILD = (
    PEAK_MB
    + VECTOR_CHILD.split("root, rounds = Path(sys.argv[1]), int(sys.argv[2])")[0]
    + """
root, rounds = Path(sys.argv[1]), int(sys.argv[2])
out = {'memo_core': memo_core.__file__}
with Engine(models=ModelSource(StandIn()), notify=True) as e:
    t = time.perf_counter()
    e.search(root, 'word7', mode='lex')
    out['first_lex_s'] = time.perf_counter() - t
    t = time.perf_counter()
    e.search(root, 'word8', mode='lex')
    out['second_lex_s'] = time.perf_counter() - t
    t = time.perf_counter()
    e.search(root, 'note about word9', mode='hybrid')
    out['first_hybrid_s'] = time.perf_counter() - t
    out['peak_mb'] = peak_mb()
    times = {k: [] for k in ('walk', 'hybrid', 'hybrid after edit')}
    folder = next(p.parent for p in sorted(root.rglob('note0.md')))
    seen = 0
    for i in range(rounds):
        t = time.perf_counter(); walk_stat(str(root)); times['walk'].append(time.perf_counter() - t)
        t = time.perf_counter(); e.search(root, f'word{i + 1}', mode='hybrid')
        times['hybrid'].append(time.perf_counter() - t)
        (folder / 'edited.md').write_text(f'# Edited\\n\\nfresh{i}x edited\\n', encoding='utf-8')
        t = time.perf_counter(); hits = e.search(root, f'fresh{i}x', mode='hybrid')
        times['hybrid after edit'].append(time.perf_counter() - t)
        seen += bool(hits) and hits[0].relpath.endswith('edited.md')
    (folder / 'edited.md').unlink()
    e.search(root, 'word1', mode='hybrid')  # the index left as found: the next child's is whole
    out['ms'] = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    # Paired: each edit's search against the warm search just before it, so a drift of
    # the shared machine's load over the rounds is not counted as the edit's.
    pairs = zip(times['hybrid after edit'], times['hybrid'])
    added = statistics.median(after - warm for after, warm in pairs) * 1e3
    out['edit_over_walk'] = added / out['ms']['walk']
    out['edits_seen'] = f'{seen} of {rounds}'
    out['peak_mb'] = max(out['peak_mb'], peak_mb())
print(json.dumps(out))
"""
)


def shapes(n: int, rounds: int, workdir: Path, old: Path | None) -> dict:
    """Both shapes of `n` notes (one collection; sibling collections of 100), indexed with
    the stand-in model, each measured by SHAPE_CHILD in a fresh process, side by side with
    `old` (the trees alternating)."""
    built = {
        "one collection": make_vault(workdir / f"scale-{n}", n),
        f"{n // 100} collections": make_siblings(workdir / f"siblings-{n}", n),
    }
    out: dict = {}
    for name, root in built.items():
        vector_child(root, 0, "index", None)  # the stand-in's vectors, from this tree
        out[name] = {}
        for side, checkout in sides(old).items():
            bench = str(Path(__file__).resolve().parent)  # this tree's _floor (walk_stat)
            out[name][side] = in_tree(
                [sys.executable, "-c", SHAPE_CHILD, str(root), str(rounds), bench], checkout
            )
    return out


def print_shapes(found: dict) -> None:
    for name, by_side in found.items():
        print(f"  {name}:")
        for side, r in by_side.items():
            ms = r["ms"]
            print(
                f"    {side}: first lex {r['first_lex_s']:.2f} s, second "
                f"{r['second_lex_s'] * 1e3:.0f} ms, first hybrid {r['first_hybrid_s']:.2f} s, "
                f"peak {r['peak_mb']:.0f} MB; warm hybrid {ms['hybrid']:.0f} ms, after an edit "
                f"{ms['hybrid after edit']:.0f} ms (walk {ms['walk']:.0f} ms: "
                f"+{r['edit_over_walk']:.3f}x a walk), edits seen {r['edits_seen']}"
            )


def vector_child(root: Path, rounds: int, what: str, checkout: Path | None) -> dict:
    """VECTOR_CHILD in a fresh process, with this repository's memo_core or `checkout`'s."""
    bench = str(Path(__file__).resolve().parent)
    return in_tree(
        [sys.executable, "-c", VECTOR_CHILD, str(root), str(rounds), bench, what], checkout
    )


def vector_reads(root: Path) -> dict:
    """Every vector read through vec0's cursor (a call per row) and from its storage."""
    from memo_core.index.store import Store

    store = Store.open_existing(root / ".memo" / "index.db")
    assert store is not None
    try:
        dim = store.vector_key()[2]
        by_row, _ = C.timed(lambda: list(store.db.execute("SELECT rowid, embedding FROM vec")))
        fast, (ids, _) = C.timed(lambda: store.vectors(dim))
        return {"vectors": len(ids), "by_row_s": by_row, "storage_s": fast}
    finally:
        store.close()


def vectors(root: Path, rounds: int, old: Path | None) -> dict:
    out: dict = {"index": vector_child(root, 0, "index", None)}
    out["reads"] = vector_reads(root)
    out["new"] = vector_child(root, rounds, "measure", None)
    if old:
        out["old"] = vector_child(root, rounds, "measure", old)
    out["memory"] = memory_children(root, old, "memory")
    out["idle"] = memory_children(root, old, "idle")
    return out


def print_idle_memory(m: dict) -> None:
    for side, r in m.items():
        print(
            f"   {side}: resident {r['rss_vec_mb']:.0f} MB after a vec search, "
            f"{r['rss_idle_mb']:.0f} MB once unused for 2 s; the next vec search "
            f"{r['vec_again_s']:.3f} s"
        )


def memory_children(root: Path, old: Path | None, kind: str) -> dict:
    """One vector child of `kind` with this memo_core and `old`'s, each in a fresh process:
    "memory", resident memory after a lex search, then after a vec search (its vectors
    loaded); "idle", after a vec search, then once the collection stayed unused for the
    engine's idle_s (2 s here), and the next vec search's time (its vectors loaded again)."""
    return {side: vector_child(root, 0, kind, src) for side, src in sides(old).items()}


def print_vector_memory(m: dict) -> None:
    for side, r in m.items():
        print(
            f"   {side}: resident {r['rss_lex_mb']:.0f} MB serving words, "
            f"{r['rss_vec_mb']:.0f} MB with the vectors loaded "
            f"(+{r['rss_vec_mb'] - r['rss_lex_mb']:.0f} MB; peak {r['peak_mb']:.0f} MB)"
        )


def print_vectors(v: dict) -> None:
    r = v["reads"]
    print(
        f"   vectors (stand-in model): {r['vectors']} indexed in {v['index']['index_s']:.1f} s; "
        f"all read through vec0 {r['by_row_s']:.2f} s, from its storage {r['storage_s']:.3f} s"
    )
    sides = [s for s in ("old", "new") if s in v]
    print("   " + " " * 34 + "".join(f"{s:>22}" for s in sides))
    for label, key in (
        ("first lex search after a start", "first_lex_s"),
        ("first vec search after it", "first_vec_s"),
    ):
        print(f"   {label:34}" + "".join(f"{v[s][key]:20.3f} s" for s in sides))
    for mode in ("lex", "hybrid"):
        cells = []
        for s in sides:
            ms = v[s]["ms"]
            added = ms[f"{mode} after edit"] - ms[mode]
            cells.append(f"{added:8.1f} ms {added / ms['walk']:6.3f}x walk")
        print(
            f"   {'one edit adds to a ' + mode + ' search':34}" + "".join(f"{c:>22}" for c in cells)
        )
    for s in sides:
        ms = v[s]["ms"]
        print(
            f"   {s}: walk {ms['walk']:.1f} ms; lex {ms['lex']:.1f} / after an edit "
            f"{ms['lex after edit']:.1f} ms; hybrid {ms['hybrid']:.1f} / after an edit "
            f"{ms['hybrid after edit']:.1f} ms; edits seen {v[s]['edits_seen']:.0%}"
        )


def server(root: Path, roots: Path, checkout: Path | None = None) -> C.Stdio:
    s = C.Stdio(**tree(checkout, {**os.environ, "MEMO_ROOTS": str(roots)}))
    s.call("initialize", INITIALIZE["params"])  # type: ignore[arg-type]
    return s


def at_rest(root: Path, checkout: Path | None, model: bool) -> dict:
    """memo-mcp from a start: a lex search, then (`model`) a hybrid one; resident memory
    a second after each."""
    s = server(root, root.parent, checkout)
    out: dict = {}
    try:
        for mode in ("lex", "hybrid") if model else ("lex",):
            args = {"path": str(root), "query": "note about word7", "mode": mode}
            out[f"first_{mode}_s"], _ = s.tool("memo_search", args)
            time.sleep(1)
            out[f"rss_{mode}_mb"] = s.rss_mb()
        return out
    finally:
        s.close()


def sides(old: Path | None) -> dict[str, Path | None]:
    return {"old": old, "new": None} if old else {"new": None}


def print_at_rest(a: dict) -> None:
    for side, r in a.items():
        hybrid = (
            f"; then a hybrid search {r['first_hybrid_s']:.2f} s, {r['rss_hybrid_mb']:.0f} MB"
            if "rss_hybrid_mb" in r
            else ""
        )
        print(
            f"   memo-mcp {side}: first lex search {r['first_lex_s']:.2f} s, "
            f"{r['rss_lex_mb']:.0f} MB resident{hybrid}"
        )


# `memo search` as a user types it (default mode), and the model's own load alone.
CLI = (
    PEAK_MB
    + """
import sys
from memo_cli.main import main
code = main()
print(f"peak_mb {peak_mb()}", file=sys.stderr)
sys.exit(code)
"""
)
MODEL_LOAD = """
import json, sys, time
import memo_core
from memo_core import ModelSource
t = time.perf_counter()
ModelSource().get().embed(['a question'], query=True)
print(json.dumps({'memo_core': memo_core.__file__, 'seconds': time.perf_counter() - t}))
"""
ONE_SHOT_QUERIES = {"selective": "word4242 in area 42", "generic": "details of the note"}


def one_shot(root: Path, old: Path | None, runs: int) -> dict:
    """A one-shot `memo search ROOT QUERY` in the default mode, each in a fresh process,
    the trees alternating: the median seconds and peak resident memory of each query, and
    the model's load alone (in the same runs, the share a search cannot avoid)."""
    times: dict = {side: {q: [] for q in ONE_SHOT_QUERIES} for side in sides(old)}
    rss: dict = {side: {q: 0.0 for q in ONE_SHOT_QUERIES} for side in sides(old)}
    model: list[float] = []
    for _ in range(runs):
        model.append(in_tree([sys.executable, "-c", MODEL_LOAD], None)["seconds"])
        for side, src in sides(old).items():
            for name, query in ONE_SHOT_QUERIES.items():
                dt, peak = timed_child([sys.executable, "-c", CLI, "search", str(root), query], src)
                times[side][name].append(dt)
                rss[side][name] = max(rss[side][name], peak)
    out: dict = {"model_s": statistics.median(model)}
    for side in sides(old):
        out[side] = {
            q: {"s": statistics.median(times[side][q]), "peak_mb": rss[side][q]}
            for q in ONE_SHOT_QUERIES
        }
    return out


def timed_child(cmd: list[str], checkout: Path | None) -> tuple[float, float]:
    """Wall seconds and peak resident MB of `cmd` run in `checkout` (default: this tree)."""
    t = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **tree(checkout))
    dt = time.perf_counter() - t
    assert out.returncode == 0, (cmd, out.stderr[-2000:])
    return dt, float(out.stderr.split(b"peak_mb ")[-1])


def print_one_shot(o: dict) -> None:
    print(f"   one-shot `memo search` (default mode); the model's load alone {o['model_s']:.2f} s")
    for side in ("old", "new"):
        for q, r in o.get(side, {}).items():
            print(
                f"   {side} {q:9} {r['s']:.2f} s ({r['s'] - o['model_s']:.2f} s beside the "
                f"model), peak {r['peak_mb']:.0f} MB"
            )


def first_answer(dataset: Path, workdir: Path) -> dict:
    root = C.copy_tree(C.corpus_dir(dataset), workdir / "scale-cold" / dataset.name)
    t0 = time.perf_counter()
    s = server(root, root.parent)
    out: dict = {"start_s": time.perf_counter() - t0}
    try:
        query = {"path": str(root), "query": "How do I create an Outlook add-in?"}
        out["first_search_s"], text = s.tool("memo_search", query)
        out["first_line"] = text.splitlines()[0]
        out["status_s"], out["status"] = s.tool("memo_status", {"path": str(root)})
        out["second_search_s"], text = s.tool("memo_search", query)
        out["second_line"] = text.splitlines()[0]
        while text.startswith("("):
            time.sleep(5)
            _, text = s.tool("memo_search", query)
        out["full_answer_after_s"] = time.perf_counter() - t0
        out["rss_mb_after_index"] = s.rss_mb()
    finally:
        s.close()
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="20000,50000")
    p.add_argument("--rounds", type=int, default=60)
    p.add_argument(
        "--model",
        action="store_true",
        help="index with the default model; then also one-shot CLI searches and hybrid serving",
    )
    p.add_argument("--one-shot-runs", type=int, default=5)
    p.add_argument("--office", type=Path, default=None, help="a data set for the cold start")
    p.add_argument("--no-vectors", action="store_true", help="leave out step 5 (vectors)")
    p.add_argument("--old", type=Path, default=None, help="memo's source tree to compare with")
    p.add_argument("--workdir", type=Path, default=C.DEFAULT_WORKDIR)
    p.add_argument(
        "--shapes", type=int, default=0, help="n notes as one collection and as n/100 siblings"
    )
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    out: dict = {"loadavg_start": os.getloadavg()}
    if args.shapes:  # only the two shapes: one collection against many siblings
        out["shapes"] = shapes(args.shapes, max(args.rounds // 3, 10), args.workdir, args.old)
        print(f"{args.shapes} notes, fresh processes (old: {args.old or '-'}):")
        print_shapes(out["shapes"])
        C.write_json(args.json, out)
        return out
    for n in [int(x) for x in args.sizes.split(",") if x]:
        root = make_vault(args.workdir / f"scale-{n}", n)
        # Each tree indexes from scratch; the new one last, whose index the rest reads.
        r: dict = {
            "index": {s: child_index(root, args.model, src) for s, src in sides(args.old).items()}
        }
        kind = "model" if args.model else "words"
        for side, ix in r["index"].items():
            print(
                f"== {n} notes, {side}: first index {ix['seconds']:.1f} s, peak RSS "
                f"{ix['index_peak_mb']:.0f} MB ({kind}), {ix['peak_rss_mb']:.0f} MB once it served"
            )
        if args.model:  # before step 5 replaces the model's vectors with the stand-in's
            r["one_shot"] = one_shot(root, args.old, args.one_shot_runs)
            print_one_shot(r["one_shot"])
        r["freshness"] = f = freshness(root, args.rounds)
        for k in ("walk", "refresh (walk)", "refresh (OS)", "search (walk)", "search (OS)"):
            print(
                f"   {k:16} p50 {f[k]['p50_ms']:8.2f} ms  p95 {f[k]['p95_ms']:8.2f} ms  "
                f"{f[k]['vs_walk']:6.3f}x walk"
            )
        print(f"   changes made just before a call and seen by it: {f['fresh_seen']:.1%}")
        r["at_rest"] = {s: at_rest(root, src, args.model) for s, src in sides(args.old).items()}
        print_at_rest(r["at_rest"])
        if not args.no_vectors:
            r["vectors"] = vectors(root, max(3, args.rounds // 6), args.old)
            print_vectors(r["vectors"])
            print_vector_memory(r["vectors"]["memory"])
            print_idle_memory(r["vectors"]["idle"])
        out[str(n)] = r
    if args.office:
        out["cold"] = c = first_answer(args.office, args.workdir)
        print(
            f"== {args.office.name} from cold: first search {c['first_search_s']:.2f} s: "
            f"{c['first_line']!r}; status {c['status_s']:.2f} s; second search "
            f"{c['second_search_s']:.2f} s: {c['second_line']!r}; full answer after "
            f"{c['full_answer_after_s']:.0f} s; server {c['rss_mb_after_index']:.0f} MB"
        )
    out["loadavg_end"] = os.getloadavg()
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
