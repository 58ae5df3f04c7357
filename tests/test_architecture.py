"""Layering rules, checked on the source: the engine knows nothing of MCP or the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.add(base)
            names.update(f"{base}.{a.name}" if node.module else base + a.name for a in node.names)
    return names


ENGINE = sorted((REPO / "memo_core").glob("*.py"))


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: p.name)
def test_engine_never_imports_mcp(path: Path) -> None:
    bad = {n for n in _imports(path) if n.split(".")[0] in {"mcp", "memo_mcp"}}
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", [p for p in ENGINE if p.name != "cli.py"], ids=lambda p: p.name)
def test_engine_never_imports_the_cli(path: Path) -> None:
    bad = {n for n in _imports(path) if n.endswith("cli") or ".cli." in n or n == "memo_core.cli"}
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: p.name)
def test_engine_modules_stay_small(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 350
