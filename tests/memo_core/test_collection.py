"""memo_core.collection: one folder's index, its locks and background refresh, and what it
lends a search (a snapshot, its vectors, the chunks a scope keeps). Real notes in tmp_path,
real SQLite, the tiny model."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_S, many_notes, write_notes

from memo_core.collection import Collection
from memo_core.errors import PathNotFoundError
from memo_core.files.indexes import fallback_index_path
from memo_core.files.scope import Scope
from memo_core.index.history import EMPTY_FINGERPRINT
from memo_core.model.embedder import Embedder
from memo_core.tuning import Tuning
from memo_core.values import Notice, NoticeKind


class Held(Embedder):
    """The tiny model, whose note batches wait for `gate` (queries do not); `entered` is set
    once a refresh is inside one (it holds the collection's locks then)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.gate, self.entered = threading.Event(), threading.Event()

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            self.entered.set()
            assert self.gate.wait(HANG_S)
        return self.inner.embed_batch(texts, query=query)


@pytest.fixture
def c(notes: Path) -> Iterator[Collection]:
    collection = Collection(notes, Tuning())
    yield collection
    collection.close()


def chunk_paths(c: Collection, ids: np.ndarray) -> set[str]:
    with c.snapshot() as store:
        assert store is not None
        return {row.path for row in store.chunk_rows([int(i) for i in ids]).values()}


def test_reading_before_a_refresh_creates_nothing(c: Collection, notes: Path) -> None:
    assert c.db_path == notes / ".memo" / "index.db"
    with c.snapshot() as store:
        assert store is None
    assert c.without_vectors() == 0
    c.load_vectors()
    s = c.status()
    assert (s.root, s.files, s.chunks, s.pending) == (str(notes), 0, 0, 3)
    assert (s.updated_at, s.refreshed_at, s.model, s.indexing) == (None, None, None, None)
    assert s.fingerprint == EMPTY_FINGERPRINT
    assert s.index_path == str(notes / ".memo" / "index.db")
    assert not (notes / ".memo").exists()
    assert c.reported is False  # no OS feed given


def test_a_refresh_by_words_only(c: Collection) -> None:
    stats = c.refresh(None, None)
    assert (stats.added, stats.changed, stats.deleted, stats.stopped) == (3, 0, 0, False)
    s = c.status()
    assert (s.files, s.pending, s.model, s.skipped, s.location_note) == (3, 0, None, 0, None)
    assert s.chunks > 0 and s.chunks_without_vectors == s.chunks == c.without_vectors()
    assert s.fingerprint != EMPTY_FINGERPRINT
    assert s.refreshed_at is not None and s.updated_at is not None
    assert s.unfinished() == [Notice(NoticeKind.EMBEDDING, s.root, done=0, total=s.chunks)]


def test_a_refresh_with_a_model_makes_every_vector(c: Collection, tiny_embedder: Embedder) -> None:
    c.refresh(tiny_embedder, None)
    s = c.status()
    assert (s.model, s.chunks_without_vectors, c.without_vectors()) == (
        tiny_embedder.model_id,
        0,
        0,
    )
    with c.snapshot() as store:
        assert store is not None
        vectors = c.vectors(store)
        assert vectors.model == tiny_embedder.model_id
        assert c.vectors(store) is vectors  # held between searches
        qvec = tiny_embedder.embed(["beets cabbage"], query=True)[0]
        [(best, _)] = vectors.nearest(qvec, 1)
        assert store.chunk_rows([best])[best].path == "cooking/soup.md"


def test_a_refresh_follows_the_notes(c: Collection, notes: Path) -> None:
    c.refresh(None, None)
    assert c.refresh(None, None).changed_anything is False
    (notes / "new.md").write_text("# New\n\nfresh words\n")
    (notes / "pets.md").unlink()
    (notes / "backup.md").write_text("# Бэкап\n\nдругой текст, длиннее прежнего\n")
    stats = c.refresh(None, None)
    assert (stats.added, stats.changed, stats.deleted) == (1, 1, 1)
    assert c.status().files == 3


def test_needs_refresh(c: Collection, notes: Path, tiny_embedder: Embedder) -> None:
    assert c.needs_refresh(None) is True  # never indexed
    c.refresh(None, None)
    assert c.needs_refresh(None) is False  # a walk finds it held as it is
    assert c.needs_refresh(tiny_embedder) is True  # the model's vectors are missing
    c.refresh(tiny_embedder, None)
    assert c.needs_refresh(tiny_embedder) is False
    (notes / "new.md").write_text("# New\n\nfresh\n")
    assert c.needs_refresh(tiny_embedder) is True


def test_absolute(c: Collection, notes: Path) -> None:
    assert c.absolute("cooking/soup.md") == str(notes / "cooking" / "soup.md")
    assert c.absolute("pets.md") == str(notes / "pets.md")


@pytest.mark.parametrize(
    ("scope", "below", "kept"),
    [
        (Scope(under="cooking"), "", {"cooking/soup.md"}),
        (Scope(under="notes/cooking"), "notes", {"cooking/soup.md"}),
        (Scope(under="*.md"), "", {"backup.md", "pets.md"}),
        (Scope(under="nowhere"), "", set()),
        (Scope(under="cooking"), "notes", set()),  # from the folder above: no such folder
    ],
)
def test_in_scope(c: Collection, scope: Scope, below: str, kept: set[str]) -> None:
    c.refresh(None, None)
    with c.snapshot() as store:
        assert store is not None
        among = c.in_scope(store, scope, below)
        assert among is not None
        assert c.in_scope(store, scope, below) is among  # kept for the next page
        # ... and put in scope for the word side too.
        lex = store.lex([("soup",), ("cat",), ("restic",)], 10, (1.0, 1.0), scoped=True)
        assert {cid for cid, _ in lex} <= set(among.tolist())
    assert chunk_paths(c, among) == kept


@pytest.mark.parametrize(
    "scope", [Scope(under="notes"), Scope.parse(after="1970-01-02"), Scope(under="**")]
)
def test_a_scope_that_leaves_nothing_out_is_none(c: Collection, scope: Scope) -> None:
    c.refresh(None, None)
    with c.snapshot() as store:
        assert store is not None
        assert c.in_scope(store, scope, "notes" if scope.under == "notes" else "") is None


def test_rebuild_makes_the_index_again(c: Collection, notes: Path) -> None:
    c.refresh(None, None)
    before = c.status()
    assert c.rebuild(None, None) == 3
    after = c.status()
    assert (after.files, after.chunks) == (before.files, before.chunks)
    assert [p.name for p in (notes / ".memo").iterdir() if "scratch" in p.name] == []


def test_a_changed_identity_rebuilds_once_and_says_so(c: Collection, notes: Path) -> None:
    c.refresh(None, None)
    c.close()
    other = Collection(notes, Tuning(chunk_max_chars=300))
    try:
        assert other.refresh(None, None).notices == []
        notices = other.untold()  # for the next answer, however far the refresh got
        assert [(n.kind, n.collection) for n in notices] == [(NoticeKind.REBUILT, str(notes))]
        assert notices[0].detail
        assert other.refresh(None, None).notices == [] and other.untold() == []  # said once
    finally:
        other.close()


def test_a_foreign_file_at_the_index_place_is_left_alone(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\nwords\n"})
    (notes / ".memo").mkdir()
    foreign = notes / ".memo" / "index.db"
    foreign.write_bytes(b"not a database " * 100)
    c = Collection(notes, Tuning())
    try:
        assert c.refresh(None, None).added == 1
        assert c.db_path != foreign  # kept in the cache instead
        assert c.location_note is not None and c.status().location_note == c.location_note
        assert foreign.read_bytes() == b"not a database " * 100
    finally:
        c.close()


@pytest.mark.parametrize("first", ["status", "snapshot", "refresh"])
def test_memos_index_with_a_planted_view_is_left_alone_whatever_opens_it_first(
    notes: Path, first: str
) -> None:
    """The place is chosen without reading the file's schema: the opener reads it, and
    where it is not memo's the index moves to the cache, whichever call opens it first."""
    import apsw

    c = Collection(notes, Tuning())
    c.refresh(None, None)
    own = c.db_path
    c.close()
    db = apsw.Connection(str(own))
    db.execute("CREATE VIEW v AS SELECT text FROM chunks")
    db.close()
    before = own.read_bytes()
    c = Collection(notes, Tuning())
    try:
        if first == "status":
            assert c.status().files == 0  # the cache's index, not made yet
        elif first == "snapshot":
            with c.snapshot() as store:
                assert store is None
        else:
            assert c.refresh(None, None).added == len(list(notes.rglob("*.md")))
        assert c.db_path == fallback_index_path(notes) and c.location_note is not None
        assert c.location_note.params["why"].key == "file.left_alone"
    finally:
        c.close()
    assert own.read_bytes() == before


def test_a_refresh_of_a_folder_gone_says_so(c: Collection, notes: Path) -> None:
    shutil.rmtree(notes)
    with pytest.raises(PathNotFoundError) as e:
        c.refresh(None, None)
    assert e.value.message.key == "path.gone"


def test_a_background_failure_is_told_once(c: Collection, notes: Path) -> None:
    assert c.unreported_failure() is None  # no refresh yet
    shutil.rmtree(notes)
    job = c.start_refresh(None, None)
    assert job.done.wait(HANG_S)
    assert c.refresh_error is not None
    notice = c.unreported_failure()
    assert notice is not None
    assert (notice.kind, notice.collection, notice.detail) == (
        NoticeKind.REFRESH_FAILED,
        str(notes),
        c.refresh_error,
    )
    assert c.unreported_failure() is None  # told once
    assert c.needs_refresh(None) is True  # a failed refresh is tried again


def test_a_background_refresh_and_what_it_holds(notes: Path, tiny_embedder: Embedder) -> None:
    held = Held(tiny_embedder)
    c = Collection(notes, Tuning())
    try:
        job = c.start_refresh(held, None)
        assert held.entered.wait(HANG_S)
        assert c.start_refresh(held, None) is job  # the one under way
        activity = c.activity()
        assert activity is not None and activity.kind is NoticeKind.EMBEDDING
        assert activity.collection == str(notes)
        assert c.status().indexing == activity
        assert c.needs_refresh(held) is True
        assert c.release() is False  # a refresh at work is left alone
        held.gate.set()
        assert job.done.wait(HANG_S)
        assert job.result().added == 3
        assert c.activity() is None and c.status().indexing is None
        assert c.start_refresh(held, None) is not job  # a new one once it ended
    finally:
        held.gate.set()
        c.close()


def test_another_refresher_is_not_waited_for(notes: Path, tiny_embedder: Embedder) -> None:
    held = Held(tiny_embedder)
    first, second = Collection(notes, Tuning()), Collection(notes, Tuning())
    try:
        job = first.start_refresh(held, None)
        assert held.entered.wait(HANG_S)
        stats = second.refresh(None, None, wait=False)
        assert [(n.kind, n.collection) for n in stats.notices] == [(NoticeKind.BUSY, str(notes))]
        assert not stats.changed_anything
        held.gate.set()
        assert job.done.wait(HANG_S)
        assert second.refresh(None, None, wait=False).notices == []
    finally:
        held.gate.set()
        first.close()
        second.close()


def test_another_refresher_making_vectors_is_said_with_those_made_so_far(
    notes: Path, tiny_embedder: Embedder
) -> None:
    # A search by meaning meanwhile covers the passages the other one has given vectors:
    # its answer says how many (a second memo-mcp on a folder the first one indexes).
    held = Held(tiny_embedder)
    first, second = Collection(notes, Tuning()), Collection(notes, Tuning())
    try:
        first.start_refresh(held, None)
        assert held.entered.wait(HANG_S)  # its words committed, its first vectors held
        chunks = first.status().chunks
        [busy] = second.refresh(held, None, wait=False).notices
        assert (busy.kind, busy.done, busy.total) == (NoticeKind.BUSY, 0, chunks) and chunks
        [words] = second.refresh(None, None, wait=False).notices  # words only: no count
        assert (words.kind, words.total) == (NoticeKind.BUSY, 0)
    finally:
        held.gate.set()
        first.close()
        second.close()


def stopped_half_way(tmp_path: Path, tiny_embedder: Embedder) -> Collection:
    """A collection whose background refresh was stopped after its first batch of vectors."""
    held = Held(tiny_embedder)
    c = Collection(many_notes(tmp_path / "many", 40), Tuning(batch_chunks=4))
    job = c.start_refresh(held, None)
    try:
        assert held.entered.wait(HANG_S)
        c.stop()
    finally:
        held.gate.set()
    assert job.done.wait(HANG_S)
    assert job.result().stopped is True
    assert c.without_vectors() > 0
    return c


def test_a_stopped_refresh_is_taken_up_after_close(tmp_path: Path, tiny_embedder: Embedder) -> None:
    c = stopped_half_way(tmp_path, tiny_embedder)
    try:
        assert c.needs_refresh(tiny_embedder) is True
        assert c.close() is True
        assert c.refresh(tiny_embedder, None).stopped is False  # the next use goes on
        assert c.without_vectors() == 0
    finally:
        c.close()


def test_a_refresh_after_a_stopped_one_goes_on(tmp_path: Path, tiny_embedder: Embedder) -> None:
    c = stopped_half_way(tmp_path, tiny_embedder)
    try:
        assert c.refresh(tiny_embedder, None).stopped is False
    finally:
        c.close()


def test_close_waits_no_longer_than_asked(notes: Path, tiny_embedder: Embedder) -> None:
    held = Held(tiny_embedder)
    c = Collection(notes, Tuning())
    job = c.start_refresh(held, None)
    try:
        assert held.entered.wait(HANG_S)
        assert c.close(timeout=0) is False  # the refresher closes it when it ends
    finally:
        held.gate.set()
    assert job.done.wait(HANG_S)
    assert c.close() is True


@pytest.mark.parametrize("let_go", ["close", "release", "close_connections"])
def test_letting_go_then_reading_again(c: Collection, tiny_embedder: Embedder, let_go: str) -> None:
    c.refresh(tiny_embedder, None)
    before = c.status()
    result = getattr(c, let_go)()
    assert result in (True, None)
    with c.snapshot() as store:  # opened again on the next use
        assert store is not None
        assert c.vectors(store).model == tiny_embedder.model_id
    assert c.status().fingerprint == before.fingerprint
