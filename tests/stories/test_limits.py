"""Bounded resources: a search over more folders than the process may hold files for ends
in a clear error, never in "move .memo away" or "no notes found", and the next calls work;
folders not used for a while give their descriptors back."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import Engine, ModelSource

SCRIPT = textwrap.dedent(
    """
    import resource, sys
    from memo_core import Engine, MemoError, ModelSource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[2]), hard))
    parent, one = sys.argv[1], sys.argv[1] + "/c7"
    with Engine(models=ModelSource(enabled=False), notify=True, max_open=16) as e:
        try:
            hits = e.search(parent, "alpha", mode="lex", k=50)
            print("WIDE", len(hits))
        except MemoError as err:
            print("WIDE-ERROR", str(err).replace("\\n", " "))
        for _ in range(3):  # later calls on one folder work, again and again
            print("ONE", [h.relpath for h in e.search(one, "alpha7", mode="lex")])
            print("STATUS", e.status(one)[0].files)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX descriptor limits")
def test_more_folders_than_descriptors(tmp_path: Path) -> None:
    parent = tmp_path / "many"
    for i in range(120):
        write_notes(parent / f"c{i}", {"n.md": f"# N\n\nalpha alpha{i}\n"})
    # Indexed first (a search makes no index in 120 folders nobody named), so the search
    # opens and refreshes each one's index: c0 by memo, its index copied to the others (each
    # refresh then updates it to its own note; building 120 one by one takes seconds).
    with Engine(models=ModelSource(enabled=False)) as e:
        e.refresh(parent / "c0", embed=False)
    for i in range(1, 120):
        shutil.copytree(parent / "c0" / ".memo", parent / f"c{i}" / ".memo")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(parent), "96"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    wide = lines[0]
    assert wide.startswith("WIDE ") or "too many files open" in wide, wide
    assert "move" not in wide and "no notes" not in wide, wide
    assert lines[1:] == ["ONE ['n.md']", "STATUS 1"] * 3, out.stdout + out.stderr


def test_folders_beyond_the_budget_give_their_descriptors_back(tmp_path: Path) -> None:
    folders = [write_notes(tmp_path / f"c{i}", {"n.md": f"# N\n\nword{i}\n"}) for i in range(10)]
    with Engine(models=ModelSource(enabled=False), max_open=3) as e:
        for i, folder in enumerate(folders):
            assert [h.relpath for h in e.search(folder, f"word{i}", mode="lex")] == ["n.md"]
        held = [c for c in e.held_collections().values() if c.is_open]
        assert 1 <= len(held) <= 4  # the three most recent, and the one in use
        assert [h.relpath for h in e.search(folders[0], "word0", mode="lex")] == ["n.md"]
