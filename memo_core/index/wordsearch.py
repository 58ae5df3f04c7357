"""Word search in the index (FTS5): candidates with BM25 scores, and the counts of the
query's words that ranking needs. Part of the store (the Store class inherits this one), in
its own module only to keep each module short.
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw


class WordSearch:
    db: apsw.Connection

    def lex(
        self, terms: Sequence[str], limit: int, weights: tuple[float, float]
    ) -> list[tuple[int, float]]:
        """Chunk ids and BM25 scores (higher is better) of the `limit` best chunks holding
        any of `terms` (normalised words), best first; `weights`: BM25 weights of the
        heading and the body."""
        if not terms:
            return []
        return [
            (cid, -score)
            for cid, score in self.db.execute(
                "SELECT rowid, bm25(fts, ?, ?) AS r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT ?",
                (*weights, _any_of(terms), limit),
            )
        ]

    def named(self, terms: Sequence[str], among: Sequence[int]) -> list[int]:
        """Those of the chunks `among` whose heading column (their heading path and their
        note's path words) holds every one of `terms`: the query names them."""
        if not terms or not among:
            return []
        # Every chunk so named, then those among the candidates: the same match restricted
        # by `rowid IN (…)` measured 160 times slower (39 ms against 0.24 ms, office-dev-en).
        match = f"heading : ({' AND '.join(_quoted(terms))})"
        named = {
            cid for (cid,) in self.db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (match,))
        }
        return [cid for cid in among if cid in named]

    def near(
        self, terms: Sequence[str], limit: int, weights: tuple[float, float], window: int
    ) -> dict[int, float]:
        """BM25 scores (higher is better) of the `limit` best chunks where two of `terms`
        that are adjacent in the query stand within `window` words of each other."""
        quoted = _quoted(terms)
        pairs = [f"NEAR({a} {b}, {int(window)})" for a, b in zip(quoted, quoted[1:], strict=False)]
        if not pairs:
            return {}
        return {
            cid: -score
            for cid, score in self.db.execute(
                "SELECT rowid, bm25(fts, ?, ?) AS r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT ?",
                (*weights, " OR ".join(pairs), limit),
            )
        }

    def term_stats(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """The number of chunks, and in how many each of these (normalised) words occurs
        (absent words left out): FTS5's own counts, read through a vocabulary table."""
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, 'fts', 'row')"
        )
        marks = ",".join("?" * len(terms))
        sql = f"SELECT term, doc FROM temp.vocab WHERE term IN ({marks})"
        docs = dict(self.db.execute(sql, tuple(terms))) if terms else {}
        row = self.db.execute("SELECT count(*) FROM chunks").fetchone()
        return int(row[0] if row else 0), docs


def _quoted(terms: Sequence[str]) -> list[str]:
    # Each term quoted, so no user text is FTS5 syntax (terms are \w+ runs: no quotes).
    return [f'"{t}"' for t in terms]


def _any_of(terms: Sequence[str]) -> str:
    return " OR ".join(_quoted(terms))
