"""Sweep memo's ranking knobs on a data set's TRAIN split and print what each setting gives.

    python bench/tune.py ../shared/data/scifact-en --split train

Knobs (fields of `memo_core.Tuning`): chunk size (`chunk_max_chars`, one index per value,
cached under the work folder), bm25 column weights (`heading_weight`, `body_weight`),
candidates fused per side (`max(k, fusion_candidates)`) and the dense weight of the min-max
score fusion (`dense_weight`); reciprocal-rank fusion (k=60) is shown for comparison.
Protocol as bench/quality.py: k=100 chunks, deduplicated to the first 10 files.
Per query the word and vector rankings are computed once per index (and weights), so the
fusion sweep costs no SQL.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402


def floats(s: str) -> list[float]:
    return [float(x) for x in s.split(",") if x]


def ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x]


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("dataset", type=Path)
    p.add_argument("--split", default="train")
    p.add_argument("--k", type=int, default=100, help="chunks kept after fusion")
    p.add_argument("--chunks", type=ints, default=ints("600,1200,2000,100000"))
    p.add_argument("--heading-weights", type=floats, default=floats("1,2,4"))
    p.add_argument("--candidates", type=ints, default=ints("100,200,400"))
    p.add_argument(
        "--dense-weights", type=floats, default=floats("0,0.1,0.2,0.25,0.3,0.35,0.4,0.5,0.6,1")
    )
    p.add_argument("--limit", type=int, default=0, help="only the first N queries")
    p.add_argument("--top", type=int, default=15, help="rows of the overall table")
    p.add_argument("--json", type=Path, default=None)
    C.add_model_args(p)
    return p.parse_args(argv)


def rrf(lex, vec, k: int = 60):
    score: dict[int, float] = {}
    for side in (lex, vec):
        for r, (cid, _) in enumerate(side):
            score[cid] = score.get(cid, 0.0) + 1.0 / (k + r + 1)
    return sorted(((c, s, ()) for c, s in score.items()), key=lambda t: (-t[1], t[0]))


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    C.apply_model_args(args)
    from memo_core.search.fusion import fuse
    from memo_core.text import textnorm

    embedder = C.get_embedder(args)
    qpath, rpath = C.split_files(args.dataset, args.split)
    queries, qrels = C.load_queries(qpath), C.load_qrels(rpath)
    qids = [q for q in queries if q in qrels]
    if args.limit:
        qids = qids[: args.limit]
    texts = [queries[q] for q in qids]
    t0 = time.perf_counter()
    qvecs = embedder.embed(texts, query=True) if embedder is not None else None
    print(
        f"{args.dataset} [{args.split}] {len(qids)} queries"
        + (f", embedded in {time.perf_counter() - t0:.1f} s" if embedder is not None else "")
    )
    terms = [textnorm.query_terms(t) for t in texts]
    depth = max([args.k, *args.candidates])
    dws = args.dense_weights if embedder is not None else []
    rows: list[dict] = []

    def score(ranked_ids, id2file) -> list[str]:
        return C.files_in_order((id2file[c] for c in ranked_ids if c in id2file), 10)

    def evaluate(name: dict, rankings: list[list[str]]) -> dict:
        nd = [C.ndcg(f, qrels[q]) for f, q in zip(rankings, qids, strict=True)]
        rc = [C.recall(f, qrels[q]) for f, q in zip(rankings, qids, strict=True)]
        mr = [C.mrr(f, qrels[q]) for f, q in zip(rankings, qids, strict=True)]
        n = max(1, len(qids))
        row = {**name, "ndcg": sum(nd) / n, "recall": sum(rc) / n, "mrr": sum(mr) / n}
        rows.append(row)
        return row

    builds = {}
    for chunk in args.chunks:
        tuning = C.tuning_from(chunk_chars=chunk)
        root, built = C.cached_index(args.dataset, args.workdir, tuning, embedder)
        builds[chunk] = built
        with C.searcher(root, embedder, tuning) as s:
            coll = s.collections[0]
            with C.reading(coll) as store:
                id2file = {
                    cid: path.rsplit("/", 1)[-1]
                    for cid, path in store.db.execute(
                        "SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id"
                    )
                }
                n_chunks = len(id2file)
                vecs = qvecs if qvecs is not None else []
                knn = [C.knn(coll, store, v, depth) for v in vecs]
                if knn:
                    r = evaluate(
                        {"chunk": chunk, "mode": "vec", "hw": "-", "n": args.k, "dw": 1.0},
                        [score([c for c, _ in x[: args.k]], id2file) for x in knn],
                    )
                    print(f"chunks {chunk} ({n_chunks} chunks): vec nDCG@10 {r['ndcg']:.4f}")
                for hw in args.heading_weights:
                    lex = [store.lex(t, depth, (hw, 1.0)) for t in terms]
                    r = evaluate(
                        {"chunk": chunk, "mode": "lex", "hw": hw, "n": args.k, "dw": 0.0},
                        [score([c for c, _ in x[: args.k]], id2file) for x in lex],
                    )
                    line = f"chunks {chunk} heading x{hw:g}: lex {r['ndcg']:.4f}"
                    if knn:
                        best = None
                        for n in args.candidates:
                            for dw in dws:
                                r = evaluate(
                                    {"chunk": chunk, "mode": "hybrid", "hw": hw, "n": n, "dw": dw},
                                    [
                                        score(
                                            [c for c, _, _ in fuse(a[:n], b[:n], dw)[: args.k]],
                                            id2file,
                                        )
                                        for a, b in zip(lex, knn, strict=True)
                                    ],
                                )
                                best = r if best is None or r["ndcg"] > best["ndcg"] else best
                            r = evaluate(
                                {"chunk": chunk, "mode": "rrf60", "hw": hw, "n": n, "dw": "-"},
                                [
                                    score([c for c, _, _ in rrf(a[:n], b[:n])[: args.k]], id2file)
                                    for a, b in zip(lex, knn, strict=True)
                                ],
                            )
                        line += (
                            f"; best hybrid {best['ndcg']:.4f} (n {best['n']}, dense {best['dw']})"
                            f"; rrf {r['ndcg']:.4f}"
                        )
                    print(line, flush=True)

    print()
    _table("per chunk size and mode, best row each", _best_per(rows, ("chunk", "mode")))
    if dws:
        _table(
            "hybrid: dense weight (heading x2; n as Searcher at k=100 with the first --candidates)",
            [
                r
                for r in rows
                if r["mode"] == "hybrid" and r["hw"] == 2.0 and r["n"] == args.candidates[0]
            ],
        )
        _table(
            "hybrid: candidates per side, best dense weight each",
            _best_per([r for r in rows if r["mode"] == "hybrid"], ("chunk", "n")),
        )
        _table(
            "hybrid: heading weight, best dense weight each",
            _best_per([r for r in rows if r["mode"] == "hybrid"], ("chunk", "hw")),
        )
    _table(f"all, top {args.top} by nDCG@10", sorted(rows, key=lambda r: -r["ndcg"])[: args.top])
    best = max(
        (r for r in rows if r["mode"] == ("hybrid" if dws else "lex")), key=lambda r: r["ndcg"]
    )
    print(f"best: {best}")
    out = {"split": args.split, "queries": len(qids), "builds": builds, "rows": rows, "best": best}
    C.write_json(args.json, out)
    return out


def _best_per(rows: list[dict], keys: tuple[str, ...]) -> list[dict]:
    best: dict[tuple, dict] = {}
    for r in rows:
        key = tuple(r[k] for k in keys)
        if key not in best or r["ndcg"] > best[key]["ndcg"]:
            best[key] = r
    return list(best.values())


def _table(title: str, rows: list[dict]) -> None:
    print(f"== {title}")
    print(
        f"{'chunk':>7} {'mode':7} {'head':>5} {'n':>4} {'dense':>6} "
        f"{'nDCG@10':>8} {'R@10':>7} {'MRR':>7}"
    )
    for r in rows:
        dw = r["dw"] if isinstance(r["dw"], str) else f"{r['dw']:.2f}"
        hw = r["hw"] if isinstance(r["hw"], str) else f"{r['hw']:g}"
        print(
            f"{r['chunk']:>7} {r['mode']:7} {hw:>5} {r['n']:>4} {dw:>6} "
            f"{r['ndcg']:>8.4f} {r['recall']:>7.4f} {r['mrr']:>7.4f}"
        )
    print()


if __name__ == "__main__":
    main()
