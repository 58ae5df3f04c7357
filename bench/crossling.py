"""Retrieval across languages on the parallel office-dev sets (the same 5,898 pages in English
and in Russian, at the same paths): a judged set made on the fly, four directions.

    python bench/crossling.py ../shared/data/office-dev-en ../shared/data/office-dev-ru \
        [--split test|train|wide] [--queries 300] [--style title|sentence] [--pages N]

Each page in both sets gives two queries: its English front matter (`description`, else
`title`) and its Russian one (the same); with `--style sentence`, a sentence from the page's
body instead (the first prose line of 8 to 40 words, cut at its first full stop: a question
asked the way the notes say things, not the way titles do). A query's one relevant answer is
the page at the same path in the searched set; queries that several pages share are dropped.
`--pages N` indexes only N pages of each set (every page of the train and test splits in
either style, then others drawn with a fixed seed), for models too slow to index all 5,898
pages in a session.
Directions:
en→ru (English query, Russian notes), ru→ru, en→en, ru→en. Pages are shuffled with a fixed
seed; the first `--queries` make the train split, the next ones the test split (tune on
train only). Only queries in their own script
are kept (an English query with Latin letters and no Cyrillic; a Russian one with Cyrillic).

Searches run through the engine (`Searcher.search`, no refresh), k=50 chunks reduced to
files in the order of their first hit; nDCG@10, Recall@10 and MRR@10 by relative path.
Nothing from ../shared/data is copied into the project: the sets are made in memory.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

MODES = ("lex", "vec", "hybrid")
DIRECTIONS = ("en→ru", "ru→ru", "en→en", "ru→en")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN = re.compile(r"[A-Za-z]")
_FIELD = re.compile(r'^(title|description):\s*"?(.*?)"?\s*$', re.MULTILINE)
_NOT_PROSE = re.compile(r"^\s*(#|```|~~~|\||[-*+>]\s|\d+\.\s|<|!\[|\[!|:::)")
_MARKUP = re.compile(r"\[([^\]]*)\]\([^)]*\)|[*_`]")


def front_query(path: Path) -> str:
    """The page's description, else its title (from the front matter)."""
    head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    if not head.startswith("---"):
        return ""
    block = head.split("---", 2)[1] if head.count("---") >= 2 else ""
    fields = dict(_FIELD.findall(block))
    return (fields.get("description") or fields.get("title") or "").strip().strip("'\"")


def body_sentence(path: Path) -> str:
    """The first prose line of the body (links reduced to their text, markup dropped), cut
    after its first full stop; "" when the page has none of 8 to 40 words."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if text.startswith("---") and text.count("---") >= 2:
        text = text.split("---", 2)[2]
    fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if fence or not line.strip() or _NOT_PROSE.match(line):
            continue
        plain = " ".join(_MARKUP.sub(lambda m: m.group(1) or "", line).split())
        sentence = re.split(r"(?<=[.!?])\s", plain, maxsplit=1)[0]
        if 8 <= len(sentence.split()) <= 40:
            return sentence
    return ""


def judged_sets(
    en: Path, ru: Path, n: int, split: str, seed: int = 12, style: str = "title"
) -> dict:
    """{direction: [(query, relative path of its answer)]} for the split."""
    pairs = []
    make_query = front_query if style == "title" else body_sentence
    for p in sorted(en.rglob("*.md")):
        rel = p.relative_to(en).as_posix()
        other = ru / rel
        if not other.is_file():
            continue
        q_en, q_ru = make_query(p), make_query(other)
        if _LATIN.search(q_en) and not _CYRILLIC.search(q_en) and _CYRILLIC.search(q_ru):
            pairs.append((rel, q_en, q_ru))
    # A query that many pages share ("Last modified: March 9, 2015") has no one answer.
    counts = Counter(q for _, q_en, q_ru in pairs for q in (q_en, q_ru))
    pairs = [t for t in pairs if counts[t[1]] == 1 and counts[t[2]] == 1]
    random.Random(seed).shuffle(pairs)
    # "wide": the train split and the 900 pages after the test split, for choosing on more.
    chosen = {
        "train": pairs[:n],
        "test": pairs[n : 2 * n],
        "wide": pairs[:n] + pairs[2 * n : 5 * n],
    }[split]
    return {
        "en→ru": [(q_en, rel) for rel, q_en, _ in chosen],
        "ru→ru": [(q_ru, rel) for rel, _, q_ru in chosen],
        "en→en": [(q_en, rel) for rel, q_en, _ in chosen],
        "ru→en": [(q_ru, rel) for rel, _, q_ru in chosen],
    }


def subset(dataset: Path, keep: set[str], pages: int, workdir: Path, seed: int = 5) -> Path:
    """A folder of `pages` pages of `dataset`: every path in `keep`, then others drawn with
    a fixed seed (the same paths for both languages); made once, reused."""
    out = workdir / f"{dataset.resolve().name}-p{pages}-s{seed}-k{len(keep)}-v2"
    if out.is_dir():
        return out
    others = sorted(p.relative_to(dataset).as_posix() for p in dataset.rglob("*.md"))
    others = [r for r in others if r not in keep]
    random.Random(seed).shuffle(others)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    # The set's own top-level notes come along: they make the folder one collection (without
    # one, each sub-folder with notes would be a collection of its own, with other paths).
    top = sorted(p.name for p in dataset.glob("*.md"))
    for rel in top + sorted(keep) + others[: max(0, pages - len(keep) - len(top))]:
        if (dataset / rel).is_file():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(dataset / rel, tmp / rel)
    tmp.rename(out)
    return out


def subsets(en: Path, ru: Path, n: int, pages: int, workdir: Path) -> tuple[Path, Path]:
    """The `pages`-page folders of both languages that hold every page the train and test
    splits ask for in either style: one index per language serves every run."""
    keep = {
        rel
        for split in ("train", "test")
        for style in ("title", "sentence")
        for queries in judged_sets(en, ru, n, split, style=style).values()
        for _, rel in queries
    }
    return subset(en, keep, pages, workdir / "subsets"), subset(
        ru, keep, pages, workdir / "subsets"
    )


def ranked_files(hits: list, k: int = 10) -> list[str]:
    seen: dict[str, None] = {}
    for h in hits:
        seen.setdefault(h.relpath, None)
        if len(seen) >= k:
            break
    return list(seen)


def evaluate(searcher, queries: list[tuple[str, str]], mode: str) -> dict:
    per: dict[str, list[float]] = {"ndcg": [], "recall": [], "mrr": []}
    for query, answer in queries:
        files = ranked_files(searcher.search(query, k=50, mode=mode, refresh=False))
        rels = {answer: 1}
        per["ndcg"].append(C.ndcg(files, rels))
        per["recall"].append(C.recall(files, rels))
        per["mrr"].append(C.mrr(files, rels))
    out = {}
    for name, xs in per.items():
        m, ci = C.mean_ci(xs)
        out[name], out[f"{name}_ci95"] = round(m, 4), round(ci, 4)
    out["_ndcg"] = per["ndcg"]
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("en", type=Path)
    p.add_argument("ru", type=Path)
    p.add_argument("--split", default="test", choices=("test", "train", "wide"))
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--folders", type=int, default=1, help="deal the notes into N collections")
    p.add_argument("--style", default="title", choices=("title", "sentence"))
    p.add_argument("--pages", type=int, default=0, help="index only N pages of each set")
    p.add_argument("--json", type=Path, default=None)
    C.add_model_args(p)
    args = p.parse_args(argv)
    C.apply_model_args(args)
    embedder = C.get_embedder(args)
    tuning = C.tuning_from()
    modes = [m for m in args.modes.split(",") if m and (embedder is not None or m == "lex")]
    sets = judged_sets(args.en, args.ru, args.queries, args.split, style=args.style)
    en, ru = args.en, args.ru
    if args.pages:
        en, ru = subsets(args.en, args.ru, args.queries, args.pages, args.workdir)
    roots = {
        "en": C.cached_index(en, args.workdir, tuning, embedder, folders=args.folders)[0],
        "ru": C.cached_index(ru, args.workdir, tuning, embedder, folders=args.folders)[0],
    }
    out: dict = {
        "split": args.split,
        "style": args.style,
        "pages": args.pages or "all",
        "queries": {d: len(q) for d, q in sets.items()},
    }
    print(f"[{args.split}, {args.style}, pages {out['pages']}] {out['queries']}; "
          f"engine {C.engine_version()}")  # fmt: skip
    print(f"{'direction':10} {'mode':7} {'nDCG@10':>16} {'R@10':>7} {'MRR@10':>7} {'time':>6}")
    for direction in DIRECTIONS:
        with C.searcher(roots[direction[-2:]], embedder, tuning) as s:
            out[direction] = {}
            for mode in modes:
                t0 = time.perf_counter()
                r = evaluate(s, sets[direction], mode)
                out[direction][mode] = r
                print(
                    f"{direction:10} {mode:7} {r['ndcg']:>8.4f} ±{r['ndcg_ci95']:.3f} "
                    f"{r['recall']:>7.4f} {r['mrr']:>7.4f} {time.perf_counter() - t0:>5.1f}s",
                    flush=True,
                )
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
