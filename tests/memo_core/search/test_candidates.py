"""memo_core.search.candidates: one collection's word and vector candidates for a query,
read from the snapshot it lends (real indexes of conftest's notes, the tiny model)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memo_core.collection import Collection
from memo_core.files.scope import Scope
from memo_core.index.store import Store
from memo_core.model.embedder import Embedder
from memo_core.search.candidates import candidates
from memo_core.search.query import Query
from memo_core.search.ranking import Candidates
from memo_core.tuning import Tuning
from memo_core.values import NoticeKind

QUERY = "beets cabbage soup"


@pytest.fixture
def with_vectors(notes: Path, tiny_embedder: Embedder) -> Iterator[Collection]:
    c = Collection(notes, Tuning())
    c.refresh(tiny_embedder, None)
    yield c
    c.close()


@pytest.fixture
def words_only(notes: Path) -> Iterator[Collection]:
    c = Collection(notes, Tuning())
    c.refresh(None, None)
    yield c
    c.close()


def found(
    c: Collection,
    query: Query,
    embedder: Embedder | None,
    *,
    model_id: str | None = None,
    wanted: int = 20,
    **kw: object,
) -> tuple[Candidates[Collection], dict[int, str]]:
    """The candidates, and the note path of each chunk among them."""
    qvec = embedder.embed([query.text], query=True)[0] if embedder is not None else None
    model = model_id or (embedder.model_id if embedder is not None else None)
    with c.snapshot() as store:
        assert store is not None
        got = candidates(c, store, query, qvec=qvec, model_id=model, wanted=wanted, **kw)  # type: ignore[arg-type]
        ids = [w.chunk for w in got.words] + [cid for cid, _ in got.vec]
        rows = store.chunk_rows(ids)
    return got, {cid: row.path for cid, row in rows.items()}


def test_lex_mode_finds_words_only(with_vectors: Collection, tiny_embedder: Embedder) -> None:
    got, paths = found(with_vectors, Query.of(QUERY, mode="lex"), tiny_embedder)
    assert got.collection is with_vectors
    assert isinstance(got.store, Store)
    assert paths[got.words[0].chunk] == "cooking/soup.md"
    assert got.vec == []
    assert (got.chunks, got.term_docs, got.notices) == (0, {}, [])  # no stats asked


def test_vec_mode_finds_vectors_only(with_vectors: Collection, tiny_embedder: Embedder) -> None:
    got, paths = found(with_vectors, Query.of(QUERY, mode="vec"), tiny_embedder, stats=True)
    assert got.words == []
    assert paths[got.vec[0][0]] == "cooking/soup.md"
    scores = [s for _, s in got.vec]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 - 1e-6 <= s <= 1.0 + 1e-6 for s in scores)
    assert (got.chunks, got.term_docs) == (0, {})  # vec mode: no word statistics


def test_hybrid_finds_both_sides(with_vectors: Collection, tiny_embedder: Embedder) -> None:
    got, paths = found(with_vectors, Query.of(QUERY), tiny_embedder)
    assert paths[got.words[0].chunk] == paths[got.vec[0][0]] == "cooking/soup.md"


def test_without_a_query_vector_no_vector_candidates(with_vectors: Collection) -> None:
    got, _ = found(with_vectors, Query.of(QUERY), None)
    assert got.words and got.vec == []


@pytest.mark.parametrize("wanted", [1, 2, 3])
def test_at_most_wanted_of_each_side(
    with_vectors: Collection, tiny_embedder: Embedder, wanted: int
) -> None:
    got, _ = found(with_vectors, Query.of("the cat bird sun soup"), tiny_embedder, wanted=wanted)
    assert 1 <= len(got.words) <= wanted
    assert len(got.vec) == wanted  # every chunk has a vector: the nearest `wanted`


def test_stats_are_the_whole_collections(with_vectors: Collection, tiny_embedder: Embedder) -> None:
    query = Query.of("soup cat zzzabsent", mode="lex")
    got, _ = found(with_vectors, query, tiny_embedder, stats=True)
    with with_vectors.snapshot() as store:
        assert store is not None
        total = store.counts()[1]
    assert got.chunks == total
    assert set(got.term_docs) == set(query.terms) - {"zzzabsent"}  # absent words left out
    assert all(n >= 1 for n in got.term_docs.values())


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("soup cat", None),
        ("zzzabsent qqqnowhere", None),  # no passage holds a word: not read from FTS5
        ("soup cat", Scope(under="nowhere")),  # nothing here in scope: the whole one's still
        ("zzzabsent qqqnowhere", Scope(under="nowhere")),
    ],
)
def test_stats_are_fts5s_own_counts(
    with_vectors: Collection, text: str, scope: Scope | None
) -> None:
    query = Query.of(text, mode="lex", scope=scope)
    got, _ = found(with_vectors, query, None, stats=True)
    with with_vectors.snapshot() as store:
        assert store is not None
        assert (got.chunks, got.term_docs) == store.term_stats([(t,) for t in query.terms])
    assert got.chunks > 0


def test_another_models_vectors_are_not_searched(
    with_vectors: Collection, tiny_embedder: Embedder
) -> None:
    got, _ = found(with_vectors, Query.of(QUERY), tiny_embedder, model_id="another/model")
    assert got.vec == []
    assert got.words  # the words still answer
    assert [(n.kind, n.collection) for n in got.notices] == [
        (NoticeKind.OTHER_MODEL, str(with_vectors.root))
    ]


def test_an_index_without_vectors_gives_none(
    words_only: Collection, tiny_embedder: Embedder
) -> None:
    got, _ = found(words_only, Query.of(QUERY), tiny_embedder)
    assert got.words and got.vec == [] and got.notices == []


def test_vec_above_keeps_only_those_scoring_more(
    with_vectors: Collection, tiny_embedder: Embedder
) -> None:
    query = Query.of(QUERY, mode="vec")
    every, _ = found(with_vectors, query, tiny_embedder)
    bar = every.vec[1][1]  # the second best's score
    above, _ = found(with_vectors, query, tiny_embedder, vec_above=bar)
    assert above.vec == [v for v in every.vec if v[1] > bar]
    assert above.vec and len(above.vec) < len(every.vec)
    none, _ = found(with_vectors, query, tiny_embedder, vec_above=math.inf)
    assert none.vec == []


def test_a_scope_keeps_both_sides_to_its_notes(
    with_vectors: Collection, tiny_embedder: Embedder
) -> None:
    query = Query.of("the cat bird sun soup beets", scope=Scope(under="cooking"))
    got, paths = found(with_vectors, query, tiny_embedder)
    assert got.words and got.vec
    assert set(paths.values()) == {"cooking/soup.md"}


def test_a_scope_is_read_from_the_path_searched(
    with_vectors: Collection, tiny_embedder: Embedder
) -> None:
    # Searched from the folder above, this collection is `notes`: "notes/cooking" is in it.
    query = Query.of("soup beets cat", scope=Scope(under="notes/cooking"))
    got, paths = found(with_vectors, query, tiny_embedder, below="notes")
    assert set(paths.values()) == {"cooking/soup.md"}
    # ... and from the collection itself, no "notes/cooking" there.
    got, paths = found(with_vectors, query, tiny_embedder)
    assert (got.words, got.vec) == ([], [])


def test_a_scope_that_keeps_nothing_here_finds_nothing(
    with_vectors: Collection, tiny_embedder: Embedder
) -> None:
    query = Query.of(QUERY, scope=Scope(under="nowhere"))
    got, _ = found(with_vectors, query, tiny_embedder)
    assert (got.words, got.vec, got.notices) == ([], [], [])


def test_a_scope_that_leaves_nothing_out_is_no_scope(
    with_vectors: Collection, tiny_embedder: Embedder
) -> None:
    plain, _ = found(with_vectors, Query.of(QUERY), tiny_embedder)
    scoped, _ = found(with_vectors, Query.of(QUERY, scope=Scope(tags=())), tiny_embedder)
    assert scoped.words == plain.words
    assert scoped.vec == plain.vec


def test_a_scoped_passage_scores_as_in_any_search(
    with_vectors: Collection, tiny_embedder: Embedder
) -> None:
    plain, _ = found(with_vectors, Query.of("soup beets"), tiny_embedder, stats=True)
    query = Query.of("soup beets", scope=Scope(under="cooking"))
    scoped, _ = found(with_vectors, query, tiny_embedder, stats=True)
    assert [(w.chunk, w.score) for w in scoped.words] == [
        (w.chunk, w.score) for w in plain.words if w.chunk in {s.chunk for s in scoped.words}
    ]
    assert (scoped.chunks, scoped.term_docs) == (plain.chunks, plain.term_docs)
    assert np.allclose(
        [s for _, s in scoped.vec], [s for c, s in plain.vec if c in dict(scoped.vec)]
    )
