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


# A generous cap, not a design rule: cohesion decides where code goes (350 split the Store
# into mixins only to keep modules short). A module past it is a sign to look, not to split.
MAX_MODULE_LINES = 600


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: p.name)
def test_engine_modules_stay_small(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_MODULE_LINES


FRONT_ENDS = sorted((REPO / "memo_mcp").glob("*.py"))


@pytest.mark.parametrize("path", FRONT_ENDS, ids=lambda p: p.name)
def test_mcp_uses_only_the_engines_front_door(path: Path) -> None:
    import memo_core

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            deep = [a.name for a in node.names if a.name.startswith("memo_core.")]
            assert not deep, f"{path.name} imports {deep}"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memo_core"):
            assert node.module == "memo_core", f"{path.name} imports from {node.module}"
            names = {a.name for a in node.names}
            assert names <= set(memo_core.__all__), f"{path.name}: {names - set(memo_core.__all__)}"


def test_the_front_door_exports_what_it_lists() -> None:
    import memo_core

    assert all(hasattr(memo_core, name) for name in memo_core.__all__)


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: p.name)
def test_engine_state_lives_in_objects_not_module_globals(path: Path) -> None:
    """No module-level mutable state: a dict, list or set literal assigned at module level
    that the module also mutates, or a `global` statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Global)], path.name
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(
            node.value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp)
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            ok = [n for n in names if n.isupper() or (n.startswith("__") and n.endswith("__"))]
            assert ok == names, f"{path.name}: module state {names}"


@pytest.mark.parametrize(
    "path", [p for p in ENGINE if p.name != "settings.py"], ids=lambda p: p.name
)
def test_only_settings_reads_the_environment(path: Path) -> None:
    """Every environment variable has one meaning: `settings` reads it, nothing else."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reads = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and n.attr in ("environ", "getenv")
        and isinstance(n.value, ast.Name)
        and n.value.id == "os"
    ]
    assert not reads, f"{path.name} reads the environment at lines {reads}: use settings"
