"""The size of a default k=8 search answer before and after bounded answers.

    python bench/answer_size.py ../shared/data/office-dev-en ../shared/data/office-dev-ru \
        [--pages N] [--titles 20] [--json out.json]

Each data set is copied (all its pages, or `--pages N` drawn with a fixed seed) and indexed
words only, once, under the work folder (`--workdir`). Queries: note titles (as in
bench/speed.py) and the questions below, written as a user asks them. Each query is searched
once with memo_search's defaults (k=8, its default budget) and once unbounded, in `lex` (words
only: the hits a words-only hybrid search gives, without its "no model" notice).

- after: the answer's text as memo_search returns it (`format_hits`), and the hits it kept
  (a budget that cuts an answer keeps fewer, and a last line says where the next page is);
- before: the same 8 hits as the engine answered before hits were windows of their
  passage, each with its whole chunk (cut at 4,000 characters then, with a line "…"), at
  its passage's line: computed from the index's chunks (`store.chunk_rows`), without
  running old code.

`hit_block`: one hit as the answer writes it (its absolute path: here under the work folder).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
from speed import note_titles  # noqa: E402

from memo_core import DEFAULT_MAX_CHARS
from memo_text import format_hits

OLD_HIT_CHARS = 4000  # what a hit carried before hits were windows (values.MAX_HIT_CHARS then)
QUESTIONS = {
    "en": [
        "How do I create a MAPI profile programmatically?",
        "How can I register a COM add-in for Outlook?",
        "What does the VLOOKUP function return when no match is found?",
        "How do I send an email with an attachment from VBA?",
        "Why does my macro fail with a runtime error 1004?",
        "How to insert a table into a Word document with VBA?",
        "How can I read a custom property of an Outlook item?",
        "What is the difference between a query and a macro in an Access web app?",
        "How do I add a button to the ribbon?",
        "How do I open a document with an Office URI scheme?",
        "How can I export a OneNote page to XML?",
        "How do I set the print area of a worksheet?",
        "What permissions does an InfoPath form template need?",
        "How can I subscribe to new mail events in Outlook?",
        "How do I create a new Visio shape from code?",
    ],
    "ru": [
        "Как программно создать профиль MAPI?",
        "Как зарегистрировать надстройку COM для Outlook?",
        "Что возвращает функция ВПР, если совпадение не найдено?",
        "Как отправить письмо с вложением из VBA?",
        "Почему макрос падает с ошибкой времени выполнения 1004?",
        "Как вставить таблицу в документ Word с помощью VBA?",
        "Как прочитать настраиваемое свойство элемента Outlook?",
        "Чем запрос отличается от макроса в веб-приложении Access?",
        "Как добавить кнопку на ленту?",
        "Как открыть документ по схеме URI Office?",
        "Как экспортировать страницу OneNote в XML?",
        "Как задать область печати листа?",
        "Какие разрешения нужны шаблону формы InfoPath?",
        "Как подписаться на события новой почты в Outlook?",
        "Как создать новую фигуру Visio из кода?",
    ],
}


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("datasets", type=Path, nargs="+", help="data sets (office-dev-en, -ru)")
    p.add_argument("--pages", type=int, default=0, help="index this many pages (0: all)")
    p.add_argument("--titles", type=int, default=20, help="note-title queries per set")
    p.add_argument("--json", type=Path, help="also write the figures here")
    p.add_argument(
        "--workdir", type=Path, default=C.DEFAULT_WORKDIR, help="where copies and indexes go"
    )
    return p.parse_args(argv)


def words_copy(dataset: Path, pages: int, workdir: Path) -> Path:
    """A copy of `dataset` (or `pages` of its pages, drawn with a fixed seed), indexed words
    only; made and indexed once, reused."""
    src = C.corpus_dir(dataset)
    out = workdir / "answer-size" / f"{dataset.resolve().name}-p{pages or 'all'}"
    if (out / ".memo").is_dir():
        return out
    if pages:
        rels = sorted(p.relative_to(src) for p in src.rglob("*.md"))
        random.Random(5).shuffle(rels)
        if out.exists():
            shutil.rmtree(out)
        for rel in rels[:pages]:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, out / rel)
    else:
        C.copy_tree(src, out)
    t = time.perf_counter()
    with C.searcher(out, None) as s:
        s.refresh()
    print(f"indexed {out} words only in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return out


def language(dataset: Path) -> str:
    return "ru" if dataset.resolve().name.endswith("-ru") else "en"


def before_size(s, results) -> int:
    """The answer the engine gave before hits were windows, for these hits: each hit's whole chunk
    (its first 4,000 characters, then a line "…"), at its passage's line."""
    (coll,) = s.collections
    blocks = []
    with C.reading(coll) as store:
        for h in results:
            row = _chunk_of(store, h)
            text = row.text
            if len(text) > OLD_HIT_CHARS:
                text = text[:OLD_HIT_CHARS] + "\n…"
            blocks.append(f"{h.path}:{row.line}  {row.heading}\n{text}\n")
    return len("\n".join(blocks))


def _chunk_of(store, h):
    """The chunk a hit shows: in its note, the one whose lines hold the hit's and whose
    text holds its text (a cut hit's "…" aside)."""
    ids = [
        cid
        for (cid,) in store.db.execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ? "
            "AND c.line <= ? ORDER BY c.line DESC",
            (h.relpath, h.line),
        )
    ]
    rows = store.chunk_rows(ids)
    part = max(h.text.strip("…").split("\n"), key=len)
    for cid in ids:
        if part in rows[cid].text and rows[cid].heading == h.heading:
            return rows[cid]
    raise SystemExit(f"no chunk of {h.relpath} holds the hit at line {h.line}")


def measure(s, queries: list[str]) -> dict:
    before, after, unbudgeted, kept, found, blocks = [], [], [], [], [], []
    for q in queries:
        full = s.search(q, k=8, mode="lex", refresh=False)
        page = s.search(q, k=8, mode="lex", refresh=False)
        if not full:
            continue
        before.append(before_size(s, full))
        after.append(len(format_hits(page)))
        unbudgeted.append(len(format_hits(full)))
        kept.append(len(page))
        found.append(len(full))
        blocks += [len(format_hits(type(full)([h], "lex"))) for h in full]
    return {
        "queries": len(queries),
        "answered": len(before),
        "before": _stats(before),
        "after": _stats(after),
        "after_without_budget": _stats(unbudgeted),
        # Hits the search found (at most 8; fewer where fewer passages answer), and kept.
        "hits": {"mean": round(statistics.mean(found), 2), "min": min(found)},
        "hits_kept": {"mean": round(statistics.mean(kept), 2), "min": min(kept)},
        "cut_by_budget": sum(k < n for k, n in zip(kept, found, strict=True)),
        "hit_block": _stats(blocks),
    }


def _stats(xs: list[int]) -> dict:
    xs = sorted(xs)
    return {
        "mean": round(statistics.mean(xs)),
        "p50": xs[len(xs) // 2],
        "p90": xs[min(len(xs) - 1, int(0.9 * len(xs)))],
        "max": xs[-1],
    }


def main(argv: list[str] | None = None) -> dict:
    args = parse(argv)
    out: dict = {
        "engine": C.engine_version(),
        "default_max_chars": DEFAULT_MAX_CHARS,
        "mode": "lex (words only)",
        "sets": {},
    }
    for dataset in args.datasets:
        copy = words_copy(dataset, args.pages, args.workdir)
        queries = {
            "titles": note_titles(copy, args.titles),
            "questions": QUESTIONS[language(dataset)],
        }
        with C.searcher(copy, None) as s:
            s.search("warm", k=8, mode="lex", refresh=False)
            out["sets"][dataset.resolve().name] = {
                "pages": len(list(copy.rglob("*.md"))),
                **{style: measure(s, qs) for style, qs in queries.items()},
            }
    print(json.dumps(out, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return out


if __name__ == "__main__":
    main()
