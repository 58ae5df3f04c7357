"""memo_mcp.completions: which values match what was typed, which names can be offered,
the notes of a collection, and which arguments complete at all.

`matching` and `sendable` are pure; `note_paths` runs on a real Engine (the tiny model) over
a tiny folder; the registered handler is asked through the SDK's in-process client only for
what the module decides (which references and arguments complete): the full flows are
tests/stories/test_mcp_resources.py's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_notes
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import PromptReference, ResourceTemplateReference

from memo_core import Engine, ModelSource
from memo_core.model.embedder import Embedder
from memo_mcp.completions import (
    MAX_VALUES,
    matching,
    note_paths,
    register_completions,
    sendable,
)
from memo_mcp.lazy import LazyEngine
from memo_mcp.places import FolderSlots
from memo_mcp.prompts import PATH_PROMPTS
from memo_mcp.resources import NOTE_TEMPLATE

NOTE_REF = ResourceTemplateReference(type="ref/resource", uri=NOTE_TEMPLATE)

# -- matching --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("candidates", "typed", "values"),
    [
        (["/a/x", "/b/y"], "", ["/a/x", "/b/y"]),  # nothing typed: every value, in order
        (["/n/b", "/n/a", "/m"], "/n", ["/n/b", "/n/a"]),
        # Those that start with it first, then those that contain it, any case.
        (["/srv/my-notes", "/etc", "/home/NOTES"], "notes", ["/srv/my-notes", "/home/NOTES"]),
        (["/x/notes", "notes-old", "/y/Notes"], "notes", ["notes-old", "/x/notes", "/y/Notes"]),
        (["/a/Notes", "/a/notes"], "/a/N", ["/a/Notes", "/a/notes"]),
        (["Заметки", "мои заметки", "работа"], "ЗАМ", ["Заметки", "мои заметки"]),
        (["Straße/a.md"], "STRASSE", ["Straße/a.md"]),  # casefold, not lower
        (["ёж.md", "еж.md"], "ё", ["ёж.md"]),  # ё is its own letter here
        (["a.md"], "b", []),
        ([], "x", []),
        (["a.md"], "a.md/more", []),  # longer than any value
    ],
)
def test_matching_values_in_order(candidates: list[str], typed: str, values: list[str]) -> None:
    got = matching(candidates, typed)
    assert got.values == values
    assert (got.total, got.has_more) == (len(values), False)


def test_matching_offers_at_most_the_limit_and_says_how_many_more() -> None:
    candidates = [f"note{i:03}.md" for i in range(250)]
    got = matching(candidates, "note")
    assert got.values == candidates[:MAX_VALUES] and MAX_VALUES == 100
    assert (got.total, got.has_more) == (250, True)
    # Prefix hits fill the page before the others.
    mixed = [f"x/note{i}.md" for i in range(150)] + ["note.md"]
    got = matching(mixed, "note")
    assert got.values[0] == "note.md" and len(got.values) == MAX_VALUES
    assert (got.total, got.has_more) == (151, True)
    exactly = matching(candidates[:MAX_VALUES], "")
    assert (len(exactly.values), exactly.total, exactly.has_more) == (MAX_VALUES, 100, False)


def test_matching_a_value_is_never_offered_twice() -> None:
    got = matching(["notes", "my notes"], "notes")
    assert got.values == ["notes", "my notes"] and got.total == 2


# -- sendable ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("notes/a.md", True),
        ("заметки/ёж 🦔.md", True),
        ("with space.md", True),
        ("a\u00a0b.md", True),  # a no-break space is a printable space
        ("", True),
        ("a\nb.md", False),
        ("tab\t.md", False),
        ("esc\x1b[31m.md", False),
        ("bell\x07.md", False),
        ("rtl\u202egnp.md", False),  # a format character: it would reorder the line
        ("zero\u200bwidth.md", False),
        ("caf\udce9.md", False),  # a byte that is not UTF-8, as the OS gives it
        ("del\x7f.md", False),
    ],
)
def test_sendable_names_are_one_printable_line_of_text(name: str, ok: bool) -> None:
    assert sendable(name) is ok


# -- note_paths --------------------------------------------------------------------------------


@pytest.fixture
def engine(tiny_embedder: Embedder, tmp_path: Path) -> Iterator[Engine]:
    with Engine(models=ModelSource(tiny_embedder), roots=[tmp_path]) as e:
        yield e


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(
        tmp_path / "notes",
        {
            "b.md": "# B\n",
            "a.md": "# A\n",
            "sub/c.md": "# C\n",
            "readme.txt": "not a note\n",
            ".hidden/h.md": "# hidden\n",
            "esc\x1b[31m.md": "# escape in its name\n",
            "line\nbreak.md": "# newline in its name\n",
        },
    )


def test_note_paths_are_the_sendable_notes_relative_and_sorted(
    engine: Engine, notes: Path, tmp_path: Path
) -> None:
    os.close(os.open(os.fsencode(notes) + b"/caf\xe9.md", os.O_CREAT | os.O_WRONLY))
    engines = LazyEngine([tmp_path], engine)
    assert note_paths(engines, str(notes), [tmp_path]) == ["a.md", "b.md", "sub/c.md"]
    # A sub-folder: its notes, relative to it.
    assert note_paths(engines, str(notes / "sub"), [tmp_path]) == ["c.md"]


@pytest.mark.parametrize(
    "collection",
    [
        "{outside}",  # not in the roots
        "{notes}/missing",
        "{notes}/a.md",  # a note, not a folder
        "",
        "{notes}/..\x00",
    ],
)
def test_note_paths_of_what_is_no_folder_in_the_roots_are_none(
    engine: Engine, notes: Path, tmp_path: Path, collection: str
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    write_notes(outside, {"x.md": "# X\n"})
    engines = LazyEngine([tmp_path], engine)
    named = collection.format(notes=notes, outside=outside)
    assert note_paths(engines, named, [tmp_path]) == []


def test_note_paths_are_refused_outside_the_roots_given_though_the_engine_may(
    engine: Engine, notes: Path, tmp_path: Path
) -> None:
    engines = LazyEngine([tmp_path], engine)
    assert note_paths(engines, str(notes), [notes / "sub"]) == []


# -- which arguments complete ------------------------------------------------------------------


@pytest.fixture
def indexed(engine: Engine, tmp_path: Path) -> list[Path]:
    folders = [
        write_notes(tmp_path / "alpha", {"x.md": "# X\n", "y/z.md": "# Z\n"}),
        write_notes(tmp_path / "deep" / "beta", {"b.md": "# B\n"}),
    ]
    write_notes(tmp_path / "never-indexed", {"n.md": "# N\n"})
    for folder in folders:
        engine.refresh(folder, embed=False)
    return folders


def client(engine: Engine, roots: list[Path]) -> Client:
    server = MCPServer(name="completions")
    register_completions(server, roots, LazyEngine(roots, engine), FolderSlots())
    return Client(server, mode="legacy")


async def test_folders_complete_to_the_indexed_collections(
    engine: Engine, indexed: list[Path], tmp_path: Path
) -> None:
    alpha, beta = (str(f) for f in indexed)
    async with client(engine, [tmp_path]) as c:
        for name in sorted(PATH_PROMPTS):
            prompt = PromptReference(type="ref/prompt", name=name)
            got = (await c.complete(prompt, {"name": "path", "value": ""})).completion
            assert got.values == [alpha, beta]
        got = (await c.complete(NOTE_REF, {"name": "collection", "value": "BETA"})).completion
        assert got.values == [beta]
        got = (await c.complete(NOTE_REF, {"name": "collection", "value": alpha})).completion
        assert got.values == [alpha]


async def test_a_notes_path_completes_within_the_chosen_collection(
    engine: Engine, indexed: list[Path], tmp_path: Path
) -> None:
    alpha = str(indexed[0])
    async with client(engine, [tmp_path]) as c:
        got = await c.complete(NOTE_REF, {"name": "path", "value": ""}, {"collection": alpha})
        assert got.completion.values == ["x.md", "y/z.md"]
        got = await c.complete(NOTE_REF, {"name": "path", "value": "Z"}, {"collection": alpha})
        assert got.completion.values == ["y/z.md"]
        # A folder that was never indexed still lists the notes memo://note would serve.
        never = str(tmp_path / "never-indexed")
        got = await c.complete(NOTE_REF, {"name": "path", "value": ""}, {"collection": never})
        assert got.completion.values == ["n.md"]


@pytest.mark.parametrize(
    ("ref", "argument", "context"),
    [
        (PromptReference(type="ref/prompt", name="search_notes"), "question", None),
        (PromptReference(type="ref/prompt", name="topic_brief"), "topic", None),
        (PromptReference(type="ref/prompt", name="no_such_prompt"), "path", None),
        (ResourceTemplateReference(type="ref/resource", uri="memo://other/{x}"), "x", None),
        (
            ResourceTemplateReference(type="ref/resource", uri="memo://changes/{collection}"),
            "collection",
            None,
        ),
        (NOTE_REF, "other", None),
        (NOTE_REF, "path", None),  # no collection chosen yet
        (NOTE_REF, "path", {"collection": ""}),
    ],
)
async def test_other_arguments_get_no_values(
    engine: Engine,
    indexed: list[Path],
    tmp_path: Path,
    ref: PromptReference | ResourceTemplateReference,
    argument: str,
    context: dict[str, str] | None,
) -> None:
    async with client(engine, [tmp_path]) as c:
        got = await c.complete(ref, {"name": argument, "value": ""}, context)
    assert got.completion.values == []


async def test_folders_outside_the_roots_are_never_offered(
    engine: Engine, indexed: list[Path], tmp_path: Path
) -> None:
    alpha = indexed[0]
    async with client(engine, [tmp_path / "deep"]) as c:
        prompt = PromptReference(type="ref/prompt", name="search_notes")
        got = (await c.complete(prompt, {"name": "path", "value": ""})).completion
        assert got.values == [str(indexed[1])]
        got = await c.complete(NOTE_REF, {"name": "path", "value": ""}, {"collection": str(alpha)})
        assert got.completion.values == []
