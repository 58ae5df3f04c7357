"""The tests use memo through its public names only, so a refactor that keeps behaviour keeps
them passing: no test reads, sets or patches a name with one leading underscore.

The rule, checked on every file under tests/ (their syntax trees):

- `x._name` is flagged wherever `x` is not `self` or `cls` (a test's own class reading
  itself) and not one of the tests' own helpers (a module of tests/, such as `tinymodels`,
  or a class or function the file defines at its top);
- so is `from memo_core… import _name` (or memo_text, memo_cli, memo_mcp);
- and a private name given as a string: `setattr`/`getattr`/`hasattr`/`delattr(x, "_name")`,
  `monkeypatch.setattr(x, "_name", …)`, `mock.patch.object(x, "_name")`, or a dotted
  target such as `monkeypatch.setattr("memo_core.engine._name", …)`.

Dunder names (`__name__`, `__class__`) are Python's, not private. What a test measured
through a private name has a public observable instead (`Engine.held_collections`,
`Collection.vectors_held`, `OnnxEmbedder.sessions`, …), and a fault is injected through a
public seam (a constructor's argument, the environment, the OS) or made real.

`ALLOWED` lists the exceptions, each with its reason: third-party private APIs a test cannot
do without. It is empty.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
PRODUCT = ("memo_core", "memo_text", "memo_cli", "memo_mcp")
# Calls whose second argument names an attribute: setattr(x, "_y"), monkeypatch.setattr(x,
# "_y", v), patch.object(x, "_y").
NAMING_CALLS = {"setattr", "getattr", "hasattr", "delattr", "object"}
# "tests/file.py:line" -> why a private name read there is unavoidable (third-party only).
ALLOWED: dict[str, str] = {}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _helpers(tree: ast.Module) -> set[str]:
    """Names that are the tests' own in this file: modules of tests/ it imports (and what
    it imports from them), and the classes and functions it defines at its top."""
    own_modules = {p.stem for p in TESTS.rglob("*.py")}
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(node.name)
        elif isinstance(node, ast.Import):
            found |= {a.asname or a.name for a in node.names if a.name in own_modules}
        elif isinstance(node, ast.ImportFrom) and node.module in own_modules:
            found |= {a.asname or a.name for a in node.names}
    return found


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from (`a` of `a.b.c`), if a plain name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _private_target(text: str) -> bool:
    """A dotted target into the product with a private part: "memo_core.engine._x"."""
    parts = text.split(".")
    return len(parts) > 1 and parts[0] in PRODUCT and any(_private(p) for p in parts[1:])


def private_uses(source: str) -> list[tuple[int, str]]:
    """Each private name `source` reads, sets or patches: (line, what)."""
    tree = ast.parse(source)
    helpers = _helpers(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = _root(node.value)
            if root not in {"self", "cls"} and root not in helpers:
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PRODUCT:
            found += [(node.lineno, f"import {a.name}") for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Call):
            strings = [
                (i, a.value)
                for i, a in enumerate(node.args)
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            for i, text in strings:
                named = i == 1 and _call_name(node.func) in NAMING_CALLS and _private(text)
                if named or _private_target(text):
                    found.append((node.lineno, f"{_call_name(node.func)}(… {text!r} …)"))
    return sorted(found)


def test_no_test_reads_or_patches_a_private_name() -> None:
    flagged = [
        f"{where}: {what}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, what in private_uses(path.read_text(encoding="utf-8"))
        if (where := f"{path.relative_to(TESTS.parent)}:{line}") not in ALLOWED
    ]
    assert not flagged, (
        "tests use private names (use or add a public one: see this file's docstring):\n"
        + "\n".join(flagged)
    )


def test_the_scan_finds_each_way_of_using_a_private_name() -> None:
    source = """
import tinymodels
from memo_core import Engine
from memo_core.files.fsafe import _OPENAT2
from memo_core.model import onnx_embedder


class Spy:
    def look(self):
        return self._seen, Spy._made


def test(monkeypatch, e: Engine):
    e._collections
    e.held_collections()[0]._reader
    monkeypatch.setattr(onnx_embedder, "_cores", lambda: 4)
    monkeypatch.setattr("memo_core.model.onnx_embedder._cores", lambda: 4)
    monkeypatch.setattr(onnx_embedder, "FEW_PASSAGES", 3)
    getattr(e, "_lock")
    e.__class__, tinymodels._table, e.models.get()
"""
    assert private_uses(source) == [
        (4, "import _OPENAT2"),
        (14, "e._collections"),
        (15, "e.held_collections()[0]._reader"),
        (16, "setattr(… '_cores' …)"),
        (17, "setattr(… 'memo_core.model.onnx_embedder._cores' …)"),
        (19, "getattr(… '_lock' …)"),
    ]


def test_every_exception_is_a_line_that_still_reads_a_private_name() -> None:
    """An exception outlives its reason silently otherwise."""
    for where, reason in ALLOWED.items():
        path, line = where.rsplit(":", 1)
        lines = {n for n, _ in private_uses((TESTS.parent / path).read_text(encoding="utf-8"))}
        assert int(line) in lines and reason, where
