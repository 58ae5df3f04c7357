"""memo_core/text/titles.py: a note's title, and the heading path its passages are embedded
under (a note with no level-1 heading of its own has its title lead them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CountingEmbedder, write_notes

from memo_core import Searcher
from memo_core.text.titles import embedded_heading, lead_of, title_of


@pytest.mark.parametrize(
    ("path", "names", "title"),
    [
        ("a/backup-plan.md", [], "backup-plan"),
        ("a/backup-plan.md", ["Backup plan", "restic"], "Backup plan"),
        ("a/backup-plan.md", ["  "], "backup-plan"),  # a blank name is none
        ("docs/pods/_index.md", [], "pods"),  # a section page: its folder names it
        ("docs/pods/README.md", [], "pods"),
        ("index.md", [], "index"),  # at the top there is no folder to name it
        ("docs/pods/_index.md", ["Pods"], "Pods"),
    ],
)
def test_title_of(path: str, names: list[object], title: str) -> None:
    assert title_of(path, names) == title


def test_a_note_with_its_own_title_leads_nothing() -> None:
    assert lead_of("a/b.md", ["Front title"], titled=True) == ""
    assert lead_of("a/b.md", ["Front title"], titled=False) == "Front title"


@pytest.mark.parametrize(
    ("lead", "heading", "embedded"),
    [
        ("", "Setup > Linux", "Setup > Linux"),
        ("Backup plan", "Steps", "Backup plan > Steps"),
        ("Backup plan", "", "Backup plan"),
        ("Steps", "Steps > More", "Steps > More"),  # the path holds it already
    ],
)
def test_embedded_heading(lead: str, heading: str, embedded: str) -> None:
    assert embedded_heading(lead, heading) == embedded


def test_passages_of_a_note_without_a_title_heading_are_embedded_under_its_title(
    tmp_path: Path, counting: CountingEmbedder
) -> None:
    notes = write_notes(
        tmp_path / "vault",
        {
            "front.md": "---\ntitle: Backup plan\n---\n\n## Steps\n\nrestic every night\n",
            "bare.md": "## Steps\n\ncabbage in the bowl\n",
            "own.md": "# Own title\n\n## Steps\n\nbeets sing\n",
            "pods/_index.md": "## Overview\n\nbeets and cabbage\n",
        },
    )
    with Searcher(notes, embedder=counting) as s:
        s.refresh()
    seen = {t.split("\n", 1)[1]: t.split("\n", 1)[0] for t in counting.texts}
    assert seen["restic every night"] == "Backup plan > Steps"  # front matter title
    assert seen["cabbage in the bowl"] == "bare > Steps"  # the file name
    assert seen["beets sing"] == "Own title > Steps"  # its own heading, nothing added
    assert seen["beets and cabbage"] == "pods > Overview"  # a section page: its folder


def test_a_retitled_note_is_embedded_again(tmp_path: Path, counting: CountingEmbedder) -> None:
    """Its title is part of what is embedded: a new one gives its passages new vectors."""
    notes = write_notes(tmp_path / "vault", {"n.md": "---\ntitle: Old\n---\n\nbeets sing\n"})
    with Searcher(notes, embedder=counting) as s:
        s.refresh()
        (notes / "n.md").write_text("---\ntitle: New\n---\n\nbeets sing\n", encoding="utf-8")
        s.refresh()
    assert counting.texts == ["Old\nbeets sing", "New\nbeets sing"]
