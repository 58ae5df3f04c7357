"""One ranking: word scores of several collections on one scale, the vector side's say
adapted to how well the query's words match, and a floor under meaning-only answers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import write_notes

from memo_core import Embedder, Engine, ModelSource, Tuning
from memo_core.search.ranking import Candidates, VectorBar, ranked, scales
from memo_core.search.wordscore import WordScore


def cands(
    lex: list[tuple[int, float]],
    chunks: int,
    docs: dict[str, int],
    vec: list[tuple[int, float]] | None = None,
    naming: float = 1.0,
) -> Candidates:
    words = [WordScore(cid, s, naming) for cid, s in lex]
    return Candidates(None, None, words, vec or [], chunks=chunks, term_docs=docs)  # type: ignore[arg-type]


def idf(n: int, d: int) -> float:
    return max(1e-6, math.log((n - d + 0.5) / (d + 0.5)))


def test_one_collection_keeps_its_scores() -> None:
    found = [cands([(1, 5.0), (2, 3.0)], 100, {"cat": 10})]
    placed = ranked(found, ["cat"], "lex", 10, Tuning())
    assert [(p.at, p.chunk, p.score) for p in placed] == [(0, 1, 5.0), (0, 2, 3.0)]


def test_collections_are_scaled_to_the_idf_of_them_all() -> None:
    small = cands([(1, 2.0)], 10, {"cat": 5})  # common here: low IDF, low BM25
    big = cands([(7, 2.0)], 990, {"cat": 5})  # rare here
    whole = idf(1000, 10)
    assert scales([small, big], ["cat"]) == pytest.approx([whole / idf(10, 5), whole / idf(990, 5)])
    pooled = {(p.at, p.chunk): p.score for p in ranked([small, big], ["cat"], "lex", 10, Tuning())}
    assert pooled[(0, 1)] == pytest.approx(2.0 * whole / idf(10, 5))
    assert pooled[(1, 7)] == pytest.approx(2.0 * whole / idf(990, 5))
    assert pooled[(0, 1)] > pooled[(1, 7)]  # as one collection, the small one's hit is no worse


def weight_used(found: list[Candidates], terms: list[str], tuning: Tuning) -> float | None:
    """The vector side's weight the hybrid ranking used, as its explain says."""
    why = ranked(found, terms, "hybrid", 10, tuning, explain=True)[0].explain
    assert why is not None
    return why.dense_weight


@pytest.mark.parametrize(
    ("share", "weight"),
    [
        (None, 1.0),  # no word matched: meaning alone
        (0.0, 1.0),
        (0.3125, 1 - 0.9 * 0.5),  # the best passage scores a quarter of full strength (1.25)
        (1.0, 1 - 0.9 * 0.8**0.5),  # the query's IDF mass: not quite full strength yet
        (1.25, 0.1),  # full strength: the base weight
        (3.0, 0.1),
    ],
)
def test_the_vector_side_gets_more_say_when_words_match_less(
    share: float | None, weight: float
) -> None:
    terms = ["cat", "dog"]
    mass = 2 * idf(1000, 10)
    lex = [] if share is None else [(1, share * mass)]
    found = [cands(lex, 1000, {"cat": 10, "dog": 10}, vec=[(2, 0.5)])]
    assert weight_used(found, terms, Tuning()) == pytest.approx(weight)
    fixed = Tuning(adaptive_fusion=False)
    assert weight_used(found, terms, fixed) == fixed.dense_weight


@pytest.mark.parametrize("naming", [1.5, 2.25, 3.0])
def test_the_naming_factor_does_not_move_the_vectors_say(naming: float) -> None:
    """The weight reads BM25 before the naming factor: a title boost of up to x3
    would otherwise give the vectors less say for the same words."""
    terms = ["cat", "dog"]
    mass = 2 * idf(1000, 10)
    plain = [cands([(1, 0.3 * mass)], 1000, {"cat": 10, "dog": 10}, vec=[(2, 0.5)])]
    named = [cands([(1, 0.3 * mass)], 1000, {"cat": 10, "dog": 10}, [(2, 0.5)], naming)]
    assert weight_used(named, terms, Tuning()) == weight_used(plain, terms, Tuning())


class Floored(Embedder):
    """A real tiny model with a relevance floor."""

    def __init__(self, inner: Embedder, floor: float) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.min_similarity = floor

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        return self.inner.embed_batch(texts, query=query)


def test_meaning_alone_below_the_floor_is_no_answer(tmp_path: Path, tiny_embedder) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# Soup\n\nborscht soup recipe\n"})
    with Engine(models=ModelSource(Floored(tiny_embedder, 0.99))) as e:
        assert list(e.search(notes, "cat dog", mode="vec")) == []  # close to nothing
        assert list(e.search(notes, "cat dog", mode="hybrid")) == []
        hits = e.search(notes, "soup cat", mode="hybrid")  # a word matches: kept
        assert [h.relpath for h in hits] == ["a.md"]
    with Engine(models=ModelSource(Floored(tiny_embedder, -1.0))) as e:
        assert [h.relpath for h in e.search(notes, "cat dog", mode="vec")] == ["a.md"]


NAMED = {
    "name-property-adox.md": "# Свойство name (ADOX)\n\nУказывает имя объекта.\n",
    "properties-adox.md": "# Свойства, методы и события (ADOX)\n\n"
    + "".join(
        f"- свойство name объекта {i} (ADOX): имя, name, свойство name (ADOX)\n" for i in range(30)
    ),
}


@pytest.mark.parametrize("mode", ["lex", "hybrid"])
def test_the_note_the_query_names_comes_first(
    tmp_path: Path, tiny_embedder: Embedder, mode: str
) -> None:
    """A query that is a note's title finds that note before a page that repeats its words."""
    notes = write_notes(tmp_path / "notes", NAMED)
    with Engine(models=ModelSource(tiny_embedder)) as engine:
        hits = engine.search(notes, "Свойство name (ADOX)", k=1, mode=mode)
        assert hits[0].relpath == "name-property-adox.md"
    # The mechanism that does it: without the boost, the long page wins.
    off = Tuning(heading_match_boost=0.0, title_exact_boost=0.0)
    with Engine(models=ModelSource(tiny_embedder), tuning=off) as engine:
        assert engine.search(notes, "Свойство name (ADOX)", k=1, mode=mode)[0].relpath == (
            "properties-adox.md"
        )


def test_the_words_may_come_from_the_file_name(tmp_path: Path) -> None:
    notes = write_notes(
        tmp_path / "notes",
        {
            "sourdough-starter.md": "# Feeding\n\nFlour and water, daily.\n",
            "bread.md": "# Bread\n\nA sourdough starter: feed the starter, the starter "
            "rises; starter, starter, sourdough.\n",
        },
    )
    with Engine() as engine:
        hits = engine.search(notes, "sourdough starter", k=1, mode="lex")
    assert hits[0].relpath == "sourdough-starter.md"


# A note the query names, whose words are a small share of its long body (so its BM25 is
# well under the query's IDF mass), and notes that only the vectors find.
WEAKLY_NAMED = {
    "n.md": "# Docker networking\n\n" + "text " * 200 + "\n",
    "other.md": "# Setup\n\ndocker install on linux\n",
    "w.md": "# Weather\n\nrain sun weather\n",
    "c.md": "# Cat\n\ncat dog bird fish\n",
    "a.md": "# Apple\n\napple banana soup recipe\n",
}


@pytest.mark.parametrize("boost", [0.0, 0.5, 3.0])
def test_a_title_boost_does_not_move_the_vectors_say(
    tmp_path: Path, tiny_embedder: Embedder, boost: float
) -> None:
    """A passage found by meaning alone scores the vector side's weight × its normalised
    cosine: the same whatever `title_exact_boost` is (it was: the weight read the word
    score after the naming factor, so a title boost took say from the vectors)."""
    notes = write_notes(tmp_path / "notes", WEAKLY_NAMED)

    def meaning_only(tuning: Tuning) -> dict[str, float]:
        with Engine(models=ModelSource(tiny_embedder), tuning=tuning) as engine:
            hits = engine.search(notes, "docker networking", k=10, mode="hybrid")
        return {h.relpath: h.score for h in hits if h.found_by == ("vec",)}

    default = meaning_only(Tuning())
    assert meaning_only(Tuning(title_exact_boost=boost)) == default
    assert max(default.values()) > Tuning().dense_weight  # the weight is not at its floor


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("mode", ["hybrid", "vec"])
def test_many_collections_searched_together_rank_as_if_each_gave_all(seed: int, mode: str) -> None:
    """What a search over many collections skips (vector candidates below the bar set by
    those read before, and all but each side's best `pool` together) changes nothing: the
    ranking is the one of every collection's full candidates, scores and order alike, the
    relevance floor and ties included."""
    rng = np.random.default_rng(seed)
    pool, floor = int(rng.integers(3, 12)), float(rng.choice([0.2, 0.5]))
    found, fed = [], []
    bar = VectorBar(pool, floor)
    for _ in range(int(rng.integers(2, 9))):
        n = int(rng.integers(0, 15))
        chunks = rng.choice(1000, n, replace=False)
        # Coarse scores: ties between collections, and around the floor, are common.
        vec = sorted(
            ((int(c), float(rng.integers(0, 10)) / 10) for c in chunks), key=lambda t: -t[1]
        )
        lex = [(int(c), float(rng.integers(1, 6))) for c in chunks[: n // 2]]
        found.append(cands(lex, 100, {"cat": 10}, vec[:pool]))
        kept = [(c, s) for c, s in vec if s > bar.score][:pool]
        fed.append(cands(lex, 100, {"cat": 10}, kept))
        bar.add(kept)
    every = ranked(found, ["cat"], mode, 10, Tuning(), floor, pool=pool)  # type: ignore[arg-type]
    barred = ranked(fed, ["cat"], mode, 10, Tuning(), floor, pool=pool)  # type: ignore[arg-type]
    assert [(p.at, p.chunk, round(p.score, 9)) for p in barred] == [
        (p.at, p.chunk, round(p.score, 9)) for p in every
    ]


def test_the_bar_is_set_only_by_candidates_the_floor_keeps() -> None:
    """Vector scores under the relevance floor, found by meaning alone, are dropped: they
    must not raise the bar over a later collection's candidates that its words found (the
    floor keeps those, and their vector scores order them)."""
    floor, pool = 0.5, 2
    first = cands([], 100, {"cat": 10}, [(1, 0.4), (2, 0.4)])  # meaning alone, under it
    words = [(5, 3.0), (6, 3.0)]
    second = [(6, 0.3), (5, 0.1)]  # the same words: the vectors order them, 6 first
    bar = VectorBar(pool, floor)
    bar.add(first.vec)
    assert bar.score == -math.inf
    found = [first, cands(words, 100, {"cat": 10}, [(c, s) for c, s in second if s > bar.score])]
    placed = ranked(found, ["cat"], "hybrid", 10, Tuning(), floor, pool=pool)
    assert [(p.at, p.chunk) for p in placed] == [(1, 6), (1, 5)]


@pytest.mark.parametrize("mode", ["hybrid", "vec"])
def test_a_search_over_many_collections_answers_as_without_the_bar(
    tmp_path: Path, tiny_embedder: Embedder, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Through the engine: the bar's skipping changes no answer (the bar held at -inf, every
    collection hands over all its vector candidates), for queries whose words are in some
    notes, in all, or in none."""
    words = "beets cabbage bowl sings restic".split()
    root = tmp_path / "many"
    for i in range(12):
        write_notes(
            root / f"c{i:02}",
            {
                f"n{j}.md": f"# N{i}{j}\n\n{words[(i + j) % 5]} {words[(i * j) % 5]} {i} {j}\n"
                for j in range(6)
            },
        )
    with Engine(models=ModelSource(tiny_embedder), refresh_budget_s=None) as e:
        assert e.refresh(root).added == 72
    queries = ["beets", "restic bowl", "cabbage sings beets", "проверка месяц", "zebra"]

    def answers() -> list[list[tuple[str, str, float]]]:
        with Engine(models=ModelSource(tiny_embedder)) as e:
            return [
                [
                    (h.collection, h.relpath, round(h.score, 9))
                    for h in e.search(root, q, mode=mode, k=k)
                ]  # type: ignore[arg-type]
                for q in queries
                for k in (1, 3, 10)
            ]

    barred = answers()
    monkeypatch.setattr(VectorBar, "score", property(lambda self: -math.inf))
    assert barred == answers() and any(barred)
