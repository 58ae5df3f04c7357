"""Reading one note (`Engine.note`) and listing a folder's notes (`Engine.note_paths`): only
what a search could find there, judged by the walker's own rules, read through descriptors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import (
    Engine,
    ModelSource,
    NotANoteError,
    NoteNotFoundError,
    OutsideRootsError,
)
from memo_core.files.walker import scan

LIMIT = 1 << 20


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = write_notes(
        tmp_path / "notes",
        {
            "a.md": "# A\n\ncat\n",
            ".memoignore": "private/\nsecret.md\n",
            "secret.md": "# S\n",
            "private/p.md": "# P\n",
            "sub/.gitignore": "*.md\n!keep.md\n",
            "sub/keep.md": "# Keep\n",
            "sub/drop.md": "# Drop\n",
            "docs/.gitignore": "/*\n!/open/\n",
            "docs/open/o.md": "# O\n",
            "docs/shut/s.md": "# Shut\n",
            ".hidden/h.md": "# H\n",
            "node_modules/n.md": "# N\n",
            "data.txt": "x",
        },
    )
    outside = write_notes(tmp_path / "outside", {"x.md": "# X\n"})
    os.symlink(outside / "x.md", root / "out.md")
    os.symlink(outside, root / "out")
    os.symlink(root / "a.md", root / "in.md")
    os.mkfifo(root / "pipe.md")
    return root


@pytest.fixture
def engine(notes: Path):
    with Engine(models=ModelSource(enabled=False), roots=[notes]) as e:
        e.refresh(notes)  # an index: a sub-folder asked for is judged from this collection
        yield e


SERVED = ["a.md", "docs/open/o.md", "in.md", "sub/keep.md"]
REFUSED = [
    ("secret.md", "left out by .gitignore or .memoignore"),  # .memoignore, by name
    ("private/p.md", "left out by .gitignore or .memoignore"),  # .memoignore, a folder
    ("sub/drop.md", "left out by .gitignore or .memoignore"),  # a nested .gitignore
    ("docs/shut/s.md", "left out by .gitignore or .memoignore"),  # negation lets only open/
    (".hidden/h.md", "not a Markdown note"),
    (".memo/index.db", "not a Markdown note"),
    ("node_modules/n.md", "not a Markdown note"),
    ("data.txt", "not a Markdown note"),
    ("pipe.md", "not a Markdown note"),  # a FIFO: never opened for reading
    ("out.md", "leads outside"),
    ("out/x.md", "leads outside"),
    ("out/nope.md", "leads outside"),  # the same answer whatever lies there
    ("a.md/", "relative to the collection"),
    ("./a.md", "relative to the collection"),
    ("sub/../a.md", "relative to the collection"),
]


@pytest.mark.parametrize("rel", SERVED)
def test_what_the_index_holds_is_served(engine: Engine, notes: Path, rel: str) -> None:
    note = engine.note(notes, rel, limit=LIMIT)
    assert note.text == (notes / rel).read_text() and not note.cut


@pytest.mark.parametrize(("rel", "why"), REFUSED, ids=[r for r, _ in REFUSED])
def test_what_the_index_leaves_out_is_refused(
    engine: Engine, notes: Path, rel: str, why: str
) -> None:
    with pytest.raises(NotANoteError, match=why):
        engine.note(notes, rel, limit=LIMIT)


def test_served_is_what_the_walker_indexes(engine: Engine, notes: Path) -> None:
    # The walker lists the FIFO (the index skips it, and says so); what may be read (and
    # completions offer) leaves it out, since reading it is refused.
    walked = scan(notes)
    assert sorted(walked.files) == sorted([*SERVED, "pipe.md"]) and walked.special == ["pipe.md"]
    assert engine.note_paths(notes) == sorted(SERVED)
    [st] = engine.status(notes)
    assert (st.files, st.skipped) == (len(SERVED), 1)


@pytest.mark.parametrize(
    ("folder", "rel", "listed"),
    [
        ("private", "p.md", []),
        ("sub", "drop.md", ["keep.md"]),
        ("docs/shut", "s.md", []),
        ("docs", "shut/s.md", ["open/o.md"]),
        (".hidden", "h.md", []),
    ],
)
def test_a_sub_folder_named_as_the_collection_is_judged_from_its_collection(
    engine: Engine, notes: Path, folder: str, rel: str, listed: list[str]
) -> None:
    with pytest.raises(NotANoteError):
        engine.note(notes / folder, rel, limit=LIMIT)
    assert engine.note_paths(notes / folder) == listed
    for name in listed:
        assert engine.note(notes / folder, name, limit=LIMIT).text.startswith("# ")


def test_missing_and_outside(engine: Engine, notes: Path, tmp_path: Path) -> None:
    with pytest.raises(NoteNotFoundError, match="no such note: nope.md in"):
        engine.note(notes, "nope.md", limit=LIMIT)
    with pytest.raises(NoteNotFoundError):
        engine.note(notes, "gone/nope.md", limit=LIMIT)
    with pytest.raises(OutsideRootsError):
        engine.note(tmp_path / "outside", "x.md", limit=LIMIT)


def test_a_big_note_is_cut_at_a_line_end(engine: Engine, notes: Path) -> None:
    (notes / "big.md").write_text("# Big\n" + "line\n" * 40)
    note = engine.note(notes, "big.md", limit=100)
    assert note.cut and note.kept == len(note.text) <= 100 and note.text.endswith("\n")
    assert note.size == (notes / "big.md").stat().st_size
