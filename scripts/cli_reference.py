"""Write the generated blocks of docs/cli.md: each command's `--help`, exactly as it prints in
English at a fixed terminal width, so that the reference cannot drift from the help texts.

    python scripts/cli_reference.py          # rewrite the blocks in docs/cli.md
    python scripts/cli_reference.py --check  # change nothing; exit 1 with a diff if they differ

A block is a fenced code block between two markers; the text around it is written by hand:

    <!-- generated: memo search --help -->
    ```
    usage: memo search ...
    ```
    <!-- end generated -->

Every command of `memo` (each subcommand too) and `memo-mcp` has exactly one block; a command
without one, or a block for a command that does not exist, is an error. Edit the help texts
(memo_text/fronts.py), then run this script."""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a file from anywhere, the checkout's packages first

from memo_cli.main import build_parser  # noqa: E402
from memo_mcp.server import build_arg_parser  # noqa: E402
from memo_text import Lang  # noqa: E402

DOC = REPO / "docs" / "cli.md"
# argparse wraps help at the terminal's width (COLUMNS, less 2): fixed, so that the page is the
# same whoever writes it; 100 as the repository's line length.
COLUMNS = 100
BLOCK = re.compile(
    r"^<!-- generated: (?P<command>.+?) --help -->\n(?P<body>.*?)^<!-- end generated -->$",
    re.MULTILINE | re.DOTALL,
)


def _commands(
    parser: argparse.ArgumentParser,
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """`parser`'s command line (its prog) and parser, then each subcommand's, depth first."""
    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _commands(sub)


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command of both front ends by its command line ("memo model install"), in the
    language the docs are written in."""
    return dict([*_commands(build_parser(Lang.EN)), *_commands(build_arg_parser(Lang.EN))])


@contextmanager
def _terminal() -> Iterator[None]:
    """The terminal the page is written for: COLUMNS wide, and no colour (argparse colours
    help on a terminal from Python 3.14 on)."""
    saved = {name: os.environ.get(name) for name in ("COLUMNS", "NO_COLOR")}
    os.environ.update(COLUMNS=str(COLUMNS), NO_COLOR="1")
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def help_texts() -> dict[str, str]:
    """What `MEMO_LANG=en COLUMNS=100 <command> --help` prints, for every command."""
    with _terminal():
        return {command: parser.format_help() for command, parser in parsers().items()}


def render(page: str, helps: dict[str, str]) -> str:
    """`page` with each generated block holding its command's help; ValueError when a
    command has no block, or more than one, or a block names no command."""
    named = [m.group("command") for m in BLOCK.finditer(page)]
    unknown = sorted(set(named) - set(helps))
    missing = [c for c in helps if c not in named]
    repeated = sorted({c for c in named if named.count(c) > 1})
    problems = [
        *(f"a block for `{c} --help`, which is no command" for c in unknown),
        *(f"no block for `{c} --help`" for c in missing),
        *(f"more than one block for `{c} --help`" for c in repeated),
    ]
    if problems:
        raise ValueError("; ".join(problems))

    def block(m: re.Match[str]) -> str:
        command = m.group("command")
        return (
            f"<!-- generated: {command} --help -->\n"
            f"```\n{helps[command]}```\n"
            "<!-- end generated -->"
        )

    return BLOCK.sub(block, page)


def diff(old: str, new: str) -> str:
    """A unified diff of the page as it is against the page as generated."""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            "docs/cli.md",
            "docs/cli.md (generated)",
        )
    )


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if the page differs"
    )
    args = cli.parse_args(argv)
    page = DOC.read_text(encoding="utf-8")
    try:
        generated = render(page, help_texts())
    except ValueError as e:
        print(f"docs/cli.md: {e}", file=sys.stderr)
        return 1
    if generated == page:
        return 0
    if args.check:
        sys.stderr.write(diff(page, generated))
        print(
            "docs/cli.md differs from --help: run python scripts/cli_reference.py",
            file=sys.stderr,
        )
        return 1
    DOC.write_text(generated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
