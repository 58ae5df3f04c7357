"""Retrieval quality of memo on a BEIR-style data set: nDCG@10, Recall@10, MRR@10 per mode.

    python bench/quality.py ../shared/data/scifact-en [--split test|train]

Each query is searched with k=100 chunks (`--k`); the hits are reduced to files in the order
of each file's first hit, and the first 10 files are scored against the qrels. The data set's
notes are copied and indexed under the work folder (/tmp/memo-bench), once per chunk size
and model, and the index is reused by later runs. Searches run without the refresh step.

Knobs (for trying tuned settings; defaults are the engine's): --chunk-chars,
--dense-weight, --fusion-candidates, --heading-weight.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

MODES = ("lex", "vec", "hybrid")


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("dataset", type=Path, help="folder with corpus/, queries*.jsonl, qrels*.tsv")
    p.add_argument("--split", default="test", help="test (queries.jsonl) or train")
    p.add_argument("--k", type=int, default=100, help="chunks retrieved per query")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--limit", type=int, default=0, help="only the first N queries")
    p.add_argument("--chunk-chars", type=int, default=None)
    p.add_argument("--dense-weight", type=float, default=None)
    p.add_argument("--fusion-candidates", type=int, default=None)
    p.add_argument("--heading-weight", type=float, default=None)
    p.add_argument("--folders", type=int, default=1, help="deal the notes into N collections")
    p.add_argument("--json", type=Path, default=None, help="write the figures here too")
    C.add_model_args(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    C.apply_model_args(args)
    tuning = C.tuning_from(
        chunk_chars=args.chunk_chars,
        dense_weight=args.dense_weight,
        fusion_candidates=args.fusion_candidates,
        heading_weight=args.heading_weight,
    )
    knobs = C.knobs_of(tuning)
    embedder = C.get_embedder(args)
    modes = [m for m in args.modes.split(",") if m]
    if embedder is None:
        modes = [m for m in modes if m == "lex"]
    qpath, rpath = C.split_files(args.dataset, args.split)
    queries, qrels = C.load_queries(qpath), C.load_qrels(rpath)
    qids = [q for q in queries if q in qrels]
    if args.limit:
        qids = qids[: args.limit]

    root, built = C.cached_index(args.dataset, args.workdir, tuning, embedder, folders=args.folders)
    out: dict = {
        "dataset": str(args.dataset),
        "split": args.split,
        "queries": len(qids),
        "k_chunks": args.k,
        "knobs": knobs,
        "model": embedder.model_id if embedder is not None else None,
        "engine": C.engine_version(),
        "index": {"path": str(root), **built},
        "modes": {},
    }
    print(
        f"{args.dataset} [{args.split}] {len(qids)} queries, k={args.k} chunks -> top 10 files; "
        f"knobs {knobs}; model {out['model']}; engine {out['engine']}"
    )
    with C.searcher(root, embedder, tuning) as s:
        sts = s.status()
        out["index"].update(
            files=sum(st.files for st in sts),
            chunks=sum(st.chunks for st in sts),
            collections=len(sts),
        )
        search = s.search
        one_sided = {"any": 0, "lex_only": 0, "vec_only": 0, "relevant": 0}
        for mode in modes:
            per: dict[str, list[float]] = {"ndcg": [], "recall": [], "mrr": []}
            t0 = time.perf_counter()
            for qid in qids:
                hits = search(queries[qid], k=args.k, mode=mode, refresh=False)
                files = C.files_in_order((h.path for h in hits), 10)
                rels = qrels[qid]
                per["ndcg"].append(C.ndcg(files, rels))
                per["recall"].append(C.recall(files, rels))
                per["mrr"].append(C.mrr(files, rels))
                if mode == "hybrid":
                    sides: dict[str, set[str]] = {}
                    for h in hits:
                        name = C.files_in_order([h.path], 1)[0]
                        if name in files:
                            sides.setdefault(name, set()).update(h.found_by)
                    lone = {f: s_ for f, s_ in sides.items() if len(s_) == 1}
                    one_sided["any"] += bool(lone)
                    one_sided["lex_only"] += any(s_ == {"lex"} for s_ in lone.values())
                    one_sided["vec_only"] += any(s_ == {"vec"} for s_ in lone.values())
                    one_sided["relevant"] += any(rels.get(f, 0) > 0 for f in lone)
            dt = time.perf_counter() - t0
            res = {}
            for name, xs in per.items():
                m, ci = C.mean_ci(xs)
                res[name] = round(m, 4)
                res[f"{name}_ci95"] = round(ci, 4)
            res["seconds"] = round(dt, 2)
            out["modes"][mode] = res
            out["_per_query_" + mode] = per["ndcg"]
        n = max(1, len(qids))
        if "hybrid" in modes:
            out["hybrid_one_sided_share"] = {k: round(v / n, 4) for k, v in one_sided.items()}

    print(f"{'mode':8} {'nDCG@10':>16} {'Recall@10':>10} {'MRR@10':>8} {'time':>8}")
    for mode, r in out["modes"].items():
        print(
            f"{mode:8} {r['ndcg']:>8.4f} ±{r['ndcg_ci95']:.3f}  {r['recall']:>10.4f} "
            f"{r['mrr']:>8.4f} {r['seconds']:>7.1f}s"
        )
    if "hybrid" in out["modes"]:
        hyb = out["_per_query_hybrid"]
        for other in ("lex", "vec"):
            if other in out["modes"]:
                o = out["_per_query_" + other]
                wins = sum(a > b for a, b in zip(hyb, o, strict=True))
                losses = sum(a < b for a, b in zip(hyb, o, strict=True))
                out[f"hybrid_vs_{other}"] = {"better": wins, "worse": losses}
                print(f"hybrid vs {other}: better on {wins} queries, worse on {losses}")
        sh = out["hybrid_one_sided_share"]
        print(
            "hybrid top 10 holds a file found by one side only: "
            f"{sh['any']:.1%} of queries (lex only {sh['lex_only']:.1%}, vec only "
            f"{sh['vec_only']:.1%}; such a file is relevant in {sh['relevant']:.1%})"
        )
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
