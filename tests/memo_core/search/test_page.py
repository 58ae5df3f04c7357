"""memo_core/search/page.py: an answer's pages show distinct notes, and copies of a passage
as one hit that names the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import Engine, ModelSource
from memo_core.search.page import archived, collapsed, paged
from memo_text import Lang, format_hits, search_data

# -- pages of distinct notes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("ranked", "k", "pages"),
    [
        # note of each passage, best first -> the order shown
        ("aabcde", 3, "abc ade"),  # a's second passage waits for the next page, first there
        ("aaaab", 2, "ab aa a"),  # too few notes: the page is filled in the ranking's order
        ("abcabc", 3, "abc abc"),
        ("aaa", 1, "a a a"),
        ("", 3, ""),
    ],
)
def test_each_page_shows_distinct_notes(ranked: str, k: int, pages: str) -> None:
    items = list(enumerate(ranked))  # (place in the ranking, note)
    got = paged(items, lambda item: item[1], k)
    assert "".join(note for _, note in got) == pages.replace(" ", "")
    assert sorted(got) == items  # nothing lost, nothing twice
    for start in range(0, len(got), k):
        page = got[start : start + k]
        assert [place for place, _ in page] == sorted(place for place, _ in page)


# -- copies ---------------------------------------------------------------------------

TEXT = (
    "To restore one folder, list the snapshots first, then run restic restore latest with "
    "the target folder and the include pattern for the folder you need back."
)


def fold(items: list[tuple[str, str]], terms: list[str] = ()) -> list[tuple[str, list[str]]]:
    shown = collapsed(
        items,
        text=lambda item: item[1],
        path=lambda item: item[0],
        note=lambda item: item[0],
        terms=terms,
        aside=lambda item: archived(item[0]),
    )
    return [(s.item[0], s.also_in) for s in shown]


def test_copies_are_one_hit_that_names_the_others() -> None:
    other = "Sourdough starter wants flour and water every day, and a warm place at night too."
    items = [("a.md", TEXT), ("b.md", other), ("c.md", TEXT + " Done."), ("d.md", TEXT)]
    assert fold(items) == [("a.md", ["c.md", "d.md"]), ("b.md", [])]


def test_a_copy_that_holds_more_of_the_query_stays_a_hit() -> None:
    items = [("a.md", TEXT), ("b.md", TEXT + " Verify it with restic check afterwards.")]
    assert fold(items, ["check"]) == [("a.md", []), ("b.md", [])]
    assert fold(items, ["restor"]) == [("a.md", ["b.md"])]


def test_the_current_copy_is_shown_rather_than_the_archived_one() -> None:
    items = [("archive/2019/restore.md", TEXT), ("howto/restore.md", TEXT)]
    assert fold(items) == [("howto/restore.md", ["archive/2019/restore.md"])]
    assert fold(items[::-1]) == [("howto/restore.md", ["archive/2019/restore.md"])]


def test_a_copy_is_weighed_against_the_copy_shown_not_the_one_it_replaced() -> None:
    """The archived copy holds the query's word, the current one shown in its place does
    not: a later copy that holds it says more than the one shown, so it stays a hit."""
    more = TEXT + " Verify it with restic check afterwards."
    items = [("archive/a.md", more), ("howto/b.md", TEXT), ("notes/c.md", more)]
    assert fold(items, ["check"]) == [("howto/b.md", ["archive/a.md"]), ("notes/c.md", [])]


@pytest.mark.parametrize(
    ("original", "copy"),
    [
        (TEXT, TEXT.replace("folder,", "folder ,").upper()),  # case and spacing aside
        (
            "要恢复一个文件夹，先列出所有快照，然后用目标文件夹和包含模式运行恢复命令，取回需要的文件夹。",
            "要恢复一个文件夹，先列出所有快照，然后用目标文件夹和包含模式运行恢复命令，取回需要的文件。",
        ),  # no spaces between words: a copy still, by pairs of characters
    ],
    ids=["spaced", "unspaced"],
)
def test_copies_are_found_in_spaced_and_unspaced_scripts(original: str, copy: str) -> None:
    assert fold([("a.md", original), ("b.md", copy)]) == [("a.md", ["b.md"])]


def test_short_passages_are_never_copies() -> None:
    assert fold([("a.md", "See also: restore."), ("b.md", "See also: restore.")]) == [
        ("a.md", []),
        ("b.md", []),
    ]


@pytest.mark.parametrize(
    ("rel", "aside"),
    [
        ("archive/restore.md", True),
        ("docs/Old/restore.md", True),
        ("Архив/заметка.md", True),
        ("old-restore.md", False),  # a file name is not a folder kept aside
        ("backup/restore.md", False),
        ("archives.md", False),
    ],
)
def test_archived(rel: str, aside: bool) -> None:
    assert archived(rel) is aside


# -- through the engine ---------------------------------------------------------------


def lex_engine() -> Engine:
    return Engine(models=ModelSource(enabled=False))


def test_a_first_page_shows_distinct_notes_and_the_next_the_rest(tmp_path: Path) -> None:
    long = "# Restic\n\n" + "\n\n".join(
        f"## Part {i}\n\nrestic restic restic snapshot {i}\n" for i in range(4)
    )
    notes = write_notes(
        tmp_path / "notes",
        {"restic.md": long, "a.md": "# A\n\nrestic once\n", "b.md": "# B\n\nrestic here too\n"},
    )
    with lex_engine() as e:
        first = e.search(notes, "restic", mode="lex", k=3)
        assert sorted(h.relpath for h in first) == ["a.md", "b.md", "restic.md"]
        assert first.next_offset == 3
        rest = e.search(notes, "restic", mode="lex", k=3, offset=3)
        assert [h.relpath for h in rest] == ["restic.md"] * 3
        assert rest.next_offset is None


def test_an_archived_copy_is_named_under_the_current_one(tmp_path: Path) -> None:
    page = "# Restore\n\n" + TEXT + "\n"
    notes = write_notes(
        tmp_path / "notes",
        {
            "howto/restore.md": page,
            "archive/restore.md": page,
            "index.md": "# Notes\n\nmisc\n",
        },
    )
    with lex_engine() as e:
        found = e.search(notes, "restic restore folder", mode="lex")
    assert [h.relpath for h in found] == ["howto/restore.md"]
    assert found[0].also_in == (str(notes / "archive" / "restore.md"),)
    text = format_hits(found, str(notes))
    assert "то же в: archive/restore.md\n" in text
    assert "the same in: archive/restore.md" in format_hits(found, str(notes), lang=Lang.EN)
    data = json.loads(json.dumps(search_data(found)))
    assert data["hits"][0]["also_in"] == [str(notes / "archive" / "restore.md")]
