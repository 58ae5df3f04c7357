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
        self,
        terms: Sequence[str],
        limit: int,
        weights: tuple[float, float],
        heading_boost: float = 0.0,
    ) -> list[tuple[int, float]]:
        """Chunk ids and BM25 scores (higher is better) of the `limit` best chunks holding
        any of `terms` (normalised words), best first; `weights`: BM25 weights of the
        heading and the body.

        A chunk whose heading column (its heading path and its note's path words) holds
        every one of the terms scores `heading_boost` times more on top: the query names
        that note or section. (A long page that mentions the words often otherwise beats
        the short page titled with them.)
        """
        if not terms:
            return []
        # Each term quoted, so no user text is FTS5 syntax (terms are \w+ runs: no quotes).
        quoted = [f'"{t}"' for t in terms]
        rows = [
            (cid, -score)
            for cid, score in self.db.execute(
                "SELECT rowid, bm25(fts, ?, ?) AS r FROM fts WHERE fts MATCH ? ORDER BY r LIMIT ?",
                (*weights, " OR ".join(quoted), limit),
            )
        ]
        if not heading_boost or not rows:
            return rows
        # Every chunk so named, then those among the candidates: the same match restricted
        # by `rowid IN (…)` measured 160 times slower (39 ms against 0.24 ms, office-dev-en).
        named = {
            cid
            for (cid,) in self.db.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ?",
                (f"heading : ({' AND '.join(quoted)})",),
            )
        }
        boosted = [(cid, s * (1 + heading_boost) if cid in named else s) for cid, s in rows]
        return sorted(boosted, key=lambda t: (-t[1], t[0]))

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
