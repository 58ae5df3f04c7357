"""Hostile folders: memo never touches what it did not make, never writes outside, never
hangs or crashes. Each case is something another program, a sync client or an unpacked
archive can leave in a notes folder."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import anyio
import apsw
import numpy as np
import pytest
from conftest import write_notes
from mcp.shared.exceptions import MCPError

from memo_core import Embedder, Engine, FileNote, MemoError, ModelSource
from memo_core.text.excerpt import EXCERPT_CHARS, EXCERPT_LINES
from memo_text import format_hits, format_status

NOTES = {"a.md": "# A\n\ncat and dog\n", "sub/b.md": "# B\n\nbird\n"}


def engine() -> Engine:
    return Engine(models=ModelSource(enabled=False))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def within(seconds: float, fn: Callable[[], object]) -> object:
    """fn() in a thread; fails the test (instead of hanging it) if it takes longer."""
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still running after {seconds} s"
    return out[0] if out else None


def foreign_db(path: Path, user_version: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = apsw.Connection(str(path))
    db.execute(f"PRAGMA user_version={user_version}; CREATE TABLE precious(x);")
    db.execute("INSERT INTO precious VALUES ('keep me')")
    db.close()
    return path


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


# -- what lies at memo's own paths ----------------------------------------------------------


@pytest.mark.parametrize("user_version", [0, 1, 2, 7])
def test_another_programs_database_is_never_modified(notes: Path, user_version: int) -> None:
    index = foreign_db(notes / ".memo" / "index.db", user_version)
    before = digest(index)
    with engine() as e:
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
        assert e.reindex(notes) == 2
        assert "not a memo index" in (e.status(notes)[0].location_note or "")
    assert digest(index) == before
    assert sorted(p.name for p in index.parent.iterdir()) == ["index.db"]  # no WAL beside it


@pytest.mark.parametrize("dangling", [False, True])
def test_an_index_symlink_is_never_followed(notes: Path, tmp_path: Path, dangling: bool) -> None:
    target = tmp_path / "app" / "app.db"
    if not dangling:
        foreign_db(target)
    (notes / ".memo").mkdir()
    os.symlink(target, notes / ".memo" / "index.db")
    before = digest(target) if not dangling else None
    with engine() as e:
        e.search(notes, "cat", mode="lex")
        e.reindex(notes)
        note = e.status(notes)[0].location_note or ""
    assert "index.db is a symbolic link; memo leaves it alone" in note
    if dangling:
        assert not target.parent.exists()
    else:
        assert digest(target) == before
        assert sorted(p.name for p in target.parent.iterdir()) == ["app.db"]


@pytest.mark.parametrize("name", ["refresh.lock", "index.db-wal", "index.db-shm"])
def test_side_file_symlinks_are_never_written_through(
    notes: Path, tmp_path: Path, name: str
) -> None:
    target = tmp_path / "outside" / "target"
    target.parent.mkdir()
    (notes / ".memo").mkdir()
    os.symlink(target, notes / ".memo" / name)
    with engine() as e:
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
        assert f"{name} is a symbolic link" in (e.status(notes)[0].location_note or "")
    assert not target.exists()


def test_a_rebuild_scratch_symlink_is_refused_not_followed(notes: Path, tmp_path: Path) -> None:
    target = tmp_path / "outside.db"
    with engine() as e:
        e.refresh(notes)
        os.symlink(target, notes / ".memo" / "index.db.rebuild")
        with pytest.raises(MemoError, match="index.db.rebuild is a symbolic link; memo leaves it"):
            e.reindex(notes)
        assert e.search(notes, "cat", mode="lex")  # the live index still answers
    assert not target.exists() and (notes / ".memo" / "index.db.rebuild").is_symlink()


@pytest.mark.parametrize("kind", ["symlink inside", "symlink outside", "file"])
def test_dot_memo_must_be_a_real_folder(notes: Path, tmp_path: Path, kind: str) -> None:
    memo = notes / ".memo"
    if kind == "file":
        memo.write_text("not a folder")
    else:
        target = notes / "sub" if kind == "symlink inside" else tmp_path / "elsewhere"
        target.mkdir(exist_ok=True)
        os.symlink(target, memo)
    with engine() as e:
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
        assert Path(e.status(notes)[0].index_path).is_relative_to(os.environ["MEMO_CACHE_DIR"])
    assert not (notes / "sub" / "index.db").exists()
    assert not (tmp_path / "elsewhere" / "index.db").exists()


def test_a_fifo_at_the_index_path_never_blocks(notes: Path) -> None:
    (notes / ".memo").mkdir()
    os.mkfifo(notes / ".memo" / "index.db")
    with engine() as e:
        hits = within(20, lambda: e.search(notes, "cat", mode="lex"))
        assert hits and "not a regular file" in (e.status(notes)[0].location_note or "")


# -- what lies among the notes --------------------------------------------------------------


def test_a_fifo_named_like_a_note_is_skipped_and_counted(notes: Path) -> None:
    os.mkfifo(notes / "pipe.md")
    with engine() as e:
        hits = within(20, lambda: e.search(notes, "cat", mode="lex"))
        assert hits
        [st] = e.status(notes)
        assert st.skipped == 1 and ("pipe.md", FileNote.SPECIAL) in st.notes
        assert within(20, lambda: e.refresh(notes)) is not None  # and again, never blocking


async def test_a_fifo_does_not_stall_the_server(notes: Path) -> None:
    from mcp import Client

    from memo_mcp.server import build_server

    os.mkfifo(notes / "pipe.md")
    async with Client(build_server([notes.parent]), mode="legacy") as c:
        with anyio.fail_after(20):
            for _ in range(3):
                r = await c.call_tool("memo_search", {"path": str(notes), "query": "cat"})
                assert not r.is_error
            uri = f"memo://note/{quote(str(notes), safe='')}/pipe.md"
            with pytest.raises(MCPError, match="не заметка Markdown|не прочитать"):
                await c.read_resource(uri)
            assert len((await c.list_tools()).tools) == 5


# -- names and text that are not plain text -----------------------------------------------

BAD_NAME = b"bad\xffname.md"


@pytest.fixture
def odd_names(notes: Path) -> Path:
    with open(os.path.join(os.fsencode(notes), BAD_NAME), "w", encoding="utf-8") as f:
        f.write("# Bytes\n\nzebra in a file whose name is not UTF-8\n")
    (notes / "two\nlines.md").write_text("# Forged\n\nzebra again\n", encoding="utf-8")
    (notes / "esc.md").write_text(
        "# Title \x1b]0;owned\x07 here\n\nzebra \x1b[2J cleared \x9b31m and a tab\tstays\n",
        encoding="utf-8",
    )
    return notes


def test_names_that_are_not_utf8_are_indexed_losslessly(odd_names: Path) -> None:
    with engine() as e:
        hits = e.search(odd_names, "zebra", mode="lex", k=5)
        by_rel = {os.fsencode(h.relpath): h for h in hits}
        assert BAD_NAME in by_rel
        assert Path(by_rel[BAD_NAME].path).read_text(encoding="utf-8").startswith("# Bytes")
        assert e.refresh(odd_names).changed_anything is False  # stored and read back the same
        assert e.status(odd_names)[0].files == 5


def test_the_cli_prints_names_and_text_safely(odd_names: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "search", str(odd_names), "zebra", "-k", "5"],
        capture_output=True,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode("utf-8")  # valid UTF-8 throughout
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert "bad\\xffname.md:1  Bytes" in out
    assert "two\\nlines.md:1  Forged" in out  # one name, one line: no forged hit line
    assert "esc.md:1  Title \\x1b]0;owned\\x07 here" in out
    assert "zebra \\x1b[2J cleared \\x9b31m and a tab\tstays" in out
    heads = [line for line in out.splitlines() if ":1  " in line]
    assert len(heads) == 3


def test_the_cli_json_stays_exact(odd_names: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "search", str(odd_names), "zebra", "-k", "5"]
        + ["--mode", "lex", "--json"],
        capture_output=True,
    )
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout.decode("utf-8"))["hits"]
    names = {os.fsencode(h["relpath"]) for h in hits}
    assert names == {BAD_NAME, b"two\nlines.md", b"esc.md"}
    esc = next(h for h in hits if h["relpath"] == "esc.md")
    assert "\x1b[2J" in esc["text"]  # exact: JSON escapes it, the reader gets it back


def test_the_server_survives_odd_names_and_queries(
    odd_names: Path, tmp_path: Path, tiny_model_dir: Path
) -> None:
    from mcp_helpers import WireServer, server_env

    server = WireServer(server_env(tmp_path, tiny_model_dir))
    try:
        server.initialize()
        text = server.text("memo_search", {"path": str(odd_names), "query": "zebra", "k": 5})
        assert "bad\\xffname.md:1  Bytes" in text and "two\\nlines.md:1  Forged" in text
        for query in ["\udcff", "zebra \ud800 \udfff", "\x00"]:  # not text: no crash, no model
            result = server.tool("memo_search", {"path": str(odd_names), "query": query})
            assert result["isError"] is False, result
        text = server.text("memo_status", {"path": str(odd_names)})
        assert text.startswith(f"{odd_names}: файлов 5")
        ref = {"type": "ref/resource", "uri": "memo://note/{collection}/{+path}"}
        answer = server.call(
            "completion/complete",
            {
                "ref": ref,
                "argument": {"name": "path", "value": ""},
                "context": {"arguments": {"collection": str(odd_names)}},
            },
        )
        assert answer["result"]["completion"]["values"] == ["a.md", "esc.md", "sub/b.md"]
        assert server.call("ping")["result"] == {}
        server.check_stdout()
    finally:
        assert server.close() == 0


# -- paths that change under memo's feet, and what the answers reveal ----------------------


async def test_a_symlink_swapped_during_calls_never_leads_outside(tmp_path: Path) -> None:
    from mcp import Client

    from memo_mcp.server import build_server

    allowed = tmp_path / "allowed"
    inside = write_notes(allowed / "inside", {"a.md": "# In\n\nzebra inside\n"})
    outside = write_notes(tmp_path / "outside", {"s.md": "# Secret\n\nzebra secret\n"})
    link, stop = allowed / "link", threading.Event()

    def flip() -> None:
        while not stop.is_set():
            for target in (inside, outside):
                os.symlink(target, allowed / "link.tmp")
                os.replace(allowed / "link.tmp", link)

    flipper = threading.Thread(target=flip)
    flipper.start()
    answered = 0
    try:
        async with Client(build_server([allowed]), mode="legacy") as c:
            for _ in range(200):
                args = {"path": str(link), "query": "zebra", "mode": "lex"}
                text = (await c.call_tool("memo_search", args)).content[0].text
                assert "secret" not in text and str(outside) not in text.split(" is outside")[0]
                answered += "zebra inside" in text
    finally:
        stop.set()
        flipper.join()
    assert answered > 0  # the swap really happened both ways during the calls
    assert not (outside / ".memo").exists()


async def test_the_note_resource_does_not_tell_what_exists_outside(tmp_path: Path) -> None:
    from mcp import Client

    from memo_mcp.resources import note_uri
    from memo_mcp.server import build_server

    allowed = write_notes(tmp_path / "allowed", {"a.md": "# A\n"})
    secret = write_notes(tmp_path / "secret", {"s.md": "# S\n"})
    os.symlink(secret, allowed / "out")
    async with Client(build_server([allowed]), mode="legacy") as c:
        answers = []
        for rel in ("out/s.md", "out/nope.md"):
            with pytest.raises(MCPError) as err:
                await c.read_resource(note_uri(allowed, rel))
            answers.append(err.value.error.message.replace(rel, "<rel>"))
    assert answers[0] == answers[1] == f"<rel> ведёт за пределы {allowed}"


# -- a folder that hangs must not hang the server -----------------------------------------


class StuckEmbedder(Embedder):
    """A real tiny model whose note embedding hangs until `gate` opens (a dead network
    drive, say); query embeddings are counted."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.gate, self.queries = threading.Event(), 0

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if query:
            self.queries += 1
        else:
            assert self.gate.wait(60)
        return self.inner.embed_batch(texts, query=query)


async def test_a_stuck_folder_leaves_the_server_answering(tmp_path: Path, tiny_embedder) -> None:
    from mcp import Client

    from memo_mcp.server import build_server

    stuck = write_notes(tmp_path / "stuck", NOTES)
    other = write_notes(tmp_path / "other", {"c.md": "# C\n\nfish\n"})
    model = StuckEmbedder(tiny_embedder)
    engine = Engine(models=ModelSource(model))
    async with Client(build_server([tmp_path], engine), mode="legacy") as c:
        results: list[object] = []

        async def search_stuck() -> None:
            results.append(await c.call_tool("memo_search", {"path": str(stuck), "query": "cat"}))

        async with anyio.create_task_group() as tg:
            for _ in range(50):  # more than any thread pool has threads
                tg.start_soon(search_stuck)
            await anyio.sleep(0.5)
            with anyio.fail_after(10):
                assert len((await c.list_tools()).tools) == 5
                args = {"path": str(other), "query": "fish", "mode": "lex"}
                assert "c.md:1  C" in (await c.call_tool("memo_search", args)).content[0].text
                assert not (await c.call_tool("memo_status", {"path": str(other)})).is_error
            model.gate.set()
    assert len(results) == 50


async def test_a_cancelled_call_leaves_its_queue(tmp_path: Path, tiny_embedder) -> None:
    from mcp import Client

    from memo_mcp.server import FOLDER_WORKERS, build_server

    stuck = write_notes(tmp_path / "stuck", NOTES)
    model = StuckEmbedder(tiny_embedder)
    async with Client(
        build_server([tmp_path], Engine(models=ModelSource(model))), mode="legacy"
    ) as c:
        args = {"path": str(stuck), "query": "cat"}
        async with anyio.create_task_group() as tg:
            for _ in range(FOLDER_WORKERS):  # every place of the folder taken, hanging
                tg.start_soon(c.call_tool, "memo_search", args)
            await anyio.sleep(0.5)
            with anyio.move_on_after(0.5):  # queued behind them, then cancelled
                await c.call_tool("memo_search", args)
            model.gate.set()
        await anyio.sleep(0.5)
    assert model.queries == FOLDER_WORKERS  # the cancelled call never ran


# -- sizes ----------------------------------------------------------------------------------


def test_index_size_follows_the_note_text_not_its_heading_paths(tmp_path: Path) -> None:
    title = " ".join(f"word{i}" for i in range(12_000))  # a 100 KB first-level heading
    sections = "".join(f"## Section {i}\n\ntext {i}\n\n" for i in range(2_000))
    notes = write_notes(tmp_path / "notes", {"huge.md": f"# {title}\n\n{sections}"})
    note_bytes = (notes / "huge.md").stat().st_size
    with engine() as e:
        e.refresh(notes)
        hits = e.search(notes, "section text", mode="lex", k=100)
        found = e.search(notes, "word11999", mode="lex")  # the title's last word, still found
    index_bytes = sum(p.stat().st_size for p in (notes / ".memo").iterdir())
    # README, Safety, "Odd input": 10x at most (was 276 MB for 180 KB; 3.4x now).
    assert index_bytes < 10 * note_bytes, (index_bytes, note_bytes)
    assert found and found[0].relpath == "huge.md"
    assert max(len(h.heading) for h in hits) <= 200
    assert len(format_hits(hits).encode()) < 100_000


def test_a_hit_carries_a_bounded_passage(tmp_path: Path) -> None:
    fence = "```\n" + "code line\n" * 50_000 + "```\n"  # a fence is never split: one chunk
    notes = write_notes(tmp_path / "notes", {"big.md": f"# Big\n\n{fence}"})
    with engine() as e:
        [hit] = e.search(notes, "code", mode="lex")
    # A hit shows a window of its passage's lines (was: its first 4,000 chars).
    assert len(hit.text) <= EXCERPT_CHARS and hit.text.count("\n") < EXCERPT_LINES
    lines = (notes / "big.md").read_text().split("\n")
    assert hit.text.split("\n") == lines[hit.line - 1 : hit.end_line]  # at its real lines


def test_a_collection_folder_whose_name_is_not_utf8(tmp_path: Path) -> None:
    folder = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"notes\xff")))
    write_notes(folder, NOTES)
    with engine() as e:
        assert e.search(folder, "cat", mode="lex")[0].path == str(folder / "a.md")
        [st] = e.status(folder)
        assert st.files == 2 and "not UTF-8" in (st.location_note or "")
        assert "notes\\xff: файлов 2" in format_status([st])
