"""Real questions on public documentation, through the engine: is the right page first, in
the top 3, and nDCG@10, per site and direction.

    python bench/realsets.py [--sets k8s-en,vkcloud-ru] [--modes hybrid,vec,lex]
        [--split all|train|test] [--near-duplicate 0.7] [--json out.json]
        [--model-dir DIR | --no-model]

Each set in bench/realsets/<name>/ (SOURCE.md says where its pages come from and under which
licence) is a corpus of Markdown pages (`corpus.tar.xz`, unpacked once into the work folder;
a top-level README.md is added where the pages have none, so the folder is one collection,
as a user pointing memo at it gets) and questions written as readers ask them, in the
pages' language and others (`questions.jsonl`: text, language, and the pages that answer,
graded 2 for the best and 1 for another that answers too). A set's name ends in its pages'
language, so its questions give a direction each (the question's language → the pages').

Searches run through the engine as a user's do (`Searcher.search`, k=10, no refresh). "First"
and "top 3" read the hits as a reader sees them (a page counts once it is shown);
nDCG@10 reads files in the order of their first hit. "Copies": top-3 hits that stand for
near-duplicates (`also_in`); "named": questions whose answer is one of those, named under a
top-3 hit (`--near-duplicate` sweeps the rule's threshold). `--split` halves a set by the parity
of its questions' numbers (train: even), for tuning on one half and reporting the other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

SETS = Path(__file__).resolve().parent / "realsets"
MODES = ("hybrid", "vec", "lex")


def corpus(name: str, workdir: Path, sets: Path = SETS) -> Path:
    """The set's pages unpacked under `workdir` (again only when its tarball changed)."""
    src = sets / name / "corpus.tar.xz"
    dst = workdir / "realsets" / name
    stamp = dst.with_name(name + ".stamp")
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    if not stamp.is_file() or stamp.read_text() != digest:
        shutil.rmtree(dst, ignore_errors=True)
        dst.mkdir(parents=True)
        with tarfile.open(src) as tar:
            tar.extractall(dst, filter="data")
        if not any(dst.glob("*.md")):  # one collection, as a user pointing here gets
            (dst / "README.md").write_text(f"# {name}\n", encoding="utf-8")
        stamp.write_text(digest)
    return dst


def questions(name: str, split: str = "all", sets: Path = SETS) -> list[dict]:
    out = []
    for line in (sets / name / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        number = int("".join(ch for ch in q["id"] if ch.isdigit()) or 0)
        if split == "all" or (number % 2 == 0) == (split == "train"):
            out.append(q)
    return out


def languages(qs: list[dict]) -> list[str]:
    """The questions' languages: English and Russian first, then the rest by name."""
    found = {q["lang"] for q in qs}
    return [x for x in ("en", "ru") if x in found] + sorted(found - {"en", "ru"})


def pages_language(name: str) -> str:
    """A set's pages' language: its name's end (`k8s-en`: en)."""
    return name.rsplit("-", 1)[-1]


def names(sets: Path = SETS) -> list[str]:
    return sorted(p.parent.name for p in sets.glob("*/questions.jsonl"))


def judge(hits: list, answers: dict[str, int]) -> tuple[float, bool, bool]:
    """(nDCG@10 by files in the order of their first hit, right page first, in the top 3)."""
    files: dict[str, None] = {}
    for h in hits:
        files.setdefault(h.relpath, None)
    ndcg = C.ndcg(list(files)[:10], answers)
    shown = [h.relpath for h in hits]
    first = bool(shown) and answers.get(shown[0], 0) > 0
    top3 = any(answers.get(p, 0) > 0 for p in shown[:3])
    return ndcg, first, top3


def run(args: argparse.Namespace) -> dict:
    embedder = C.get_embedder(args)
    tuning = C.tuning_from()
    modes = [m for m in args.modes.split(",") if m and (embedder is not None or m == "lex")]
    out: dict = {"engine": C.engine_version(), "split": args.split, "sets": {}}
    print(f"engine {out['engine']}, model {embedder.model_id if embedder else 'none'}, "
          f"split {args.split}")  # fmt: skip
    print(f"{'set':24} {'mode':7} {'n':>4} {'nDCG@10':>14} {'first':>6} {'top 3':>6} "
          f"{'copies':>6} {'named':>5} {'time':>6}")  # fmt: skip
    for name in args.sets.split(",") if args.sets else names(args.sets_dir):
        pages = corpus(name, args.workdir, args.sets_dir)
        root, built = C.cached_index(pages, args.workdir, tuning, embedder)
        qs = questions(name, args.split, args.sets_dir)
        site = pages_language(name)
        with C.searcher(root, embedder, tuning) as s:
            for lang in languages(qs):
                mine = [q for q in qs if q["lang"] == lang]
                label = f"{name[: -len(site) - 1]} {lang}→{site}"
                for mode in modes:
                    t0 = time.perf_counter()
                    got, copies, named = [], 0, 0
                    for q in mine:
                        hits = list(s.search(q["text"], k=10, mode=mode, refresh=False))
                        got.append(judge(hits, q["answers"]))
                        folded = [Path(p).relative_to(root).as_posix()
                                  for h in hits[:3] for p in h.also_in]  # fmt: skip
                        copies += sum(bool(h.also_in) for h in hits[:3])
                        named += any(q["answers"].get(p, 0) > 0 for p in folded)
                    nd = [g[0] for g in got]
                    m, ci = C.mean_ci(nd)
                    first, top3 = sum(g[1] for g in got), sum(g[2] for g in got)
                    out["sets"].setdefault(label, {})[mode] = {
                        "n": len(mine), "ndcg": round(m, 4), "ndcg_ci95": round(ci, 4),
                        "first": first, "top3": top3, "copies": copies, "named": named,
                        "_ndcg": nd,
                    }  # fmt: skip
                    print(f"{label:24} {mode:7} {len(mine):>4} {m:>8.4f} ±{ci:.3f} {first:>6} "
                          f"{top3:>6} {copies:>6} {named:>5} {time.perf_counter() - t0:>5.1f}s",
                          flush=True)  # fmt: skip
    for mode in modes:
        rows = [v[mode] for v in out["sets"].values() if mode in v]
        n = sum(r["n"] for r in rows)
        print(f"{'all':24} {mode:7} {n:>4} {'':>14} {sum(r['first'] for r in rows):>6} "
              f"{sum(r['top3'] for r in rows):>6} {sum(r['copies'] for r in rows):>6} "
              f"{sum(r['named'] for r in rows):>5}")  # fmt: skip
    C.write_json(args.json, out)
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sets", default="", help="comma-separated names (default: all)")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--split", default="all", choices=("all", "train", "test"))
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--sets-dir", type=Path, default=SETS, help="where the sets are")
    p.add_argument(
        "--near-duplicate",
        type=float,
        default=None,
        help="the shingle overlap that makes two passages copies (search.page; >1: none)",
    )
    C.add_model_args(p)
    args = p.parse_args(argv)
    C.apply_model_args(args)
    if args.near_duplicate is not None:  # the engine's rule, swept here (bench only)
        from memo_core.search import page

        page.NEAR_DUPLICATE = args.near_duplicate
    return run(args)


if __name__ == "__main__":
    main()
