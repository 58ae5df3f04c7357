"""Files at memo's names that memo did not make, and reads that must write nothing.

Each case was reproduced by a red team. Every test works on real SQLite files and
compares the files' bytes and modification times before and after: "left alone" means not a
byte written, not a lock file's time touched, nothing renamed or deleted.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import Engine, IndexStoreError, MemoError, ModelSource
from memo_core.index.schema import APPLICATION_ID
from memo_core.index.store import Store

NOTES = {"a.md": "# A\n\ncat and dog\n", "sub/b.md": "# B\n\nbird\n"}

# Another program's database in WAL mode, left open (it waits on stdin) or killed.
FOREIGN_WAL = """
import sys, apsw
db = apsw.Connection(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL").fetchall()
db.execute("CREATE TABLE precious(x)")
for i in range(50):
    db.execute("INSERT INTO precious VALUES (randomblob(2000))")
print("ready", flush=True)
sys.stdin.readline()
"""

# Another program's database in rollback mode, killed mid-transaction: a hot journal.
FOREIGN_HOT_JOURNAL = """
import os, sys, apsw
db = apsw.Connection(sys.argv[1])
db.execute("CREATE TABLE precious(x)")
with db:
    for i in range(300):
        db.execute("INSERT INTO precious VALUES (randomblob(2000))")
db.execute("PRAGMA cache_size=2")  # the change spills into the file before the commit
db.execute("BEGIN")
db.execute("UPDATE precious SET x = randomblob(2100)")
os._exit(0)
"""

# memo's own code indexing, killed before it closed: the WAL is not yet in index.db.
KILLED_INDEX = """
import os, sys
from memo_core import Engine, ModelSource
e = Engine(models=ModelSource(enabled=False))
e.refresh(sys.argv[1], embed=False)
os._exit(0)
"""

# memo's own code making a rebuild's scratch index, killed: what `kill -9` mid-reindex leaves.
KILLED_SCRATCH = """
import os, sys
from pathlib import Path
from memo_core.index.store import Store
store = Store.create(Path(sys.argv[1]))
os._exit(0)
"""


def python(code: str, *args: object) -> None:
    subprocess.run([sys.executable, "-c", code, *map(str, args)], check=True)


def memo_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memo_cli.main", *map(str, args)], capture_output=True, text=True
    )


def engine() -> Engine:
    return Engine(models=ModelSource(enabled=False))


def files_in(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file in `folder`: its bytes' hash and modification time."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
    }


def in_cache(index_path: str) -> bool:
    return Path(index_path).is_relative_to(os.environ["MEMO_CACHE_DIR"])


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "notes", NOTES)
    (root / ".memo").mkdir()
    return root


def search_and_status_leave_it(notes: Path, why: str) -> None:
    """Search, status and the CLI's search all work, from the cache dir, saying `why`;
    nothing in `.memo` changes meanwhile."""
    before = files_in(notes / ".memo")
    with engine() as e:
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
        [st] = e.status(notes)
    cli = memo_cli("search", notes, "cat", "--mode", "lex")
    assert cli.returncode == 0, cli.stderr
    assert files_in(notes / ".memo") == before
    assert in_cache(st.index_path) and why in (st.location_note or "")


# -- another program's database at .memo/index.db ---------------------------------------------


@pytest.mark.parametrize("writer", ["open", "killed"])
def test_another_programs_wal_database_is_recognised_without_a_write(
    notes: Path, writer: str
) -> None:
    index = notes / ".memo" / "index.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", FOREIGN_WAL, str(index)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        if writer == "killed":
            proc.kill()
            proc.wait()
        assert {"index.db-wal", "index.db-shm"} <= files_in(notes / ".memo").keys()
        search_and_status_leave_it(notes, "a SQLite database of another program")
    finally:
        proc.kill()
        proc.wait()


def test_another_programs_hot_journal_is_never_played_back(notes: Path) -> None:
    python(FOREIGN_HOT_JOURNAL, notes / ".memo" / "index.db")
    assert (notes / ".memo" / "index.db-journal").stat().st_size > 0
    search_and_status_leave_it(notes, "a SQLite database of another program")
    status = memo_cli("status", notes)
    assert status.returncode == 0 and "база SQLite другой программы" in status.stdout, status.stderr


# -- the user's files at a rebuild's scratch names --------------------------------------------


@pytest.mark.parametrize(
    "names",
    [
        ["index.db.rebuild"],
        ["index.db.rebuild-journal"],
        ["index.db.rebuild-shm"],
        ["index.db.rebuild", "index.db.rebuild-wal"],
    ],
)
def test_users_files_at_the_scratch_names_are_never_used_or_deleted(
    notes: Path, names: list[str]
) -> None:
    with engine() as e:
        e.refresh(notes)
        for name in names:
            (notes / ".memo" / name).write_text(f"my own {name}\n")
        before = files_in(notes / ".memo")
        assert e.search(notes, "cat", mode="lex")  # clearing a killed rebuild's leftovers
        with pytest.raises(MemoError, match=f"{names[0]} .*memo leaves it alone.*move it away"):
            e.reindex(notes)  # never built in (or played back into) the user's files
        assert e.search(notes, "bird", mode="lex")  # the live index still answers
    with engine() as e:  # a new engine keeps its index in the cache dir, and says why
        assert e.reindex(notes) == 2
        [st] = e.status(notes)
        assert in_cache(st.index_path) and f"{names[0]} " in (st.location_note or "")
    for name in names:
        assert (notes / ".memo" / name).read_text() == f"my own {name}\n"
    assert {k: v for k, v in files_in(notes / ".memo").items() if "rebuild" in k} == {
        k: v for k, v in before.items() if "rebuild" in k
    }


@pytest.mark.parametrize("killed", ["after its first commit", "when just made"])
def test_a_killed_rebuilds_own_scratch_is_cleared(notes: Path, killed: str) -> None:
    scratch = notes / ".memo" / "index.db.rebuild"
    with engine() as e:
        e.refresh(notes)
        if killed == "when just made":
            scratch.touch()
        else:
            python(KILLED_SCRATCH, scratch)
            assert {"index.db.rebuild-wal", "index.db.rebuild-shm"} <= set(
                os.listdir(notes / ".memo")
            )
        assert e.search(notes, "cat", mode="lex")
    assert not [n for n in os.listdir(notes / ".memo") if "rebuild" in n]


# -- hard links ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "index.db",
        "index.db-wal",
        "index.db-shm",
        "index.db-journal",
        "refresh.lock",
        "index.db.rebuild",
    ],
)
def test_a_file_with_other_names_is_never_written(notes: Path, tmp_path: Path, name: str) -> None:
    outside = tmp_path / "outside" / "file"
    outside.parent.mkdir()
    if name == "index.db":
        outside.touch()  # an empty file: memo would make its index in it
    else:
        with engine() as e:
            e.refresh(notes)  # memo's own index, then another name for an outside file
        outside.write_bytes(b"outside " * 1000)
    (notes / ".memo" / name).unlink(missing_ok=True)  # memo's lock file, made by the refresh
    os.link(outside, notes / ".memo" / name)
    before = files_in(outside.parent)
    with engine() as e:
        assert e.search(notes, "cat", mode="lex")[0].relpath == "a.md"
        assert e.reindex(notes) == 2
        [st] = e.status(notes)
    assert files_in(outside.parent) == before
    assert in_cache(st.index_path) and "has other names (hard links)" in (st.location_note or "")


# -- reading writes nothing ---------------------------------------------------------------------


@pytest.fixture
def killed_index(notes: Path) -> Path:
    """A collection whose `memo index` was killed: index.db holds a header, the WAL the rest."""
    python(KILLED_INDEX, notes)
    assert {"index.db-wal", "index.db-shm"} <= set(os.listdir(notes / ".memo"))
    header = (notes / ".memo" / "index.db").read_bytes()[:100]
    assert int.from_bytes(header[68:72], "big") != APPLICATION_ID  # memo's mark: in the WAL
    return notes


def test_status_after_a_killed_index_writes_nothing(killed_index: Path) -> None:
    notes = killed_index
    before = files_in(notes / ".memo")
    cli = memo_cli("status", notes)
    assert cli.returncode == 0 and "файлов 2" in cli.stdout, cli.stderr
    with engine() as e:
        [st] = e.status(notes)
        assert (st.files, st.location_note) == (2, None)
        assert files_in(notes / ".memo") == before
        assert e.search(notes, "bird", mode="lex")[0].relpath == "sub/b.md"  # then it writes


def test_reading_a_killed_index_never_checkpoints_it(killed_index: Path) -> None:
    index = killed_index / ".memo" / "index.db"
    before = files_in(index.parent)
    store = Store.open_existing(index)
    assert store is not None and store.counts()[0] == 2
    store.close()
    after = files_in(index.parent)
    assert {n: after.get(n) for n in ("index.db", "index.db-wal")} == {
        n: before[n] for n in ("index.db", "index.db-wal")
    }


def test_a_wal_that_cannot_be_read_without_writing_is_said_so(killed_index: Path) -> None:
    notes = killed_index
    (notes / ".memo" / "index.db-shm").unlink()  # reading the WAL would need a new one
    before = files_in(notes / ".memo")
    with engine() as e, pytest.raises(IndexStoreError, match="last committed state unknown"):
        e.status(notes)
    cli = memo_cli("status", notes)
    assert cli.returncode == 1 and "выполните `memo index`" in cli.stderr
    assert files_in(notes / ".memo") == before


def test_status_of_a_closed_index_makes_no_files(notes: Path) -> None:
    with engine() as e:
        e.refresh(notes)
    before = files_in(notes / ".memo")
    with engine() as e:
        assert e.status(notes)[0].files == 2
    assert files_in(notes / ".memo") == before
