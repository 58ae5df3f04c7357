"""A broad path never makes indexes in folders the user did not name.

A read-only call (search, changes, status; the CLI and MCP alike) under a path that is not
itself a collection creates at most MAX_NEW_INDEXES new indexes; beyond that it answers from
the collections that have one and names the folders it left alone, with the command that
indexes them. `memo index PATH` (explicit) indexes them all.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_notes
from mcp import Client

from memo_core import Engine, ModelSource, Notice, NoticeKind
from memo_core.files.discovery import MAX_NEW_INDEXES
from memo_core.values import NAMED_FOLDERS
from memo_mcp import server as memo_server
from memo_text import notice_text

UNINDEXED = 30


def _indexed(folder: Path) -> Path:
    with Engine(models=ModelSource(enabled=False)) as e:
        e.refresh(folder, embed=False)  # explicit, as `memo index` is
    return folder


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    """30 unindexed sub-folders of notes and one indexed one ("kept")."""
    base = tmp_path / "wide"
    for i in range(UNINDEXED):
        write_notes(base / f"n{i:02}", {"note.md": f"# Note {i}\n\nrestic topic{i}\n"})
    write_notes(base / "kept", {"backup.md": "# Backup\n\nrestic snapshots nightly\n"})
    _indexed(base / "kept")
    return base


def _memo_dirs(base: Path) -> list[str]:
    return sorted(str(p.parent.relative_to(base)) for p in base.rglob(".memo"))


def _memo(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memo_cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _names_the_others(text: str, base: Path) -> None:
    """The notice (or error) names the first folders left alone, counts the rest and gives
    the command that indexes them."""
    named = [f"n{i:02}" for i in range(NAMED_FOLDERS)]
    assert all(n in text for n in named), text
    assert f"n{NAMED_FOLDERS:02}" not in text, text
    assert str(UNINDEXED - NAMED_FOLDERS) in text, text
    assert f"memo index {shlex.quote(str(base))}" in text, text


# -- the CLI ------------------------------------------------------------------------------


def test_cli_search_answers_from_the_indexed_folder_and_creates_no_index(wide: Path) -> None:
    r = _memo("search", wide, "restic", "--mode", "lex")
    assert r.returncode == 0, r.stderr
    assert f"{wide / 'kept' / 'backup.md'}:1  Backup" in r.stdout
    _names_the_others(r.stdout, wide)
    assert _memo_dirs(wide) == ["kept"]


def test_cli_search_json_carries_the_notice(wide: Path) -> None:
    r = _memo("search", wide, "restic", "--mode", "lex", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [h["relpath"] for h in data["hits"]] == ["backup.md"]
    [notice] = data["notices"]
    _names_the_others(notice, wide)
    assert _memo_dirs(wide) == ["kept"]


def test_cli_changes_and_status_create_no_index(wide: Path) -> None:
    r = _memo("changes", wide)
    assert r.returncode == 0, r.stderr
    assert "backup.md" in r.stdout and "note.md" not in r.stdout
    _names_the_others(r.stdout, wide)
    assert _memo("status", wide).returncode == 0
    assert _memo_dirs(wide) == ["kept"]


def test_cli_with_no_index_at_all_is_an_error_naming_the_command(wide: Path) -> None:
    empty = wide.parent / "fresh"
    for i in range(UNINDEXED):
        write_notes(empty / f"n{i:02}", {"note.md": f"# Note {i}\n\nrestic\n"})
    r = _memo("search", empty, "restic", "--mode", "lex")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("memo: ") and len(r.stderr.strip().splitlines()) == 1
    _names_the_others(r.stderr, empty)
    assert _memo_dirs(empty) == []


def test_cli_index_names_the_folders_so_it_creates_them_all(wide: Path) -> None:
    r = _memo("index", wide, "--no-vectors")
    assert r.returncode == 0, r.stderr
    assert len(_memo_dirs(wide)) == UNINDEXED + 1
    r = _memo("search", wide, "topic7", "--mode", "lex")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{wide / 'n07' / 'note.md'}:1  Note 7")
    assert "memo index" not in r.stdout


# -- the engine: where the line is --------------------------------------------------------


def test_a_few_new_collections_are_indexed_as_one_search(tmp_path: Path) -> None:
    few = tmp_path / "few"
    for i in range(MAX_NEW_INDEXES):
        write_notes(few / f"c{i}", {"n.md": f"# N{i}\n\nshared word{i}\n"})
    with Engine(models=ModelSource(enabled=False)) as e:
        found = e.search(few, "shared", mode="lex")
    assert sorted(h.relpath for h in found) == ["n.md"] * MAX_NEW_INDEXES
    assert not found.notices
    assert _memo_dirs(few) == [f"c{i}" for i in range(MAX_NEW_INDEXES)]


def test_one_more_than_a_few_new_is_left_alone_beside_an_indexed_one(tmp_path: Path) -> None:
    base = tmp_path / "more"
    for i in range(MAX_NEW_INDEXES + 1):
        write_notes(base / f"c{i}", {"n.md": f"# N{i}\n\nshared\n"})
    _indexed(write_notes(base / "old", {"n.md": "# Old\n\nshared\n"}))
    with Engine(models=ModelSource(enabled=False)) as e:
        found = e.search(base, "shared", mode="lex")
    assert [h.collection for h in found] == [str(base / "old")]
    [notice] = found.notices
    assert notice.kind is NoticeKind.NOT_INDEXED
    assert notice.folders == tuple(f"c{i}" for i in range(MAX_NEW_INDEXES + 1))
    assert _memo_dirs(base) == ["old"]


def test_a_path_that_is_one_collection_is_indexed_whatever_lies_below(tmp_path: Path) -> None:
    base = write_notes(tmp_path / "one", {"top.md": "# Top\n\nshared\n"})
    for i in range(MAX_NEW_INDEXES + 2):  # below a collection: its own notes
        write_notes(base / f"c{i}", {"n.md": f"# N{i}\n\nshared\n"})
    with Engine(models=ModelSource(enabled=False)) as e:
        found = e.search(base, "shared", mode="lex", k=20)
    assert len(found) == MAX_NEW_INDEXES + 3 and not found.notices
    assert _memo_dirs(base) == ["."]


def test_indexing_not_yet_counted_is_not_said_as_zero_of_zero() -> None:
    text = notice_text(Notice(NoticeKind.INDEXING, "/notes", done=0, total=0))
    assert "0 из 0" not in text and "индекс" in text
    assert "3 из 7" in notice_text(Notice(NoticeKind.INDEXING, "/notes", done=3, total=7))


# -- MCP ----------------------------------------------------------------------------------


def _client() -> Client:
    engine = Engine(models=ModelSource(enabled=False))
    return Client(memo_server.build_server(engine=engine), mode="legacy")


async def test_mcp_search_and_changes_answer_from_the_indexed_folder(wide: Path) -> None:
    async with _client() as c:
        r = await c.call_tool("memo_search", {"path": str(wide), "query": "restic"})
        assert not r.is_error
        text = r.content[0].text
        assert f"{wide / 'kept' / 'backup.md'}:1  Backup" in text
        _names_the_others(text, wide)
        assert r.structured_content is not None
        [notice] = [n for n in r.structured_content["notices"] if "memo index" in n]
        _names_the_others(notice, wide)
        r = await c.call_tool("memo_changes", {"path": str(wide)})
        assert not r.is_error
        _names_the_others(r.content[0].text, wide)
        r = await c.call_tool("memo_status", {"path": str(wide)})
        assert not r.is_error
    assert _memo_dirs(wide) == ["kept"]


async def test_mcp_with_no_index_at_all_is_an_error_result(tmp_path: Path) -> None:
    base = tmp_path / "fresh"
    for i in range(UNINDEXED):
        write_notes(base / f"n{i:02}", {"note.md": f"# Note {i}\n\nrestic\n"})
    async with _client() as c:
        r = await c.call_tool("memo_search", {"path": str(base), "query": "restic"})
    assert r.is_error
    _names_the_others(r.content[0].text, base)
    assert _memo_dirs(base) == []
