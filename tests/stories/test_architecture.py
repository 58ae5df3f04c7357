"""Layering rules, checked on the source: the tree shows the data flow, files -> text ->
index -> collection -> search -> engine -> front door, and the engine knows nothing of MCP or
the command line; and each module's tests are found by its name."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, absolute (relative imports resolved), TYPE_CHECKING too."""
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{a.name}" for a in node.names)
    return names


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


ENGINE = sorted((REPO / "memo_core").rglob("*.py"))
CLI = sorted((REPO / "memo_cli").glob("*.py"))

# The engine's layers, lowest first: a module may import its own layer and those below,
# never one above. Within a layer, a sub-package imports only itself (and the layers below).
LAYERS: list[tuple[str, ...]] = [
    # Every text a user reads: below the errors, whose English text it gives.
    ("memo_core.messages",),
    ("memo_core._version", "memo_core.errors", "memo_core.shutdown"),
    ("memo_core.settings",),  # the environment, read once: its errors are MemoErrors
    # The values every layer shares, and their checks (InvalidArgumentError).
    ("memo_core.values",),
    ("memo_core.results",),
    ("memo_core.text",),
    ("memo_core.tuning",),
    ("memo_core.files",),
    ("memo_core.model",),
    ("memo_core.index",),
    ("memo_core.collection",),
    ("memo_core.changes",),
    # A search reads the collections (each lends its snapshot, vectors and scope): above them.
    ("memo_core.search", "memo_core.refreshing"),
    ("memo_core.engine",),
    # The doors' modules: one path bound to an Engine, and what a process needs besides it.
    ("memo_core.searcher", "memo_core.process"),
]


def _layer(module: str) -> tuple[int, str] | None:
    """(layer, the entry of LAYERS it falls under) of a memo_core module; None for the front
    door itself (`memo_core`)."""
    for i, entries in enumerate(LAYERS):
        for entry in entries:
            if module == entry or module.startswith(entry + "."):
                return i, entry
    return None


def test_every_engine_module_has_a_layer() -> None:
    loose = [_module(p) for p in ENGINE if _module(p) != "memo_core" and _layer(_module(p)) is None]
    assert not loose, f"add these to LAYERS: {loose}"


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(REPO)))
def test_engine_imports_only_its_layer_and_below(path: Path) -> None:
    me = _layer(_module(path))
    if me is None:  # the front door: it may import anything of its own engine
        return
    bad = []
    for name in _imports(path):
        if not name.startswith("memo_core.") or name == "memo_core.settings":
            continue
        # `from memo_core.index import store`: the module is memo_core.index.store
        target = _layer(name)
        if target is None:
            continue
        if target[0] > me[0] or (target[0] == me[0] and target[1] != me[1]):
            bad.append(name)
    assert not bad, f"{_module(path)} (layer {me[0]}) imports {sorted(bad)} from above or aside"


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(REPO)))
def test_engine_never_imports_a_front_end(path: Path) -> None:
    bad = {n for n in _imports(path) if n.split(".")[0] in {"mcp", "memo_mcp", "memo_cli"}}
    assert not bad, f"{path.name} imports {bad}"


FRONT_ENDS = sorted((REPO / "memo_mcp").glob("*.py")) + CLI
PRESENTATION = sorted((REPO / "memo_text").glob("*.py"))


@pytest.mark.parametrize("path", FRONT_ENDS + PRESENTATION, ids=lambda p: str(p.relative_to(REPO)))
def test_front_ends_and_presentation_use_only_the_engines_front_door(path: Path) -> None:
    """The engine's objects through `memo_core`, and what a process needs besides them
    (the descriptor limit, leaving, the mount table) through `memo_core.process`."""
    import memo_core
    import memo_core.process

    _only_front_door(
        path,
        "memo_core",
        set(memo_core.__all__),
        {"memo_core.process": set(memo_core.process.__all__)},
    )


@pytest.mark.parametrize("path", FRONT_ENDS, ids=lambda p: str(p.relative_to(REPO)))
def test_front_ends_use_only_the_presentations_front_door(path: Path) -> None:
    import memo_text

    _only_front_door(path, "memo_text", set(memo_text.__all__))


def test_the_engine_words_nothing_for_people() -> None:
    """No formatting, catalogue or command-line parser inside the engine: it answers with
    data and keyed errors, and `memo_text` words them."""
    names = {p.stem for p in ENGINE} | {
        p.name for p in (REPO / "memo_core").rglob("*") if p.is_dir()
    }
    assert not names & {"formatting", "catalogue"}
    assert not [p.name for p in ENGINE if "argparse" in _imports(p)]
    assert not [p.name for p in ENGINE if "memo_text" in {n.split(".")[0] for n in _imports(p)}]


def _only_front_door(
    path: Path, package: str, exported: set[str], doors: dict[str, set[str]] | None = None
) -> None:
    """`path` imports `package` only through its front door (`exported`: the names it
    offers) or the other `doors` (a module: the names it offers)."""
    doors = {package: exported, **(doors or {})}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            deep = [
                a.name
                for a in node.names
                if a.name.startswith(package + ".") and a.name not in doors
            ]
            assert not deep, f"{path.name} imports {deep}"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package):
            if path.parent.name == package:
                continue  # the package's own modules import each other
            assert node.module in doors, f"{path.name} imports from {node.module}"
            names = {a.name for a in node.names}
            assert names <= doors[node.module], f"{path.name}: {names - doors[node.module]}"


def test_the_front_door_exports_what_it_lists() -> None:
    import memo_core

    assert all(hasattr(memo_core, name) for name in memo_core.__all__)


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(REPO)))
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


LAYOUT = REPO / "docs" / "layout.md"


def _layout_bullets() -> dict[str, set[str]]:
    """docs/layout.md: each package bullet's folder -> the module names it gives."""
    text = LAYOUT.read_text(encoding="utf-8")
    bullets: dict[str, set[str]] = {}
    folder = None
    for line in text.splitlines():
        head = re.match(r"\s*- `([\w/]+)/`", line)
        if head:
            folder = head.group(1)
            bullets[folder] = set()
            line = line[head.end() :]
        elif not line.strip() or not line.startswith(" "):
            folder = None
        if folder is not None:
            bullets[folder] |= set(re.findall(r"`([a-z_][a-z0-9_]*)`", line))
    return bullets


PACKAGES = sorted(
    p.parent for p in [*REPO.glob("memo_*/__init__.py"), *REPO.glob("memo_core/*/__init__.py")]
)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_layout_page_names_every_module(package: Path) -> None:
    """docs/layout.md's map is the tree: every module of every package named under its
    folder's bullet, and no name there that is not a module."""
    named = _layout_bullets().get(str(package.relative_to(REPO)))
    assert named is not None, f"docs/layout.md has no bullet for {package.relative_to(REPO)}/"
    modules = {p.stem for p in package.glob("*.py")} - {"__init__"}
    assert named == modules, (
        f"missing from docs/layout.md: {sorted(modules - named)}; "
        f"named but not modules: {sorted(named - modules)}"
    )


def test_no_import_circle_among_the_engines_modules() -> None:
    """No two engine modules import each other, however indirectly (TYPE_CHECKING imports
    count: a circle hidden from the interpreter is still one for a reader)."""
    modules = {_module(p): p for p in ENGINE if p.name != "__init__.py"}
    graph = {m: {n for n in _imports(p) if n in modules and n != m} for m, p in modules.items()}
    circles: list[list[str]] = []

    def visit(node: str, path: list[str], seen: set[str]) -> None:
        for nxt in sorted(graph[node]):
            if nxt == path[0]:
                circles.append(path + [nxt])
            elif nxt not in seen and nxt > path[0]:  # each circle once, from its least module
                seen.add(nxt)
                visit(nxt, path + [nxt], seen)

    for start in sorted(graph):
        visit(start, [start], {start})
    assert circles == [], circles


def test_engine_search_is_a_short_call_into_the_search_pipeline() -> None:
    """Search is one thing (`search.pipeline`, with the query checked once in `search.query`):
    `Engine.search` only builds the query, finds the collections and hands over."""
    tree = ast.parse((REPO / "memo_core" / "engine.py").read_text(encoding="utf-8"))
    [engine] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Engine"]
    [search] = [n for n in engine.body if isinstance(n, ast.FunctionDef) and n.name == "search"]
    assert search.end_lineno is not None and search.end_lineno - search.lineno + 1 <= 40


def test_the_front_doors_lazy_names_are_the_ones_type_checkers_see() -> None:
    """Each lazy name is written where type checkers read it (the TYPE_CHECKING imports)
    and where the front door finds it at run time (a name it offers, `__all__`, but has
    not imported yet): the two must name the same, each the object of the module typed."""
    import memo_core

    tree = ast.parse((REPO / "memo_core" / "__init__.py").read_text(encoding="utf-8"))
    [block] = [
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.dump(n.test)
    ]
    typed = {
        a.asname or a.name: f"{node.module}"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for a in node.names
    }
    # In a process of its own: this one may have asked for some of them already.
    unimported = (
        "import json, memo_core\n"
        "print(json.dumps(sorted(set(memo_core.__all__) - set(vars(memo_core)))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", unimported], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert set(json.loads(out.stdout)) == set(typed)
    for name, module in typed.items():
        assert getattr(memo_core, name) is getattr(importlib.import_module(module), name), name


# Modules whose behaviour has its own test file, by the module's name:
# `memo_core/index/opening.py` -> `tests/memo_core/index/test_opening.py` (or, for modules
# tested before the tree was mirrored, `tests/test_opening.py`). At least this share.
OWN_TESTS_SHARE = 0.9


def _modules_with_behaviour() -> list[Path]:
    """The product's modules that define a function or a class (not a front door)."""
    found = []
    for package in ("memo_core", "memo_text", "memo_cli", "memo_mcp"):
        for path in sorted((REPO / package).rglob("*.py")):
            if path.name == "__init__.py":
                continue
            body = ast.parse(path.read_text(encoding="utf-8")).body
            if any(
                isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in body
            ):
                found.append(path)
    return found


def test_most_modules_have_a_test_file_found_by_their_name() -> None:
    modules = _modules_with_behaviour()
    tests = {p.stem for p in (REPO / "tests").rglob("test_*.py")}
    missing = [str(p.relative_to(REPO)) for p in modules if f"test_{p.stem}" not in tests]
    share = 1 - len(missing) / len(modules)
    assert share >= OWN_TESTS_SHARE, f"{share:.0%} have a test file; none for: {missing}"
