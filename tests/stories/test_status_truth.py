"""`memo status` tells the truth: an index that is not complete says how many
notes are still to come, whoever is indexing (this process, another one, or nobody since
a first index stopped half way); an empty note is a note, in status as in changes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from conftest import write_notes

from memo_core import Engine, ModelSource, Tuning
from memo_core.index.indexer import Progress
from memo_core.index.jobs import NO_SMALL_WORK
from memo_text import format_status

# One chunk a note, four notes a batch: a first index commits in many small steps.
BATCHES = Tuning(batch_chunks=4)
TOTAL = 40


def many(root: Path) -> Path:
    return write_notes(root, {f"n{i:02}.md": f"# Note {i}\n\ncat {i}\n" for i in range(TOTAL)})


def words_only(**kwargs: object) -> Engine:
    return Engine(tuning=BATCHES, models=ModelSource(enabled=False), **kwargs)  # type: ignore[arg-type]


def memo(*args: object) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout


def status_json(notes: Path) -> dict[str, object]:
    [entry] = json.loads(memo("status", notes, "--json"))
    return entry


class Held:
    """A progress callback that holds the refresh after its first committed batch until
    `go_on` is set: a refresh caught half way, for as long as a test looks at it."""

    def __init__(self) -> None:
        self.first = threading.Event()
        self.go_on = threading.Event()

    def __call__(self, p: Progress) -> None:
        if p.files_done and not self.first.is_set():
            self.first.set()
            assert self.go_on.wait(30)


def test_a_first_index_stopped_half_way_says_how_many_notes_are_to_come(tmp_path: Path) -> None:
    notes = many(tmp_path / "notes")
    with words_only() as e:
        [c] = e.collections(notes)
        stats = e.refresh(notes, embed=False, progress=lambda p: c.stop())  # after one batch
        assert stats.stopped
    entry = status_json(notes)
    files, pending = entry["files"], entry["pending"]
    assert isinstance(files, int) and 0 < files < TOTAL and pending == TOTAL - files
    line = memo("status", notes)
    assert line.startswith(f"{notes}: файлов {files}, чанков {files}, индекс ")
    assert f", ещё не проиндексировано {TOTAL - files}," in line
    # Finished: nothing more to come, and the status says nothing of it.
    with words_only() as e:
        e.refresh(notes, embed=False)
        [st] = e.status(notes)
        assert (st.files, st.pending) == (TOTAL, 0)
        assert "не проиндексировано" not in format_status([st])


def test_another_process_indexing_is_seen_half_way(tmp_path: Path) -> None:
    """`memo status` in another process while this one holds its refresh after a batch."""
    notes = many(tmp_path / "notes")
    held = Held()
    with words_only() as e:
        refresh = threading.Thread(
            target=e.refresh, args=(notes,), kwargs={"embed": False, "progress": held}
        )
        refresh.start()
        try:
            assert held.first.wait(30)
            line = memo("status", notes)
            found = re.search(r": файлов (\d+), .*, ещё не проиндексировано (\d+),", line)
            assert found is not None, line
            files, pending = map(int, found.groups())
            assert 0 < files < TOTAL and pending == TOTAL - files
        finally:
            held.go_on.set()
            refresh.join(30)
        assert not refresh.is_alive()
        assert e.status(notes)[0].pending == 0


def test_a_search_within_its_budget_leaves_a_status_that_says_so(tmp_path: Path) -> None:
    """The search answered from the committed part; the refresh goes on in the background
    (held here): this process's status says both that it is under way and what is left."""
    notes = many(tmp_path / "notes")
    held = Held()
    with words_only(refresh_budget_s=0.2, small=NO_SMALL_WORK) as e:  # as a big folder
        try:
            e.search(notes, "cat", mode="lex", progress=held)
            assert held.first.is_set()
            [st] = e.status(notes)
            assert 0 < st.files < TOTAL and st.pending == TOTAL - st.files
            assert st.indexing is not None
            line = format_status([st])
            assert f", ещё не проиндексировано {st.pending}," in line
            assert ", идёт индексация" in line
        finally:
            held.go_on.set()


def test_notes_changed_since_the_last_refresh_are_still_to_come(tmp_path: Path) -> None:
    notes = many(tmp_path / "notes")
    with words_only() as e:
        e.refresh(notes, embed=False)
        (notes / "n00.md").write_text("# Note 0\n\nedited, and longer\n", encoding="utf-8")
        (notes / "new.md").write_text("# New\n\nnew\n", encoding="utf-8")
        (notes / "n01.md").unlink()  # gone: nothing to come from it
        [st] = e.status(notes)
        assert (st.files, st.pending) == (TOTAL, 2)
        assert ", ещё не проиндексировано 2," in format_status([st])


def test_an_empty_note_is_a_note_in_status_as_in_changes(tmp_path: Path) -> None:
    """One rule: `memo changes` lists an empty note, so `memo status` counts it among the
    files (as empty), not as skipped; a binary file stays skipped."""
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\nalpha\n", "blank.md": "  \n\n"})
    (notes / "empty.md").write_bytes(b"")
    (notes / "data.md").write_bytes(b"\x00\x01binary\x00" * 10)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "memo_cli.main",
            "index",
            str(notes),
            "--no-vectors",
            "--list-empty",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"MEMO_LANG": "en"},  # the file notes' English words
    )
    assert "blank.md: empty: nothing to search" in run.stderr
    assert "empty.md: empty: nothing to search" in run.stderr
    assert "data.md: skipped: binary data" in run.stderr
    line = memo("status", notes)
    assert line.startswith(f"{notes}: файлов 3, чанков 1, индекс ")
    assert ", пустых 2, пропущено файлов 1," in line
    with words_only() as e:
        [st] = e.status(notes)
        assert (st.files, st.empty, st.skipped) == (3, 2, 1)
        listed = e.changes(notes, refresh=False).files
    assert [str(notes / n) for n in ("blank.md", "empty.md")] == [
        p for p in listed if Path(p).stem in ("blank", "empty")
    ]


def test_status_names_the_model_that_made_the_vectors(notes: Path, tiny_embedder) -> None:
    """An index records what made its vectors, and status says it (words only: nothing)."""
    from memo_text import Lang

    with Engine(models=ModelSource(enabled=False)) as e:
        e.refresh(notes)
        assert "векторы модели" not in format_status(e.status(notes))
    with Engine(models=ModelSource(tiny_embedder)) as e:
        e.refresh(notes)
        [st] = e.status(notes)
        assert st.model == tiny_embedder.model_id and st.chunks_without_vectors == 0
        assert f", векторы модели {tiny_embedder.model_id}, " in format_status([st])
        assert f", vectors by {tiny_embedder.model_id}, " in format_status([st], Lang.EN)


def test_status_json_says_times_as_memo_collections_does(tmp_path: Path) -> None:
    """ISO 8601 with the offset in both (`memo status --json` once gave unix seconds)."""
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat\n"})
    assert status_json(notes)["updated_at"] is None  # never indexed
    memo("index", notes, "--no-vectors")
    entry = status_json(notes)
    iso = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$")
    assert iso.match(str(entry["updated_at"])) and iso.match(str(entry["refreshed_at"]))
