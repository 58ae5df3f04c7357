"""Ignore rules: .gitignore files (nested, negations), .memoignore, and the default skips."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import Engine, ModelSource, format_status
from memo_core.walker import relevant_change, scan

FILES = {
    "a.md": "# A\n\ncat\n",
    "drafts/wip.md": "# Wip\n\ncat\n",
    "drafts/keep.md": "# Keep\n\ncat\n",
    "old/x.tmp.md": "# Tmp\n\ncat\n",
    "sub/secret.md": "# Secret\n\ncat\n",
    "sub/open.md": "# Open\n\ncat\n",
    "other/secret.md": "# Not so\n\ncat\n",
    "archive/one.md": "# One\n\ncat\n",
    "archive/important.md": "# Important\n\ncat\n",
    "node_modules/pkg/README.md": "# pkg\n",
    "venv/lib/x.md": "# venv\n",
    ".venv/lib/y.md": "# .venv\n",
    "__pycache__/z.md": "# cache\n",
    "site-packages/w.md": "# site\n",
    ".git/info.md": "# git\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "vault", FILES)
    (root / ".gitignore").write_text("drafts/*\n!drafts/keep.md\n*.tmp.md\narchive/\n")
    (root / "sub" / ".gitignore").write_text("secret.md\n")
    (root / ".memoignore").write_text("# memo's own\n!archive/\narchive/one.md\n")
    return root


def test_gitignore_memoignore_and_default_skips(vault: Path) -> None:
    found = scan(vault)
    assert sorted(found.files) == [
        "a.md",
        "archive/important.md",  # .memoignore takes the folder back, then leaves one out
        "drafts/keep.md",  # negated
        "other/secret.md",  # sub/.gitignore rules only sub/
        "sub/open.md",
    ]
    # drafts/wip.md, old/x.tmp.md, sub/secret.md, archive/one.md
    assert found.ignored == 4


def test_a_sub_folder_walked_alone_sees_the_rules_above_it(vault: Path) -> None:
    assert sorted(scan(vault, "drafts/").files) == ["drafts/keep.md"]
    assert sorted(scan(vault, "sub/").files) == ["sub/open.md"]


def test_status_counts_what_was_ignored_and_rules_apply_at_once(vault: Path) -> None:
    with Engine(models=ModelSource(enabled=False)) as e:
        e.refresh(vault)
        [st] = e.status(vault)
        assert (st.files, st.ignored) == (5, 4)
        assert ", игнорируется 4" in format_status([st])
        (vault / ".memoignore").write_text("a.md\n")  # archive/ ignored again, a.md too
        stats = e.refresh(vault)
        assert stats.deleted == 2
        assert {h.relpath for h in e.search(vault, "cat", mode="lex", k=10)} == {
            "drafts/keep.md",
            "other/secret.md",
            "sub/open.md",
        }


def test_an_ignore_file_that_is_a_fifo_is_not_read(vault: Path) -> None:
    (vault / "sub" / ".gitignore").unlink()
    os.mkfifo(vault / "sub" / ".gitignore")
    assert "sub/secret.md" in scan(vault).files


@pytest.mark.parametrize(
    ("rel", "deleted", "relevant"),
    [
        (".gitignore", False, True),
        ("sub/.memoignore", False, True),
        (".git/.gitignore", False, False),
        ("node_modules/.gitignore", False, False),
    ],
)
def test_changed_ignore_files_wake_the_watcher(
    vault: Path, rel: str, deleted: bool, relevant: bool
) -> None:
    assert relevant_change(vault, str(vault / rel), deleted=deleted) is relevant
