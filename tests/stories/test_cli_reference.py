"""docs/cli.md holds every command's `--help` word for word, both front ends' (`memo` with
each subcommand, and `memo-mcp`), as scripts/cli_reference.py writes it: a help text changed
without running the script fails here, and so does a command without its block. The
script's blocks are what the installed commands print, and it leaves the hand-written text
around them alone."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO


def _load_generator() -> ModuleType:
    # scripts/ is no package: the script is loaded from its file, as `python scripts/...` runs it.
    spec = importlib.util.spec_from_file_location(
        "cli_reference", REPO / "scripts" / "cli_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cli_reference = _load_generator()


def test_the_cli_reference_is_the_help_of_every_command() -> None:
    page = cli_reference.DOC.read_text(encoding="utf-8")
    generated = cli_reference.render(page, cli_reference.help_texts())
    assert generated == page, (
        "docs/cli.md differs from --help: run python scripts/cli_reference.py\n"
        + cli_reference.diff(page, generated)
    )


def test_the_script_finds_both_front_ends_and_nested_subcommands() -> None:
    commands = set(cli_reference.help_texts())
    nested = {"memo model", "memo model install", "memo model info"}
    assert {"memo", "memo search", "memo watch", *nested, "memo-mcp"} <= commands


@pytest.mark.parametrize(
    ("command", "module"),
    [
        ("memo search", "memo_cli.main"),
        ("memo model install", "memo_cli.main"),
        ("memo-mcp", "memo_mcp"),
    ],
)
def test_the_blocks_are_what_the_commands_print(command: str, module: str) -> None:
    """The script formats the parsers in process; the commands build them in their own
    `main`, which must not make them print anything else."""
    env = {**os.environ, "MEMO_LANG": "en", "COLUMNS": str(cli_reference.COLUMNS)}
    args = command.split()[1:]
    r = subprocess.run(
        [sys.executable, "-m", module, *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == cli_reference.help_texts()[command]


HELPS = {"memo": "usage: memo\n", "memo x": "usage: memo x\n  --y  why\n"}


def _block(command: str, body: str) -> str:
    return f"<!-- generated: {command} --help -->\n{body}<!-- end generated -->\n"


def test_a_stale_block_is_rewritten_and_the_text_around_it_kept() -> None:
    page = (
        "# memo\n\nProse.\n\n"
        + _block("memo", "```\nold\n```\n")
        + "\nMore prose, `--y`.\n\n"
        + _block("memo x", "")
    )
    generated = cli_reference.render(page, HELPS)
    assert generated == (
        "# memo\n\nProse.\n\n"
        + _block("memo", "```\nusage: memo\n```\n")
        + "\nMore prose, `--y`.\n\n"
        + _block("memo x", "```\nusage: memo x\n  --y  why\n```\n")
    )
    assert cli_reference.render(generated, HELPS) == generated


@pytest.mark.parametrize(
    ("page", "said"),
    [
        (_block("memo", ""), "no block for `memo x --help`"),
        (
            _block("memo", "") + _block("memo x", "") + _block("memo z", ""),
            "a block for `memo z --help`, which is no command",
        ),
        (
            _block("memo", "") + _block("memo x", "") + _block("memo x", ""),
            "more than one block for `memo x --help`",
        ),
    ],
    ids=["missing", "unknown", "repeated"],
)
def test_a_command_without_its_one_block_is_an_error(page: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        cli_reference.render(page, HELPS)


def test_check_changes_nothing_and_fails_where_the_script_would_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "cli.md"
    page = cli_reference.DOC.read_text(encoding="utf-8")
    stale = page.replace("show this help message and exit", "show this help", 1)
    doc.write_text(stale, encoding="utf-8")
    monkeypatch.setattr(cli_reference, "DOC", doc)

    assert cli_reference.main(["--check"]) == 1
    assert doc.read_text(encoding="utf-8") == stale
    err = capsys.readouterr().err
    assert "-  -h, --help  show this help\n" in err and "run python scripts/cli_reference.py" in err

    assert cli_reference.main([]) == 0
    assert doc.read_text(encoding="utf-8") == page
    assert cli_reference.main(["--check"]) == 0
