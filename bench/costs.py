"""What each model setup costs to index and serve, side by side in one run.

    python bench/costs.py [--models default,use-m3] [--pages 300] [--rounds 2]
        [--serve] [--warm] [--whole] [--json out.json]

Models are named as `MEMO_MODEL` names them ("default": unset, memo's default, e5-small and
use-m3 as one), installed in memo's cache, or `dir:PATH` for a model folder
(`MEMO_MODEL_DIR`). The pages are a fixed sample of office-dev-ru (`--data`: another folder).

1. `memo index` of a fresh copy of `--pages` pages, in a fresh process per model, the
   models taking turns, `--rounds` rounds: seconds (every pass: words, passages' vectors,
   sentences' where the model takes a second look) and peak RSS (`/usr/bin/time`); the
   ratio of each model's total to the last one's.
2. `--serve`: memo-mcp over a fresh copy of the pages, per model: `memo_search` until an
   answer carries no notice (every pass done; indexing goes on between calls), then ten
   more; the server's peak (VmHWM) and resident memory at the end.
3. `--warm`: warm hybrid searches in one process over the indexed copy (each query three
   times, the median of all), beside the query's embedding alone.
4. `--whole`: `memo index` of the whole office-dev-ru folder with the first model: seconds.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

DATA = C.REPO.parent / "shared" / "data" / "office-dev-ru"
MEMO = str(Path(sys.executable).with_name("memo"))  # the console script beside this Python
QUERIES = [
    "как настроить резервное копирование", "how do I restore files from backup",
    "что взять с собой в поездку", "difference between let and var",
    "свойство PR_MESSAGE_FLAGS", "send mail from an Outlook macro", "ошибка при запуске",
    "named properties of an appointment", "How do I add a custom ribbon button in Excel?",
    "Как получить список всех папок почтового ящика через MAPI?",
]  # fmt: skip


def env_of(model: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMO_MODEL", "MEMO_MODEL_DIR")}
    if model.startswith("dir:"):
        env["MEMO_MODEL_DIR"] = model[4:]
    elif model != "default":
        env["MEMO_MODEL"] = model
    return env | extra


def sample(data: Path, pages: int, seed: int = 7) -> list[Path]:
    files = sorted(data.rglob("*.md"))
    random.Random(seed).shuffle(files)
    return files[:pages]


def copy_of(files: list[Path], folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    base = Path(os.path.commonpath([f.parent for f in files]))
    for f in files:
        target = folder / f.relative_to(base)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.read_bytes())
    (folder / "README.md").write_text("# office-dev-ru (a sample)\n", encoding="utf-8")
    return folder


def memo_index(folder: Path, model: str) -> tuple[float, float]:
    """(seconds, peak RSS MB) of `memo index folder` in a fresh process."""
    t0 = time.perf_counter()
    run = subprocess.run(
        ["/usr/bin/time", "-f", "%M", MEMO, "index", str(folder)],
        env=env_of(model),
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - t0
    return seconds, int(run.stderr.strip().splitlines()[-1]) / 1024


def index_rounds(files: list[Path], models: list[str], rounds: int, work: Path) -> dict:
    out: dict[str, dict] = {m: {"seconds": [], "peak_mb": []} for m in models}
    for r in range(rounds):
        for model in models if r % 2 == 0 else models[::-1]:
            s, mb = memo_index(copy_of(files, work / "copy"), model)
            out[model]["seconds"].append(round(s, 1))
            out[model]["peak_mb"].append(round(mb))
            print(f"  round {r + 1}, {model}: {s:.1f} s, peak {mb:.0f} MB", flush=True)
    last = sum(out[models[-1]]["seconds"])
    for model in models:
        out[model]["over_" + models[-1]] = round(sum(out[model]["seconds"]) / last, 2)
    return out


def serve(files: list[Path], model: str, work: Path) -> dict:
    folder = copy_of(files, work / "served")
    env = env_of(model, MEMO_ROOTS=str(work))
    return C.serve_until_complete(env, folder, QUERIES, QUERIES)


def warm(folder: Path, model: str) -> dict:
    """Warm hybrid searches in this process, beside the query's embedding alone."""
    saved = dict(os.environ)
    wanted = env_of(model)  # read before anything changes: it starts from this environment
    for k in ("MEMO_MODEL", "MEMO_MODEL_DIR"):
        os.environ.pop(k, None)
    os.environ.update(wanted)
    try:
        from memo_core import Engine, ModelSource

        with Engine(models=ModelSource(auto_install=False)) as e:
            e.search(folder, QUERIES[0])  # loads the model and the vectors
            model_obj = e.models.get()
            search, embed = [], []
            for _ in range(3):
                for q in QUERIES:
                    t = time.perf_counter()
                    e.search(folder, q, refresh=False)
                    search.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    model_obj.embed([q], query=True)
                    embed.append(time.perf_counter() - t)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {
        "hybrid_median_ms": round(statistics.median(search) * 1000, 1),
        "embed_median_ms": round(statistics.median(embed) * 1000, 1),
    }


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--models", default="default,use-m3")
    p.add_argument("--pages", type=int, default=300)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--serve", action="store_true")
    p.add_argument("--warm", action="store_true")
    p.add_argument("--whole", action="store_true")
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    models = args.models.split(",")
    files = sample(args.data, args.pages)
    out: dict = {"engine": C.engine_version(), "pages": len(files), "models": models}
    print(f"engine {out['engine']}; {len(files)} pages of {args.data.name}; models {models}")
    with tempfile.TemporaryDirectory(prefix="memo-costs-") as tmp:
        work = Path(tmp)
        # --rounds 0: no index rounds (serve, warm or whole alone).
        out["index"] = runs = index_rounds(files, models, args.rounds, work) if args.rounds else {}
        for model, r in runs.items():
            print(f"memo index, {model}: {sum(r['seconds']):.1f} s in all, peak "
                  f"{max(r['peak_mb'])} MB, {r['over_' + models[-1]]}x {models[-1]}")  # fmt: skip
        if args.warm:
            memo_index(copy_of(files, work / "warm"), models[0])
            out["warm"] = w = warm(work / "warm", models[0])
            print(f"warm hybrid, {models[0]}: median {w['hybrid_median_ms']} ms (the query's "
                  f"embedding alone {w['embed_median_ms']} ms)")  # fmt: skip
        if args.serve:
            out["serve"] = {}
            for model in models:
                out["serve"][model] = sv = serve(files, model, work)
                print(f"memo-mcp, {model}: complete after {sv['complete_after_s']} s "
                      f"({sv['searches']} searches); peak {sv['peak_mb']} MB, resident "
                      f"{sv['rss_mb']} MB after 10 more")  # fmt: skip
        if args.whole:
            folder = work / "whole"
            shutil.copytree(args.data, folder)
            s, mb = memo_index(folder, models[0])
            out["whole"] = {"seconds": round(s), "peak_mb": round(mb)}
            print(f"memo index of the whole {args.data.name}, {models[0]}: {s:.0f} s, peak "
                  f"{mb:.0f} MB")  # fmt: skip
            if args.warm:
                out["whole"] |= warm(folder, models[0])
                print(f"  warm hybrid there: median {out['whole']['hybrid_median_ms']} ms")
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
