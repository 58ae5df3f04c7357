"""Russian morphology: the Snowball stemmer (memo's) against pymorphy3 lemmas, by words only.

    pip install pymorphy3 pymorphy3-dicts-ru     # not memo's dependencies: for this bench
    python bench/morphology.py ../shared/data/office-dev-en ../shared/data/office-dev-ru

The Russian notes are indexed twice (words only, a scratch copy each), once with each
normaliser for Cyrillic words (everything else unchanged), and the Russian queries of
crossling.py's judged set (ru→ru, train and test) are searched in `lex` mode. Printed: index
time, nDCG@10 / MRR@10 of each, and the paired difference with its 95 % interval. The
lemmatiser is swapped in for this process only (textnorm's Russian stemmer object).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from crossling import judged_sets, ranked_files  # noqa: E402

from memo_core import Engine
from memo_core.text import textnorm  # noqa: E402


class Lemmas:
    """pymorphy3's most likely normal form, with Snowball's `stemWord` interface."""

    def __init__(self) -> None:
        import pymorphy3

        self._morph = pymorphy3.MorphAnalyzer()

    @lru_cache(maxsize=500_000)  # noqa: B019 (one object for the process)
    def stemWord(self, word: str) -> str:  # noqa: N802 (Snowball's name)
        return self._morph.parse(word)[0].normal_form.replace("ё", "е")


def run(ru: Path, work: Path, sets: dict[str, list[tuple[str, str]]]) -> dict:
    root = work / "notes"
    shutil.copytree(ru, root, ignore=shutil.ignore_patterns(".memo"))
    out: dict = {}
    with Engine(refresh_budget_s=None) as engine:
        t = time.perf_counter()
        engine.refresh(root, embed=False)
        out["index_s"] = time.perf_counter() - t
        for split, queries in sets.items():
            ndcg, mrr = [], []
            t = time.perf_counter()
            for query, answer in queries:
                hits = engine.search(root, query, k=50, mode="lex", refresh=False)
                files = ranked_files(hits)
                ndcg.append(C.ndcg(files, {answer: 1}))
                mrr.append(C.mrr(files, {answer: 1}))
            out[split] = {"ndcg": ndcg, "mrr": mrr, "s": time.perf_counter() - t}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("en", type=Path)
    ap.add_argument("ru", type=Path)
    ap.add_argument("--queries", type=int, default=300)
    a = ap.parse_args()
    sets = {s: judged_sets(a.en, a.ru, a.queries, s)["ru→ru"] for s in ("train", "test")}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("snowball", "pymorphy3"):
            if name == "pymorphy3":
                textnorm._ru = Lemmas()  # type: ignore[assignment]
                textnorm._stem.cache_clear()
            results[name] = run(a.ru, Path(tmp) / name, sets)
            print(f"{name}: index {results[name]['index_s']:.1f} s (words only)", flush=True)
    for split in sets:
        line = [f"[{split}, {len(sets[split])} queries]"]
        for name, r in results.items():
            nd, _ = C.mean_ci(r[split]["ndcg"])
            mr, _ = C.mean_ci(r[split]["mrr"])
            line.append(f"{name} nDCG@10 {nd:.4f} MRR@10 {mr:.4f} ({r[split]['s']:.1f} s)")
        diff = [
            b - s
            for s, b in zip(
                results["snowball"][split]["ndcg"], results["pymorphy3"][split]["ndcg"], strict=True
            )
        ]
        m, ci = C.mean_ci(diff)
        line.append(f"pymorphy3 − snowball {m:+.4f} ±{ci:.4f}")
        print("; ".join(line))


if __name__ == "__main__":
    main()
