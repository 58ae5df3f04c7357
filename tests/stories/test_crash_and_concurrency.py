"""The index survives kill -9 at any moment, concurrent processes, and rebuilds."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest
import sqlite_vec
from conftest import write_notes

from memo_core import NoticeKind, Searcher
from memo_core.index.filelock import FileLock


def _make_notes(root: Path, n: int, salt: str = "") -> None:
    """n notes in subfolders, plus README.md so that `root` itself is the one collection."""
    write_notes(root, {"README.md": "# Notes\n\nTest notes.\n"})
    write_notes(
        root,
        {
            f"d{i % 7}/note{i}.md": f"# Note {i} {salt}\n\ncat dog {i} {salt}\n\n## Part\n\n"
            + "\n\n".join(f"bird {j} sun {salt} rain" for j in range(i % 5 + 1))
            for i in range(n)
        },
    )


def check_consistent(db_path: Path) -> tuple[int, int]:
    """Open the index the way a fresh process would and check every table agrees."""
    db = apsw.Connection(str(db_path))
    db.enable_load_extension(True)
    sqlite_vec.load(db)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks'").fetchone():
            # Killed before its first commit (a loaded machine, a kill at 0.2 s): the file
            # is there with nothing in it, all or nothing, and the next run builds on it.
            assert db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
            return 0, 0
        chunks = {r[0] for r in db.execute("SELECT id FROM chunks")}
        file_ids = {r[0] for r in db.execute("SELECT id FROM files")}
        assert {r[0] for r in db.execute("SELECT DISTINCT file_id FROM chunks")} <= file_ids
        assert db.execute("SELECT count(*) FROM fts").fetchone()[0] == len(chunks)
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'vec'").fetchone():
            vec = {r[0] for r in db.execute("SELECT rowid FROM vec")}
            flagged = {r[0] for r in db.execute("SELECT id FROM chunks WHERE has_vec = 1")}
            assert vec == flagged <= chunks
        return len(file_ids), len(chunks)
    finally:
        db.close()


def _memo(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "memo_cli.main", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.fixture
def env(tiny_model_dir: Path) -> dict[str, str]:
    return {**os.environ, "MEMO_MODEL_DIR": str(tiny_model_dir)}


@pytest.mark.parametrize(
    "wanted",
    [3, pytest.param(20, marks=pytest.mark.slow)],  # 20 kills: about 20 s (`pytest -m slow`)
)
def test_kill_9_at_random_points_never_corrupts(
    tmp_path: Path, env, tiny_embedder, wanted: int
) -> None:
    root = tmp_path / "notes"
    _make_notes(root, 300)
    db_path = root / ".memo" / "index.db"
    rng = random.Random(7)
    kills = round_ = 0
    while kills < wanted:  # until that many indexers really died mid-work
        round_ += 1
        assert round_ < 10 * wanted, f"only {kills} of {round_} indexers were at work when killed"
        # New work for every indexer: edits everywhere, additions, a deletion.
        _make_notes(root, 300 + round_, salt=f"r{round_}")
        (root / f"d{round_ % 7}" / f"note{round_}.md").unlink(missing_ok=True)
        proc = _memo("index", str(root), env=env)
        time.sleep(rng.uniform(0.2, 1.0))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        if db_path.exists():
            check_consistent(db_path)
    with Searcher(root, embedder=tiny_embedder) as s:
        s.refresh()
        st = s.status()[0]
    files = len(list(root.rglob("*.md")))
    assert files > 300
    assert (st.files, st.chunks_without_vectors) == (files, 0)
    assert check_consistent(db_path) == (files, st.chunks)


def test_search_while_another_process_indexes(tmp_path: Path, env, tiny_embedder) -> None:
    root = tmp_path / "notes"
    _make_notes(root, 400)
    with Searcher(root, embedder=tiny_embedder) as s:
        s.refresh()  # a snapshot to answer from
        _make_notes(root, 400, salt="v2")  # every file changed: a long refresh for the CLI
        proc = _memo("index", str(root), env=env)
        probe = FileLock(root / ".memo" / "refresh.lock")
        while probe.acquire(wait=False):  # until the CLI is at work
            probe.release()
            assert proc.poll() is None, "the CLI finished before it was seen indexing"
            time.sleep(0.002)
        busy_seen = False
        try:
            while proc.poll() is None:
                hits = s.search("cat dog", k=3, mode="hybrid")  # never "database is locked"
                assert len(hits) == 3  # read from one snapshot: no hit vanishes midway
                busy_seen |= any(n.kind is NoticeKind.BUSY for n in hits.notices)
        finally:
            proc.wait()
        assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else ""
        assert busy_seen
        assert "v2" in s.search("v2 cat", mode="lex", k=1)[0].heading


def test_two_processes_index_at_once_without_doubling(tmp_path: Path, env) -> None:
    root = tmp_path / "notes"
    _make_notes(root, 200)
    procs = [_memo("index", str(root), env=env) for _ in range(2)]
    for p in procs:
        p.wait()
        assert p.returncode == 0, p.stderr.read().decode()
    twin = tmp_path / "twin"
    _make_notes(twin, 200)
    subprocess.run([sys.executable, "-m", "memo_cli.main", "index", str(twin)], env=env, check=True)
    assert check_consistent(root / ".memo" / "index.db") == check_consistent(
        twin / ".memo" / "index.db"
    )


def test_search_during_reindex_answers_from_the_old_index(notes: Path, tiny_embedder) -> None:
    _make_notes(notes, 300)
    with Searcher(notes, embedder=tiny_embedder) as s:
        s.refresh()
        done = threading.Event()
        answers: list[int] = []

        def searching() -> None:
            while not done.is_set():
                answers.append(len(s.search("borscht", k=1, mode="lex")))

        t = threading.Thread(target=searching)
        t.start()
        try:
            assert s.reindex() == 304
        finally:
            done.set()
            t.join()
        assert answers and all(n == 1 for n in answers)
    check_consistent(notes / ".memo" / "index.db")


def test_crash_mid_rebuild_leaves_the_old_index(tmp_path: Path, env, tiny_embedder) -> None:
    root = tmp_path / "notes"
    _make_notes(root, 400)
    with Searcher(root, embedder=tiny_embedder) as s:
        s.refresh()
        before = s.status()[0]
    proc = _memo("reindex", str(root), env=env)
    while not list((root / ".memo").glob("index.db.rebuild*")):  # wait until it builds
        assert proc.poll() is None, "reindex ended before it was seen building"
        time.sleep(0.005)
    time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert check_consistent(root / ".memo" / "index.db") == (401, before.chunks)
    with Searcher(root, embedder=tiny_embedder) as s:
        assert s.search("cat", k=1, mode="lex")
        assert s.reindex() == 401
    leftovers = sorted(p.name for p in (root / ".memo").iterdir())
    assert not [n for n in leftovers if "rebuild" in n]  # the scratch file was cleaned up


# Processes that make the same new index at the same instant, started together.
MAKE_AT = """
import sys, time
from pathlib import Path
from memo_core.index.store import Store
start = float(sys.argv[2])
while time.time() < start:
    pass
Store.create(Path(sys.argv[1])).close()
"""


def test_processes_making_one_new_index_at_once_all_open_it(tmp_path: Path) -> None:
    """One of them makes it; the others wait for it and open what it made: none calls it
    another program's file (read half-made) or damaged (SQLite busy without waiting)."""
    for round_ in range(12):
        db = tmp_path / f"n{round_}" / ".memo" / "index.db"
        start = str(time.time() + 0.3)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", MAKE_AT, str(db), start],
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        for p in procs:
            _, err = p.communicate(timeout=60)
            assert p.returncode == 0, err[-2000:]
        assert check_consistent(db) == (0, 0)
