"""`explain`: why each hit ranks where it does, from the figures the ranking itself used
(Python API, `memo search --explain`, and `--json --explain`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import write_notes

import memo_core
from memo_cli.main import main
from memo_core import Embedder, Engine, Explain, Hit, ModelSource, Tuning

NOTES = {
    "docker-networking.md": "# Docker networking\n\nBridges, overlays and ports.\n",
    "docker-troubleshooting.md": "# Docker troubleshooting\n\n"
    "When docker networking fails: docker network ls, docker network inspect; docker "
    "networking between containers, docker networking and DNS.\n",
    "server.md": "# Server setup\n\nInstall docker on the linux server, then configure the "
    "network and the firewall.\n",
    "sleep.md": "# Sleep\n\nSleep deprivation harms memory and mood.\n",
    "apart.md": "# Log\n\nSleep came late that night; in the morning the deprivation of "
    "light was worse.\n",
    "weather.md": "# Weather\n\nrain sun weather\n",
    "pets.md": "# Pets\n\nThe cat and the dog share a bowl.\n",
    "kitchen/soup.md": "# Soup recipe\n\nBorscht soup: cook the beets first.\n",
}
QUERIES = [
    "docker networking",
    "sleep deprivation memory",
    "cat dog",
    "borscht soup recipe",
    "rain",
]
MODES = ["hybrid", "lex", "vec"]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


@pytest.fixture
def split(tmp_path: Path) -> Path:
    """The same notes in two collections of different sizes (their word scores are scaled)."""
    base = tmp_path / "split"
    write_notes(base / "a", {k: v for i, (k, v) in enumerate(NOTES.items()) if i % 3 == 0})
    write_notes(base / "b", {k: v for i, (k, v) in enumerate(NOTES.items()) if i % 3 != 0})
    return base


def search(
    where: Path, query: str, mode: str, embedder: Embedder, tuning: Tuning | None = None, **kw
) -> list[Hit]:
    with Engine(models=ModelSource(embedder), tuning=tuning) as engine:
        return list(engine.search(where, query, k=20, mode=mode, **kw))  # type: ignore[arg-type]


def explained(hit: Hit) -> Explain:
    assert hit.explain is not None
    return hit.explain


def check_the_sums(hits: list[Hit], mode: str) -> None:
    """Every hit's score is what its explain's figures make by the rules it states."""
    assert hits
    for h in hits:
        e = explained(h)
        if e.bm25 is not None:
            assert e.naming is not None and e.proximity is not None
            assert e.lex == pytest.approx((e.bm25 * e.naming + e.proximity) * e.scale)
        else:
            assert e.naming is e.proximity is e.lex is None
        assert ("lex" in h.found_by) == (e.lex is not None)
        assert ("vec" in h.found_by) == (e.vec is not None)
        if mode == "hybrid":
            assert e.lex_norm is not None and e.vec_norm is not None
            assert e.dense_weight is not None
            fused = (1 - e.dense_weight) * e.lex_norm + e.dense_weight * e.vec_norm
            assert h.score == pytest.approx(fused)
            assert 0.0 <= e.lex_norm <= 1.0 and 0.0 <= e.vec_norm <= 1.0
            assert e.lex_norm == 0.0 or e.lex is not None  # a side that missed counts 0
            assert e.vec_norm == 0.0 or e.vec is not None
        else:
            assert e.lex_norm is e.vec_norm is e.dense_weight is e.strength is None
            assert h.score == (e.lex if mode == "lex" else e.vec)
    # One query, one weight.
    assert len({explained(h).dense_weight for h in hits}) == 1


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("mode", MODES)
def test_each_score_is_what_its_figures_make(
    notes: Path, tiny_embedder: Embedder, query: str, mode: str
) -> None:
    hits = search(notes, query, mode, tiny_embedder, explain=True)
    check_the_sums(hits, mode)
    assert all(explained(h).scale == 1.0 for h in hits)  # one collection: nothing to scale


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("mode", ["hybrid", "lex"])
def test_each_score_is_what_its_figures_make_across_collections(
    split: Path, tiny_embedder: Embedder, query: str, mode: str
) -> None:
    check_the_sums(search(split, query, mode, tiny_embedder, explain=True), mode)


def test_collections_of_different_sizes_are_scaled(split: Path, tiny_embedder: Embedder) -> None:
    hits = search(split, "docker networking", "lex", tiny_embedder, explain=True)
    assert any(explained(h).scale != 1.0 for h in hits)


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["notes", "split"])
def test_explaining_does_not_change_the_ranking(
    request: pytest.FixtureRequest, tiny_embedder: Embedder, query: str, mode: str, where: str
) -> None:
    root = request.getfixturevalue(where)
    plain = search(root, query, mode, tiny_embedder)
    told = search(root, query, mode, tiny_embedder, explain=True)
    assert [dataclasses.replace(h, explain=None) for h in told] == plain
    assert all(h.explain is None for h in plain)  # None unless asked


@pytest.mark.parametrize("mode", ["hybrid", "lex"])
def test_a_title_match_shows_a_naming_factor(
    notes: Path, tiny_embedder: Embedder, mode: str
) -> None:
    hits = {
        h.relpath: h for h in search(notes, "docker networking", mode, tiny_embedder, explain=True)
    }
    titled = explained(hits["docker-networking.md"])
    assert titled.naming is not None and titled.naming > 1.0
    # Named exactly (title = query): 1 + heading_match_boost + title_exact_boost.
    assert titled.naming == pytest.approx(1 + 0.5 + 1.5)
    assert explained(hits["server.md"]).naming == 1.0  # holds the words, not in a title


def test_adjacent_words_show_their_proximity(notes: Path, tiny_embedder: Embedder) -> None:
    hits = {
        h.relpath: h for h in search(notes, "sleep deprivation", "lex", tiny_embedder, explain=True)
    }
    assert explained(hits["sleep.md"]).proximity > 0.0  # type: ignore[operator]
    assert explained(hits["apart.md"]).proximity == 0.0  # the words stand apart


@pytest.mark.parametrize("boost", [0.0, 0.5, 3.0])
def test_the_weight_used_does_not_follow_the_title_boost(
    notes: Path, tiny_embedder: Embedder, boost: float
) -> None:
    """The weight reads BM25 before the naming factor: a title boost changes the word side's
    scores, not the vector side's say."""

    def weight(tuning: Tuning) -> tuple[float | None, float | None]:
        e = explained(
            search(notes, "docker networking", "hybrid", tiny_embedder, tuning, explain=True)[0]
        )
        return e.strength, e.dense_weight

    assert weight(Tuning(title_exact_boost=boost)) == weight(Tuning())


def test_a_fixed_weight_says_so(notes: Path, tiny_embedder: Embedder) -> None:
    fixed = Tuning(adaptive_fusion=False, dense_weight=0.3)
    hits = search(notes, "docker networking", "hybrid", tiny_embedder, fixed, explain=True)
    assert {(explained(h).strength, explained(h).dense_weight) for h in hits} == {(None, 0.3)}


def test_explain_is_a_frozen_type_of_the_front_door() -> None:
    assert "Explain" in memo_core.__all__ and memo_core.Explain is Explain
    e = Explain(1.0, 1.0, 0.0, 1.0, 1.0, None, None, None, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.bm25 = 2.0  # type: ignore[misc]


# -- the command line -------------------------------------------------------------------------


@pytest.fixture
def with_model(monkeypatch: pytest.MonkeyPatch, tiny_model_dir: Path) -> None:
    monkeypatch.setenv("MEMO_MODEL_DIR", str(tiny_model_dir))


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["search", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", ["docker networking", "cat dog"])
def test_cli_explain_adds_one_indented_line_per_hit(
    notes: Path, capsys: pytest.CaptureFixture[str], with_model: None, mode: str, query: str
) -> None:
    args = (str(notes), query, "--mode", mode, "-k", "5")
    plain = cli(capsys, *args)
    told = cli(capsys, *args, "--explain")
    lines = told.splitlines(keepends=True)
    why = [line for line in lines if line.startswith("  почему: итог ")]
    # One per hit: per block between blank lines, but a last one saying where the next page is.
    more = "offset 5)" in plain.splitlines()[-1]
    assert len(why) == plain.count("\n\n") + 1 - more
    assert "".join(line for line in lines if line not in why) == plain  # the rest unchanged
    # Each comes right after its hit's passage, before the blank line between hits.
    assert all(lines[lines.index(w) + 1] == "\n" for w in why[:-1])
    if mode == "hybrid":
        assert all(" × слова " in w and "вес смысла" in w for w in why)


def test_cli_explain_names_the_parts(
    notes: Path, capsys: pytest.CaptureFixture[str], with_model: None
) -> None:
    out = cli(capsys, str(notes), "docker networking", "-k", "20", "--explain")
    first = next(line for line in out.splitlines() if line.startswith("  почему"))
    assert "BM25" in first and "× название 3 " in first and "косинус" in first
    assert "по силе слов" in first
    assert "слова: не нашли" in out  # a passage only the vectors found


@pytest.mark.parametrize("mode", MODES)
def test_cli_json_explain_adds_an_object_per_hit(
    notes: Path, capsys: pytest.CaptureFixture[str], with_model: None, mode: str
) -> None:
    args = (str(notes), "docker networking", "--mode", mode, "--json")
    plain = json.loads(cli(capsys, *args))
    told = json.loads(cli(capsys, *args, "--explain"))
    fields = [f.name for f in dataclasses.fields(Explain)]
    assert all("explain" not in h for h in plain["hits"])  # as before, without the flag
    assert told["hits"] and all(list(h["explain"]) == fields for h in told["hits"])
    assert [{k: v for k, v in h.items() if k != "explain"} for h in told["hits"]] == plain["hits"]
    for h in told["hits"]:
        e = h["explain"]
        if mode == "hybrid":
            w = e["dense_weight"]
            assert h["score"] == pytest.approx((1 - w) * e["lex_norm"] + w * e["vec_norm"])
        else:
            assert e["dense_weight"] is None and h["score"] == e[mode]


def test_search_help_mentions_explain(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    assert "--explain" in capsys.readouterr().out
