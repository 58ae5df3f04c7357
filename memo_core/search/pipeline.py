"""One search over the collections a path holds, after their refresh: each read from a
snapshot of its own, their candidates gathered, ranked once together, and the hits of the
page asked for read back from their collections.

The stages, in the order `search` below runs them, and what each reads. Every setting is
a field of `Tuning`; the few fixed numbers are named constants that say why.

In each collection, from the snapshot it lends (`candidates`), among the passages in the
search's scope where it has one (`Collection.in_scope`):

1. Word candidates (`wordscore.word_candidates`): the n best passages by FTS5's BM25 among
   those holding any query word, heading and body weighted (`heading_weight`,
   `body_weight`); n is `Query.wanted`: `fusion_candidates`, or the hits up to this
   page's and one more (`Query.deep`) where that is more, and only those in vec mode.
2. Naming factor: a candidate whose heading column (heading path, note path) holds every
   query word is multiplied by 1 + `heading_match_boost` + `title_exact_boost` × how
   exactly a title of it is the query (`wordscore.naming_factor`).
3. Proximity: + `proximity_weight` × the BM25 of the query's adjacent word pairs standing
   within `proximity_window` words (read for NEAR_CANDIDATES_FACTOR × n passages).
   The word score is BM25 × naming + proximity (`wordscore.WordScore.score`), the one rule.
4. Word statistics: the chunk count and each query word's document count, where the next
   stages need them (several collections, or an adaptive hybrid search).
5. Vector candidates: the n nearest chunks by cosine (`index.vectors.VectorCache`), where
   the index's vectors are the query's model's; none at or below the n-th best of the
   collections read before (`ranking.VectorBar`), which could not make the pool.

Across the collections, once (`ranking.ranked`):

6. Scale: each collection's word scores × the query's IDF over all the collections against
   its IDF in that one (`ranking.scales`; reads stage 4), so they rank as one.
7. Relevance floor: a candidate found by meaning alone below the model's floor for the
   query (`Embedder.relevance_floor`) is dropped.
8. Dense weight (hybrid): the query's word strength, its best BM25 (stage 1, scaled: not
   the naming factor or proximity, whose settings must not move the vectors' say) over its
   IDF mass (`ranking.word_strength`), gives the vector side's weight (`fusion.weight_at`:
   `dense_weight` at full strength, `dense_top` at none, between them by `lex_full_strength`
   and `lex_strength_power`; or a model's own policy);
   `adaptive_fusion` False: `dense_weight` for every query.
9. Fusion (`fusion.rank`): each side's n best of all the collections together are pooled
   (what one collection holding them all would give); hybrid min-max normalises each side
   over the pooled candidates and scores (1 − weight) × words + weight × vectors, a side
   that did not find a passage counting 0; lex or vec mode ranks that side's scores. All
   are kept, ties broken by (collection, chunk).
10. Second look (`second_look.second_look`; a model with a `second_look` weight, a query
    that reads as a question or a sentence, not lex mode): every score min-max normalised
    over the ranked passages, and the `DEPTH` best rescored by their best sentence's cosine
    (the sentence vectors, `Store.sentence_vectors`), min-max normalised among them, times
    that weight.
11. Pages (`page`): the rows of the best passages, up to twice this page's end and a
    little more, read once; a copy of a passage shown above it (word shingles overlapping by
    `page.NEAR_DUPLICATE`, no query word the shown one lacks) folded into it (`also_in`);
    then pages of k, each with one passage of a note while enough notes remain.
12. Hits: the page's passages (`_hit`), each with its `Explain` where asked:
    the figures of stages 1-3 and 6-10 as this ranking computed them (`ranking.Placed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import TypeVar

from memo_core.collection import Collection
from memo_core.errors import ResourceLimitError
from memo_core.index.rows import ChunkRow
from memo_core.index.store import Store
from memo_core.model.embedder import Embedder
from memo_core.results import Hit, SearchResults
from memo_core.search import page, ranking
from memo_core.search.candidates import candidates
from memo_core.search.query import Query
from memo_core.search.ranking import Candidates, Placed
from memo_core.search.second_look import DEPTH, across_scripts, second_look, wants_second_look
from memo_core.text import textnorm
from memo_core.text.excerpt import excerpt
from memo_core.text.textnorm import Group
from memo_core.tuning import Tuning
from memo_core.values import Notice, NoticeKind

T = TypeVar("T")
# Passages read past the pages asked for, so that a page of distinct notes can be made
# where the best passages repeat a note.
WINDOW_SLACK = 16


def search(
    base: Path,
    collections: list[Collection],
    query: Query,
    model: Embedder | None,
    tuning: Tuning,
    notices: list[Notice],
    open_budget: int,
) -> SearchResults:
    """The page `query` asks for, of the collections found under `base` (refreshed as the
    caller wanted), ranked together as one, and where the next page starts (None: no more
    hits). `model`: the query's embedding (None: words only); `notices`: what the answer
    says already; `open_budget`: how many collections may stay open (the rest are read one
    at a time and let go)."""
    qvec = model.embed([query.text], query=True)[0] if model is not None else None
    # Word statistics: to put several collections' word scores on one scale, and to weigh
    # the word side of a hybrid search by how well the query's words match.
    stats = len(collections) > 1 or (query.mode == "hybrid" and tuning.adaptive_fusion)
    notices = list(notices)
    floor = model.relevance_floor(qvec) if model is not None and qvec is not None else None
    # Each side's best `wanted` of all the collections together are ranked: a vector
    # candidate below those of the collections read before its own is not even handed over.
    wanted = query.wanted(tuning)
    bar = ranking.VectorBar(wanted, floor)
    kept = set(collections[:open_budget])
    with ExitStack() as stack:  # the snapshots kept open until their hits are read
        found: list[Candidates[Collection]] = []
        for c, store in _snapshots(collections, kept, stack, notices):
            found.append(
                candidates(
                    c,
                    store,
                    query,
                    qvec=qvec,
                    model_id=model.model_id if model is not None else None,
                    wanted=wanted,
                    stats=stats,
                    below=_below(base, c) if query.scope else "",
                    vec_above=bar.score,
                )
            )
            bar.add(found[-1].vec)
            notices += found[-1].notices
        placed = _ranked(found, query, floor, model, tuning)
        # The second look's query (in the sentence model's space) and weight; None: none.
        look = (
            (model.sentence_query(qvec), model.second_look)
            if model is not None
            and qvec is not None
            and model.second_look > 0
            and query.mode != "lex"
            and wants_second_look(query.text)
            else None
        )
        # The pages up to this one, made of the best passages, and the head the second look
        # may reorder into them: their rows read once.
        span = 2 * (query.offset + query.k) + WINDOW_SLACK
        ahead = placed[: max(span, DEPTH) if look else span]
        got = _read(found, kept, _chunk_rows, ahead)
        rows = {(p.at, p.chunk): got[i] for i, p in enumerate(ahead) if i in got}
        if look is not None:
            read = partial(_read, found, kept, _sentence_vectors)
            # Across the scripts the word side's stray matches (names, code) and the vectors
            # disagree most: there the look weighs on hybrid's own scale (BENCHMARKS.md).
            head = [rows[p.at, p.chunk].text for p in placed[:DEPTH] if (p.at, p.chunk) in rows]
            crossing = query.mode == "hybrid" and across_scripts(query.text, head)
            placed = second_look(placed, read, *look, stretched=not crossing)
        window = placed[:span]
        known = [(p, rows[p.at, p.chunk]) for p in window if (p.at, p.chunk) in rows]  # none gone
        shown = page.collapsed(
            known,
            text=lambda pr: f"{pr[1].shown_heading}\n{pr[1].text}",
            path=lambda pr: str(found[pr[0].at].collection.absolute(pr[1].path)),
            note=_note,
            terms=set(textnorm.group_stems(g for f in found for g in f.groups)),
            aside=lambda pr: page.archived(pr[1].path),
            lang=lambda pr: pr[1].lang,
        )
        ordered = page.paged(shown, lambda s: _note(s.item), query.k)
        hits = [
            _hit(found[p.at].collection, p, row, found[p.at].groups, s.also_in)
            for s in ordered[query.offset : query.offset + query.k]
            for p, row in [s.item]
        ]
    more = len(ordered) > query.offset + query.k or len(placed) > len(window)
    next_offset = query.offset + len(hits) if more else None
    # A page past the last hit is not "nothing found": how many there are says so.
    past = len(ordered) if ordered and not hits else None
    return SearchResults(
        hits, query.mode, notices, offset=query.offset, next_offset=next_offset, all_hits=past
    )


def _note(ranked: tuple[Placed, ChunkRow]) -> tuple[int, str]:
    """A ranked passage's note: its collection's place in the search and its path."""
    return ranked[0].at, ranked[1].path


def _below(base: Path, c: Collection) -> str:
    """The collection's folder relative to the path searched ('/'-separated, "" for the path
    itself), where a scope's `under` is read from (discovery finds them at or below it)."""
    return "/".join(c.root.relative_to(base).parts)


def _ranked(
    found: list[Candidates[Collection]],
    query: Query,
    floor: float | None,
    model: Embedder | None,
    tuning: Tuning,
) -> list[Placed]:
    """Every collection's candidates ranked once, all of them (`floor`: the model's
    relevance floor for the query): a first page is looked at again, and one note's
    passages spread over pages, from the whole ranking."""
    # A model may bring its own weight policy (chosen for it on train sets).
    tuning = tuning.with_fusion(model.fusion) if model is not None else tuning
    return ranking.ranked(
        found,
        query.terms,
        query.mode,
        query.wanted(tuning) * 2,
        tuning,
        floor,
        explain=query.explain,
        pool=query.wanted(tuning),
    )


def _read(
    found: list[Candidates[Collection]],
    kept: set[Collection],
    read: Callable[[Collection, Store, list[Placed]], dict[int, T]],
    placed: Sequence[Placed],
) -> dict[int, T]:
    """What `read` finds of ranked passages, by their place in `placed`, read from each
    one's collection: from the snapshot it was ranked from where it stayed open, else
    from a new one."""
    got: dict[int, T] = {}
    for i, f in enumerate(found):
        mine = [(n, p) for n, p in enumerate(placed) if p.at == i]
        if not mine:
            continue
        if f.collection in kept:
            by_chunk = read(f.collection, f.store, [p for _, p in mine])
        else:
            with f.collection.snapshot() as store:
                by_chunk = read(f.collection, store, [p for _, p in mine]) if store else {}
            f.collection.close_connections()
        got |= {n: by_chunk[p.chunk] for n, p in mine if p.chunk in by_chunk}
    return got


def _sentence_vectors(_c: Collection, store: Store, ranked: list[Placed]) -> dict[int, bytes]:
    return store.sentence_vectors([p.chunk for p in ranked])


def _chunk_rows(_c: Collection, store: Store, ranked: list[Placed]) -> dict[int, ChunkRow]:
    return store.chunk_rows([p.chunk for p in ranked])


def _hit(c: Collection, p: Placed, row: ChunkRow, groups: list[Group], also_in: list[str]) -> Hit:
    """The hit of a ranked passage (its row read inside its collection's snapshot): it
    shows the lines of its passage that best match the query's words (`groups`, each
    word's stems in its collection's languages; `text.excerpt`),
    numbered as the note's lines by the index alone (the note is not read: it may have
    changed since, or be slow to read).

    A hit that shows its passage from the start cites the passage's `line` (a section's
    heading, which the location line shows); one that shows lines further down cites the
    first of them, counted from where the text begins (`text_line`). `end_line` is the last
    line shown, counted alike. `also_in`: the notes holding copies of it."""
    # A passage found by meaning alone shows its start, whatever words it shares.
    terms = set(textnorm.group_stems(groups)) if "lex" in p.found_by else set()
    shown = excerpt(row.text.split("\n"), terms, lang=row.lang)
    return Hit(
        path=c.absolute(row.path),
        relpath=row.path,
        collection=str(c.root),
        line=row.text_line + shown.first if shown.first else row.line,
        end_line=row.text_line + shown.last,
        heading=row.shown_heading,
        text=shown.text,
        score=float(p.score),
        found_by=p.found_by,
        explain=p.explain,
        also_in=tuple(also_in),
    )


def _snapshots(
    collections: list[Collection], kept: set[Collection], stack: ExitStack, notices: list[Notice]
) -> Iterator[tuple[Collection, Store]]:
    """Each collection that holds an index, with the snapshot it is read from: those `kept`
    stay open on `stack` (until their hits are read), the others are let go once read. One
    that cannot be opened for want of a resource (descriptors, memory) is left out and the
    answer names it: what could be read answers; none at all is the error."""
    read = 0
    left: list[Collection] = []
    first: ResourceLimitError | None = None
    for c in collections:
        with ExitStack() as own:
            try:
                store = own.enter_context(c.snapshot())
            except ResourceLimitError as e:
                left.append(c)
                first = first or e
                continue
            if store is not None:
                read += 1
                if c in kept:
                    stack.enter_context(own.pop_all())
                yield c, store
        if c not in kept:
            c.close_connections()
    if first is not None:
        if not read:
            raise first
        roots = [str(c.root) for c in left]
        notices.append(Notice.of_folders(NoticeKind.NOT_SEARCHED, roots, first.message))
