"""Odd files and folders: huge, vanished, strangely named; unwritable index folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import FileNote, Searcher, Tuning
from memo_core.files.fsafe import Folder
from memo_core.index.indexer import read_note

MAX_FILE_BYTES = Tuning().max_file_bytes


def test_huge_file_is_cut_and_said_so(notes: Path) -> None:
    line = "word " * 20 + "\n"
    with open(notes / "huge.md", "w", encoding="utf-8") as f:
        f.write("# Huge\n\n")
        for _ in range(MAX_FILE_BYTES // len(line) + 1000):
            f.write(line)
        f.write("needle at the very end\n")
    with Searcher(notes, use_model=False) as s:
        s.refresh(embed=False)
        st = s.status()[0]
        assert st.files == 4 and st.skipped == 0
        assert ("huge.md", FileNote.CUT) in st.notes
        assert list(s.search("needle", mode="lex")) == []
        assert s.search("word", mode="lex", k=1)[0].relpath == "huge.md"


def test_file_that_vanished_is_noted_not_fatal(tmp_path: Path) -> None:
    with Folder(tmp_path) as folder:
        data, note, detail = read_note(folder, "gone.md", MAX_FILE_BYTES)
    assert (data, note) == (b"", FileNote.UNREADABLE) and "No such file" in detail


@pytest.mark.parametrize(
    "name",
    ["with space.md", "новая заметка.md", "line\nbreak.md", "emoji 🐈.md", "tab\there.md"],
)
def test_strange_names(notes: Path, name: str) -> None:
    (notes / name).write_text("# Odd\n\nzebra crossing\n", encoding="utf-8")
    with Searcher(notes, use_model=False) as s:
        hit = s.search("zebra", mode="lex")[0]
        assert hit.relpath == name and Path(hit.path).read_text(encoding="utf-8")


def test_index_folder_that_cannot_be_made_falls_back_to_the_cache(notes: Path) -> None:
    (notes / ".memo").write_text("someone else's file named .memo")
    with Searcher(notes, use_model=False) as s:
        assert s.search("borscht", mode="lex")[0].relpath == "cooking/soup.md"
        st = s.status()[0]
    assert st.location_note and "index kept in" in st.location_note
    assert Path(st.index_path).is_relative_to(Path(os.environ["MEMO_CACHE_DIR"]))
    assert (notes / ".memo").read_text() == "someone else's file named .memo"


def test_a_collection_indexed_in_the_cache_keeps_its_rules_and_is_listed(
    tmp_path: Path,
) -> None:
    """Every caller asks one owner where a collection's index lives: one whose index lies in
    the cache folder is judged by its own `.gitignore` (as a search judges it) when a note
    in a sub-folder is read, and `memo://collections` lists it."""
    import asyncio

    from mcp import Client

    from memo_core import Engine, NotANoteError
    from memo_mcp.server import build_server

    notes = write_notes(
        tmp_path / "notes",
        {"a.md": "# A\n\nzebra\n", ".gitignore": "sub/secret.md\n",
         "sub/secret.md": "# Secret\n\nzebra\n", "sub/open.md": "# Open\n\nzebra\n"},
    )  # fmt: skip
    (notes / ".memo").write_text("someone else's file named .memo")  # the index goes aside
    with Engine(roots=[tmp_path]) as e:
        e.refresh(notes, embed=False)
        assert Path(e.status(notes)[0].index_path).is_relative_to(os.environ["MEMO_CACHE_DIR"])
        with pytest.raises(NotANoteError):
            e.note(notes / "sub", "secret.md")  # from the sub-folder: still the collection's
        assert e.note(notes / "sub", "open.md").text.startswith("# Open")

    async def listed() -> list[str]:
        async with Client(build_server([tmp_path]), mode="legacy") as c:
            [content] = (await c.read_resource("memo://collections")).contents
            return [entry["path"] for entry in json.loads(content.text)["collections"]]

    assert str(notes) in asyncio.run(listed())


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders anyway")
def test_read_only_collection_falls_back_to_the_cache(notes: Path) -> None:
    notes.chmod(0o555)
    try:
        with Searcher(notes, use_model=False) as s:
            assert s.search("borscht", mode="lex")[0].relpath == "cooking/soup.md"
            assert s.status()[0].location_note
    finally:
        notes.chmod(0o755)


def test_reindex_touches_nothing_but_memos_own_files(notes: Path) -> None:
    write_notes(notes, {".memo/keep.txt": "not memo's"})
    with Searcher(notes, use_model=False) as s:
        s.refresh(embed=False)
        assert s.reindex() == 3
    assert (notes / ".memo" / "keep.txt").read_text() == "not memo's"


def test_foreign_index_file_is_never_replaced(notes: Path) -> None:
    import apsw

    (notes / ".memo").mkdir()
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    db.execute("CREATE TABLE precious(x); INSERT INTO precious VALUES (42)")
    db.close()
    before = (notes / ".memo" / "index.db").read_bytes()
    with Searcher(notes, use_model=False) as s:
        assert s.reindex() == 3  # in the cache-dir location, not over the foreign file
        assert "not a memo index" in (s.status()[0].location_note or "")
    assert (notes / ".memo" / "index.db").read_bytes() == before
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    assert db.execute("SELECT x FROM precious").fetchone() == (42,)


# What a .memo/index.db that memo did not write may hold (a notes folder shared, synced or
# cloned with its .memo/): each planted in a real memo index, which otherwise looks memo's.
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
PLANTED = {
    "a trigger": "CREATE TABLE planted(id); "
    "CREATE TRIGGER t AFTER INSERT ON chunks BEGIN INSERT INTO planted VALUES (new.id); END",
    "an endless trigger": f"CREATE TRIGGER t AFTER INSERT ON files BEGIN {ENDLESS}; END",
    "a view": "CREATE VIEW v AS SELECT text FROM chunks",
    "an extra table": "CREATE TABLE extra(x)",
    "an extra index": "CREATE INDEX extra ON chunks(seq)",
}


@pytest.mark.parametrize("what", PLANTED)
def test_an_index_memo_did_not_write_is_left_alone(notes: Path, what: str) -> None:
    """Its schema is not exactly memo's: it is someone else's file, never written (its
    triggers never run), and the search answers from an index kept elsewhere."""
    import subprocess
    import sys

    import apsw
    from conftest import HANG_S

    with Searcher(notes, use_model=False) as s:
        s.refresh(embed=False)
    index = notes / ".memo" / "index.db"
    db = apsw.Connection(str(index))
    db.execute(PLANTED[what])
    db.close()
    before = index.read_bytes()
    (notes / "new.md").write_text("# New\n\nfreshword here\n", encoding="utf-8")
    memo = [sys.executable, "-m", "memo_cli.main"]
    run = subprocess.run(
        [*memo, "search", str(notes), "freshword", "--mode", "lex", "--json"],
        capture_output=True,
        text=True,
        timeout=HANG_S,  # an endless trigger that ran would never answer
        env={**os.environ, "MEMO_LANG": "en"},
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["hits"][0]["relpath"] == "new.md"
    [st] = json.loads(
        subprocess.run([*memo, "status", str(notes), "--json"], capture_output=True, check=True,
                       text=True, env={**os.environ, "MEMO_LANG": "en"}).stdout
    )  # fmt: skip
    assert "not a memo index" in (st["location_note"] or "")
    assert index.read_bytes() == before


@pytest.mark.slow
def test_fifty_thousand_tiny_files(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for d in range(50):
        sub = root / f"d{d:02}"
        sub.mkdir(parents=True)
        for i in range(1000):
            (sub / f"n{i}.md").write_text(f"# N{d}-{i}\n\nword{d}x{i}\n", encoding="utf-8")
    (root / "index.md").write_text("# Index\n", encoding="utf-8")
    with Searcher(root, use_model=False) as s:
        stats = s.refresh(embed=False)
        assert stats.added == 50_001
        assert s.search("word49x999", mode="lex")[0].relpath == "d49/n999.md"
        assert not s.refresh(embed=False).changed_anything


@pytest.mark.parametrize("path", ["/zz-not-hex", "../outside.md", "/2e2e2f6f75742e6d64", ""])
def test_a_row_memo_never_writes_gets_the_index_made_again(notes: Path, path: str) -> None:
    """A note's path no refresh stores (not hex, leading out, empty): the index is damaged,
    so it is made again from the notes, and the answer says so once (a ValueError traceback
    once came out of every refresh, and the index stayed as it was)."""
    import subprocess
    import sys

    import apsw

    with Searcher(notes, use_model=False) as s:
        s.refresh(embed=False)
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    db.execute("INSERT INTO files(path, mtime_ns, size, hash) VALUES (?, 1, 1, 'x')", (path,))
    db.close()
    memo = [sys.executable, "-m", "memo_cli.main"]
    env = {**os.environ, "MEMO_LANG": "en"}
    run = subprocess.run(
        [*memo, "search", str(notes), "borscht", "--mode", "lex"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "the index was rebuilt from scratch: it held a row memo never writes" in run.stdout
    assert "cooking/soup.md:1  Soup recipe" in run.stdout
    again = subprocess.run([*memo, "search", str(notes), "borscht", "--mode", "lex"],
                           capture_output=True, text=True, timeout=60, env=env)  # fmt: skip
    assert again.returncode == 0 and not again.stdout.startswith("("), again.stdout
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    assert db.execute("SELECT count(*) FROM files WHERE path = ?", (path,)).fetchone() == (0,)


def test_a_cache_level_that_is_a_link_is_never_written_through(
    notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache's own levels (`indexes/`, one a collection) get a notes folder's care: one
    that is a link to another folder is refused, and nothing is made there (memo once made
    `<name>-<hash>/index.db` in the folder `indexes` linked to)."""
    import apsw

    from memo_core import MemoError

    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    cache.mkdir()
    elsewhere.mkdir()
    (cache / "indexes").symlink_to(elsewhere)
    monkeypatch.setenv("MEMO_CACHE_DIR", str(cache))
    (notes / ".memo").mkdir()  # another program's database where memo's would be: the cache's
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    db.execute("CREATE TABLE precious(x)")
    db.close()
    with Searcher(notes, use_model=False) as s, pytest.raises(MemoError, match="symbolic link"):
        s.search("borscht", mode="lex")
    assert list(elsewhere.iterdir()) == []
