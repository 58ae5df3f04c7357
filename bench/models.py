"""Two models side by side in one run: quality on every set, what indexing and a query cost.

    python bench/models.py ../shared/data/scifact-en ../shared/data/office-dev-en \
        ../shared/data/office-dev-ru --model-dir A --model-dir B [--pages 1200] [--json out]

For each model directory (in the order given): SciFact test (quality.py) and the four
office-dev directions with title and with sentence queries, test split (crossling.py;
`--pages` indexes that many pages of each language: the split's pages and others), lex / vec /
hybrid nDCG@10; the cost of building each index (chunks/s; indexes are cached, so a cost is
the one measured when that index was built, read from its marker); query latency p50/p95 of
hybrid searches over the office-dev English index; and the embedder alone on 64 chunks of
office-dev-ru (tokens/s), measured here, the models one after the other, three rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import crossling  # noqa: E402
import quality  # noqa: E402

from memo_core import load_model_dir  # noqa: E402
from memo_core.text.chunking import chunk_markdown  # noqa: E402


def build_cost(workdir: Path, dataset_name: str, model_id: str) -> dict:
    """What building a cached index cost, from its marker (seconds, chunks, chunks/s)."""
    for marker in (workdir / "idx").glob(f"{dataset_name}*-c*-{model_id}.json"):
        info = json.loads(marker.read_text())
        if info.get("seconds"):
            return {"seconds": round(info["seconds"], 1), "chunks": info["chunks"],
                    "chunks_per_s": round(info["chunks"] / info["seconds"], 2)}  # fmt: skip
    return {}


def embedder_speed(dirs: list[Path], ru: Path, rounds: int = 3) -> dict:
    files = sorted(ru.rglob("*.md"))[2000:2200]
    texts = [c.text[:2000] for f in files for c in chunk_markdown(f.read_text("utf-8"))][:64]
    models = {d: load_model_dir(d) for d in dirs}
    seconds = {d: 0.0 for d in dirs}
    for _ in range(rounds):
        for d, e in models.items():
            t0 = time.perf_counter()
            e.embed(texts)
            seconds[d] += time.perf_counter() - t0
    out = {}
    for d, e in models.items():
        tok = getattr(e, "_tok", None)
        # tokenizers' encodings have .ids; memo's unigram tokenizer gives the ids themselves
        n = sum(len(getattr(enc, "ids", enc)) for enc in map(tok.encode, texts)) if tok else 0
        out[str(d)] = {"chunks_per_s": round(rounds * len(texts) / seconds[d], 2),
                       "tokens_per_s": round(rounds * n / seconds[d]) if n else None}  # fmt: skip
    return out


def latency(root: Path, queries: list[str]) -> dict:
    embedder = C.get_embedder(argparse.Namespace(no_model=False))
    times = []
    with C.searcher(root, embedder, C.tuning_from()) as s:
        s.search(queries[0], mode="hybrid", refresh=False)  # warm
        for q in queries:
            t0 = time.perf_counter()
            s.search(q, mode="hybrid", refresh=False)
            times.append(time.perf_counter() - t0)
    times.sort()
    return {"p50_ms": round(1000 * statistics.median(times), 1),
            "p95_ms": round(1000 * C.pct(times, 95), 1)}  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("scifact", type=Path)
    p.add_argument("en", type=Path)
    p.add_argument("ru", type=Path)
    p.add_argument("--model-dir", type=Path, action="append", required=True)
    p.add_argument("--pages", type=int, default=1500)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--workdir", type=Path, default=C.DEFAULT_WORKDIR)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    out: dict = {"engine": C.engine_version(), "pages": args.pages, "models": {}}
    common = ["--workdir", str(args.workdir)]
    for d in args.model_dir:
        os.environ["MEMO_MODEL_DIR"] = str(d.resolve())
        model_id = load_model_dir(d).model_id
        print(f"== {d} ({model_id})", flush=True)
        r: dict = {"model_id": model_id}
        r["scifact"] = quality.main([str(args.scifact), "--model-dir", str(d), *common])
        for style in ("title", "sentence"):
            r[style] = crossling.main(
                [str(args.en), str(args.ru), "--model-dir", str(d), "--style", style,
                 "--pages", str(args.pages), "--queries", str(args.queries), *common]
            )  # fmt: skip
        r["build"] = {
            name: build_cost(args.workdir, name, model_id)
            for name in ("scifact-en",
                         f"office-dev-en-p{args.pages}", f"office-dev-ru-p{args.pages}")
        }  # fmt: skip
        sets = crossling.judged_sets(args.en, args.ru, args.queries, "test", style="sentence")
        en = args.en
        if args.pages:
            en = crossling.subsets(args.en, args.ru, args.queries, args.pages, args.workdir)[0]
        embedder = C.get_embedder(argparse.Namespace(no_model=False))
        root_en = C.cached_index(en, args.workdir, C.tuning_from(), embedder)[0]
        r["latency"] = latency(root_en, [q for q, _ in sets["en→en"][:100]])
        out["models"][str(d)] = r
    out["embedder"] = embedder_speed(args.model_dir, args.ru)
    print(json.dumps({k: v for k, v in out.items() if k != "models"}, indent=1))
    for d, r in out["models"].items():
        print(f"{d}: build {r['build']}; latency {r['latency']}")
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
