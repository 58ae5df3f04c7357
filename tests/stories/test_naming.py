"""Naming (memo_core.search.wordscore): a passage the query names ranks first, the one titled
exactly so first of all; headings are searched and shown as a reader sees them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import Embedder, Engine, ModelSource, Tuning
from memo_core.search.wordscore import exactness
from memo_core.text import textnorm


@pytest.mark.parametrize(
    ("query", "heading", "rel", "expected"),
    [
        ("Recordset object (ADO)", "Recordset object (ADO)", "a.md", 1.0),
        ("Recordset object (ADO)", "Recordset object (ADO) reference", "a.md", 0.75),
        # The note's own title counts as well as the section's heading.
        ("Recordset object", "Recordset object > Remarks", "a.md", 1.0),
        ("Recordset object", "Docs > Recordset object", "a.md", 1.0),
        # And the file name's words (without the folders and the .md).
        ("sourdough starter", "Feeding", "kitchen/sourdough-starter.md", 1.0),
        ("sourdough", "Feeding", "kitchen/sourdough-starter.md", 0.5),
        ("message box macro action", "", "MessageBoxMacroAction.md", 1.0),
        ("wi-fi setup", "WiFi setup", "a.md", 1.0),
        # Stopwords and inflection do not count against a title.
        ("настройка бэкапов", "Настройки бэкапа", "a.md", 1.0),
        ("What is a lock", "Lock", "a.md", 1.0),
        ("anything", "", "a.md", 0.0),
    ],
)
def test_exactness(query: str, heading: str, rel: str, expected: float) -> None:
    terms = set(textnorm.query_terms(query))
    assert exactness(terms, heading, rel) == pytest.approx(expected)


TITLES = {
    "docker-networking-troubleshooting.md": "# Docker networking troubleshooting\n\n"
    + "When docker networking fails: docker network ls, docker network inspect; "
    "docker networking between containers, docker networking and DNS.\n",
    "docker-networking.md": "# Docker networking\n\nBridges, overlays and ports.\n",
}


@pytest.mark.parametrize("mode", ["lex", "hybrid"])
def test_the_exact_title_comes_before_a_longer_one(
    tmp_path: Path, tiny_embedder: Embedder, mode: str
) -> None:
    notes = write_notes(tmp_path / "notes", TITLES)
    with Engine(models=ModelSource(tiny_embedder)) as engine:
        hits = engine.search(notes, "docker networking", k=2, mode=mode)
    assert [h.relpath for h in hits] == [
        "docker-networking.md",
        "docker-networking-troubleshooting.md",
    ]
    # The mechanism: without the exactness term, the page that repeats the words wins.
    loose = Tuning(title_exact_boost=0.0)
    with Engine(models=ModelSource(tiny_embedder), tuning=loose) as engine:
        hits = engine.search(notes, "docker networking", k=1, mode=mode)
    assert hits[0].relpath == "docker-networking-troubleshooting.md"


def test_headings_are_shown_and_searched_as_rendered(tmp_path: Path) -> None:
    notes = write_notes(
        tmp_path / "notes",
        {
            "relations.md": '# <a name="relations-dao"></a>Свойство Relations (DAO)\n\n'
            "Возвращает коллекцию связей.\n\n"
            "## Синтаксис {#syntax}\n\nвыражение.Relations\n",
        },
    )
    with Engine() as engine:
        hits = engine.search(notes, "Relations", k=5, mode="lex")
        assert sorted(h.heading for h in hits) == [
            "Свойство Relations (DAO)",
            "Свойство Relations (DAO) > Синтаксис",
        ]
        # Markup is not words: an anchor's attribute names no longer match.
        assert engine.search(notes, "name", k=5, mode="lex") == []
