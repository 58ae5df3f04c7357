"""A vectors pass commits in steps of about `STEP_S` seconds (memo_core/index/indexer.py,
`Steps`) and counts from what is done: a restart, a kill or a second process goes on from
the last step, and what it reports starts there, not at 0."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_S, many_notes

from memo_core import Embedder, Engine, ModelSource, Progress, Tuning
from memo_core.index.indexer import FIRST_STEP, STEP_S, Steps


def test_steps_are_sized_by_the_pace_of_the_last() -> None:
    steps = Steps(256)
    assert steps.size == FIRST_STEP  # the pace is not known yet: a small first step
    steps.took(16, STEP_S / 4)  # four times faster than a step should take: at most twice
    assert steps.size == 32
    steps.took(32, STEP_S / 4)
    assert steps.size == 64
    steps.took(64, STEP_S * 100)  # a crawl: one passage a step, never none
    assert steps.size == 1
    for _ in range(20):  # a sprint: no more than the tuning's batch
        steps.took(10, 1e-6)
    assert steps.size == 256
    steps.took(0, 1.0)  # nothing embedded (every text's vector reused) says nothing of it
    assert steps.size == 256
    assert Steps(4).size == 4


class CrashingEmbedder(Embedder):
    """A real tiny model whose note batches fail after the first `good` (queries work)."""

    def __init__(self, inner: Embedder, good: int) -> None:
        self.inner, self.model_id, self.dim, self.good = inner, inner.model_id, inner.dim, good

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            if self.good <= 0:
                raise RuntimeError("the model crashed")
            self.good -= 1
        return self.inner.embed_batch(texts, query=query)


def test_a_pass_cut_short_goes_on_from_its_last_step(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    notes = many_notes(tmp_path / "notes", 40)  # 41 notes of one passage each
    tuning = Tuning(batch_chunks=4)
    with Engine(models=ModelSource(CrashingEmbedder(tiny_embedder, good=3)), tuning=tuning) as e:
        with pytest.raises(RuntimeError, match="crashed"):
            e.refresh(notes)
        assert e.status(notes)[0].chunks_without_vectors == 41 - 3 * 4  # three steps landed
    seen: list[tuple[str, int, int | None, int]] = []
    with Engine(models=ModelSource(tiny_embedder), tuning=tuning) as e:
        e.refresh(notes, progress=lambda p: seen.append(
            (p.phase, p.chunks_done, p.chunks_total, p.chunks_before)
        ))  # fmt: skip
        assert e.status(notes)[0].chunks_without_vectors == 0
    embed = [s for s in seen if s[0] == "embed"]
    assert embed[0] == ("embed", 12, 41, 12)  # it starts where the other stopped
    assert embed[-1] == ("embed", 41, 41, 12)
    assert [s[1] for s in embed] == sorted(s[1] for s in embed)


class LoadingEmbedder(Embedder):
    """A real tiny model whose graph is still loading until `loaded` is set."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.loaded = threading.Event()

    def ready(self) -> None:
        assert self.loaded.wait(HANG_S), "the test never let the model load"

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        return self.inner.embed_batch(texts, query=query)


def test_the_vectors_bar_starts_before_the_model_has_loaded(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """A terminal's search (it waits for its whole index) with the words in and the model
    still loading its graph: the vectors' pass says so at once (the words' bar once sat at
    its end, still, for the half minute a graph took to load)."""
    notes = many_notes(tmp_path / "notes", 10)
    model = LoadingEmbedder(tiny_embedder)
    seen: list[tuple[str, int, int | None]] = []

    def report(p: Progress) -> None:
        seen.append((p.phase, p.chunks_done, p.chunks_total))
        if p.phase == "embed" and not model.loaded.is_set():
            model.loaded.set()  # the bar is there: now the model may come

    with Engine(models=ModelSource(model), refresh_budget_s=None) as e:
        found = e.search(notes, "cat 7", mode="hybrid", progress=report)
    assert ("embed", 0, 11) in seen and ("embed", 11, 11) in seen
    assert found.notices == [] and "vec" in found[0].found_by


def test_memo_index_indexes_the_words_while_the_model_loads(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """`memo index` (Engine.refresh) no longer waits for the model's graph before the words:
    their first report comes while it loads, then the vectors once it has."""
    notes = many_notes(tmp_path / "notes", 10)
    model = LoadingEmbedder(tiny_embedder)
    first: list[str] = []

    def report(p: Progress) -> None:
        if not first:
            first.append(p.phase)
            model.loaded.set()  # the words began: now the model may come

    with Engine(models=ModelSource(model)) as e:
        stats = e.refresh(notes, progress=report)
        assert e.status(notes)[0].chunks_without_vectors == 0
    assert first == ["index"] and stats.notices == [] and stats.chunks_vectored == 11


class HeldEmbedder(Embedder):
    """A real tiny model whose note batches after the first wait until `release` is set."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.release, self.holding = threading.Event(), threading.Event()
        self.batches = 0

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            self.batches += 1
            if self.batches > 1:
                self.holding.set()
                assert self.release.wait(HANG_S), "the test never let the batch go"
        return self.inner.embed_batch(texts, query=query)


class Interrupted(Exception):
    """What a Ctrl-C is to the caller of a refresh: an exception from its progress."""


def test_a_pass_cut_short_does_not_wait_for_the_step_under_way(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """The next step is made while one is written: a caller whose progress raises (a
    terminal's first Ctrl-C answers from what is indexed) gets its exception at once, not
    once the model has made the next step; the first step stays landed."""
    notes = many_notes(tmp_path / "notes", 40)
    model = HeldEmbedder(tiny_embedder)
    raised: list[BaseException] = []

    def report(p: Progress) -> None:
        if p.phase == "embed" and p.chunks_done > 0:
            assert model.holding.wait(HANG_S)  # the next step is under way, held
            raise Interrupted

    def refresh() -> None:
        try:
            e.refresh(notes, progress=report)
        except Interrupted as ex:
            raised.append(ex)

    with Engine(models=ModelSource(model), tuning=Tuning(batch_chunks=4)) as e:
        caller = threading.Thread(target=refresh)
        caller.start()
        caller.join(HANG_S)
        cut_short = not caller.is_alive()
        model.release.set()  # now the held step may end (and is let go)
        caller.join(HANG_S)
        assert cut_short and raised, "the refresh waited for the step under way"
        assert e.status(notes)[0].chunks_without_vectors == 41 - 4  # the first step landed
