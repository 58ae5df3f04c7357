"""Warm searches against their parts, in one process, side by side.

    python bench/warm.py FOLDER [--rounds 5] [--model-dir DIR] [--json out.json]

FOLDER is an indexed collection (its vectors made by the model the engine uses, the default
unless `--model-dir`: `memo index FOLDER` first; a copy, since memo writes `.memo/` into
it). An engine with the OS's change feed (as memo-mcp has it) answers a fixed set of
queries, Russian and English, each once to warm up, then `--rounds` times: the median of a
whole search, k 8.
Beside each, in the same rounds, its parts taken alone:

- lex: the bare FTS5 query (`bm25` with memo's column weights, LIMIT 8, the query's words
  OR-ed), on a read-only connection of its own (the bound: ≤ 3×);
- hybrid: the query's embedding, the bare FTS5 query and the nearest vectors of the
  collection's held vectors (the bound: ≤ 2×).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

QUERIES = [
    "как открыть набор записей",
    "how to add a button to the ribbon",
    "сохранить документ как PDF",
    "event when a cell value changes",
    "задать ширину столбца",
    "read the body of an email message",
    "удалить лист из книги",
    "Recordset object fields",
]
BARE_FTS = "SELECT rowid, bm25(fts, 2.0, 1.0) r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT 8"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--model-dir", help="model directory to use (sets MEMO_MODEL_DIR)")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    C.apply_model_args(args)

    import apsw

    from memo_core import Engine
    from memo_core.index.location import choose
    from memo_core.text.textnorm import query_terms

    root = str(args.folder.resolve())
    db = apsw.Connection(str(choose(Path(root))[0]), flags=apsw.SQLITE_OPEN_READONLY)
    took: dict[str, list[float]] = {
        k: [] for k in ("lex", "hybrid", "bare fts", "embed", "vectors")
    }

    def bare_fts(q: str) -> None:
        match = " OR ".join(f'"{w}"' for w in query_terms(q))
        list(db.execute(BARE_FTS, (match,)))

    with Engine(notify=True) as e:
        for q in QUERIES:  # warm: the model loaded, the vectors held, the feed started
            e.search(root, q, k=8, mode="lex")
            e.search(root, q, k=8)
        model = e.models.get()
        [c] = e.collections(root)
        with c.snapshot() as store:
            assert store is not None, f"{root} has no index: memo index it first"
            vectors = c.vectors(store)
        for _ in range(args.rounds):
            for q in QUERIES:
                took["lex"].append(C.timed(lambda q=q: e.search(root, q, k=8, mode="lex"))[0])
                took["hybrid"].append(C.timed(lambda q=q: e.search(root, q, k=8))[0])
                took["bare fts"].append(C.timed(lambda q=q: bare_fts(q))[0])
                t, qvec = C.timed(lambda q=q: model.embed([q], query=True)[0])
                took["embed"].append(t)
                took["vectors"].append(C.timed(lambda v=qvec: vectors.nearest(v, 8))[0])
    ms = {k: statistics.median(v) * 1e3 for k, v in took.items()}
    parts = ms["embed"] + ms["bare fts"] + ms["vectors"]
    out = {
        "engine": C.engine_version(),
        "folder": root,
        "median_ms": ms,
        "lex_over_bare_fts": ms["lex"] / ms["bare fts"],
        "hybrid_over_parts": ms["hybrid"] / parts,
    }
    print(f"engine {out['engine']}; {root}; {len(QUERIES)} queries x {args.rounds} rounds, k 8")
    print(
        f"  warm lex     {ms['lex']:6.2f} ms   bare FTS5 {ms['bare fts']:.2f} ms"
        f"   {out['lex_over_bare_fts']:.1f}x (bound 3x)"
    )
    print(
        f"  warm hybrid  {ms['hybrid']:6.2f} ms   parts {parts:.2f} ms (embedding "
        f"{ms['embed']:.2f}, FTS5 {ms['bare fts']:.2f}, vectors {ms['vectors']:.2f})"
        f"   {out['hybrid_over_parts']:.2f}x (bound 2x)"
    )
    C.write_json(args.json, out)
    return out


if __name__ == "__main__":
    main()
