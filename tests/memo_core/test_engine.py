"""The Engine: one Collection per real folder, exactly the collections that exist now, one
ranking across them, status that writes nothing, no lock held across slow I/O."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import apsw
import pytest
from conftest import write_notes

from memo_core import Embedder, Engine, ModelSource, NoticeKind, OutsideRootsError, Tuning


@pytest.fixture
def engine(tiny_embedder: Embedder):
    with Engine(models=ModelSource(tiny_embedder)) as e:
        yield e


def test_one_collection_per_folder_however_the_path_is_spelled(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = write_notes(tmp_path / "home" / "notes", {"a.md": "# Cats\n\nThe cat sleeps.\n"})
    (tmp_path / "link").symlink_to(tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    spellings = [tmp_path / "home", notes, "home/notes/../notes", tmp_path / "link" / "notes"]
    seen = {id(c) for p in spellings for c in engine.collections(p)}
    assert len(seen) == 1
    # Both a folder of collections and the collection itself: no contention with itself.
    for path in (tmp_path / "home", notes):
        hits = engine.search(path, "cat", mode="lex")
        assert hits.notices == [] and hits[0].relpath == "a.md"


def test_a_deleted_collection_is_not_searched(tmp_path: Path, engine: Engine) -> None:
    home = tmp_path / "home"
    write_notes(home / "notes", {"a.md": "# Cats\n\nThe cat sleeps.\n"})
    write_notes(home / "old", {"b.md": "# Cats too\n\nAnother cat.\n"})
    assert {h.relpath for h in engine.search(home, "cat", mode="lex")} == {"a.md", "b.md"}
    shutil.rmtree(home / "old")
    hits = engine.search(home, "cat", mode="lex")
    assert [h.path for h in hits] == [str(home / "notes" / "a.md")]
    assert [c.root for c in engine.collections(home)] == [home / "notes"]


def test_collections_rank_together_as_if_they_were_one(tmp_path: Path, engine: Engine) -> None:
    # Each collection's best must not count as 1.0 by itself: the far notes of "b" rank
    # exactly as they would beside "a" in one collection.
    notes = {
        "a": {"close.md": "# Weather\n\nrain sun weather\n"},
        "b": {"far.md": "# Pets\n\ncat dog weather\n", "farther.md": "# Food\n\nsoup recipe\n"},
    }
    home = tmp_path / "home"
    for name, files in notes.items():
        write_notes(home / name, files)
        write_notes(tmp_path / "one", files)
    for mode in ("vec", "hybrid"):
        split = engine.search(home, "rain sun", k=3, mode=mode)
        whole = engine.search(tmp_path / "one", "rain sun", k=3, mode=mode)
        assert [Path(h.path).name for h in split] == [Path(h.path).name for h in whole], mode
        # Equal but for BM25's length normalisation, which stays each collection's own.
        assert [h.score for h in split] == pytest.approx([h.score for h in whole], abs=0.02), mode
        assert [h.collection for h in split[:2]] == [str(home / "a"), str(home / "b")]


def test_status_creates_nothing(tmp_path: Path, engine: Engine) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ntext\n"})
    [st] = engine.status(notes)
    assert (st.files, st.chunks, st.updated_at) == (0, 0, None)
    assert not (notes / ".memo").exists()
    assert not Path(st.index_path).exists()
    engine.refresh(notes)
    assert engine.status(notes)[0].files == 1


def test_opening_one_collection_does_not_hold_up_another(tmp_path: Path, engine: Engine) -> None:
    """A collection whose index is locked by another process while memo opens it (a
    migration waits for the write lock) must not stall searches of other folders."""
    stuck = write_notes(tmp_path / "stuck", {"a.md": "# A\n\ncat\n"})
    free = write_notes(tmp_path / "free", {"b.md": "# B\n\ndog\n"})
    (stuck / ".memo").mkdir()
    other = apsw.Connection(str(stuck / ".memo" / "index.db"))  # a new, empty index
    other.execute("BEGIN EXCLUSIVE")  # another process in the middle of creating it
    done = threading.Event()
    t = threading.Thread(target=lambda: (engine.search(stuck, "cat", mode="lex"), done.set()))
    t.start()
    try:
        assert not done.wait(0.5)  # the stuck one waits for the lock (busy timeout)
        assert engine.search(free, "dog", mode="lex")[0].relpath == "b.md"
        assert not done.is_set()  # ... and the free one answered meanwhile
    finally:
        other.execute("ROLLBACK")
        other.close()
        t.join(30)
    assert done.is_set()


def test_a_failing_rebuild_is_a_clear_error(tmp_path: Path) -> None:
    """SQLite failing in the middle of a rebuild (here: the disk is full for this process)
    is reported as memo's error in one line, never as a raw traceback."""
    notes = write_notes(
        tmp_path / "notes", {f"n{i}.md": f"# Note {i}\n\n" + "word " * 400 for i in range(60)}
    )
    subprocess.run([sys.executable, "-m", "memo_cli.main", "index", str(notes)], check=True)
    limit = (notes / ".memo" / "index.db").stat().st_size // 4  # the scratch cannot grow
    code = (
        "import resource, signal, sys; from memo_cli.main import main; "
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
        f"sys.exit(main(['reindex', {str(notes)!r}]))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.startswith("memo: ")
    assert len(r.stderr.strip().splitlines()) == 1
    with Engine(models=ModelSource(enabled=False)) as e:  # the old index still answers
        assert e.search(notes, "word", mode="lex", refresh=False)


def test_tuning_is_passed_in_not_patched(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\n" + "word " * 100})
    with Engine(tuning=Tuning(chunk_max_chars=100), models=ModelSource(enabled=False)) as small:
        small.refresh(notes, embed=False)
        assert small.status(notes)[0].chunks == 5
    with Engine(models=ModelSource(enabled=False)) as default:
        notices = default.refresh(notes, embed=False).notices
        assert [n.kind for n in notices] == [NoticeKind.REBUILT]
        assert default.status(notes)[0].chunks == 1


def test_a_file_that_is_not_memos_is_left_alone_and_the_index_kept_elsewhere(
    tmp_path: Path,
) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ntext\n"})
    (notes / ".memo").mkdir()
    db = apsw.Connection(str(notes / ".memo" / "index.db"))
    db.execute("PRAGMA user_version=1; CREATE TABLE precious(x); INSERT INTO precious VALUES (1)")
    db.close()
    before = (notes / ".memo" / "index.db").read_bytes()
    with Engine(models=ModelSource(enabled=False)) as e:
        assert e.search(notes, "text", mode="lex")[0].relpath == "a.md"
        assert e.reindex(notes) == 1
        [st] = e.status(notes)
    assert "not a memo index (a SQLite database of another program)" in (st.location_note or "")
    assert (notes / ".memo" / "index.db").read_bytes() == before
    assert sorted(p.name for p in (notes / ".memo").iterdir()) == ["index.db"]


def test_another_models_index_answers_by_words_and_says_so(
    notes: Path, tiny_embedder: Embedder, tmp_path: Path
) -> None:
    from tinymodels import make_tiny_model_dir

    from memo_core import load_model_dir

    other = load_model_dir(make_tiny_model_dir(tmp_path / "m2", dim=8, seed=3))
    with Engine(models=ModelSource(tiny_embedder)) as e:
        e.refresh(notes)
    with Engine(models=ModelSource(other)) as e:  # e.g. another process, another model
        hits = e.search(notes, "borscht soup", mode="hybrid", refresh=False)
        assert [(n.kind, n.collection) for n in hits.notices] == [
            (NoticeKind.OTHER_MODEL, str(notes))
        ]
        assert hits[0].relpath == "cooking/soup.md" and hits[0].found_by == ("lex",)
        assert list(e.search(notes, "borscht soup", mode="vec", refresh=False)) == []


@pytest.mark.parametrize("kind", [str, Path])
def test_roots_given_as_strings_or_paths_work_for_every_call(tmp_path: Path, kind) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\nzebra here\n"})
    with Engine(models=ModelSource(enabled=False), roots=[kind(tmp_path)]) as e:
        assert e.search(str(notes), "zebra", mode="lex")[0].relpath == "a.md"
        assert e.note(str(notes), "a.md").text.startswith("# A")
        assert e.read(str(notes), "a.md:3").lines[-1] == "zebra here"
        assert e.note_paths(str(notes)) == ["a.md"]
        with pytest.raises(OutsideRootsError):
            e.note("/", "etc/passwd")
