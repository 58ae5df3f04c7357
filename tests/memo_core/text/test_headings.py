"""memo_core.text.headings: a heading as a reader sees it rendered, without the anchors and
attribute blocks converted documentation puts in headings; linear on hostile input."""

from __future__ import annotations

import pytest

from memo_core.text.headings import rendered


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Plain title", "Plain title"),
        ("Заголовок раздела", "Заголовок раздела"),
        # HTML anchors and other inline tags
        ('<a name="install"></a>Installation', "Installation"),
        ('<a id="x"></a> Setup <a id="y"></a>', "Setup"),
        ("Title<br>Subtitle", "Title Subtitle"),  # a tag stands between words
        ("<b>Bold</b> move", "Bold move"),
        ("<!-- hidden -->Visible", "Visible"),
        ("Mixed <span class='k'>case</span>", "Mixed case"),
        # attribute blocks (Pandoc, kramdown, Python-Markdown), trailing only
        ("Title {#id}", "Title"),
        ("Title {#id .class key=v}", "Title"),
        ("Title {.unnumbered}", "Title"),
        ("Title {: #id}", "Title"),
        ("Title {#id}   ", "Title"),
        ("f{#x}", "f{#x}"),  # glued to a word: text
        ("Sets {a, b}", "Sets {a, b}"),  # not an attribute block
        ("Use {#x} inline here", "Use {#x} inline here"),  # not at the end
        ("Braces {#a}b}", "Braces {#a}b}"),
        # entities decoded; decoded text is not read as markup again
        ("Fish &amp; Chips", "Fish & Chips"),
        ("&lt;b&gt;not a tag&lt;/b&gt;", "<b>not a tag</b>"),
        ("Caf&eacute; &#8212; bar", "Café — bar"),
        ("R&D", "R&D"),
        # a '<' that opens no tag stays
        ("a < b and c > d", "a < b and c > d"),
        ("x<3", "x<3"),
        ("a<b", "a<b"),  # never closed: no tag
        ("<a <b>x", "<a x"),  # only the second can be a tag
        ("1 <> 2", "1 <> 2"),
        # autolinks keep their text
        ("See <https://example.org/a?b=c>", "See https://example.org/a?b=c"),
        ("Mail <me@example.org>", "Mail me@example.org"),
        # whitespace
        ("Tabs\tand   runs  of spaces", "Tabs and runs of spaces"),
        ("  padded  ", "padded"),
        ("", ""),
    ],
)
def test_a_heading_reads_as_rendered(title: str, expected: str) -> None:
    assert rendered(title) == expected


def test_a_heading_of_markup_alone_renders_empty() -> None:
    assert rendered('<a name="x"></a>') == ""
    assert rendered("{#only-an-id}") == ""


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("<a" * 50_000, "<a" * 50_000),  # no '>' anywhere: nothing is a tag
        ("<a" * 50_000 + ">end", "<a" * 49_999 + " end"),  # only the last opens the tag
        ("<b>" * 50_000 + "x", "x"),
        ("x " + "{" * 50_000 + "#id}", "x " + "{" * 50_000 + "#id}"),
        ("a" + "&amp;" * 20_000, "a" + "&" * 20_000),
    ],
)
def test_hostile_headings_are_read_whole(title: str, expected: str) -> None:
    assert rendered(title) == " ".join(expected.split())
