"""The environment: every MEMO_* variable read in `memo_core.settings` and nowhere else, by
one rule (unset or blank: the default; anything else must be a number in range, or one
clear error naming the variable)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from memo_core import SettingError, settings

PACKAGES = ("memo_core", "memo_text", "memo_cli", "memo_mcp")
SOURCES = [p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_environment_is_read_only_in_the_settings_module(path: Path) -> None:
    if path == REPO / "memo_core" / "settings.py":
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reads = [
        node.lineno
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"))
        or (isinstance(node, ast.Name) and node.id in ("environ", "getenv"))
    ]
    assert reads == [], f"{path.name} reads the environment at lines {reads}"


@pytest.mark.parametrize(
    ("reader", "env", "value"),
    [
        (lambda e: settings.refresh_budget(3.0, e), {}, 3.0),
        (lambda e: settings.refresh_budget(3.0, e), {"MEMO_REFRESH_BUDGET": " "}, 3.0),
        (lambda e: settings.refresh_budget(3.0, e), {"MEMO_REFRESH_BUDGET": "0.05"}, 0.05),
        (lambda e: settings.http_port(e), {}, None),
        (lambda e: settings.http_port(e), {"MEMO_HTTP_PORT": "8123"}, 8123),
        (lambda e: settings.http_seconds(settings.HTTP_TIMEOUT, 10.0, e), {}, 10.0),
        (lambda e: settings.token(e), {"MEMO_TOKEN": " t0k "}, "t0k"),
    ],
)
def test_values_and_defaults(reader, env: dict[str, str], value: object) -> None:
    assert reader(env) == value


@pytest.mark.parametrize(
    ("reader", "env", "says"),
    [
        (lambda e: settings.refresh_budget(3.0, e), {"MEMO_REFRESH_BUDGET": "soon"}, "0 to 86400"),
        (lambda e: settings.refresh_budget(3.0, e), {"MEMO_REFRESH_BUDGET": "-1"}, "0 to 86400"),
        (lambda e: settings.http_port(e), {"MEMO_HTTP_PORT": "http"}, "1 to 65535"),
        (lambda e: settings.http_port(e), {"MEMO_HTTP_PORT": "80.5"}, "1 to 65535"),
        (lambda e: settings.http_port(e), {"MEMO_HTTP_PORT": "0"}, "1 to 65535"),
        # Digits of another script are not numbers to memo (Python reads "٨٠٨٠" as 8080).
        (lambda e: settings.http_port(e), {"MEMO_HTTP_PORT": "٨٠٨٠"}, "1 to 65535"),
        (lambda e: settings.refresh_budget(3.0, e), {"MEMO_REFRESH_BUDGET": "٣"}, "0 to 86400"),
        (lambda e: settings.http_seconds(settings.HTTP_TIMEOUT, 10, e),
         {"MEMO_HTTP_TIMEOUT_S": "nan"}, "MEMO_HTTP_TIMEOUT_S='nan'"),
        (lambda e: settings.token(e), {"MEMO_TOKEN": ""}, "set but empty"),
        (lambda e: settings.token(e), {"MEMO_TOKEN": "пароль"}, "printable ASCII"),
    ],
)  # fmt: skip
def test_a_value_memo_cannot_use_is_an_error_naming_it(reader, env, says: str) -> None:
    with pytest.raises(SettingError) as e:
        reader(env)
    assert says in str(e.value)


def test_command_line_numbers_are_ascii_digits(capsys: pytest.CaptureFixture[str]) -> None:
    from memo_cli.main import main

    with pytest.raises(SystemExit) as e:
        main(["search", ".", "zebra", "-k", "٣"])
    assert e.value.code == 2 and "-k" in capsys.readouterr().err
    assert settings.ascii_int("42") == 42


def test_a_bad_refresh_budget_is_one_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nzebra\n", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "search", str(tmp_path), "zebra", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "MEMO_REFRESH_BUDGET": "soon"},
        cwd=REPO,
    )
    assert run.returncode == 1 and run.stdout == ""
    [line] = run.stderr.splitlines()
    assert "MEMO_REFRESH_BUDGET='soon'" in line
