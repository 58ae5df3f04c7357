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


CROSS = ("en→ru", "ru→en")
GAIN = 0.02  # nDCG@10 a new default must gain on SciFact and on every cross-lingual set
FULL_INDEX_S = 15 * 60  # its first full index of the 5.9k-page folder, on 2 cores


def _hybrid_sets(r: dict) -> dict[str, tuple[float, float, list[float] | None]]:
    """A model's hybrid nDCG@10 per set: (mean, 95 % half-width, per-query values)."""
    sci = r["scifact"]["modes"]["hybrid"]
    out = {"SciFact": (sci["ndcg"], sci["ndcg_ci95"], r["scifact"].get("_per_query_hybrid"))}
    for style in ("title", "sentence"):
        for direction in ("en→ru", "ru→ru", "en→en", "ru→en"):
            h = r[style][direction]["hybrid"]
            out[f"{style} {direction}"] = (h["ndcg"], h["ndcg_ci95"], h.get("_ndcg"))
    return out


def default_verdict(
    new: dict, old: dict, *, full_index_s: float | None = None, first_answer: float | None = None
) -> dict:
    """The rule a model must pass to become the default in place of `old` (both: a model's
    results from `main`): no set loses beyond its interval (the paired 95 % interval of
    the per-query differences where both have them, else the new model's own), a gain of
    at least GAIN on SciFact and on every cross-lingual set, its first full index within
    FULL_INDEX_S (`full_index_s`, measured apart), and a first answer as fast as the old
    one's (`first_answer`: new / old seconds, at most 1.1)."""
    a, b = _hybrid_sets(new), _hybrid_sets(old)
    sets = {}
    for name, (mean, ci, per_query) in a.items():
        old_mean, _, old_per_query = b[name]
        if per_query and old_per_query and len(per_query) == len(old_per_query):
            diff, ci = C.mean_ci([x - y for x, y in zip(per_query, old_per_query, strict=True)])
        else:
            diff = mean - old_mean
        sets[name] = {"diff": round(diff, 4), "ci95": round(ci, 4), "loses": diff + ci < 0}
    gains = ["SciFact", *(f"{s} {d}" for s in ("title", "sentence") for d in CROSS)]
    rules = {
        "no set loses beyond its interval": not any(v["loses"] for v in sets.values()),
        f"gains >= {GAIN} on SciFact and every cross-lingual set": all(
            sets[n]["diff"] >= GAIN for n in gains
        ),
    }
    if full_index_s is not None:
        rules["first full index within 15 minutes"] = full_index_s <= FULL_INDEX_S
    if first_answer is not None:
        rules["first answer as fast as before"] = first_answer <= 1.1
    return {"sets": sets, "rules": rules, "passes": all(rules.values())}


def print_verdict(verdict: dict) -> None:
    for name, v in verdict["sets"].items():
        print(f"  {name:18} {v['diff']:+.4f} ±{v['ci95']:.4f}{'  LOSES' if v['loses'] else ''}")
    for rule, ok in verdict["rules"].items():
        print(f"  {'pass' if ok else 'FAIL'}  {rule}")
    print(f"  the rule {'holds' if verdict['passes'] else 'does not hold'}")


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("scifact", type=Path, nargs="?")
    p.add_argument("en", type=Path, nargs="?")
    p.add_argument("ru", type=Path, nargs="?")
    p.add_argument("--model-dir", type=Path, action="append")
    p.add_argument("--pages", type=int, default=1500)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--workdir", type=Path, default=C.DEFAULT_WORKDIR)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--verdict", type=Path, default=None, help="only the rule, on a --json file")
    p.add_argument("--full-index-s", type=float, default=None, help="the first model's, measured")
    p.add_argument("--first-answer", type=float, default=None, help="first / second, measured")
    args = p.parse_args(argv)
    if args.verdict is None and not (args.model_dir and args.scifact and args.en and args.ru):
        p.error("give SCIFACT EN RU and --model-dir for each model, or --verdict FILE.json")
    if args.verdict is not None:  # the rule on figures kept from an earlier run
        new, old = json.loads(args.verdict.read_text())["models"].values()
        verdict = default_verdict(
            new, old, full_index_s=args.full_index_s, first_answer=args.first_answer
        )
        print_verdict(verdict)
        return verdict
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
    if len(out["models"]) == 2:  # the first as the candidate default, the second as today's
        print("the default rule, the first model against the second:")
        out["verdict"] = default_verdict(*out["models"].values())
        print_verdict(out["verdict"])
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
