"""memo_core.refreshing: a call's refresh of its collections: those known whole left alone,
the others side by side within the call's budget, what they say as notices (work under way
summed in one line, a failure nobody was told of said once)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_S, write_notes

from memo_core.collection import Collection
from memo_core.errors import PathNotFoundError
from memo_core.index.jobs import NO_SMALL_WORK, SMALL_WORK
from memo_core.model.embedder import Embedder
from memo_core.refreshing import each_within, one_activity_line, refresh_collections
from memo_core.tuning import Tuning
from memo_core.values import Notice, NoticeKind

ACTIVITY = {NoticeKind.INDEXING, NoticeKind.EMBEDDING, NoticeKind.SENTENCES}


class Held(Embedder):
    """The tiny model, whose note batches wait for `gate` (queries do not)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.gate = threading.Event()

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            assert self.gate.wait(HANG_S)
        return self.inner.embed_batch(texts, query=query)


@pytest.fixture
def base(tmp_path: Path) -> Path:
    base = tmp_path / "base"
    write_notes(base / "a", {"one.md": "# One\n\ncat and dog\n"})
    write_notes(base / "b", {"two.md": "# Two\n\nbird song\n", "three.md": "# Three\n\nsun\n"})
    return base


@pytest.fixture
def two(base: Path) -> Iterator[list[Collection]]:
    cs = [Collection(base / "a", Tuning()), Collection(base / "b", Tuning())]
    yield cs
    for c in cs:
        c.close()


def refresh(cs: list[Collection], embedder: Embedder | None, budget: float | None, **kw: object):
    args: dict[str, object] = {"small": NO_SMALL_WORK, "open_budget": 10, **kw}
    return refresh_collections(cs, embedder, None, budget=budget, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize("budget", [None, HANG_S])
def test_every_collection_is_refreshed(two: list[Collection], budget: float | None) -> None:
    assert refresh(two, None, budget) == []
    assert [c.status().files for c in two] == [1, 2]
    assert not any(c.needs_refresh(None) for c in two)


def test_those_known_whole_are_left_alone(two: list[Collection], base: Path) -> None:
    refresh(two, None, None)
    before = [c.status().refreshed_at for c in two]
    (base / "b" / "four.md").write_text("# Four\n\nmoon\n")
    refresh(two, None, None)
    after = [c.status().refreshed_at for c in two]
    assert after[0] == before[0]  # nothing changed there: not refresh_collections
    assert after[1] is not None and before[1] is not None and after[1] > before[1]
    assert two[1].status().files == 3


def test_a_calls_only_collection_is_refreshed_without_looking(two: list[Collection]) -> None:
    alone = two[:1]
    refresh(alone, None, None)
    first = alone[0].status().refreshed_at
    refresh(alone, None, None)
    again = alone[0].status().refreshed_at
    assert first is not None and again is not None and again > first


@pytest.mark.parametrize("open_budget", [0, 1, 10])
def test_past_the_open_budget_the_result_is_the_same(
    two: list[Collection], open_budget: int
) -> None:
    assert refresh(two, None, HANG_S, open_budget=open_budget) == []
    assert [c.status().files for c in two] == [1, 2]
    with two[1].snapshot() as store:  # read again after letting go
        assert store is not None and store.counts()[0] == 2


def test_work_under_way_is_one_line(
    two: list[Collection], base: Path, tiny_embedder: Embedder
) -> None:
    held = Held(tiny_embedder)
    try:
        notices = refresh(two, held, 0.0)
    finally:
        held.gate.set()
    busy = [n for n in notices if n.kind in ACTIVITY]
    assert len(busy) == 1
    assert busy[0].collection == str(base)  # the folder they share
    for c in two:
        job = c.start_refresh(held, None)
        assert job.done.wait(HANG_S)
    assert all(c.without_vectors() == 0 for c in two)


def test_the_small_work_is_waited_for_whole(two: list[Collection], tiny_embedder: Embedder) -> None:
    # Past a budget of 0, a refresh this small is still waited for: its vectors answer.
    assert refresh(two, tiny_embedder, 0.0, small=SMALL_WORK) == []
    assert [c.without_vectors() for c in two] == [0, 0]


@pytest.mark.parametrize("budget", [None, HANG_S])
def test_a_folder_gone_is_its_keyed_error(
    two: list[Collection], base: Path, budget: float | None
) -> None:
    shutil.rmtree(base / "b")
    with pytest.raises(PathNotFoundError) as e:
        refresh(two, None, budget)
    assert e.value.message.key == "path.gone"


def failed_in_background(c: Collection) -> str:
    """Fail `c`'s background refresh with no one waiting (its folder moved away and back)."""
    moved = c.root.with_name(c.root.name + "-away")
    c.root.rename(moved)
    job = c.start_refresh(None, None)
    assert job.done.wait(HANG_S)
    moved.rename(c.root)
    assert c.refresh_error is not None
    return c.refresh_error


def test_a_failure_no_one_was_told_of_is_said_while_it_stands(
    two: list[Collection], tiny_embedder: Embedder
) -> None:
    why = failed_in_background(two[1])
    held = Held(tiny_embedder)
    try:
        notices = refresh(two, held, 0.0)  # the new try is still under way
    finally:
        held.gate.set()
    failed = [n for n in notices if n.kind is NoticeKind.REFRESH_FAILED]
    assert [(n.collection, n.detail) for n in failed] == [(str(two[1].root), why)]
    assert two[1].unreported_failure() is None  # said once


def test_a_failure_mended_by_this_call_is_not_said(two: list[Collection]) -> None:
    failed_in_background(two[1])
    assert refresh(two, None, HANG_S) == []
    assert two[1].refresh_error is None
    assert two[1].unreported_failure() is None


@pytest.mark.parametrize("budget", [0, 1, 5])
def test_each_within_reads_each_in_order(two: list[Collection], budget: int) -> None:
    refresh(two, None, None)
    got = each_within(two * 2, budget, lambda c: c.status().files)
    assert got == [1, 2, 1, 2]


def test_each_within_passes_an_error_on(two: list[Collection]) -> None:
    def read(c: Collection) -> int:
        if c is two[1]:
            raise PathNotFoundError("path.gone", path=str(c.root))
        return 1

    with pytest.raises(PathNotFoundError):
        each_within(two, 0, read)
    assert each_within([], 0, read) == []


@pytest.mark.parametrize(
    ("kinds", "said"),
    [
        ((NoticeKind.EMBEDDING, NoticeKind.EMBEDDING), (NoticeKind.EMBEDDING, 3, 30)),
        # One still indexing its words, the other embedding: the earlier stage is said,
        # at the folder both lie in (it named only the one indexing).
        ((NoticeKind.INDEXING, NoticeKind.EMBEDDING), (NoticeKind.INDEXING, 1, 10)),
        ((NoticeKind.SENTENCES, NoticeKind.EMBEDDING), (NoticeKind.EMBEDDING, 2, 20)),
    ],
)
def test_activity_in_several_collections_is_one_line_at_their_folder(
    base: Path, kinds: tuple[NoticeKind, NoticeKind], said: tuple[NoticeKind, int, int]
) -> None:
    other = Notice(NoticeKind.REFRESH_FAILED, str(base / "c"), "why")
    busy = [
        Notice(kind, str(base / name), done=n, total=10 * n)
        for kind, name, n in zip(kinds, ("a", "b"), (1, 2), strict=True)
    ]
    [kept, line] = one_activity_line([other, *busy])
    assert kept == other
    assert (line.kind, line.done, line.total) == said
    assert line.collection == str(base)
