"""Chunking: exact (line, heading, text) triples, plus a seeded random property test."""

from __future__ import annotations

import random
import re

import pytest

from memo_core.text.chunking import Chunk, chunk_markdown


def triples(text: str, max_chars: int = 1200) -> list[tuple[int, str, str]]:
    return [(c.line, c.heading, c.text) for c in chunk_markdown(text, max_chars)]


CASES: list[tuple[str, str, list[tuple[int, str, str]]]] = [
    # --- ATX headings and the heading stack
    (
        "atx-levels-and-popping",
        "# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\ne",
        [(1, "A", "a"), (3, "A > B", "b"), (5, "A > B > C", "c"), (7, "A > D", "d"), (9, "E", "e")],
    ),
    ("h2-after-h3-skip", "# A\n### C\nc\n## B\nb", [(2, "A > C", "c"), (4, "A > B", "b")]),
    ("h6", "###### Six\nx", [(1, "Six", "x")]),
    ("seven-hashes-is-text", "####### Seven\nx", [(1, "", "####### Seven\nx")]),
    ("closing-hashes", "## Title ##\nx", [(1, "Title", "x")]),
    ("closing-hashes-trailing-space", "# Title #####   \nx", [(1, "Title", "x")]),
    ("hash-glued-to-word-kept", "# C#\nx", [(1, "C#", "x")]),
    ("only-closing-hashes", "# A\n### ###\nx", [(2, "A", "x")]),
    ("bare-hash-is-empty-heading", "# A\na\n#\nx", [(1, "A", "a"), (3, "", "x")]),
    ("hashtag-not-heading", "#tag line\n# Real\nx", [(1, "", "#tag line"), (2, "Real", "x")]),
    ("hash-number-not-heading", "#5 issue\n#", [(1, "", "#5 issue"), (2, "", "")]),
    ("three-space-indent", "   # Three\nx", [(1, "Three", "x")]),
    ("four-space-indent", "    # Four\nx", [(1, "", "    # Four\nx")]),
    ("tab-indent", "\t# Tab\nx", [(1, "", "\t# Tab\nx")]),
    ("spaces-then-tab-indent", "  \t# T\nx", [(1, "", "  \t# T\nx")]),
    ("tabs-in-heading", "#\tTab\theading\t#\nx", [(1, "Tab heading", "x")]),
    ("space-runs-in-heading", "#   A    B  \nx", [(1, "A B", "x")]),
    ("heading-at-eof", "# A\na\n# B", [(1, "A", "a"), (3, "B", "")]),
    # --- setext headings
    ("setext-h1", "Title\n=====\nbody", [(1, "Title", "body")]),
    ("setext-h2", "Sub\n---\nbody", [(1, "Sub", "body")]),
    ("setext-one-char", "Sub\n-\nbody", [(1, "Sub", "body")]),
    ("setext-indented-3", "Foo\n   ===\nx", [(1, "Foo", "x")]),
    (
        "setext-multiline",
        "intro\n\nFirst\nsecond\n===\nx",
        [(1, "", "intro"), (3, "First second", "x")],
    ),
    (
        "setext-hierarchy",
        "Top\n===\n\nSub\n---\ns\n\n# Next\nn",
        [(4, "Top > Sub", "s"), (8, "Next", "n")],
    ),
    ("setext-tab-in-text", "A\tB\n===\nx", [(1, "A B", "x")]),
    ("thematic-break-after-blank", "para\n\n---\nafter", [(1, "", "para\n\n---\nafter")]),
    ("thematic-break-first-line", "---\nafter", [(1, "", "---\nafter")]),
    ("list-item-then-dashes", "- item\n---\nx", [(1, "", "- item\n---\nx")]),
    ("list-item-continuation", "- item\nmore\n---\nx", [(1, "", "- item\nmore\n---\nx")]),
    ("ordered-item-then-equals", "1. item\n===\nx", [(1, "", "1. item\n===\nx")]),
    ("quote-then-dashes", "> q\n---\nx", [(1, "", "> q\n---\nx")]),
    ("underline-indented-4", "Foo\n    ---\nx", [(1, "", "Foo\n    ---\nx")]),
    ("underline-inner-spaces", "Foo\n- - -\nx", [(1, "", "Foo\n- - -\nx")]),
    ("stars-not-underline", "Foo\n***\nx", [(1, "", "Foo\n***\nx")]),
    ("indented-code-then-dashes", "    code\n---\nx", [(1, "", "    code\n---\nx")]),
    (
        "atx-interrupts-paragraph",
        "para\n# H\n---\nx",
        [(1, "", "para"), (2, "H", "---\nx")],
    ),
    # --- HTML comments: a translation's original kept above it is no heading
    (
        "heading-in-html-comment",
        "<!--\n## Motivation\nWhy.\n-->\n## 动机\n为什么",
        [(1, "", "<!--\n## Motivation\nWhy.\n-->"), (5, "动机", "为什么")],
    ),
    ("one-line-comment", "<!-- a -->\n# H\nx", [(1, "", "<!-- a -->"), (2, "H", "x")]),
    ("unclosed-comment-to-the-end", "<!--\n# no\n# still", [(1, "", "<!--\n# no\n# still")]),
    ("indented-comment-is-code", "    <!--\n# yes\ny", [(1, "", "    <!--"), (2, "yes", "y")]),
    (
        "comment-in-a-fence",
        "```\n<!--\n```\n# yes\ny",
        [(1, "", "```\n<!--\n```"), (4, "yes", "y")],
    ),
    # --- fenced code
    (
        "hash-in-backtick-fence",
        "# A\n```\n# not\n```\n# B\nb",
        [(1, "A", "```\n# not\n```"), (5, "B", "b")],
    ),
    (
        "hash-in-tilde-fence",
        "# A\n~~~ sh\n# not\nnot\n===\n~~~\n# B\nb",
        [(1, "A", "~~~ sh\n# not\nnot\n===\n~~~"), (7, "B", "b")],
    ),
    (
        "longer-fence-nests-shorter",
        "````\n```\n# not\n```\n# still not\n````\n# B",
        [(1, "", "````\n```\n# not\n```\n# still not\n````"), (7, "B", "")],
    ),
    (
        "tilde-inside-backticks",
        "```\n~~~\n# no\n```\n# yes\ny",
        [(1, "", "```\n~~~\n# no\n```"), (5, "yes", "y")],
    ),
    (
        "longer-closing-fence",
        "```\n# no\n`````\n# yes\ny",
        [(1, "", "```\n# no\n`````"), (4, "yes", "y")],
    ),
    (
        "closing-fence-with-info-does-not-close",
        "```\n# no\n``` x\n# still\n```\n# yes\ny",
        [(1, "", "```\n# no\n``` x\n# still\n```"), (6, "yes", "y")],
    ),
    (
        "unclosed-fence-runs-to-eof",
        "# A\n```\n# no\n\n# no",
        [(1, "A", "```\n# no\n\n# no")],
    ),
    (
        "backtick-in-info-is-not-fence",
        "```py`x`\n# H\nh",
        [(1, "", "```py`x`"), (2, "H", "h")],
    ),
    (
        "fence-indented-3",
        "   ```\n# no\n   ```\n# H\nh",
        [(1, "", "   ```\n# no\n   ```"), (4, "H", "h")],
    ),
    (
        "fence-indented-4-is-code",
        "    ```\n# H\nh",
        [(1, "", "    ```"), (2, "H", "h")],
    ),
    (
        "fence-interrupts-setext-paragraph",
        "para\n```\n---\n```\nx",
        [(1, "", "para\n```\n---\n```\nx")],
    ),
    # --- indented code
    ("indented-code", "    # not\n\tx\n# H", [(1, "", "    # not\n\tx"), (3, "H", "")]),
    # --- front matter
    (
        "yaml-front-matter",
        "---\ntitle: x\n# not heading\n---\n# H\nh",
        [(5, "H", "h")],
    ),
    (
        "yaml-front-matter-dots",
        "---\na: 1\n...\n\nbody\n## H\nh",
        [(5, "", "body"), (6, "H", "h")],
    ),
    ("toml-front-matter", "+++\ntitle = 'x'\n+++\n\n# H\nh", [(5, "H", "h")]),
    ("toml-not-closed-by-dashes", "+++\na\n\n---\n# H", [(1, "", "+++\na\n\n---"), (5, "H", "")]),
    ("unclosed-front-matter", "---\nfoo\n# H\nh", [(1, "", "---\nfoo"), (3, "H", "h")]),
    (
        "front-matter-only-on-line-1",
        "\n---\na: 1\n---\nx",
        [(2, "", "---"), (3, "a: 1", "x")],
    ),
    ("bom-and-front-matter", "\ufeff---\na: 1\n---\n# H", [(4, "H", "")]),
    ("front-matter-only", "---\na: 1\n---\n", []),
    # --- line ends and odd characters
    ("stray-cr-at-end", "# A\r\nx\r", [(1, "A", "x")]),
    (
        "u2028-and-ff-inside-lines",
        "a\u2028b\n# H\nc\x0cd\n## I\ne\x85f\x0bg\x1ch\u2029i\n### J\nj",
        [
            (1, "", "a\u2028b"),
            (2, "H", "c\x0cd"),
            (4, "H > I", "e\x85f\x0bg\x1ch\u2029i"),
            (6, "H > I > J", "j"),
        ],
    ),
    ("bom", "\ufeff# Title\nx", [(1, "Title", "x")]),
    ("bom-before-text", "\ufeffintro\n# T", [(1, "", "intro"), (2, "T", "")]),
    # --- preamble and empty sections
    (
        "text-before-first-heading",
        "\n\nintro\nmore\n\n# H\nh",
        [(3, "", "intro\nmore"), (6, "H", "h")],
    ),
    ("headings-only", "# A\n# B\n# C", [(1, "A", ""), (2, "B", ""), (3, "C", "")]),
    ("non-leaf-empty-skipped", "# A\n## B\n## C\n", [(2, "A > B", ""), (3, "A > C", "")]),
    (
        "blank-body-non-leaf-and-leaf",
        "# A\n\n\n## B\nb\n# C\n\n",
        [(4, "A > B", "b"), (6, "C", "")],
    ),
    ("non-leaf-with-body", "# A\na\n## B\nb", [(1, "A", "a"), (3, "A > B", "b")]),
    ("shallower-next-is-leaf", "# A\n## B\n# C\nc", [(2, "A > B", ""), (3, "C", "c")]),
    (
        "body-blank-lines-stripped",
        "# A\n\n  \n\tpara\n\nmore\n \n\n# B",
        [(1, "A", "\tpara\n\nmore"), (9, "B", "")],
    ),
    # --- Cyrillic
    (
        "cyrillic",
        "# Установка\nтекст\n## Linux и macOS\nещё",
        [(1, "Установка", "текст"), (3, "Установка > Linux и macOS", "ещё")],
    ),
    ("cyrillic-setext", "Заметки\n=======\nпро всё", [(1, "Заметки", "про всё")]),
    ("cyrillic-hashtag", "#тег\n# Раздел", [(1, "", "#тег"), (2, "Раздел", "")]),
    # --- Headings as rendered: inline HTML, attribute blocks and entities are not words
    (
        "html-anchor-in-heading",
        '# <a name="relations-dao"></a>Свойство Relations (DAO)\nx\n'
        '## <a name="s"></a>Синтаксис\ny',
        [(1, "Свойство Relations (DAO)", "x"), (3, "Свойство Relations (DAO) > Синтаксис", "y")],
    ),
    ("html-break-between-words", "# One<br/>Two\nx", [(1, "One Two", "x")]),
    ("html-comment", "# <!-- todo -->Plan\nx", [(1, "Plan", "x")]),
    ("anchor-only-heading", '# A\n## <a id="x"></a>\ny', [(2, "A", "y")]),
    ("attribute-block", "# Setup {#setup .wide}\nx", [(1, "Setup", "x")]),
    ("attribute-block-colon", "# Setup {: #setup}\nx", [(1, "Setup", "x")]),
    (
        "braces-that-are-text",
        "# Set {a, b}\nx\n# f{#x}\ny",
        [(1, "Set {a, b}", "x"), (3, "f{#x}", "y")],
    ),
    ("entities", "# Ruler &amp; Grid &lt;b&gt;\nx", [(1, "Ruler & Grid <b>", "x")]),
    # An entity cannot put a line break into a heading (a hit's first line is one line).
    ("entity-line-breaks", "# A&#10;B&#13;C&#x2028;D\nx", [(1, "A B C D", "x")]),
    ("less-than-is-text", "# a < b and c > d\nx", [(1, "a < b and c > d", "x")]),
    (
        "autolink-keeps-its-text",
        "# See <https://x.org/a> or <me@x.org>\nx",
        [(1, "See https://x.org/a or me@x.org", "x")],
    ),
    ("unclosed-tag-is-text", "# x <y\nz", [(1, "x <y", "z")]),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_chunks(text: str, expected: list[tuple[int, str, str]]) -> None:
    assert triples(text) == expected


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("eol", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_crlf_and_lone_cr_same_as_lf(text: str, expected: list, eol: str) -> None:
    assert triples(text.replace("\n", eol)) == expected


@pytest.mark.parametrize("text", ["", " ", "\n\n", "\r\n\t\n", "\ufeff", " \n\u3000\n"])
def test_empty_or_whitespace(text: str) -> None:
    assert chunk_markdown(text) == []


def test_chunk_type() -> None:
    (chunk,) = chunk_markdown("# A\nx")
    assert chunk == Chunk(line=1, heading="A", text="x", text_line=2)
    with pytest.raises(AttributeError):
        chunk.line = 2  # type: ignore[misc]


def test_bad_max_chars() -> None:
    with pytest.raises(ValueError):
        chunk_markdown("x", max_chars=0)


SPLIT_CASES: list[tuple[str, str, int, list[tuple[int, str, str]]]] = [
    (
        "paragraphs-packed",
        "# H\naaaa aaaa\n\nbbbb bbbb\n\ncccc cccc\n",
        20,
        [(1, "H", "aaaa aaaa\n\nbbbb bbbb"), (6, "H", "cccc cccc")],
    ),
    (
        "many-blank-lines-exact-numbers",
        "# A\n## B\n\naaaa aaaa\n\n\n\nbbbb bbbb\ncc\n\n\ncccc\n",
        12,
        [(2, "A > B", "aaaa aaaa"), (8, "A > B", "bbbb bbbb\ncc"), (12, "A > B", "cccc")],
    ),
    (
        "preamble-split",
        "\n\naaaa aaaa\n\nbbbb bbbb\n# H\nh",
        12,
        [(3, "", "aaaa aaaa"), (5, "", "bbbb bbbb"), (6, "H", "h")],
    ),
    (
        "paragraph-split-at-lines",
        "# H\nline one\nline two\nline three\n",
        10,
        [(1, "H", "line one"), (3, "H", "line two"), (4, "H", "line three")],
    ),
    (
        "paragraph-lines-packed",
        "# H\nab\ncd\nef\ngh\n",
        5,
        [(1, "H", "ab\ncd"), (4, "H", "ef\ngh")],
    ),
    (
        "long-fence-kept-whole",
        "# H\nintro\n\n```\n" + "".join(f"code {i}\n" for i in range(6)) + "\n# x\n```\n\nafter",
        20,
        [
            (1, "H", "intro"),
            (4, "H", "```\n" + "".join(f"code {i}\n" for i in range(6)) + "\n# x\n```"),
            (15, "H", "after"),
        ],
    ),
    (
        "fence-right-after-paragraph",
        "# H\nExample:\n```\nab\n\ncd\n```\nmore text here",
        14,
        [(1, "H", "Example:"), (3, "H", "```\nab\n\ncd\n```"), (8, "H", "more text here")],
    ),
    (
        "unclosed-fence-kept-whole",
        "# H\npara\n\n```\na\n\nb\n\nc",
        6,
        [(1, "H", "para"), (4, "H", "```\na\n\nb\n\nc")],
    ),
    (
        "fence-in-list-item-kept-whole",
        "# H\n1. step\n\n    ```\n    a\n\n    b\n    ```\n\ntail",
        12,
        [(1, "H", "1. step"), (4, "H", "    ```\n    a\n\n    b\n    ```"), (10, "H", "tail")],
    ),
    (
        "long-line-hard-split",
        "# H\n" + "x" * 25 + "\nend",
        10,
        [(1, "H", "x" * 10), (2, "H", "x" * 10), (2, "H", "x" * 5), (3, "H", "end")],
    ),
    (
        "long-line-in-preamble",
        "y" * 25,
        10,
        [(1, "", "y" * 10), (1, "", "y" * 10), (1, "", "y" * 5)],
    ),
    (
        "cyrillic-split",
        "# Раздел\nабвг\n\nдежз\n",
        5,
        [(1, "Раздел", "абвг"), (4, "Раздел", "дежз")],
    ),
    (
        "body-exactly-max-not-split",
        "# H\n" + "a" * 10,
        10,
        [(1, "H", "a" * 10)],
    ),
]


@pytest.mark.parametrize(
    ("text", "max_chars", "expected"), [c[1:] for c in SPLIT_CASES], ids=[c[0] for c in SPLIT_CASES]
)
def test_split(text: str, max_chars: int, expected: list[tuple[int, str, str]]) -> None:
    assert triples(text, max_chars) == expected
    assert triples(text.replace("\n", "\r\n"), max_chars) == expected


@pytest.mark.parametrize(
    "text",
    [
        "#" * 1_000_000,
        "`" * 1_000_000,
        "~" * 1_000_000,
        "-" * 1_000_000,
        "# " + "#" * 1_000_000,
        "a\n" + "=" * 1_000_000,
        " " * 1_000_000 + "x",
        "    ~~~x\n" * 50_000,
        "```\n" * 50_000,
        "# a\n" * 50_000,
        "- x\n" * 50_000,
        "# " + "<a" * 300_000 + ">",
        "# " + "<a>" * 300_000,
        "# " + "x {" * 300_000 + "#}",
    ],
    ids=[
        "hashes",
        "backticks",
        "tildes",
        "dashes",
        "closing-hashes",
        "setext",
        "spaces",
        "soft-fence-openers",
        "fence-lines",
        "headings",
        "list",
        "open-tags",
        "tags",
        "braces",
    ],
)
def test_hostile_input_is_linear(text: str) -> None:
    chunks = chunk_markdown(text, 200)
    assert chunks
    assert all(c.line >= 1 for c in chunks)


def test_huge_hash_line_is_hard_split() -> None:
    chunks = chunk_markdown("#" * 100_000, 1000)
    assert len(chunks) == 100
    assert {(c.line, c.heading) for c in chunks} == {(1, "")}
    assert "".join(c.text for c in chunks) == "#" * 100_000


# --- property test ------------------------------------------------------------------------

WORDS = ["alpha", "beta", "gamma", "заметка", "поиск", "текст", "код", "setup", "linux", "x"]


def _random_note(rng: random.Random) -> tuple[str, set[str]]:
    """A random note and the set of unique prose tokens it contains (each must survive)."""
    out: list[str] = []
    tokens: set[str] = set()
    serial = iter(range(10**9))

    def words(lo: int, hi: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))

    def token() -> str:
        t = f"tok{next(serial)}"
        tokens.add(t)
        return t

    if rng.random() < 0.3:
        out += ["---", f"title: {words(1, 3)}", "# fake heading", "---"]
    for _ in range(rng.randint(0, 25)):
        kind = rng.randrange(11)
        if kind == 0:
            out.append(f"{' ' * rng.randint(0, 3)}{'#' * rng.randint(1, 6)} h{words(1, 4)}")
        elif kind == 1:
            out.append(f"#{rng.randint(1, 6)} h{words(1, 3)} {'#' * rng.randint(0, 3)}")
        elif kind == 2:
            out += ["", f"h{words(1, 3)}", rng.choice(["===", "---", "-----"])]
        elif kind in (3, 4, 5):
            for _ in range(rng.randint(1, 4)):
                out.append(f"{token()} {words(0, 6)}")
        elif kind == 6:
            fence = rng.choice(["```", "~~~", "````"])
            out.append(fence + rng.choice(["", "py", "sh"]))
            for _ in range(rng.randint(0, 6)):
                line = rng.choice(["# fake", "fake", "", "---", "===", "token"])
                out.append(f"{token()} fake" if line == "token" else line)
            out.append(fence)
        elif kind == 7:
            out += ["", "---", ""]
        elif kind == 8:
            out += [f"- {token()}", rng.choice(["---", "===", "  more"])]
        elif kind == 9:
            out.append(f"    # fake {token()}")
        else:
            out += [""] * rng.randint(1, 3)
        if rng.random() < 0.1:
            out.append(f"#tag{token()} {words(0, 3)}")
    eol = rng.choice(["\n", "\r\n", "\r"])
    return ("\ufeff" if rng.random() < 0.1 else "") + eol.join(out), tokens


def test_property_lines_point_at_their_text() -> None:
    rng = random.Random(20240611)
    for _ in range(1000):
        text, tokens = _random_note(rng)
        max_chars = rng.choice([60, 80, 150, 1200])
        chunks = chunk_markdown(text, max_chars)
        source = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
        lines = [c.line for c in chunks]
        assert lines == sorted(set(lines)), (text, chunks)  # strictly increasing
        for c in chunks:
            orig = source[c.line - 1]
            first = c.text.split("\n", 1)[0]
            last_heading = c.heading.rsplit(" > ", 1)[-1]
            assert (c.text and first in orig) or (
                last_heading and last_heading.split()[0] in orig
            ), (text, c)
            assert "fake" not in c.heading, (text, c)
            # Fences in the generated notes are always closed, so no chunk holds half of one.
            fence_lines = sum(ln.startswith(("```", "~~~")) for ln in c.text.split("\n"))
            assert fence_lines % 2 == 0, (text, c)
            assert fence_lines or len(c.text) <= max_chars, (text, c)
        found = "\n".join(c.text + "\n" + c.heading for c in chunks)
        assert all(t in found for t in tokens), (text, chunks)
