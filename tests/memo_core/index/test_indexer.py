"""memo_core.index.indexer: bringing one collection's index up to date with its files
(words first, then vectors), reading only what changed and embedding each text once."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CountingEmbedder, write_notes

from memo_core.files.fsafe import Folder
from memo_core.files.walker import Changes
from memo_core.index import indexer
from memo_core.index.indexer import (
    FIRST_STEP,
    Indexer,
    Progress,
    RefreshStats,
    Steps,
    WordsGate,
    chunk_hash,
    embed_input,
    read_note,
)
from memo_core.index.store import Store
from memo_core.model.embedder import Embedder
from memo_core.tuning import Tuning
from memo_core.values import FileNote, NoticeKind

NOTES = {
    "backup.md": "# Backup\n\nrestic every night.\n\n## Restore\n\nrestic restore latest.\n",
    "a/soup.md": "# Soup\n\nBorscht: cook the beets first.\n",
    "a/pets.md": "# Pets\n\nThe cat and the dog share a bowl.\n",
}


# -- the pieces ----------------------------------------------------------------------------


def test_steps_start_small_then_follow_the_pace_within_bounds() -> None:
    steps = Steps(most=256)
    assert steps.size == FIRST_STEP
    steps.took(embedded=1000, seconds=1.0)  # fast: at most twice the last step
    assert steps.size == 2 * FIRST_STEP
    steps.took(embedded=10, seconds=indexer.STEP_S)  # slow: what one step's time gets done
    assert steps.size == 10
    steps.took(embedded=0, seconds=5.0)  # nothing embedded: says nothing of the pace
    assert steps.size == 10
    steps.took(embedded=5, seconds=0.0)
    assert steps.size == 10
    steps.took(embedded=1, seconds=100.0)  # never fewer than one
    assert steps.size == 1
    for _ in range(20):
        steps.took(embedded=10_000, seconds=0.01)
    assert steps.size == 256  # never more than `most`


@pytest.mark.parametrize(("most", "first"), [(0, 1), (1, 1), (8, 8), (1000, FIRST_STEP)])
def test_the_first_step_is_at_most_most(most: int, first: int) -> None:
    assert Steps(most).size == first


def test_a_chunk_hash_is_of_heading_and_text_apart() -> None:
    assert chunk_hash("H", "text") == chunk_hash("H", "text")
    assert len(chunk_hash("H", "text")) == 32
    assert len({chunk_hash("H", "text"), chunk_hash("", "Htext"), chunk_hash("Ht", "ext")}) == 3


@pytest.mark.parametrize(
    ("heading", "text", "cut", "embedded"),
    [
        ("Title", "body", 100, "Title\nbody"),
        ("", "body", 100, "body"),
        ("Title", "body", 7, "Title\nb"),
    ],
)
def test_the_embedded_input_is_the_heading_over_the_text_cut(
    heading: str, text: str, cut: int, embedded: str
) -> None:
    assert embed_input(heading, text, cut) == embedded


def test_refresh_stats_add_up_and_say_whether_anything_changed() -> None:
    assert not RefreshStats(touched=3).changed_anything
    assert RefreshStats(chunks_embedded=1).changed_anything
    total = RefreshStats(added=1, chunks_written=2, notes=[("a.md", FileNote.EMPTY, "")])
    total.add(RefreshStats(added=2, deleted=1, stopped=True, walked=True, sentences_embedded=4))
    assert (total.added, total.deleted, total.chunks_written) == (3, 1, 2)
    assert total.stopped and total.walked and total.sentences_embedded == 4
    assert total.notes == [("a.md", FileNote.EMPTY, "")]
    assert total.changed_anything


@pytest.mark.parametrize("quiet", [True, False])
def test_the_words_gate_is_fresh_where_the_os_reported_nothing_since_its_last_pass(
    quiet: bool,
) -> None:
    gate = WordsGate(quiet=lambda: quiet)
    later = indexer.time.monotonic() + 1000
    assert not gate.fresh(later)  # no pass yet: whatever the OS says, nothing is in
    gate.begin()
    assert not gate.fresh(later)  # a pass under way may be taking those changes in
    gate.finish()
    assert gate.fresh(later) is quiet  # the OS reported nothing since: all of it is in


def test_a_words_pass_begins_once_however_often_it_is_begun() -> None:
    # A caller begins the pass before it takes the changes; the refresh begins it again:
    # the pass is the one from the first, or a change made between the two counts as in.
    gate = WordsGate()
    gate.begin()
    change = indexer.time.monotonic()
    gate.begin()
    gate.finish()
    assert not gate.fresh(change)
    gate.begin()  # a new pass after one that finished
    gate.finish()
    assert gate.fresh(change)


def test_the_words_gate_is_due_until_a_pass_begun_after_the_ask_finishes() -> None:
    gate = WordsGate()
    assert gate.due() and not gate.fresh(0.0)
    gate.begin()
    gate.finish()
    assert not gate.due()
    begun = indexer.time.monotonic()
    assert not gate.fresh(begun + 1000)  # a change after the pass began is not in it
    gate.ask(begun + 1000)
    assert gate.due()
    gate.begin()
    gate.finish()
    assert gate.due()  # that pass began before the change asked for


# -- reading a note ------------------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Folder]:
    (tmp_path / "n").mkdir()
    with Folder(tmp_path / "n") as root:
        yield root


@pytest.mark.parametrize(
    ("data", "note", "kept"),
    [
        (b"# Hi\n\ntext\n", None, b"# Hi\n\ntext\n"),
        (b"  \n\t\n", FileNote.EMPTY, b"  \n\t\n"),
        (b"", FileNote.EMPTY, b""),
        (b"text\x00binary", FileNote.BINARY, b"text\x00binary"),
        (b"x" * 50, FileNote.CUT, b"x" * 20),
    ],
)
def test_read_note_says_what_was_skipped_or_cut(
    folder: Folder, data: bytes, note: FileNote | None, kept: bytes
) -> None:
    Path(folder.path, "n.md").write_bytes(data)
    got, said, detail = read_note(folder, "n.md", max_bytes=20)
    assert (got, said) == (kept, note)
    assert detail == ("the first 20 bytes" if note is FileNote.CUT else "")


def test_a_fifo_is_special_and_a_missing_note_unreadable(folder: Folder) -> None:
    os.mkfifo(Path(folder.path, "fifo.md"))
    assert read_note(folder, "fifo.md", 100)[:2] == (b"", FileNote.SPECIAL)
    data, note, detail = read_note(folder, "gone.md", 100)
    assert (data, note) == (b"", FileNote.UNREADABLE) and detail


def test_a_note_swapped_for_a_symlink_out_of_the_folder_is_never_read(
    folder: Folder, tmp_path: Path
) -> None:
    (tmp_path / "secret.md").write_text("secret")
    Path(folder.path, "n.md").symlink_to(tmp_path / "secret.md")
    data, note, _ = read_note(folder, "n.md", 100)
    assert note is FileNote.UNREADABLE and b"secret" not in data


# -- refreshing ----------------------------------------------------------------------------


class Collection:
    def __init__(self, tmp_path: Path, embedder: Embedder | None) -> None:
        self.notes = write_notes(tmp_path / "notes", NOTES)
        self.root = Folder(self.notes)
        self.store = Store.create(tmp_path / "index.db")
        self.indexer = Indexer(self.root, self.store, embedder, Tuning())

    def refresh(self, **kw) -> RefreshStats:
        return self.indexer.refresh(**kw)

    def paths(self) -> list[str]:
        return self.store.history.paths()

    def close(self) -> None:
        self.store.close()
        self.root.close()


@pytest.fixture
def words_only(tmp_path: Path) -> Iterator[Collection]:
    made = Collection(tmp_path, None)
    yield made
    made.close()


@pytest.fixture
def counting(tiny_embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(tiny_embedder)


@pytest.fixture
def full(tmp_path: Path, counting: CountingEmbedder) -> Iterator[Collection]:
    made = Collection(tmp_path, counting)
    yield made
    made.close()


def test_a_first_refresh_indexes_every_note_and_gives_every_passage_a_vector(
    full: Collection, counting: CountingEmbedder
) -> None:
    stats = full.refresh()
    assert stats.added == 3 and stats.walked and not stats.stopped
    assert full.paths() == sorted(NOTES)
    chunks = full.store.count_chunks()
    assert stats.chunks_written == chunks == 4
    assert full.store.count_without_vectors() == 0
    assert stats.chunks_vectored == chunks
    assert stats.chunks_embedded == len(counting.texts) == len(set(counting.texts))
    assert full.store.vectors_whole(counting.model_id)


def test_a_refresh_with_nothing_changed_reads_and_embeds_nothing(
    full: Collection, counting: CountingEmbedder
) -> None:
    full.refresh()
    counting.texts.clear()
    fingerprint = full.store.history.fingerprint()
    stats = full.refresh()
    assert not stats.changed_anything
    assert (stats.added, stats.changed, stats.deleted, stats.chunks_written) == (0, 0, 0, 0)
    assert counting.texts == []
    assert full.store.history.fingerprint() == fingerprint


def test_an_edit_embeds_only_the_passage_that_changed(
    full: Collection, counting: CountingEmbedder
) -> None:
    full.refresh()
    counting.texts.clear()
    backup = full.notes / "backup.md"
    backup.write_text(NOTES["backup.md"].replace("restic restore latest", "restic restore it"))
    stats = full.refresh()
    assert (stats.changed, stats.added, stats.deleted) == (1, 0, 0)
    assert stats.chunks_embedded == 1 == len(counting.texts)
    assert "restic restore it" in counting.texts[0]


def test_a_rename_reuses_every_vector(full: Collection, counting: CountingEmbedder) -> None:
    full.refresh()
    counting.texts.clear()
    (full.notes / "a" / "soup.md").rename(full.notes / "soup-renamed.md")
    stats = full.refresh()
    assert (stats.added, stats.deleted) == (1, 1)
    assert counting.texts == []
    assert stats.chunks_embedded == 0
    assert "soup-renamed.md" in full.paths() and "a/soup.md" not in full.paths()
    assert full.store.count_without_vectors() == 0


def test_a_note_touched_but_not_changed_is_only_restatted(words_only: Collection) -> None:
    words_only.refresh()
    path = words_only.notes / "backup.md"
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    stats = words_only.refresh()
    assert stats.touched == 1 and not stats.changed_anything
    assert words_only.store.file_stats()["backup.md"] == (st.st_mtime_ns + 10**9, st.st_size)
    assert words_only.refresh().touched == 0


def test_without_a_model_only_the_words_are_indexed(words_only: Collection) -> None:
    stats = words_only.refresh()
    assert stats.added == 3 and stats.chunks_embedded == 0
    assert words_only.store.count_without_vectors() == words_only.store.count_chunks() == 4


def test_skipped_files_are_noted_and_kept_out_of_the_notes(words_only: Collection) -> None:
    write_notes(words_only.notes, {"empty.md": "\n", "bin.md": "x\x00y"})
    stats = words_only.refresh()
    noted = {(rel, note) for rel, note, _ in stats.notes}
    assert noted == {("empty.md", FileNote.EMPTY), ("bin.md", FileNote.BINARY)}
    assert dict(words_only.store.notes()) == {"empty.md": FileNote.EMPTY, "bin.md": FileNote.BINARY}
    assert words_only.store.count_chunks() == 4


def test_progress_goes_through_words_then_vectors(full: Collection) -> None:
    seen: list[tuple[str, int, int, int, int | None]] = []

    def progress(p: Progress) -> None:
        seen.append((p.phase, p.files_done, p.files_total, p.chunks_done, p.chunks_total))

    full.refresh(progress=progress)
    phases = [s[0] for s in seen]
    assert phases[0] == "index" and phases[-1] == "embed"
    assert phases == sorted(phases, key=["index", "embed"].index)  # words all first
    assert seen[-1][3] == seen[-1][4] == 4  # every passage has its vector
    index = [s for s in seen if s[0] == "index"]
    assert index[-1][1] == index[-1][2] == 3


def test_a_stop_ends_the_refresh_early_and_the_next_goes_on(full: Collection) -> None:
    stop = threading.Event()
    stop.set()
    stats = full.refresh(stop=stop)
    assert stats.stopped and stats.added == 0
    stats = full.refresh()
    assert stats.added == 3 and not stats.stopped
    assert full.store.count_without_vectors() == 0


def test_a_stop_during_vectors_keeps_the_words(full: Collection) -> None:
    stop = threading.Event()

    def progress(p: Progress) -> None:
        if p.phase == "embed":
            stop.set()

    stats = full.refresh(progress=progress, stop=stop)
    assert stats.stopped and stats.added == 3
    assert full.paths() == sorted(NOTES)
    assert full.store.count_without_vectors() > 0
    full.refresh()
    assert full.store.count_without_vectors() == 0


def test_changes_limit_the_refresh_to_the_folders_they_name(words_only: Collection) -> None:
    words_only.refresh()
    write_notes(words_only.notes, {"a/new.md": "# New\n\nnew\n", "top-new.md": "# T\n\nt\n"})
    assert words_only.refresh(changes=Changes()).added == 0  # the OS reported nothing
    stats = words_only.refresh(changes=Changes(dirs={"a/"}))
    assert stats.added == 1 and not stats.walked
    assert "a/new.md" in words_only.paths() and "top-new.md" not in words_only.paths()
    assert words_only.refresh().added == 1  # a walk finds the rest


def test_a_deleted_note_leaves_the_index(words_only: Collection) -> None:
    words_only.refresh()
    (words_only.notes / "a" / "pets.md").unlink()
    stats = words_only.refresh()
    assert stats.deleted == 1
    assert words_only.paths() == ["a/soup.md", "backup.md"]
    assert words_only.store.count_chunks() == 3


def test_an_unreadable_folder_is_a_notice_and_its_notes_are_not_gone(
    words_only: Collection,
) -> None:
    words_only.refresh()
    a = words_only.notes / "a"
    a.rename(words_only.notes / "moved")
    a.mkdir(mode=0)  # the folder there now cannot be listed (by anyone but root)
    try:
        stats = words_only.refresh()
        if os.geteuid() == 0:
            pytest.skip("root reads every folder")
        assert [n.kind for n in stats.notices] == [NoticeKind.UNREADABLE_FOLDER]
        assert "a/soup.md" in words_only.paths()  # not known to be gone
    finally:
        a.chmod(0o755)
