"""What the setup instructions promise: the package builds with no deprecation
warning and writes nothing into the folder it is built from (`uv tool install --from
<clone>` builds there), and scripts/inspector-smoke.sh checks its arguments and its Node.js
before it runs anything."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from memo_core._version import __version__

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scripts" / "inspector-smoke.sh"
# What a wheel is built from; a copy, because the build must be seen to add nothing to it.
SOURCES = ("pyproject.toml", "README.md", "memo_core", "memo_cli", "memo_mcp")


def _copy_sources(dest: Path) -> None:
    dest.mkdir()
    for name in SOURCES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_the_wheel_builds_without_a_deprecation_and_leaves_its_folder_as_it_was(
    tmp_path: Path,
) -> None:
    src = tmp_path / "src"
    _copy_sources(src)
    before = _tree(src)
    out = tmp_path / "dist"
    # --no-isolation: the backend named in pyproject (in the test extra) from this
    # environment, so the test needs no package registry.
    build = [sys.executable, "-m", "build", "--no-isolation", "--wheel"]
    run = subprocess.run(
        [*build, "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    # setuptools' `license = { text = ... }` warned that builds stop after 2027-02-18.
    assert "deprecat" not in said.lower(), said
    # setuptools left build/ and memo_notes.egg-info/ here.
    assert _tree(src) == before
    (wheel,) = out.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for package in ("memo_core/index/", "memo_core/model/", "memo_cli/", "memo_mcp/"):
        assert any(n.startswith(package) and n.endswith(".py") for n in names), package
    (metadata,) = (n for n in names if n.endswith(".dist-info/METADATA"))
    fields = zipfile.ZipFile(wheel).read(metadata).decode().split("\n\n", 1)[0].splitlines()
    assert f"Version: {__version__}" in fields
    assert "License-Expression: MIT" in fields
    assert not any(f.startswith("License:") for f in fields)


@pytest.fixture
def tools(tmp_path: Path) -> dict[str, str]:
    """An environment whose node says $FAKE_NODE_VERSION and whose npx only writes down its
    arguments (to $NPX_LOG), so the script's checks run without Node.js or the network."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "node": 'echo "$FAKE_NODE_VERSION"\n',
        "npx": 'printf "%s\\n" "$@" >>"$NPX_LOG"\n',
        "memo-mcp-stand-in": "exit 0\n",
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_NODE_VERSION": "v22.19.0",
        "NPX_LOG": str(tmp_path / "npx.log"),
        "MEMO_MCP_CMD": "memo-mcp-stand-in",
    }


def _smoke(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SMOKE), *args], capture_output=True, text=True, env=env, timeout=30
    )


def _refused(run: subprocess.CompletedProcess[str], env: dict[str, str], status: int) -> str:
    """The script said one line on stderr, exited with `status` and ran nothing."""
    assert run.returncode == status, run.stderr
    assert run.stdout == ""
    assert len(run.stderr.splitlines()) == 1, run.stderr
    assert not Path(env["NPX_LOG"]).exists()
    return run.stderr


def test_smoke_script_refuses_a_missing_folder(tools: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "notes"
    said = _refused(_smoke(tools, str(missing)), tools, 2)
    assert f"no such folder: {missing}" in said


def test_smoke_script_refuses_a_file(tools: dict[str, str]) -> None:
    said = _refused(_smoke(tools, "--http", str(REPO / "README.md")), tools, 2)
    assert "not a folder" in said


@pytest.mark.parametrize("args", [("--bogus",), ("a", "b", "c")])
def test_smoke_script_refuses_wrong_arguments(tools: dict[str, str], args: tuple[str, ...]) -> None:
    said = _refused(_smoke(tools, *args), tools, 2)
    assert "usage: scripts/inspector-smoke.sh [--http] [NOTES_DIR] [QUERY]" in said


@pytest.mark.parametrize("version", ["v20.20.2", "v22.18.1", "v21.99.0"])
def test_smoke_script_refuses_a_node_older_than_the_inspectors(
    tools: dict[str, str], version: str
) -> None:
    said = _refused(_smoke({**tools, "FAKE_NODE_VERSION": version}), tools, 1)
    assert f"Node.js {version} is too old" in said and ">= 22.19" in said


def test_smoke_script_refuses_a_server_command_that_is_not_there(tools: dict[str, str]) -> None:
    said = _refused(_smoke({**tools, "MEMO_MCP_CMD": "no-such-memo-mcp"}), tools, 1)
    assert "no-such-memo-mcp not found" in said


@pytest.mark.parametrize("version", ["v22.19.0", "v24.1.0"])
def test_smoke_script_with_no_argument_runs_the_inspector_on_the_example_notes(
    tools: dict[str, str], version: str
) -> None:
    run = _smoke({**tools, "FAKE_NODE_VERSION": version})
    assert run.returncode == 0, run.stderr
    calls = Path(tools["NPX_LOG"]).read_text().splitlines()
    assert "@modelcontextprotocol/inspector@2.12.0" in calls
    assert str(REPO / "examples" / "notes") in calls


def test_smoke_script_passes_the_model_folder_on_and_runs_without_it(
    tools: dict[str, str], tmp_path: Path
) -> None:
    given = {**tools, "MEMO_MODEL_DIR": str(tmp_path / "models")}
    given.pop("MEMO_CACHE_DIR", None)
    assert _smoke(given).returncode == 0
    calls = Path(tools["NPX_LOG"]).read_text().splitlines()
    assert f"MEMO_MODEL_DIR={tmp_path / 'models'}" in calls
    Path(tools["NPX_LOG"]).unlink()
    bare = {k: v for k, v in given.items() if k != "MEMO_MODEL_DIR"}
    run = _smoke(bare)
    # An empty list of -e arguments (bash 3.2, macOS's, calls it unbound under set -u).
    assert run.returncode == 0, run.stderr
    assert "-e" not in Path(tools["NPX_LOG"]).read_text().splitlines()
