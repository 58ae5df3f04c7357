"""The documentation tells the truth about the code and holds together: the server pages
list every option of `memo-mcp` (docs/cli.md holds every command's whole `--help`:
tests/stories/test_cli_reference.py); the README stays a short front page that says first what a
newcomer needs; the docs cite no issue numbers and no spec (a reason is said where it
applies); every relative link leads to a file and every link to a section to its heading;
the layer order stated in docs/layout.md is the one tests/stories/test_architecture.py enforces."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from conftest import REPO
from test_architecture import LAYERS

README = REPO / "README.md"
DOCS = REPO / "docs"
README_MAX_LINES = 300


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


# -- memo-mcp's options ---------------------------------------------------------------------

OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
# An option bullet: `- ` then a code span that starts with the option, e.g. "- `-k N`: ...",
# "- `--mode hybrid|lex|vec`: ...", "- `-h`, `--help`: ...".
OPTION_BULLET = re.compile(r"^\s*- `(-[^`]*)`(?:, `(-[^`]*)`)?")


def _listed_options(section: str) -> set[str]:
    """The options a section lists in its option bullets."""
    found: set[str] = set()
    in_code = False
    for line in section.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        m = OPTION_BULLET.match(line) if not in_code else None
        if m:
            for span in m.groups():
                if span:
                    found |= set(OPTION.findall(span.split()[0]))
    return found


# An option's line in --help: two spaces, its option strings ("-h, --help", "--port PORT").
HELP_OPTION = re.compile(r"^  (-\S.*?)(?:  |$)", re.MULTILINE)


def _parser_options(parser: argparse.ArgumentParser) -> set[str]:
    """The option strings a parser's --help lists, --help aside (every command has it)."""
    lines = HELP_OPTION.findall(parser.format_help())
    return {s for line in lines for s in re.findall(r"(?:^|, )(--?[\w-]+)", line)} - {
        "-h",
        "--help",
    }


def test_the_server_pages_list_every_option_of_memo_mcp() -> None:
    from memo_mcp.server import build_arg_parser

    pages = (DOCS / "mcp.md").read_text(encoding="utf-8") + (DOCS / "http.md").read_text(
        encoding="utf-8"
    )
    listed = _listed_options(pages)
    missing = _parser_options(build_arg_parser()) - listed
    assert not missing, (
        f"`memo-mcp --help` lists {sorted(missing)}: docs/mcp.md, docs/http.md do not"
    )


def test_the_option_reader_finds_the_options_of_bullets_outside_code() -> None:
    text = (
        "## memo-mcp\n- `--x N`: x\n- `-h`, `--help`: help\nProse `--w`.\n"
        "```\n- `--in-code`\n```\n- `--z`\n"
    )
    assert _listed_options(text) == {"--x", "-h", "--help", "--z"}


# -- the README, a front page ---------------------------------------------------------------


def test_the_readme_is_short_and_the_reference_lives_in_docs() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    assert len(list(DOCS.glob("*.md"))) >= 3


def test_the_readme_says_first_how_to_speak_english_and_which_folders_the_server_uses() -> None:
    first = "\n".join(README.read_text(encoding="utf-8").splitlines()[:60])
    for needed in ("MEMO_LANG=en", "--root", "MEMO_ROOTS"):
        assert needed in first, f"{needed} is not in README.md's first 60 lines"


# -- citations ----------------------------------------------------------------------------------

ISSUE = re.compile(r"\bissue \d+", re.IGNORECASE)


CITING = [
    *_pages(),
    REPO / "BENCHMARKS.md",
    REPO / "CHANGELOG.md",
    *(
        p
        for folder in ("memo_core", "memo_text", "memo_cli", "memo_mcp", "tests", "bench")
        for p in sorted((REPO / folder).rglob("*.py"))
        if p != Path(__file__).resolve()  # this test names what it looks for
    ),
]


@pytest.mark.parametrize("page", CITING, ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_cites_issue_numbers_nor_a_spec_the_repository_lacks(page: Path) -> None:
    """What a reader of the repository cannot open is no reason: the code, the tests and
    the documents say the reason itself where it applies."""
    text = page.read_text(encoding="utf-8")
    assert "SPEC.md" not in text and not re.search(r"\bSPEC\b", text), page.name
    assert not ISSUE.search(text), f"{page.name}: {ISSUE.search(text)}"


# -- links --------------------------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _prose(page: Path) -> str:
    """A page without its code blocks (a `](x)` in a code block is no link)."""
    return re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)


def _relative_links(page: Path) -> list[str]:
    """The page's links that are not URLs (`https:`, `mailto:`), as written."""
    return [t for t in LINK.findall(_prose(page)) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    files = [t.split("#", 1)[0] for t in _relative_links(page)]
    missing = [f for f in files if f and not (page.parent / f).exists()]
    assert not missing, f"{page.relative_to(REPO)} links to files that do not exist: {missing}"


HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")


def _headings(page: Path) -> list[str]:
    """The title of each heading, a `# comment` in a code block aside."""
    found, in_code = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        elif not in_code and (m := HEADING.match(line)):
            found.append(m.group(1).replace("`", ""))
    return found


def _anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces `-`."""
    return re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_anchor(title) for title in _headings(page)}


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_to_a_section_finds_its_heading(page: Path) -> None:
    wrong = []
    for target in _relative_links(page):
        if "#" not in target:
            continue
        file, anchor = target.split("#", 1)
        dest = page.parent / file if file else page
        if dest.suffix == ".md" and dest.exists() and anchor not in _anchors(dest):
            wrong.append(target)
    assert not wrong, f"{page.relative_to(REPO)} links to sections that do not exist: {wrong}"


# -- the layers -----------------------------------------------------------------------------------


def test_the_layout_page_states_the_layers_in_the_order_the_tests_enforce() -> None:
    text = (DOCS / "layout.md").read_text(encoding="utf-8")
    m = re.search(r"Layers, lowest first: (.*?\.)\n\n", text, flags=re.DOTALL)
    assert m, "docs/layout.md has no line 'Layers, lowest first: ...'"
    stated = [tuple(re.findall(r"`([\w.]+)`", part)) for part in m.group(1).split("→")]
    enforced = [tuple(e.removeprefix("memo_core.") for e in entries) for entries in LAYERS]
    assert stated == enforced
