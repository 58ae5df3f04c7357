"""Front matter (YAML, TOML; broken, huge and hostile blocks are text) and inline tags, read
alone and through the engine on an Obsidian-style vault."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import HANG_S, write_notes

from memo_core import Engine, Hit, ModelSource
from memo_core.index.store import Store
from memo_core.model.embedder import Embedder
from memo_core.text.chunking import parse_note
from memo_core.text.frontmatter import (
    MAX_BLOCK_CHARS,
    FrontMatter,
    inline_tags,
    normalize_tag,
    parse_front_matter,
)


def front(text: str) -> FrontMatter | None:
    return parse_front_matter(text.split("\n"))[1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "---\ntitle: Sourdough\naliases: [Levain, Wild yeast]\ntags: [Baking, '#bread/rye']\n"
            "---\nbody",
            FrontMatter("Sourdough", ("Levain", "Wild yeast"), ("baking", "bread/rye")),
        ),
        (
            '+++\ntitle = "Sourdough"\naliases = "Levain, Wild yeast"\n'
            'tags = "#Baking, bread/rye"\n'
            "+++\nbody",
            FrontMatter("Sourdough", ("Levain", "Wild yeast"), ("baking", "bread/rye")),
        ),
        ("---\ntags: a b,c\n...\n", FrontMatter(tags=("a", "b", "c"))),
        ("---\nalias: One\ntag: x\n---\n", FrontMatter(aliases=("One",), tags=("x",))),
        # Words in lists and nested fields are words; booleans and nulls say nothing, nor do
        # numbers, dates and identifiers (no one searches by them; they match stray tokens).
        (
            "---\ndate: 2024-03-01\nat: 2024-03-01 10:30:00\nn: 42\nok: true\nnone: null\n"
            "kw: [alpha, 7]\nnested: {deep: [beta]}\n---\n",
            FrontMatter(words="alpha\nbeta"),
        ),
        (
            '+++\ndate = 2024-03-01\nkw = ["alpha"]\n[sub]\nx = "beta"\n+++\n',
            FrontMatter(words="alpha\nbeta"),
        ),
        (
            "---\nassetid: 1c4937c4-0998-4f81-a994-50d3dd54727c\n"
            "hash: 758d0b25457089de0d611d41fa962e7323985abe\nlocfileid: '32351697'\n"
            "updated: 04/20/2016\nratio: '0.5'\naudience: Developer\nlocale: ru-RU\n"
            "product: Office 2013\nversion: v1.2\n---\n",
            FrontMatter(words="Developer\nru-RU\nOffice 2013\nv1.2"),
        ),
        # Numbers are names still: a title or an alias is kept whole.
        ("---\ntitle: 1984\naliases: ['2024-05-01']\n---\n", FrontMatter("1984", ("2024-05-01",))),
        # Keys that are not strings are fields like others: their values are words.
        ("---\n1: one\n2024-01-01: day\n---\n", FrontMatter(words="one\nday")),
        ("---\n---\nbody", FrontMatter()),
    ],
)
def test_front_matter_is_read(text: str, expected: FrontMatter) -> None:
    assert front(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [unclosed\n---\nbody",  # a syntax error
        '+++\ntitle = "unclosed\n+++\n',
        "---\njust a line of prose\n---\n",  # a scalar, not fields
        "---\n- a\n- b\n---\n",  # a list, not fields
        "---\nx: !!python/object/apply:os.system ['echo pwned']\n---\n",
        "---\nx: !!python/name:os.system\n---\n",
        "---\nx: !!binary aGVsbG8=\n---\n",
        "---\n? [a, b]\n: unhashable key\n---\n",
        "---\nx: &a [*a]\n---\n",  # a loop: past the depth cap
        "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n",  # past libyaml's nesting limit
        "+++\nx = " + "[" * 5000 + "]" * 5000 + "\n+++\n",  # past Python's recursion limit
        "---\ntitle: a\n",  # unclosed: a thematic break, and prose
    ],
)
def test_a_broken_or_hostile_block_is_text(text: str) -> None:
    assert parse_front_matter(text.split("\n")) == (0, None)
    # ... and the note is chunked whole, its block as prose (nothing lost).
    words = " ".join(c.heading + " " + c.text for c in parse_note(text).chunks)
    assert "---" in words or "+++" in words or "title" in words


def test_an_alias_bomb_is_text_and_fast() -> None:
    lines = ["---", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    start = time.perf_counter()
    assert parse_front_matter([*lines, "---", "body"]) == (0, None)  # 10^9 values if walked
    assert time.perf_counter() - start < HANG_S


def test_a_huge_block_is_text() -> None:
    big = ["---", "title: Big", *(f"k{i}: {'v' * 60}" for i in range(MAX_BLOCK_CHARS // 60)), "---"]
    assert parse_front_matter(big) == (0, None)
    fits = ["---", "title: Big", *(f"k{i}: v" for i in range(1000)), "---"]
    start, got = parse_front_matter(fits)
    assert start == len(fits) and got is not None and got.title == "Big"


@pytest.mark.parametrize(
    ("line", "tags"),
    [
        ("#tag and #a/B/c, then #Мысли", ("tag", "a/b/c", "мысли")),
        ("# Heading, ## another, ####### seven", ()),
        ("C# and F#, page#anchor, &#123; \\#escaped", ()),
        ("issue #123 and #1/2, but #y1984 and #2024-plan", ("y1984", "2024-plan")),
        ("`#code` and ``a `#b` c`` outside #yes", ("yes",)),
        ("[link](#anchor) [[Note#Heading]] [[#local]] <https://x.org/#f> #real", ("real",)),
        ("https://example.com/#fragment http://x.org/a#b", ()),
        ("(#paren) [#bracket] #trail/ #dash-", ("paren", "bracket", "trail", "dash")),
        ("#dup #DUP #Dup", ("dup",)),
        ("`" * 3000 + " #after " + "`" * 2999, ("after",)),  # unmatched runs: one pass
    ],
)
def test_inline_tags(line: str, tags: tuple[str, ...]) -> None:
    assert inline_tags([line]) == tags


def test_inline_tags_outside_code_fences_and_front_matter() -> None:
    text = (
        "---\ntags: [front]\n---\n# Title #head\n```\n#not-a-tag\n```\n~~~\n#nor\n~~~\nbody #tail"
    )
    note = parse_note(text)
    assert note.tags == ("front", "head", "tail")
    assert note.chunks[0].line == 4  # the block is not prose, its lines still count


def test_hostile_lines_cost_linear_time() -> None:
    start = time.perf_counter()
    for line in ["](" * 200_000, "[[" * 200_000, "a" * 400_000, "#a" * 200_000, "<" * 400_000]:
        inline_tags([line])
    assert time.perf_counter() - start < HANG_S


@pytest.mark.parametrize(
    ("raw", "tag"),
    [("#A/B", "a/b"), (" tag ", "tag"), ("/x/", "x"), ("#", ""), ("a b", ""), ("x" * 201, "")],
)
def test_normalize_tag(raw: str, tag: str) -> None:
    assert normalize_tag(raw) == tag


VAULT = {
    # A note at the top, so the vault is one collection (not a folder of collections).
    "Home.md": "# Home\n\nStart here: [daily](daily/2024-05-01.md#thursday).\n",
    "daily/2024-05-01.md": """
        ---
        title: Morning pages
        tags: [journal, Projects/Garden]
        mood: cheerful
        ---
        # Thursday

        Watered the tomatoes. #projects/garden/tomatoes
        """,
    "recipes/bread.md": """
        ---
        title: Country loaf
        aliases: [Pain de campagne, Sourdough boule]
        tags: cooking/bread
        ---
        # Country loaf

        Flour, water, salt and a starter. Bake hot. #Cooking
        """,
    "recipes/notes.md": """
        # Kitchen notes

        A pain de campagne is a sourdough boule of country flour; every boule here was
        a sourdough boule, a pain de campagne, a loaf. Sourdough boule, sourdough boule.
        ```
        #cooking/bread is not a tag inside code
        ```
        """,
    "projects/garden.md": """
        +++
        title = "Garden plan"
        tags = ["projects/garden"]
        +++
        Raised beds along the fence. See [[daily/2024-05-01#Thursday]].
        """,
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault", VAULT)


def rel(vault: Path, hit: Hit) -> str:
    return Path(hit.path).relative_to(vault).as_posix()


def test_obsidian_vault(vault: Path, tiny_embedder: Embedder) -> None:
    with Engine(models=ModelSource(tiny_embedder)) as e:
        # An alias finds its note first, above a note that repeats its words.
        [first, *_] = e.search(vault, "Sourdough boule", mode="lex", k=3)
        assert rel(vault, first) == "recipes/bread.md"
        [first, *_] = e.search(vault, "sourdough boule", k=3)
        assert rel(vault, first) == "recipes/bread.md"
        # A title the note's text never says finds it, as a heading would.
        [first, *_] = e.search(vault, "morning pages", mode="lex", k=3)
        assert rel(vault, first) == "daily/2024-05-01.md"
        # Other fields are words.
        assert [rel(vault, h) for h in e.search(vault, "cheerful", mode="lex")] == [
            "daily/2024-05-01.md"
        ]
    store = Store.open_existing(vault / ".memo" / "index.db")
    assert store is not None
    try:
        ids = dict(store.db.execute("SELECT path, id FROM files"))
        assert store.files_tagged(["#Projects/Garden"]) == {
            ids["daily/2024-05-01.md"],
            ids["projects/garden.md"],
        }
        assert store.files_tagged(["projects/garden/tomatoes"]) == {ids["daily/2024-05-01.md"]}
        assert store.files_tagged(["projects/gar"]) == set()  # a prefix of a word is no tag
        assert store.files_tagged(["cooking"]) == {ids["recipes/bread.md"]}
        assert store.files_tagged(["cooking/bread", "COOKING"]) == {ids["recipes/bread.md"]}
        assert store.files_tagged(["journal", "cooking"]) == set()
        with pytest.raises(ValueError, match="not a tag"):
            store.files_tagged(["#"])
    finally:
        store.close()


def test_a_changed_title_is_found_after_a_refresh(vault: Path) -> None:
    with Engine(models=ModelSource(None, enabled=False)) as e:
        assert e.search(vault, "morning pages", mode="lex")
        note = vault / "daily/2024-05-01.md"
        note.write_text(note.read_text().replace("Morning pages", "Evening log"))
        assert not e.search(vault, "morning pages", mode="lex")
        assert rel(vault, e.search(vault, "evening log", mode="lex")[0]) == "daily/2024-05-01.md"
        note.write_text(note.read_text().replace("mood: cheerful", "mood: gloomy"))
        assert not e.search(vault, "cheerful", mode="lex")
        assert e.search(vault, "gloomy", mode="lex")
