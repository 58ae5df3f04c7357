"""memo_core.index.rows: how a note's path is stored and read back, a note's title, the
heading a hit shows, and the file stats kept between refreshes (`FileStats`)."""

from __future__ import annotations

import json
import os

import pytest

from memo_core.files.walker import Changes
from memo_core.index.rows import BadRow, ChunkRow, FileStats, from_stored, note_title, stored


@pytest.mark.parametrize("rel", ["a.md", "d/e/f.md", "заметки/бэкап.md", "with space.md"])
def test_a_utf8_path_is_stored_as_it_is_and_read_back(rel: str) -> None:
    assert stored(rel) == rel
    assert from_stored(stored(rel)) == rel


def test_an_undecodable_path_is_stored_as_hex_after_a_slash_and_read_back() -> None:
    rel = os.fsdecode(b"d/n\xff\xfe.md")  # bytes no UTF-8 decodes: surrogates
    kept = stored(rel)
    assert kept == "/" + b"d/n\xff\xfe.md".hex()
    kept.encode("utf-8")  # what is stored is valid UTF-8
    assert from_stored(kept) == rel
    assert os.fsencode(from_stored(kept)) == b"d/n\xff\xfe.md"


@pytest.mark.parametrize(
    "text",
    [
        "",  # empty
        "/zz",  # not hex after its "/"
        "/",  # the hex of nothing: an empty path
        "/" + b"/etc/passwd".hex(),  # absolute, hidden in hex
        "../out.md",
        "a/../../out.md",
        "./a.md",
        "a//b.md",
        "a/",
        "a\x00b.md",
        "/" + b"a\x00b.md".hex(),
    ],
)
def test_a_path_stored_never_makes_is_a_bad_row(text: str) -> None:
    with pytest.raises(BadRow):
        from_stored(text)


def test_a_bad_row_is_a_value_error_naming_a_short_prefix_of_the_path() -> None:
    with pytest.raises(ValueError) as caught:
        from_stored("../" + "x" * 500)
    assert "x" * 57 in str(caught.value)
    assert "x" * 100 not in str(caught.value)


@pytest.mark.parametrize(
    ("path", "front", "title"),
    [
        ("notes/backup.md", "", "backup"),
        (
            "notes/backup.md",
            json.dumps({"names": ["Restic backups"], "words": ""}),
            "Restic backups",
        ),
        ("notes/backup.md", json.dumps({"names": [], "words": "x"}), "backup"),
        ("notes/backup.md", "not json", "backup"),  # damaged: the file's name
        ("notes/backup.md", "[1, 2]", "backup"),  # JSON, but no object
        ("notes/backup.md", json.dumps({"names": "Not a list"}), "backup"),
    ],
)
def test_a_notes_title_is_its_first_name_else_its_file_name(
    path: str, front: str, title: str
) -> None:
    assert note_title(path, front) == title


def _row(heading: str) -> ChunkRow:
    return ChunkRow(1, "a.md", 1, heading, "text", 2, "The title")


def test_a_passage_under_a_heading_shows_it_and_one_before_any_shows_the_title() -> None:
    assert _row("Setup").shown_heading == "Setup"
    assert _row("").shown_heading == "The title"


def _stats() -> FileStats:
    return FileStats({"top.md": (1, 10), "a/x.md": (2, 20), "a/y.md": (3, 30), "a/b/z.md": (4, 40)})


def test_file_stats_within_a_folder_are_those_of_its_own_notes() -> None:
    fs = _stats()
    assert fs.within(Changes(dirs={"a/"})) == {"a/x.md": (2, 20), "a/y.md": (3, 30)}
    assert fs.within(Changes(dirs={""})) == {"top.md": (1, 10)}


def test_file_stats_within_a_tree_hold_every_note_below_it() -> None:
    fs = _stats()
    assert fs.within(Changes(trees={"a/"})) == {
        "a/x.md": (2, 20),
        "a/y.md": (3, 30),
        "a/b/z.md": (4, 40),
    }
    assert fs.within(Changes(trees={""})) == fs.all
    assert fs.within(Changes(dirs={"nowhere/"})) == {}


def test_a_change_applies_to_all_and_to_the_folders_once_they_are_asked_for() -> None:
    fs = _stats()
    fs.set("new.md", (5, 50))  # before any folder was asked for: `all` only
    assert fs.all["new.md"] == (5, 50)
    assert fs.within(Changes(dirs={""})) == {"top.md": (1, 10), "new.md": (5, 50)}
    fs.set("c/d.md", (6, 60))  # a folder not known before
    fs.set("a/x.md", None)  # gone
    fs.set("a/y.md", (7, 70))  # changed
    assert "a/x.md" not in fs.all
    assert fs.within(Changes(dirs={"c/"})) == {"c/d.md": (6, 60)}
    assert fs.within(Changes(dirs={"a/"})) == {"a/y.md": (7, 70)}
    assert fs.within(Changes(trees={""})) == fs.all


def test_a_folder_emptied_stays_known_to_hold_none() -> None:
    fs = FileStats({"a/x.md": (1, 1)})
    assert fs.within(Changes(dirs={"a/"})) == {"a/x.md": (1, 1)}
    fs.set("a/x.md", None)
    fs.set("a/x.md", None)  # removing twice is harmless
    assert fs.within(Changes(dirs={"a/"})) == {}
    assert fs.all == {}
