"""What the word score's extras cost a search: the same searches with none of them, with the
name match only (as before titles), with names and title exactness, and with proximity on
top (the engine's default), side by side in one process (interleaved, so the machine's
noise falls on all alike).

    python bench/wordscore.py ../shared/data/office-dev-en ../shared/data/office-dev-ru

Queries: the en→en train queries of crossling.py over office-dev-en (page titles and
descriptions, half of which name a page); one word that is in every note's path ("docs":
every candidate is named, the most work the name boost can have); with `--scifact DIR`,
SciFact's train claims over SciFact (long queries: the most word pairs for proximity).
Printed: p50 / p90 ms per setting and mode.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import crossling  # noqa: E402

from memo_core import Engine, ModelSource, Tuning  # noqa: E402

SETTINGS = {
    "off": Tuning(heading_match_boost=0.0, title_exact_boost=0.0, proximity_weight=0.0),
    "match": Tuning(heading_match_boost=1.0, title_exact_boost=0.0, proximity_weight=0.0),
    "names": Tuning(proximity_weight=0.0),
    "now": Tuning(),
}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("en", type=Path)
    p.add_argument("ru", type=Path)
    p.add_argument("--queries", type=int, default=150)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--scifact", type=Path, default=None)
    C.add_model_args(p)
    args = p.parse_args(argv)
    C.apply_model_args(args)
    embedder = C.get_embedder(args)
    root = C.cached_index(args.en, args.workdir, Tuning(), embedder)[0]
    pairs = crossling.judged_sets(args.en, args.ru, args.queries, "train")["en→en"]
    sets = {"titles": (root, [q for q, _ in pairs]), "docs": (root, ["docs"] * 20)}
    if args.scifact:
        claims = list(C.load_queries(C.split_files(args.scifact, "train")[0]).values())
        sci = C.cached_index(args.scifact, args.workdir, Tuning(), embedder)[0]
        sets["claims"] = (sci, claims[: args.queries])
    engines = {n: Engine(models=ModelSource(embedder), tuning=t) for n, t in SETTINGS.items()}
    out: dict = {}
    try:
        for label, (root, queries) in sets.items():
            for mode in ("lex", "hybrid"):
                times: dict[str, list[float]] = {n: [] for n in engines}
                for _ in range(args.rounds):
                    for q in queries:
                        for n, e in engines.items():
                            t = time.perf_counter()
                            e.search(root, q, k=8, mode=mode, refresh=False)
                            times[n].append(time.perf_counter() - t)
                row = {
                    n: (statistics.median(v) * 1000, C.pct(v, 90) * 1000) for n, v in times.items()
                }
                out[f"{label} {mode}"] = row
                print(
                    f"{label:7} {mode:7} "
                    + "  ".join(f"{n}: p50 {a:.1f} ms p90 {b:.1f} ms" for n, (a, b) in row.items()),
                    flush=True,
                )
    finally:
        for e in engines.values():
            e.close()
    return out


if __name__ == "__main__":
    main()
