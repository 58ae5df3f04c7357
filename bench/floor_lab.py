"""Where "nothing found" begins: relevance-floor rules, per model, on real and nonsense queries.

    python bench/floor_lab.py ../shared/data/scifact-en ../shared/data/office-dev-en \
        ../shared/data/office-dev-ru [--split train|test] [--pages 1200] [--model-dir DIR]

Real queries: SciFact's claims (the split), and office-dev's four directions with title
queries and with sentence queries (crossling.py; `--pages` indexes that many pages of each
language). Nonsense: 400 strings over each language's notes (Latin and Cyrillic letter strings,
keyboard mashes, with digits and capitals; `nonsense()` with seeds the engine does not use).

For each query the vector and word candidates are taken once from the engine's index
(fusion_lab.collect); a rule then gives the query a floor, vector-only candidates under it
are dropped, and we count: real queries whose answer was in the top 10 and is not any more
(vec alone; hybrid under the engine's weight policy), and nonsense queries left with no
answer at all (vec: no candidate over the floor; hybrid: nor a word match). Rules:
`absolute f` (one cosine for every query, the old rule) and `margin m` (the query's cosine
to the model's nonsense centroid + m: a query that looks like nonsense needs closer passages).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import crossling  # noqa: E402
import fusion_lab  # noqa: E402

from memo_core.model.nonsense import nonsense  # noqa: E402
from memo_core.search.fusion import fuse  # noqa: E402


def held_out_nonsense(n: int, seed: int) -> list[str]:
    """Like the engine's nonsense but from other seeds, some with digits and capitals."""
    rng = random.Random(seed)
    out = []
    for s in nonsense(n, seed=seed + 101):
        if rng.random() < 0.25:
            s = s.capitalize() + str(rng.randint(1, 999))
        out.append(s)
    return out


def top_files(lex, vec, sig, id2file, by_name) -> set[str]:
    files: dict[str, None] = {}
    for cid, _, _ in fuse(lex, vec, fusion_lab.engine_policy(sig) if lex else 1.0):
        f = id2file[cid]
        files.setdefault(f.rsplit("/", 1)[-1] if by_name else f, None)
        if len(files) >= 10:
            break
    return set(files)


def lost(rows, floors, by_name: bool, hybrid: bool) -> tuple[int, int]:
    n = gone = 0
    for (lex, vec, sig, id2file, rels), floor in zip(rows, floors, strict=True):
        lexed = {cid for cid, _ in lex} if hybrid else set()
        words = lex if hybrid else []
        kept = [(cid, s) for cid, s in vec if s >= floor or cid in lexed]
        before = top_files(words, vec, sig, id2file, by_name)
        after = top_files(words, kept, sig, id2file, by_name)
        n += 1
        gone += any(rels.get(f, 0) for f in before) and not any(rels.get(f, 0) for f in after)
    return gone, n


def silenced(rows, floors, hybrid: bool) -> tuple[int, int]:
    quiet = 0
    for (lex, vec, *_), floor in zip(rows, floors, strict=True):
        answered = any(s >= floor for _, s in vec) or (hybrid and bool(lex))
        quiet += not answered
    return quiet, len(rows)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("scifact", type=Path)
    p.add_argument("en", type=Path)
    p.add_argument("ru", type=Path)
    p.add_argument("--split", default="train", choices=("train", "test"))
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--pages", type=int, default=0, help="index only N pages of each language")
    p.add_argument("--nonsense", type=int, default=400)
    p.add_argument("--json", type=Path, default=None)
    C.add_model_args(p)
    args = p.parse_args(argv)
    C.apply_model_args(args)
    embedder = C.get_embedder(args)
    tuning = C.tuning_from()

    judged: dict[str, tuple[Path, list, bool]] = {}
    qpath, rpath = C.split_files(args.scifact, args.split)
    qs, qrels = C.load_queries(qpath), C.load_qrels(rpath)
    sci = [(qs[q], qrels[q]) for q in qs if q in qrels][: args.queries]
    judged["scifact"] = (C.cached_index(args.scifact, args.workdir, tuning, embedder)[0], sci, True)
    styles = {s: crossling.judged_sets(args.en, args.ru, args.queries, args.split, style=s)
              for s in ("title", "sentence")}  # fmt: skip
    en, ru = args.en, args.ru
    if args.pages:
        en, ru = crossling.subsets(args.en, args.ru, args.queries, args.pages, args.workdir)
    roots = {lang: C.cached_index(d, args.workdir, tuning, embedder)[0]
             for lang, d in (("en", en), ("ru", ru))}  # fmt: skip
    for style, sets in styles.items():
        for direction, pairs in sets.items():
            judged[f"{direction} {style}"] = (
                roots[direction[-2:]],
                [(q, {a: 1}) for q, a in pairs],
                False,
            )
    junk = held_out_nonsense(args.nonsense, seed=9000 if args.split == "train" else 7000)
    for lang in ("en", "ru"):
        judged[f"nonsense/{lang}"] = (roots[lang], [(q, {}) for q in junk], False)

    rows = {n: (fusion_lab.collect(root, qs, embedder, tuning), bn)
            for n, (root, qs, bn) in judged.items()}  # fmt: skip
    # The query's cosine to the model's nonsense centroid (the engine's own strings).
    centroid = embedder.nonsense_centroid()
    near = {n: embedder.embed([q for q, _ in qs], query=True) @ centroid
            for n, (_, qs, _) in judged.items()}  # fmt: skip

    rules: dict[str, object] = {"none": lambda c: -1.0}
    for f in (0.2, 0.25, 0.3, 0.5, 0.7, 0.75, 0.78, 0.8, 0.82):
        rules[f"absolute {f:g}"] = lambda c, f=f: f
    for m in (-0.2, -0.15, -0.1, -0.08, -0.06, -0.05, -0.04, -0.03, -0.02, 0.0, 0.02, 0.04):
        rules[f"margin {m:+g}"] = lambda c, m=m: c + m
    real = [n for n in rows if not n.startswith("nonsense")]
    out: dict = {"model": embedder.model_id, "split": args.split, "pages": args.pages or "all"}
    print(f"[{args.split}] model {embedder.model_id}; pages {out['pages']}")
    print(f"{'rule':14} {'lost vec':>9} {'lost hyb':>9} {'worst set (hybrid)':>28} "
          f"{'silenced vec':>13} {'silenced hyb':>13}")  # fmt: skip
    for name, rule in rules.items():
        floors = {n: [rule(float(c)) for c in near[n]] for n in rows}  # type: ignore[operator]
        lvs = {n: lost(r, floors[n], bn, hybrid=False) for n, (r, bn) in rows.items() if n in real}
        lv = list(lvs.values())
        worst_vec = max(lvs, key=lambda n: lvs[n][0] / max(1, lvs[n][1]))
        lh = {n: lost(r, floors[n], bn, hybrid=True) for n, (r, bn) in rows.items() if n in real}
        worst = max(lh, key=lambda n: lh[n][0] / max(1, lh[n][1]))
        sv = [silenced(rows[n][0], floors[n], False) for n in rows if n not in real]
        sh = [silenced(rows[n][0], floors[n], True) for n in rows if n not in real]
        share = lambda xs: sum(a for a, _ in xs) / max(1, sum(b for _, b in xs))  # noqa: E731
        out[name] = {
            "lost_vec": share(lv),
            "lost_hybrid": share(list(lh.values())),
            "worst_hybrid": [worst, lh[worst][0] / max(1, lh[worst][1])],
            "worst_vec": [worst_vec, lvs[worst_vec][0] / max(1, lvs[worst_vec][1])],
            "silenced_vec": share(sv),
            "silenced_hybrid": share(sh),
        }
        r = out[name]
        print(f"{name:14} {r['lost_vec']:>9.2%} {r['lost_hybrid']:>9.2%} "
              f"{worst:>20} {r['worst_hybrid'][1]:>6.2%} "
              f"{r['silenced_vec']:>13.1%} {r['silenced_hybrid']:>13.1%}   worst vec: "
              f"{worst_vec} {r['worst_vec'][1]:.2%}", flush=True)  # fmt: skip
    stats = {n: (float(np.median(near[n])), float(np.percentile(near[n], 99))) for n in rows}
    print("cosine to the nonsense centroid (median, p99): "
          + "; ".join(f"{n} {a:.3f}/{b:.3f}" for n, (a, b) in stats.items()))  # fmt: skip
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
