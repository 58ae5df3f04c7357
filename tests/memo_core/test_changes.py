"""What changed since a fingerprint: the delta rules one by one, across restarts, over
several collections, after a rebuild, with the history's bound; and the same answers from
the CLI and from memo-mcp (text and structuredContent)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import jsonschema
import pytest
from conftest import as_schema_2, write_notes
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_helpers import WireServer, server_env

from memo_cli.main import main
from memo_core import ChangeReport, Engine
from memo_core.index.history import EMPTY_FINGERPRINT, KEEP_DAYS, KEEP_VERSIONS
from memo_core.index.store import Store
from memo_mcp.server import build_server
from memo_text import format_changes

NOTES = {
    "a.md": "# A\n\nalpha\n",
    "b.md": "# B\n\nbeta\n",
    "sub/c.md": "# C\n\ngamma\n",
}


@pytest.fixture
def engine() -> Iterator[Engine]:
    with Engine() as e:  # no model: words only, which is all a change log needs
        yield e


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


def edit(path: Path, text: str) -> None:
    """Write `text` and move the mtime on, so no refresh can take it for the old file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.stat().st_mtime_ns if path.exists() else time.time_ns()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


def rel(report: ChangeReport, root: Path) -> dict[str, list[str]]:
    def short(paths: list[str]) -> list[str]:
        return [Path(p).relative_to(root).as_posix() for p in paths]

    return {
        "added": short(report.added),
        "changed": short(report.changed),
        "removed": short(report.removed),
        "files": short(report.files),
    }


def test_no_since_lists_every_note(engine: Engine, notes: Path) -> None:
    report = engine.changes(notes)
    assert (report.mode, report.reason, report.since) == ("full", "no_fingerprint", None)
    assert rel(report, notes)["files"] == ["a.md", "b.md", "sub/c.md"]
    assert report.files[0] == str(notes / "a.md")  # absolute, as search hits show paths
    assert report.fingerprint == engine.status(notes)[0].fingerprint != EMPTY_FINGERPRINT


def test_since_the_current_fingerprint_is_an_empty_delta(engine: Engine, notes: Path) -> None:
    now = engine.changes(notes).fingerprint
    report = engine.changes(notes, now)
    assert (report.mode, report.since, report.fingerprint) == ("delta", now, now)
    assert (report.added, report.changed, report.removed) == ([], [], [])


def test_the_exact_delta_since_an_older_fingerprint(engine: Engine, notes: Path) -> None:
    first = engine.changes(notes).fingerprint
    edit(notes / "a.md", "# A\n\nalpha, edited\n")
    (notes / "b.md").unlink()
    edit(notes / "sub" / "d.md", "# D\n\ndelta\n")
    second = engine.changes(notes, first)
    assert rel(second, notes) == {
        "added": ["sub/d.md"],
        "changed": ["a.md"],
        "removed": ["b.md"],
        "files": [],
    }
    assert second.fingerprint != first
    # Each fingerprint ever given keeps its own exact answer.
    edit(notes / "sub" / "c.md", "# C\n\ngamma, edited\n")
    assert rel(engine.changes(notes, second.fingerprint), notes)["changed"] == ["sub/c.md"]
    assert rel(engine.changes(notes, first), notes) == {
        "added": ["sub/d.md"],
        "changed": ["a.md", "sub/c.md"],
        "removed": ["b.md"],
        "files": [],
    }


def test_changed_and_changed_back_is_unchanged(engine: Engine, notes: Path) -> None:
    first = engine.changes(notes).fingerprint
    edit(notes / "a.md", "# A\n\nsomething else\n")
    middle = engine.changes(notes, first)
    assert rel(middle, notes)["changed"] == ["a.md"]
    edit(notes / "a.md", NOTES["a.md"])
    back = engine.changes(notes, first)
    assert back.fingerprint == first  # the same content has the same fingerprint
    assert (back.mode, back.added, back.changed, back.removed) == ("delta", [], [], [])
    # ... while from the middle version, a.md did change.
    assert rel(engine.changes(notes, middle.fingerprint), notes)["changed"] == ["a.md"]


def test_a_file_removed_and_restored_is_unchanged(engine: Engine, notes: Path) -> None:
    first = engine.changes(notes).fingerprint
    (notes / "b.md").unlink()
    assert rel(engine.changes(notes, first), notes)["removed"] == ["b.md"]
    edit(notes / "b.md", NOTES["b.md"])
    report = engine.changes(notes, first)
    assert (report.mode, report.added, report.changed, report.removed) == ("delta", [], [], [])


def test_a_special_file_is_not_a_note_of_the_feed(engine: Engine, notes: Path) -> None:
    """A FIFO named *.md is never read, so it is no note: a client that opened what the feed
    lists would hang on it. It appears in no listing, no delta and no fingerprint."""
    first = engine.changes(notes).fingerprint
    os.mkfifo(notes / "pipe.md")
    report = engine.changes(notes, first)
    assert (report.mode, report.added, report.changed, report.removed) == ("delta", [], [], [])
    assert report.fingerprint == first
    assert rel(engine.changes(notes), notes)["files"] == ["a.md", "b.md", "sub/c.md"]
    # A regular note in its place is a note again, and its going is a removal.
    (notes / "pipe.md").unlink()
    edit(notes / "pipe.md", "# Pipe\n\nnow a note\n")
    assert rel(engine.changes(notes, first), notes)["added"] == ["pipe.md"]
    second = engine.changes(notes).fingerprint
    (notes / "pipe.md").unlink()
    os.mkfifo(notes / "pipe.md")
    assert rel(engine.changes(notes, second), notes)["removed"] == ["pipe.md"]
    assert engine.changes(notes).fingerprint == first


def test_touched_without_a_content_change_is_no_change(engine: Engine, notes: Path) -> None:
    first = engine.changes(notes).fingerprint
    edit(notes / "a.md", NOTES["a.md"])  # the same bytes, a new mtime
    report = engine.changes(notes, first)
    assert report.fingerprint == first
    assert (report.mode, report.added, report.changed, report.removed) == ("delta", [], [], [])


def test_a_rename_is_removed_plus_added(engine: Engine, notes: Path) -> None:
    first = engine.changes(notes).fingerprint
    (notes / "a.md").rename(notes / "sub" / "a-renamed.md")
    report = engine.changes(notes, first)
    assert rel(report, notes) == {
        "added": ["sub/a-renamed.md"],
        "changed": [],
        "removed": ["a.md"],
        "files": [],
    }


UNKNOWN = ["0123456789abcdef01234567", "not-a-fingerprint", "", "a.b.c", "é" * 30]


@pytest.mark.parametrize("since", UNKNOWN)
def test_an_unknown_fingerprint_lists_every_note(engine: Engine, notes: Path, since: str) -> None:
    report = engine.changes(notes, since)
    assert (report.mode, report.reason, report.since) == ("full", "unknown_fingerprint", since)
    assert rel(report, notes)["files"] == ["a.md", "b.md", "sub/c.md"]


def test_a_folder_never_indexed_starts_from_the_empty_fingerprint(
    engine: Engine, tmp_path: Path
) -> None:
    notes = write_notes(tmp_path / "later", {"x.md": "# X\n\nx\n"})
    report = engine.changes(notes, EMPTY_FINGERPRINT)
    assert rel(report, notes)["added"] == ["x.md"] and report.mode == "delta"


def test_the_answer_survives_a_restart(notes: Path) -> None:
    with Engine() as first:
        then = first.changes(notes).fingerprint
    edit(notes / "b.md", "# B\n\nbeta, edited\n")
    with Engine() as second:  # another process's view: only the index file is shared
        assert rel(second.changes(notes, then), notes)["changed"] == ["b.md"]


def test_a_rebuild_keeps_the_history(engine: Engine, notes: Path) -> None:
    first = engine.changes(notes).fingerprint
    edit(notes / "a.md", "# A\n\nalpha, edited before the rebuild\n")
    engine.reindex(notes)
    edit(notes / "b.md", "# B\n\nbeta, edited after\n")
    report = engine.changes(notes, first)
    assert rel(report, notes)["changed"] == ["a.md", "b.md"] and report.mode == "delta"
    assert engine.changes(notes).fingerprint == report.fingerprint


def test_several_collections_combine(engine: Engine, tmp_path: Path) -> None:
    top = tmp_path / "top"
    work = write_notes(top / "work", {"w.md": "# W\n\nwork\n"})
    home = write_notes(top / "home", {"h.md": "# H\n\nhome\n"})
    full = engine.changes(top)
    parts = [engine.changes(c).fingerprint for c in (home, work)]
    # Theirs, in the collections' order, each with its folder (base64url).
    assert full.fingerprint == f"{parts[0]}@aG9tZQ.{parts[1]}@d29yaw"
    assert [Path(p).name for p in full.files] == ["h.md", "w.md"]
    edit(work / "w.md", "# W\n\nwork, edited\n")
    edit(home / "h2.md", "# H2\n\nnew\n")
    delta = engine.changes(top, full.fingerprint)
    assert delta.mode == "delta"
    assert delta.added == [str(home / "h2.md")] and delta.changed == [str(work / "w.md")]
    # One collection's part alone is what a client knew when the path held only it: that
    # collection's delta, the other's notes all added.
    alone = engine.changes(top, parts[0])
    assert (alone.mode, alone.added) == ("delta", [str(home / "h2.md"), str(work / "w.md")])
    # A new collection: all of it added.
    write_notes(top / "new", {"n.md": "# N\n\nn\n"})
    grown = engine.changes(top, delta.fingerprint)
    assert (grown.mode, grown.added, grown.removed) == ("delta", [str(top / "new" / "n.md")], [])
    # One that went: no index here knows what it held.
    shutil.rmtree(top / "new")
    assert engine.changes(top, grown.fingerprint).reason == "unknown_fingerprint"


@pytest.mark.parametrize("joined", ["bare", "status"])
def test_a_fingerprint_without_folders_survives_a_new_collection(
    engine: Engine, tmp_path: Path, joined: str
) -> None:
    """Parts that name no folder (a joined fingerprint from before parts named theirs, or
    the collections' own from `status`, joined by a client) are matched to the collections
    by what each index knows: a collection added since, before, between or after them, is
    all added and the others answer with their delta (it was every note)."""
    top = tmp_path / "top"
    home = write_notes(top / "home", {"h.md": "# H\n\nhome\n"})
    work = write_notes(top / "work", {"w.md": "# W\n\nwork\n"})
    if joined == "bare":
        since = ".".join(part.split("@")[0] for part in engine.changes(top).fingerprint.split("."))
    else:
        engine.refresh(top, embed=False)  # status reads the indexes as they are
        since = ".".join(s.fingerprint for s in engine.status(top))
    edit(work / "w.md", "# W\n\nwork, edited\n")
    for name in ("aa", "job", "zz"):  # sorted before, between and after the two
        write_notes(top / name, {"n.md": f"# {name}\n\nnew\n"})
    report = engine.changes(top, since)
    assert report.mode == "delta"
    assert report.added == [str(top / name / "n.md") for name in ("aa", "job", "zz")]
    assert (report.changed, report.removed) == ([str(work / "w.md")], [])
    assert engine.changes(top, report.fingerprint).added == []  # the new format from here on
    # A part that no collection here knows (its collection went) still gets every note.
    shutil.rmtree(home)
    assert engine.changes(top, since).reason == "unknown_fingerprint"


def test_a_collection_renamed_under_the_path_is_removed_and_added(
    engine: Engine, tmp_path: Path
) -> None:
    top = tmp_path / "top"
    write_notes(top / "work", {"w.md": "# W\n\nwork\n", "sub/x.md": "# X\n\nx\n"})
    write_notes(top / "home", {"h.md": "# H\n\nhome\n"})
    before = engine.changes(top).fingerprint
    (top / "work").rename(top / "job")
    edit(top / "job" / "w.md", "# W\n\nwork, edited after the move\n")
    report = engine.changes(top, before)
    assert report.mode == "delta" and report.fingerprint != before
    assert report.removed == [str(top / "work" / "sub" / "x.md"), str(top / "work" / "w.md")]
    assert sorted(report.added) == [str(top / "job" / "sub" / "x.md"), str(top / "job" / "w.md")]
    assert report.changed == []
    assert engine.changes(top, report.fingerprint).mode == "delta"  # and empty from there
    assert not engine.changes(top, report.fingerprint).added


def _versions(store: Store, n: int, start: int = 0) -> list[str]:
    """`n` committed versions (one note rewritten each time); the fingerprint after each."""
    fingerprints = []
    for i in range(start, start + n):
        with store.write():
            store.upsert_file("note.md", i, 1, f"hash-{i}", None)
        fingerprints.append(store.history.fingerprint())
    return fingerprints


def test_history_keeps_1000_versions_or_90_days(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "index.db")
    try:
        old = _versions(store, 150)
        recent = _versions(store, KEEP_VERSIONS + 50, start=150)
        # All within 90 days: nothing is dropped, however many versions.
        assert store.history.delta_since(old[0]) is not None
        # Make the first 300 versions older than the bound; the next prune drops those
        # beyond the last KEEP_VERSIONS (and only those).
        with store.write():
            store.db.execute(
                "UPDATE history SET at = ? WHERE version <= 300",
                (time.time() - (KEEP_DAYS + 1) * 86400,),
            )
        _versions(store, 100, start=10_000)
        assert store.history.delta_since(old[0]) is None  # older than both bounds: expired
        kept = recent[-KEEP_VERSIONS + 100]
        delta = store.history.delta_since(kept)
        assert delta is not None and delta.changed == ["note.md"]
        assert store.db.execute("SELECT min(version) FROM file_log").fetchone()[0] > 150
    finally:
        store.close()


def test_the_log_size_is_bounded_by_the_changes(tmp_path: Path) -> None:
    """One row per changed note per version: a refresh that changes nothing logs nothing."""
    store = Store.create(tmp_path / "index.db")
    try:
        _versions(store, 3)
        with store.write():
            store.upsert_file("note.md", 99, 1, "hash-2", None)  # the same content again
        count = store.db.execute("SELECT count(*) FROM file_log").fetchone()[0]
        assert count == 3
    finally:
        store.close()


def test_an_index_from_before_the_history_gets_one(tmp_path: Path, engine: Engine) -> None:
    """Schema 2 had no history: migrating starts it at the content the index holds."""
    notes = write_notes(tmp_path / "notes", NOTES)
    now = engine.changes(notes).fingerprint
    engine.close()
    as_schema_2(notes / ".memo" / "index.db")
    with Engine() as again:
        assert again.changes(notes, now).mode == "delta"  # the same content, recomputed
        edit(notes / "a.md", "# A\n\nafter the migration\n")
        assert rel(again.changes(notes, now), notes)["changed"] == ["a.md"]


def test_the_text_counts_then_lists_every_path(engine: Engine, tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "many", {f"n{i:02}.md": f"# N{i}\n\nn\n" for i in range(60)})
    first = engine.changes(notes)
    text = format_changes(first)
    assert text.splitlines() == [
        f"все заметки: 60; отпечаток сейчас {first.fingerprint}",
        *(str(notes / f"n{i:02}.md") for i in range(60)),
    ]
    (notes / "n00.md").unlink()
    edit(notes / "n01.md", "# changed\n")
    edit(notes / "z.md", "# new\n")
    lines = format_changes(engine.changes(notes, first.fingerprint)).splitlines()
    assert lines[0].startswith(
        f"изменения с {first.fingerprint}: добавлено 1, изменено 1, удалено 1; отпечаток сейчас "
    )
    assert lines[1:] == [f"+ {notes / 'z.md'}", f"~ {notes / 'n01.md'}", f"- {notes / 'n00.md'}"]
    unknown = format_changes(engine.changes(notes, "feed")).splitlines()[0]
    assert unknown.startswith("отпечаток feed неизвестен или устарел, поэтому все заметки: 60;")


def test_cli_json_gives_the_same_answers(notes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["changes", str(notes), "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert full["mode"] == "full" and full["reason"] == "no_fingerprint" and full["from"] is None
    assert full["files"] == [str(notes / r) for r in ("a.md", "b.md", "sub/c.md")]
    edit(notes / "a.md", "# A\n\nedited\n")
    assert main(["changes", str(notes), "--since", full["to"], "--json"]) == 0
    with Engine() as engine:
        now = engine.status(notes)[0].fingerprint
    assert json.loads(capsys.readouterr().out) == {
        "mode": "delta",
        "from": full["to"],
        "to": now,
        "added": [],
        "changed": [str(notes / "a.md")],
        "removed": [],
    }
    assert main(["changes", str(notes), "--since", full["to"]]) == 0
    assert capsys.readouterr().out.startswith(f"изменения с {full['to']}: добавлено 0, изменено 1")


def test_the_cli_text_lists_every_note(tmp_path: Path) -> None:
    """The README says the answer is every note: `memo changes` printed 50 paths and
    `… и ещё N`."""
    names = [f"n{i:03}.md" for i in range(120)]
    notes = write_notes(tmp_path / "many", {n: f"# {n}\n\nn\n" for n in names})
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "changes", str(notes)],
        capture_output=True,
        text=True,
        check=True,
    )
    head, *paths = run.stdout.splitlines()
    assert head.startswith("все заметки: 120; отпечаток сейчас ")
    assert paths == [str(notes / n) for n in names]
    edits = names[:70]
    for n in edits:
        edit(notes / n, f"# {n}\n\nedited\n")
    since = head.rsplit(" ", 1)[1]
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "changes", str(notes), "--since", since],
        capture_output=True,
        text=True,
        check=True,
    )
    head, *paths = run.stdout.splitlines()
    assert head.startswith(f"изменения с {since}: добавлено 0, изменено 70, удалено 0;")
    assert paths == [f"~ {notes / n}" for n in edits]


def test_memo_mcp_answers_with_text_and_structured_content(tmp_path: Path) -> None:
    """Over stdio with the real memo-mcp, a restart of the server between the two calls."""
    notes = write_notes(tmp_path / "notes", NOTES)

    def call(arguments: dict[str, str]) -> dict:
        server = WireServer(server_env(tmp_path))
        try:
            assert "result" in server.initialize()
            return server.tool("memo_changes", arguments)
        finally:
            assert server.close() == 0, server.stderr_text()
            server.check_stdout()

    first = call({"path": str(notes)})
    assert first["isError"] is False
    data = first["structuredContent"]
    assert data["mode"] == "full" and data["reason"] == "no_fingerprint"
    assert data["files"] == [str(notes / r) for r in ("a.md", "b.md", "sub/c.md")]
    assert first["content"][0]["text"].startswith("все заметки: 3; отпечаток сейчас ")
    (notes / "b.md").rename(notes / "b2.md")
    second = call({"path": str(notes), "since": data["to"]})
    assert second["structuredContent"] == {
        "mode": "delta",
        "from": data["to"],
        "to": second["structuredContent"]["to"],
        "added": [str(notes / "b2.md")],
        "changed": [],
        "removed": [str(notes / "b.md")],
    }
    assert second["structuredContent"]["to"] != data["to"]
    lines = second["content"][0]["text"].splitlines()
    assert lines[1:] == [f"+ {notes / 'b2.md'}", f"- {notes / 'b.md'}"]


async def test_the_changes_resource_answers_like_the_tool(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "allowed" / "notes", NOTES)
    folder = quote(str(notes), safe="")
    async with Client(build_server([tmp_path / "allowed"]), mode="legacy") as c:
        [content] = (await c.read_resource(f"memo://changes/{folder}")).contents
        assert content.mime_type == "application/json"
        full = json.loads(content.text)
        assert full["mode"] == "full" and len(full["files"]) == 3
        edit(notes / "a.md", "# A\n\nedited\n")
        uri = f"memo://changes/{folder}?since={full['to']}"
        delta = json.loads((await c.read_resource(uri)).contents[0].text)
        tool = await c.call_tool("memo_changes", {"path": str(notes), "since": full["to"]})
        assert delta == tool.structured_content
        first = await c.call_tool("memo_changes", {"path": str(notes)})
        [listed] = [t for t in (await c.list_tools()).tools if t.name == "memo_changes"]
        assert listed.output_schema is not None  # a client can validate what it gets
        for answer in (tool, first):
            jsonschema.validate(answer.structured_content, listed.output_schema)
        assert delta["changed"] == [str(notes / "a.md")]
        with pytest.raises(MCPError, match="лежит вне папок, которые memo разрешено использовать"):
            await c.read_resource(f"memo://changes/{quote(str(tmp_path), safe='')}")
