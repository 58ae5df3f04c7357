"""Try fusion policies offline on train splits: for each query the word and vector rankings
(and the statistics of its words) are taken once from the engine's index, then every policy
ranks them the way the engine would, and nDCG@10 is compared.

    python bench/fusion_lab.py ../shared/data/scifact-en ../shared/data/office-dev-en \
        ../shared/data/office-dev-ru [--queries 300] [--split wide] [--style sentence] \
        [--names] [--proximity]

Sets: SciFact train (its qrels), and the four office-dev directions of crossling.py's train
split. Policies: fixed dense weights, and weights gated by the query's word coverage (the
share of the query's IDF mass that occurs in the searched notes) — see BENCHMARKS.md.
`--names`, `--proximity`: variants of the word score (the name boosts; the proximity
weight and window) compared, lex and hybrid.
`--split wide`: choose on more queries (all of SciFact train; 1,200 office-dev pages: the
train split and the 900 after the test split).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import crossling  # noqa: E402

CANDIDATES = 200


def collect(
    root: Path, queries: list[tuple[str, dict[str, int]]], embedder, tuning, every: bool = False
) -> list:
    """Per query: (lex [(key, score)], vec [(key, score)], signals, key -> file, relevant),
    a chunk's key being (file, line): the same in every model's index of the same notes."""
    from memo_core.search.query import Query
    from memo_core.search.ranking import word_strength
    from memo_core.text import textnorm
    from memo_core.values import MAX_K

    out = []
    with C.searcher(root, embedder, tuning) as s:
        [coll] = s.collections
        with C.reading(coll) as store:
            id2key = {
                cid: (path, line)
                for cid, path, line in store.db.execute(
                    "SELECT c.id, f.path, c.line FROM chunks c JOIN files f ON f.id = c.file_id"
                )
            }
            id2file = {key: key[0] for key in id2key.values()}
            qvecs = embedder.embed([q for q, _ in queries], query=True)
            for (q, rels), qvec in zip(queries, qvecs, strict=True):
                terms = textnorm.query_terms(q)
                asked = Query.of(q, MAX_K, "lex")
                found = C.candidates(
                    coll, store, asked, qvec=None, model_id=None, wanted=CANDIDATES, stats=True
                )
                lex = [(id2key[cid], sc) for cid, sc in found.lex]
                near = C.knn(coll, store, qvec, len(id2key) if every else CANDIDATES)
                vec = [(id2key[cid], sc) for cid, sc in near]
                cov, mass = coverage(store, terms)
                strength = word_strength([found], [1.0], terms)  # the engine's own rule
                out.append((lex, vec, (cov, strength, mass), id2file, rels))
    return out


def coverage(store, terms: list[str]) -> tuple[float, float]:
    """The share of the query's IDF mass whose words occur in the notes, and that mass
    (FTS5's own IDF: log((N - n + 0.5) / (n + 0.5)), at least 1e-6)."""
    n, df = store.term_stats(terms)
    idf = {t: max(1e-6, math.log((n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))) for t in terms}
    total = sum(idf.values())
    return (sum(v for t, v in idf.items() if df.get(t, 0)) / total if total else 0.0), total


def by_mass(lex: list, mass: float, full: float) -> list:
    """Word scores on an absolute scale: a passage's score over the query's IDF mass, 1 from
    `full` on (min-max gives the best match 1 however few of the query's words it holds)."""
    top = mass * full
    return [(cid, min(1.0, sc / top) if top > 0 else 0.0) for cid, sc in lex]


def fuse_absolute(lex: list, vec: list, weight: float, mass: float, full: float) -> list:
    """fusion.fuse with the word side by `by_mass` instead of min-max (vectors min-max)."""
    from memo_core.search.fusion import minmax

    lex_n, vec_n = dict(by_mass(lex, mass, full)), minmax(vec)
    fused = [
        (key, (1 - weight) * lex_n.get(key, 0.0) + weight * vec_n.get(key, 0.0), ())
        for key in lex_n.keys() | vec_n.keys()
    ]
    fused.sort(key=lambda t: (-t[1], t[0]))
    return fused


def _ndcg_of(fused: Iterable, id2file: dict, rels: dict[str, int], by_name: bool) -> float:
    """nDCG@10 of a fused ranking by its first ten files (their names where the judgments
    name files, as SciFact's do)."""
    files: dict[str, None] = {}
    for key, _, _ in fused:
        f = id2file.get(key, key[0])
        files.setdefault(f.rsplit("/", 1)[-1] if by_name else f, None)
        if len(files) >= 10:
            break
    return C.ndcg(list(files), rels)


def score(rows: list, policy: Callable, by_name: bool, full: float | None = None) -> float:
    """Mean nDCG@10 of `rows` fused under `policy` (signals -> the vectors' weight); `full`:
    the word side by the query's IDF mass (`fuse_absolute`), else min-max (the engine's)."""
    from memo_core.search.fusion import fuse

    nd = []
    for lex, vec, signals, id2file, rels in rows:
        if full is None:
            ranked = fuse(lex, vec, policy(signals))
        else:
            ranked = fuse_absolute(lex, vec, policy(signals), signals[2], full)
        nd.append(_ndcg_of(ranked, id2file, rels, by_name))
    return sum(nd) / len(nd)


def score_two(rows: list, other: list, policy: Callable, share: float, by_name: bool) -> float:
    """Mean nDCG@10 with the vector side made of two models' (each min-max normalised,
    `share` of the first), fused with the words as the engine fuses (the first's signals)."""
    from memo_core.search.fusion import fuse, minmax

    nd = []
    for (lex, vec, signals, id2file, rels), (_, vec_b, *_) in zip(rows, other, strict=True):
        a, b = minmax(vec), minmax(vec_b)
        both = [
            (k, share * a.get(k, 0.0) + (1 - share) * b.get(k, 0.0)) for k in a.keys() | b.keys()
        ]
        nd.append(_ndcg_of(fuse(lex, both, policy(signals)), id2file, rels, by_name))
    return sum(nd) / len(nd)


def score_summed(rows: list, other: list, policy: Callable, share: float, by_name: bool) -> float:
    """Mean nDCG@10 with one vector per chunk made of both models' (each unit vector times
    the square root of its share): its cosine is `share` x the first's + the rest x the
    second's, so the index holds one vector and finds the 200 nearest by that sum."""
    from memo_core.search.fusion import fuse

    nd = []
    for (lex, vec, signals, id2file, rels), (_, vec_b, *_) in zip(rows, other, strict=True):
        b = dict(vec_b)
        summed = sorted(
            ((k, share * s + (1 - share) * b[k]) for k, s in vec if k in b), key=lambda t: -t[1]
        )[:CANDIDATES]
        nd.append(_ndcg_of(fuse(lex, summed, policy(signals)), id2file, rels, by_name))
    return sum(nd) / len(nd)


def two_models(args, sets: dict, tuning, policy: Callable, embedder) -> None:
    """The vectors of `--second` beside the first model's: shares of the vector side, each
    side's candidates normalised apart, or one vector per chunk holding both (cosines summed)."""
    import os

    first_dir = os.environ.get("MEMO_MODEL_DIR", "")
    os.environ["MEMO_MODEL_DIR"] = str(Path(args.second).expanduser().resolve())
    second = C.get_embedder(args)
    judged = judged_queries(args, second, tuning)
    other = {name: collect(root, qs, second, tuning, every=True)
             for name, (root, qs, _) in judged.items()}  # fmt: skip
    os.environ["MEMO_MODEL_DIR"] = first_dir
    mine = {name: collect(root, qs, embedder, tuning, every=True)
            for name, (root, qs, _) in judged_queries(args, embedder, tuning).items()}  # fmt: skip
    print(f"{'one vector, first share':26} " + " ".join(f"{name:>8}" for name in sets))
    for share in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3):
        row = [score_summed(mine[n], other[n], policy, share, bn) for n, (_, bn) in sets.items()]
        print(f"{'hybrid, summed ' + format(share, 'g'):26} " + " ".join(f"{v:8.4f}" for v in row))
        row = [score_summed(mine[n], other[n], lambda _s: 1.0, share, bn)
               for n, (_, bn) in sets.items()]  # fmt: skip
        print(f"{'vec, summed ' + format(share, 'g'):26} " + " ".join(f"{v:8.4f}" for v in row))
    print()
    other = {name: [(lx, vc[:CANDIDATES], *rest) for lx, vc, *rest in rows]
             for name, rows in other.items()}  # fmt: skip
    print(f"{'two models: first share':26} " + " ".join(f"{name:>8}" for name in sets))
    for share in (1.0, 0.75, 0.5, 0.25, 0.0):
        row = [score_two(rows, other[name], policy, share, bn) for name, (rows, bn) in sets.items()]
        print(f"{'hybrid, vectors ' + format(share, 'g'):26} " + " ".join(f"{v:8.4f}" for v in row))
        vec_only = [score_two(rows, other[name], lambda _s: 1.0, share, bn)
                    for name, (rows, bn) in sets.items()]  # fmt: skip
        print(
            f"{'vec, vectors ' + format(share, 'g'):26} " + " ".join(f"{v:8.4f}" for v in vec_only)
        )
    print()


def calibrate(sets: dict, embedder, args, tuning) -> None:
    """Cosine of each query's best relevant chunk among the vector candidates (real
    queries), against the best cosine gibberish gets: where a relevance floor can go."""
    import random
    import string

    relevant = []
    for rows, by_name in sets.values():
        for _lex, vec, _sig, id2file, rels in rows:
            best = [
                sc
                for cid, sc in vec
                if rels.get(id2file[cid].rsplit("/", 1)[-1] if by_name else id2file[cid], 0)
            ]
            if best:
                relevant.append(max(best))
    rng = random.Random(5)
    junk = [
        " ".join(
            "".join(rng.choice(string.ascii_lowercase + "абвгдежзиклмнопрст") for _ in range(6))
            for _ in range(rng.randint(1, 3))
        )
        for _ in range(300)
    ]
    ru = args.ru
    if getattr(args, "pages", 0):
        ru = crossling.subsets(args.en, args.ru, args.queries, args.pages, args.workdir)[1]
    root = C.cached_index(ru, args.workdir, tuning, embedder)[0]
    tops = []
    with C.searcher(root, embedder, tuning) as s:
        [coll] = s.collections
        with C.reading(coll) as store:
            for v in embedder.embed(junk, query=True):
                hits = C.knn(coll, store, v, 1)
                tops.append(hits[0][1] if hits else 0.0)
    relevant.sort()
    tops.sort()
    print(
        f"relevant answers' cosine ({len(relevant)} queries): "
        + ", ".join(f"p{q} {C.pct(relevant, q):.3f}" for q in (0.5, 1, 5, 25, 50))
    )
    print(
        f"gibberish's best cosine ({len(tops)} queries): "
        + ", ".join(f"p{q} {C.pct(tops, q):.3f}" for q in (50, 90, 99, 100))
    )
    for floor in (0.15, 0.18, 0.2, 0.22, 0.25, 0.28, 0.3):
        lost = answers_lost(sets, floor, hybrid=True)
        lost_vec = answers_lost(sets, floor, hybrid=False)
        kept = sum(t >= floor for t in tops) / len(tops)
        print(
            f"  floor {floor:.2f}: real queries whose answer leaves the top 10: hybrid "
            f"{lost:.2%}, vec {lost_vec:.2%}; gibberish still answered {kept:.0%}"
        )


def answers_lost(sets: dict, floor: float, *, hybrid: bool) -> float:
    """The share of real queries whose relevant file was in the top 10 (engine's policy)
    and is not once vector-only candidates under `floor` are dropped."""
    from memo_core.search.fusion import fuse

    def top(lex, vec, sig, id2file, by_name) -> set[str]:
        files: dict[str, None] = {}
        for cid, _, _ in fuse(lex, vec, engine_policy(sig) if lex else 1.0):
            f = id2file[cid]
            files.setdefault(f.rsplit("/", 1)[-1] if by_name else f, None)
            if len(files) >= 10:
                break
        return set(files)

    lost = total = 0
    for rows, by_name in sets.values():
        for lex, vec, sig, id2file, rels in rows:
            total += 1
            lexed = {cid for cid, _ in lex}
            kept = [(cid, sc) for cid, sc in vec if sc >= floor or cid in lexed]
            if not hybrid:
                lex, kept = [], [(cid, sc) for cid, sc in vec if sc >= floor]
            before = top(lex, vec, sig, id2file, by_name)
            after = top(lex, kept, sig, id2file, by_name)
            lost += any(rels.get(f, 0) for f in before) and not any(rels.get(f, 0) for f in after)
    return lost / max(1, total)


def judged_queries(args, embedder, tuning) -> dict[str, tuple[Path, list, bool]]:
    """{set: (index root, [(query, relevant)], judged by file name)} of the split."""
    qpath, rpath = C.split_files(args.scifact, "train" if args.split == "wide" else args.split)
    qs, qrels = C.load_queries(qpath), C.load_qrels(rpath)
    sci = [(qs[q], qrels[q]) for q in qs if q in qrels]
    root = C.cached_index(args.scifact, args.workdir, tuning, embedder)[0]
    out = {"scifact": (root, sci if args.split == "wide" else sci[: args.queries], True)}
    en, ru = args.en, args.ru
    if getattr(args, "pages", 0):
        en, ru = crossling.subsets(args.en, args.ru, args.queries, args.pages, args.workdir)
    for direction, pairs in crossling.judged_sets(
        args.en, args.ru, args.queries, args.split, style=args.style
    ).items():
        ds = ru if direction.endswith("ru") else en
        root = C.cached_index(ds, args.workdir, tuning, embedder)[0]
        out[direction] = (root, [(q, {a: 1}) for q, a in pairs], False)
    return out


def compare_tunings(judged: dict, embedder, variants: dict) -> None:
    """Word candidates re-taken under each variant of the word score (name boosts, proximity):
    nDCG@10 of lex alone and of hybrid under the engine's weight policy."""
    print(f"{'word score':26} " + " ".join(f"{name:>8}" for name in judged))
    for label, t in variants.items():
        rows = {n: (collect(root, qs, embedder, t), bn) for n, (root, qs, bn) in judged.items()}
        for mode, policy in (("lex", lambda sig: 0.0), ("hybrid", engine_policy)):
            scores = " ".join(f"{score(r, policy, bn):8.4f}" for r, bn in rows.values())
            print(f"{mode + ' ' + label:26} {scores}", flush=True)
    print()


def naming_variants(tuning) -> dict:
    """Heading match + title exactness boosts, proximity off (as they were chosen)."""
    pairs = ((0.0, 0.0), (1.0, 0.0), (0.5, 0.5), (1.0, 0.5), (1.0, 1.0), (0.5, 1.5), (1.0, 2.0))
    return {
        f"{m:g} + {x:g}": replace(
            tuning, heading_match_boost=m, title_exact_boost=x, proximity_weight=0.0
        )
        for m, x in pairs
    }


def proximity_variants(tuning) -> dict:
    """Proximity weight and window, the name boosts as the engine has them."""
    out = {"near off": replace(tuning, proximity_weight=0.0)}
    for window in (1, 3, 8):
        for weight in (0.1, 0.2):
            out[f"near {window} × {weight:g}"] = replace(
                tuning, proximity_window=window, proximity_weight=weight
            )
    return out


def weight_at_tuning(sig: tuple, tuning) -> float:
    from memo_core.search.fusion import weight_at

    return weight_at(sig[1], tuning)


def engine_policy(sig: tuple[float, float]) -> float:
    """The engine's policy, with its default settings (ranking.word_strength, fusion.weight_at)."""
    from memo_core import Tuning
    from memo_core.search.fusion import weight_at

    return weight_at(sig[1], Tuning())


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("scifact", type=Path)
    p.add_argument("en", type=Path)
    p.add_argument("ru", type=Path)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument(
        "--split",
        default="train",
        choices=("train", "test", "wide"),
        help="tune on train or wide (all SciFact train; office-dev train + 900 more pages)",
    )
    p.add_argument("--pages", type=int, default=0, help="office-dev: index only N pages a set")
    p.add_argument("--style", default="title", choices=("title", "sentence"), help="crossling's")
    p.add_argument("--names", action="store_true", help="also compare the naming boosts")
    p.add_argument("--proximity", action="store_true", help="also compare proximity settings")
    p.add_argument(
        "--absolute", action="store_true", help="also the word side by the query's IDF mass"
    )
    p.add_argument(
        "--capped", action="store_true", help="also policies whose top weight is below 1"
    )
    p.add_argument(
        "--second", type=Path, default=None, help="also fuse this model's vectors with the first's"
    )
    C.add_model_args(p)
    args = p.parse_args(argv)
    C.apply_model_args(args)
    embedder = C.get_embedder(args)
    tuning = C.tuning_from()
    judged = judged_queries(args, embedder, tuning)
    sets = {
        name: (collect(root, qs, embedder, tuning), bn) for name, (root, qs, bn) in judged.items()
    }
    policies: dict[str, Callable[[tuple[float, float, float]], float]] = {}
    for w in (0.0, 0.2, 0.3, 0.5, 0.7, 1.0):
        policies[f"fixed {w}"] = lambda sig, w=w: w
    for w0 in (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5):
        for c in (0.5, 0.75, 1.0, 1.25):
            for power in (0.5, 1.0, 2.0):
                policies[f"strength {w0} c{c:g} p{power:g}"] = lambda sig, w0=w0, c=c, k=power: (
                    1 - (1 - w0) * min(1.0, sig[1] / c) ** k
                )
    if args.capped:  # the vectors' weight at no word strength below 1 (`dense_top`)
        for top in (0.6, 0.7, 0.8, 0.9):
            for w0 in (0.05, 0.1, 0.2, 0.3, 0.4):
                for c in (0.75, 1.0, 1.25, 1.5, 2.0):
                    for power in (0.5, 1.0, 2.0):
                        policies[f"top{top:g} {w0} c{c:g} p{power:g}"] = (
                            lambda sig, t=top, w0=w0, c=c, k=power: (
                                w0 + (t - w0) * (1 - min(1.0, sig[1] / c) ** k)
                            )
                        )
    absolute: dict[str, tuple[Callable, float]] = {}
    if args.absolute:
        for full in (0.5, 1.0, 1.5):
            for w0 in (0.1, 0.2, 0.3, 0.4, 0.5):
                for c in (0.5, 0.75, 1.25):
                    absolute[f"abs{full:g} {w0} c{c:g}"] = (
                        lambda sig, w0=w0, c=c: 1 - (1 - w0) * min(1.0, sig[1] / c) ** 0.5,
                        full,
                    )
    print(f"{'policy':26} " + " ".join(f"{name:>8}" for name in sets))
    out: dict = {}
    for name, (policy, full) in {
        **{n: (pol, None) for n, pol in policies.items()},
        **absolute,
    }.items():
        out[name] = {s: score(rows, policy, by_name, full) for s, (rows, by_name) in sets.items()}
        margin = (
            min(
                v - max(out["fixed 0.0"][k], out["fixed 1.0"][k])
                for k, v in out[name].items()
                if "fixed 0.0" in out and "fixed 1.0" in out
            )
            if "fixed 1.0" in out
            else float("nan")
        )
        print(
            f"{name:26} " + " ".join(f"{v:8.4f}" for v in out[name].values()) + f" {margin:+.4f}",
            flush=True,
        )
    print()
    if args.names:
        compare_tunings(judged, embedder, naming_variants(tuning))
    if args.proximity:
        compare_tunings(judged, embedder, proximity_variants(tuning))
    if args.second:
        own = dict(getattr(embedder, "fusion", {}))
        t = replace(tuning, **own) if own else tuning
        two_models(args, sets, tuning, lambda sig: weight_at_tuning(sig, t), embedder)
    calibrate(sets, embedder, args, tuning)
    for i, what in enumerate(("mean coverage", "mean strength")):
        means = {s: sum(r[2][i] for r in rows) / len(rows) for s, (rows, _) in sets.items()}
        print(f"{what:26} " + " ".join(f"{v:8.3f}" for v in means.values()))
    return out


if __name__ == "__main__":
    main()
