"""Search latency with and without a scope, on an indexed copy of a data set.

    python bench/speed.py ../shared/data/office-dev-en     # makes and indexes the copy
    python bench/scopes.py ../shared/data/office-dev-en

Searches run warm and without their refresh step (`refresh=False`: the scope's cost, not the
walk's), interleaved query by query so every variant sees the same machine load: no scope;
`under` the folder holding the most notes, and a glob holding about half; `after` the median
modification time (about half); `under` and `after` together. Each scope is timed as a new
one for each query, and repeated (the collection keeps the last scope's notes). The queries
are note titles (as in bench/speed.py). The copy is only read: nothing in it is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from speed import note_titles  # noqa: E402

from memo_core import Scope  # noqa: E402

MODES = ("lex", "vec", "hybrid")
FAR = datetime(2999, 1, 1)


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("dataset", type=Path, help="the data set (its notes give the queries)")
    p.add_argument("--copy", type=Path, help="the indexed copy (default: bench/speed.py's)")
    p.add_argument("--queries", type=int, default=200, help="search queries (note titles)")
    p.add_argument("--k", type=int, default=8, help="hits per search (the default of memo)")
    p.add_argument("--json", type=Path, help="also write the figures here")
    C.add_model_args(p)
    return p.parse_args(argv)


def scopes(s) -> dict[str, tuple[Scope | None, float]]:
    """The scopes measured, each with the share of the copy's notes it holds."""
    (coll,) = s.collections
    with C.reading(coll) as store:
        files = list(store.db.execute("SELECT path, mtime_ns FROM files"))
    # As a user writes them, whatever the data set's names are: the folder holding the most
    # notes; a glob on the first letter of the file name (about half, and with two runs it
    # goes through the linear matcher); the median modification time.
    folder = statistics.mode(p.rsplit("/", 1)[0] for p, _ in files if "/" in p)
    half = "**/[a-l]*.md"
    after = _iso(sorted(m for _, m in files)[len(files) // 2])
    made = {
        "none": None,
        f"under {folder}": Scope.parse(under=folder),
        f"under {half}": Scope.parse(under=half),
        "after median": Scope.parse(after=after),
        f"under {folder} + after": Scope.parse(under=folder, after=after),
    }
    return {name: (scope, _share(scope, files)) for name, scope in made.items()}


def fresh(scope: Scope | None, i: int) -> Scope | None:
    """`scope` made new for query i (a collection keeps the last scope's notes): the same
    notes, through a `before` far in the future that differs by i microseconds."""
    if scope is None:
        return None
    return dataclasses.replace(scope, before=scope.before or FAR + timedelta(microseconds=i))


def _iso(ns: int) -> str:
    """A modification time as a local ISO date and time, to the microsecond."""
    return datetime.fromtimestamp(ns // 1000 / 1e6).isoformat()


def _share(scope: Scope | None, files: list[tuple[str, int]]) -> float:
    if scope is None:
        return 1.0
    test = scope.path_test() or (lambda _: True)
    low, high = scope.after_ns or -(2**63), scope.before_ns or 2**63
    return sum(test(p) and low <= m <= high for p, m in files) / len(files)


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    C.apply_model_args(args)
    copy = args.copy or args.workdir / "speed" / args.dataset.resolve().name
    modes = [m for m in MODES if not args.no_model or m == "lex"]
    queries = note_titles(C.corpus_dir(args.dataset), args.queries)
    with C.searcher(copy, C.get_embedder(args)) as s:
        measured = scopes(s)
        # Each scope twice: a new one for each query (its notes looked up afresh), interleaved
        # query by query; and the same one for query after query (the next page, follow-ups:
        # the collection keeps the last scope's notes), scope by scope, "none" too: each phase
        # has its own unscoped figure to compare with, measured under the same load.
        variants = [(m, name, again) for m in modes for name in measured for again in (False, True)]
        for q in queries[:5]:  # warm: the model, the vectors, SQLite's pages
            for mode, name, _ in variants:
                s.search(q, k=args.k, mode=mode, refresh=False, scope=measured[name][0])
        times: dict[tuple[str, str, bool], list[float]] = {v: [] for v in variants}

        def timed(mode: str, scope: Scope | None, q: str) -> float:
            return C.timed(lambda: s.search(q, k=args.k, mode=mode, refresh=False, scope=scope))[0]

        for i, q in enumerate(queries):
            for mode, name, again in variants:
                if not again:
                    times[(mode, name, again)].append(timed(mode, fresh(measured[name][0], i), q))
        for mode, name, again in variants:
            if again:
                times[(mode, name, again)] = [timed(mode, measured[name][0], q) for q in queries]
    out = {
        "dataset": str(args.dataset),
        "copy": str(copy),
        "engine": C.engine_version(),
        "queries": len(queries),
        "latency": {
            f"{mode} / {name}{' (repeated)' if again else ''}": {
                "share": measured[name][1],
                "p50_ms": C.pct(ts, 50) * 1000,
                "p95_ms": C.pct(ts, 95) * 1000,
            }
            for (mode, name, again), ts in times.items()
        },
    }
    print(f"engine {out['engine']}; {len(queries)} queries (note titles), k={args.k}, warm")
    for key, v in out["latency"].items():
        print(
            f"  {key:52} {v['share']:6.1%} of notes  "
            f"p50 {v['p50_ms']:6.1f} ms  p95 {v['p95_ms']:6.1f} ms"
        )
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
