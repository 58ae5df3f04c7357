"""e5-small's graph and tokenizer against an earlier install, side by side in one run.

    python bench/e5_speed.py --old OLD_MODEL_DIR [--new DIR] [--use DIR]
        [--lang ru] [--pages 300] [--rounds 2] [--index] [--json out.json]

`--old` is e5-small as an earlier memo installed it (the 4-bit `MatMulNBits` graph, padded
batches of 8, `tokenizer.json` run by `tokenizers`); `--new` the one installed now (default:
memo's cache). The passages are every chunk of `--pages` pages of office-dev-LANG (a fixed
sample), as the indexer embeds them (heading and text, `embed_input`).

1. The embedder alone: each model embeds all passages, taking turns a slice of 40 at a
   time, `--rounds` rounds; the fastest round of each (chunks/s, tokens/s), the ratio of
   the totals and each round's. The cosine of the
   new model's vectors to the old one's (min, 1st percentile, mean), passages and queries.
2. The tokenizers: token ids of every passage equal or not; each one's resident memory,
   loaded alone in a fresh process.
3. Resident memory with each model loaded and used once (a fresh process each; `--use`
   adds the default model).
4. With `--index`: `memo index` of a copy of those pages, in a fresh process per model,
   alternating (MEMO_MODEL_DIR set; `--use` adds the default model): seconds and peak RSS.
5. With `--serve`: memo-mcp (the new model) from a start over a fresh copy of those pages:
   `memo_search` until its answer is complete (indexing goes on between calls), then ten
   more; the server's peak (VmHWM) and resident memory at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from memo_core import Tuning, load_model_dir  # noqa: E402
from memo_core.index.indexer import embed_input  # noqa: E402
from memo_core.model.sources import E5_SMALL_SOURCE, model_dir_of  # noqa: E402
from memo_core.model.unigram import UnigramTokenizer  # noqa: E402
from memo_core.text.chunking import chunk_markdown  # noqa: E402

DATA = C.REPO.parent / "shared" / "data"
SLICE = 40  # passages the models take turns on
QUERIES = [
    "как настроить резервное копирование", "how do I restore files from backup",
    "что взять с собой в поездку", "difference between let and var",
    "свойство PR_MESSAGE_FLAGS", "send mail from an Outlook macro", "ошибка при запуске",
    "named properties of an appointment",
]  # fmt: skip
_INDEX = """
import sys, time
sys.path[:0] = [{repo!r}, {repo!r} + "/bench"]
import _common
from memo_cli.main import main
t = time.perf_counter()
main(["index", sys.argv[1]])
print(time.perf_counter() - t, _common.peak_rss_mb(), file=sys.stderr)
"""
_MODEL_RSS = """
import sys
sys.path.insert(0, {repo!r})
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
from memo_core import load_model_dir
before = rss()
e = load_model_dir({path!r})
e.embed(["как настроить бэкап"], query=True)
e.embed(["Бэкап домашнего сервера: restic каждую ночь. " * 20])
print(before, rss())
"""
_TOKENIZER_RSS = """
import sys, gc
from pathlib import Path
sys.path.insert(0, {repo!r})
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
before = rss()
path = Path({path!r})
if path.suffix == ".json":
    from tokenizers import Tokenizer
    before = rss()
    tok = Tokenizer.from_file(str(path))
else:
    from memo_core.model.unigram import UnigramTokenizer
    before = rss()
    tok = UnigramTokenizer.load(path)
gc.collect()
print(rss() - before)
"""


def pages(lang: str, n: int, seed: int = 31) -> list[Path]:
    files = sorted((DATA / f"office-dev-{lang}").rglob("*.md"))
    return random.Random(seed).sample(files, min(n, len(files)))


def passages(files: list[Path]) -> list[str]:
    cap = Tuning().embed_max_chars
    out = []
    for f in files:
        for c in chunk_markdown(f.read_text("utf-8", errors="replace"), Tuning().chunk_max_chars):
            if c.text.strip() or c.heading:
                out.append(embed_input(c.heading, c.text, cap))
    return out


def token_ids(e, texts: list[str]) -> list[list[int]]:
    tok = e._tok  # bench only: the embedder's tokenizer, whichever it is
    prefixed = [e.passage_prefix + t for t in texts]
    if isinstance(tok, UnigramTokenizer):
        return tok.encode_batch(prefixed)
    return [enc.ids for enc in tok.encode_batch(prefixed)]


def tokenizer_rss(model_dir: Path) -> float:
    path = next(p for p in (model_dir / "tokenizer.unigram", model_dir / "tokenizer.json")
                if p.is_file())  # fmt: skip
    code = _TOKENIZER_RSS.format(repo=str(C.REPO), path=str(path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def model_rss(model_dir: Path) -> tuple[float, float]:
    """Resident MB of a fresh Python with memo imported, and once the model at `model_dir`
    is loaded and has embedded a query and a passage."""
    code = _MODEL_RSS.format(repo=str(C.REPO), path=str(model_dir))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = map(float, out.stdout.split())
    return before, after


def embedder_side_by_side(dirs: dict[str, Path], texts: list[str], rounds: int) -> dict:
    """Each model embeds the passages a slice at a time, the models taking turns on every
    slice (the order alternating): a shared machine's slow spells fall on both alike."""
    models = {name: load_model_dir(d) for name, d in dirs.items()}
    for e in models.values():  # past the first session's few passages: indexing's session
        e.embed(["warm up"] * 300)
    seconds = {name: [0.0] * rounds for name in models}
    vecs: dict[str, list[np.ndarray]] = {name: [] for name in models}
    slices = [texts[at : at + SLICE] for at in range(0, len(texts), SLICE)]
    for r in range(rounds):
        for n, part in enumerate(slices):
            order = list(models) if (r + n) % 2 == 0 else list(models)[::-1]
            for name in order:
                t0 = time.perf_counter()
                got = models[name].embed(part)
                seconds[name][r] += time.perf_counter() - t0
                if r == 0:
                    vecs[name].append(got)
    tokens = {name: sum(map(len, token_ids(e, texts))) for name, e in models.items()}
    out: dict = {"passages": len(texts), "rounds": rounds, "slice": SLICE}
    for name in models:
        best = min(seconds[name])
        out[name] = {"seconds": round(best, 2), "chunks_per_s": round(len(texts) / best, 2),
                     "tokens_per_s": round(tokens[name] / best)}  # fmt: skip
    # each round's ratio, and the ratio of the totals (rounds share every slow spell)
    out["speedup_rounds"] = [round(o / n, 2) for o, n in zip(seconds["old"], seconds["new"],
                                                             strict=True)]  # fmt: skip
    out["speedup"] = round(sum(seconds["old"]) / sum(seconds["new"]), 2)
    new, old = np.concatenate(vecs["new"]), np.concatenate(vecs["old"])
    cos = (new * old).sum(axis=1)
    q = models["new"].embed(QUERIES, query=True) * models["old"].embed(QUERIES, query=True)
    qcos = q.sum(axis=1)
    out["cosine_passages"] = {"min": float(cos.min()), "p1": float(np.percentile(cos, 1)),
                              "mean": float(cos.mean())}  # fmt: skip
    out["cosine_queries"] = {"min": float(qcos.min()), "mean": float(qcos.mean())}
    old_ids, new_ids = token_ids(models["old"], texts), token_ids(models["new"], texts)
    out["token_ids_equal"] = sum(a == b for a, b in zip(old_ids, new_ids, strict=True))
    return out


def index_runs(dirs: dict[str, Path], files: list[Path], rounds: int, work: Path) -> dict:
    """`memo index` of a copy of `files` per model, fresh processes, alternating."""
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in dirs}
    for r in range(rounds):
        order = list(dirs) if r % 2 == 0 else list(dirs)[::-1]
        for name in order:
            folder = work / f"{name}-{r}"
            for f in files:
                target = folder / f.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(f.read_bytes())
            env = {
                **os.environ,
                "MEMO_MODEL_DIR": str(dirs[name]),
                "MEMO_CACHE_DIR": str(work / "cache"),
            }
            code = _INDEX.format(repo=str(C.REPO))
            proc = subprocess.run([sys.executable, "-c", code, str(folder)], env=env,
                                  capture_output=True, text=True, check=True)  # fmt: skip
            secs, peak = map(float, proc.stderr.strip().splitlines()[-1].split())
            results[name].append((secs, peak))
    return {name: {"seconds": round(min(s for s, _ in runs), 1),
                   "peak_rss_mb": round(max(p for _, p in runs))}
            for name, runs in results.items()}  # fmt: skip


def serve_memory(model_dir: Path, files: list[Path], work: Path) -> dict:
    """memo-mcp over a fresh copy of `files`: searched until complete, then ten times."""

    folder = work / "served"
    for f in files:
        (folder / f.name).parent.mkdir(parents=True, exist_ok=True)
        (folder / f.name).write_bytes(f.read_bytes())
    env = {**os.environ, "MEMO_MODEL_DIR": str(model_dir), "MEMO_CACHE_DIR": str(work / "cache"),
           "MEMO_ROOTS": str(work)}  # fmt: skip
    return C.serve_until_complete(env, folder, QUERIES, QUERIES + QUERIES[:2])


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--old", type=Path, required=True, help="e5-small as an earlier memo installed it"
    )
    p.add_argument("--new", type=Path, default=None, help="default: memo's install of e5-small")
    p.add_argument("--use", type=Path, default=None, help="the default model too (with --index)")
    p.add_argument("--lang", choices=("ru", "en"), default="ru")
    p.add_argument("--pages", type=int, default=300)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--index", action="store_true", help="also time `memo index` per model")
    p.add_argument("--serve", action="store_true", help="also memo-mcp's memory (new model)")
    p.add_argument("--only-serve", action="store_true", help="only step 5")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    dirs = {"old": args.old.expanduser(), "new": (args.new or model_dir_of(E5_SMALL_SOURCE))}
    files = pages(args.lang, args.pages)
    texts = passages(files)
    print(f"{len(files)} pages of office-dev-{args.lang}: {len(texts)} passages, "
          f"{sum(map(len, texts)) / len(texts):.0f} characters each")  # fmt: skip
    result: dict = {"engine": C.engine_version(), "lang": args.lang, "pages": len(files)}
    if args.serve or args.only_serve:
        with tempfile.TemporaryDirectory(prefix="memo-e5-serve-") as tmp:
            result["serve"] = served = serve_memory(dirs["new"], files, Path(tmp))
        print(f"memo-mcp, new model: complete after {served['complete_after_s']} s "
              f"({served['searches']} searches); peak {served['peak_mb']} MB, "
              f"resident {served['rss_mb']} MB after 10 more searches")  # fmt: skip
        if args.only_serve:
            C.write_json(args.json, result)
            return result
    result["embedder"] = emb = embedder_side_by_side(dirs, texts, args.rounds)
    for name in ("old", "new"):
        e = emb[name]
        print(f"{name}: {e['chunks_per_s']} chunks/s, {e.get('tokens_per_s')} tokens/s "
              f"({e['seconds']} s)")  # fmt: skip
    cp, cq = emb["cosine_passages"], emb["cosine_queries"]
    print(f"new / old: {emb['speedup']}x (rounds {emb['speedup_rounds']}); cosine passages "
          f"min {cp['min']:.4f} p1 {cp['p1']:.4f} mean {cp['mean']:.5f}, queries "
          f"min {cq['min']:.4f} mean {cq['mean']:.5f}; "
          f"token ids equal {emb['token_ids_equal']} of {emb['passages']}")  # fmt: skip
    result["tokenizer_rss_mb"] = rss = {
        name: round(tokenizer_rss(d), 1) for name, d in dirs.items()
    }
    print(f"tokenizer resident: old {rss['old']} MB, new {rss['new']} MB")
    if args.use:
        dirs["use"] = args.use.expanduser()
    result["model_rss_mb"] = loaded = {name: model_rss(d) for name, d in dirs.items()}
    for name, (before, after) in loaded.items():
        print(f"resident with the model loaded and used once, {name}: {after:.0f} MB "
              f"({before:.0f} MB before it)")  # fmt: skip
    if args.index:
        with tempfile.TemporaryDirectory(prefix="memo-e5-speed-") as tmp:
            result["index"] = runs = index_runs(dirs, files, args.rounds, Path(tmp))
        for name, r in runs.items():
            print(f"memo index, {name}: {r['seconds']} s, peak {r['peak_rss_mb']} MB")
        if "use" in runs:
            result["new_over_use"] = round(runs["new"]["seconds"] / runs["use"]["seconds"], 2)
            print(f"new / use-m3 index time: {result['new_over_use']}x")
    C.write_json(args.json, result)
    return result


if __name__ == "__main__":
    main()
