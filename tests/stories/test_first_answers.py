"""A first answer is a real answer: a small folder is indexed whole, words and vectors, before
its first search answers, whatever the refresh budget; a model that is not installed yet is
installed while the words are indexed and searched, and a small folder's first answer waits
for it; a folder too big to wait for answers by words within the budget and says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO, BlockedEmbedder, PacedEmbedder, many_notes, write_notes

from memo_core import Embedder, Engine, ModelSource, NoticeKind, Tuning
from memo_core.index.jobs import SmallWork
from memo_core.model.sources import chosen_source, default_model_dir, model_dirs_of
from memo_text import Lang, format_hits


class Installer:
    """Installs a tiny model where the default one goes, after `pause` seconds or `gate`."""

    def __init__(self, source: Path, target: Path, pause: float = 0.0) -> None:
        self.source, self.target, self.pause = source, target, pause
        self.gate = threading.Event()
        self.gate.set()
        self.calls = 0

    def __call__(self) -> Path:
        self.calls += 1
        time.sleep(self.pause)
        assert self.gate.wait(30)
        for target in model_dirs_of(chosen_source()):  # the default: a pair, two folders
            shutil.copytree(self.source, target)
        return self.target


def twelve_notes(root: Path) -> Path:
    files = {f"topic{i}/note{i}.md": f"# Note {i}\n\nrestic cabbage {i}\n" for i in range(11)}
    return write_notes(root, {"README.md": "# Notes\n\nbeets bowl\n", **files})


@pytest.fixture
def default_setup(monkeypatch: pytest.MonkeyPatch) -> Path:
    """No MEMO_MODEL_DIR: the default model, not installed in this test's cache."""
    monkeypatch.delenv("MEMO_MODEL_DIR")
    assert not default_model_dir().exists()
    return default_model_dir()


@pytest.mark.parametrize("budget", [0.0, 0.05])
def test_a_small_folder_is_indexed_whole_before_its_first_answer(
    tmp_path: Path, tiny_embedder: Embedder, budget: float
) -> None:
    notes = twelve_notes(tmp_path / "notes")
    paced = PacedEmbedder(tiny_embedder, 0.2)  # a batch of 4 passages: 3 batches, 0.6 s
    with Engine(
        models=ModelSource(paced), tuning=Tuning(batch_chunks=4), refresh_budget_s=budget
    ) as e:
        first = e.search(notes, "restic cabbage", mode="hybrid")
        assert first.notices == [] and first.mode == "hybrid"
        assert "vec" in first[0].found_by
        assert e.status(notes)[0].chunks_without_vectors == 0


def test_a_folder_beyond_the_small_bound_answers_within_its_budget(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    notes = many_notes(tmp_path / "notes", 40)
    paced = PacedEmbedder(tiny_embedder, 0.3)
    small = SmallWork(files=100, chunks=20)  # its words are waited for, not its vectors
    with Engine(
        models=ModelSource(paced),
        tuning=Tuning(batch_chunks=4),
        refresh_budget_s=0.05,
        small=small,
    ) as e:
        t0 = time.monotonic()
        first = e.search(notes, "cat 7", mode="hybrid")
        assert time.monotonic() - t0 < 60  # a bound that fails only on a hang
        [n] = first.notices
        assert n.kind is NoticeKind.EMBEDDING and n.total == 41
        assert first[0].relpath == "d7/n7.md"  # its words were all waited for


def test_once_its_words_are_in_a_big_folder_answers_without_its_vectors(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """A budget of ten minutes, vectors that never come while the search waits: the answer
    comes once the words are in (and a short grace), by words, saying none has vectors yet.
    Before, it waited the whole budget (the gate opens by itself after a minute, to fail
    rather than hang)."""
    notes = many_notes(tmp_path / "notes", 40)
    held = BlockedEmbedder(tiny_embedder)
    opener = threading.Timer(60, held.gate.set)
    opener.start()
    try:
        with Engine(
            models=ModelSource(held),
            tuning=Tuning(batch_chunks=4),
            refresh_budget_s=600,
            small=SmallWork(files=100, chunks=20),  # its words are waited for, not its vectors
        ) as e:
            first = e.search(notes, "cat 7", mode="hybrid")
            vectors_came = held.gate.is_set()
            held.gate.set()
            assert not vectors_came, "the search waited until the gate opened by itself"
            assert first[0].relpath == "d7/n7.md"
            [n] = first.notices
            assert (n.kind, n.done, n.total) == (NoticeKind.EMBEDDING, 0, 41)
            for lang, said in [
                (Lang.RU, "векторов пока нет ни у одного из 41 фрагментов"),
                (Lang.EN, "no chunk has vectors yet (41)"),
            ]:
                assert said in format_hits(first, lang=lang)
    finally:
        opener.cancel()
        held.gate.set()


def test_a_missing_model_installs_while_words_answer(
    tmp_path: Path, default_setup: Path, tiny_model_dir: Path
) -> None:
    notes = many_notes(tmp_path / "notes", 40)
    installer = Installer(tiny_model_dir, default_setup)
    installer.gate.clear()
    models = ModelSource(installer=installer)
    with Engine(models=models, refresh_budget_s=0.5, small=SmallWork(chunks=10)) as e:
        first = e.search(notes, "cat 7", mode="hybrid")
        assert first[0].relpath == "d7/n7.md" and first.mode == "lex"
        assert [n.kind for n in first.notices] == [NoticeKind.MODEL_UNAVAILABLE]
        assert first.notices[0].detail.key == "model.installing"  # type: ignore[attr-defined]
        none = e.search(notes, "zebra quantum", mode="hybrid")  # no word of it is there
        for lang, yet in [
            (Lang.RU, "пока ничего не найдено по словам"),
            (Lang.EN, "nothing found by words yet"),
        ]:
            assert format_hits(none, lang=lang).splitlines()[-1].startswith(yet)
        installer.gate.set()
        assert models.wait_installed(30)
        e.refresh_budget_s = None
        later = e.search(notes, "cat 7", mode="hybrid")
        assert later.mode == "hybrid" and later.notices == []
        assert installer.calls == 1


def test_a_small_folder_waits_for_the_model_install(
    tmp_path: Path, default_setup: Path, tiny_model_dir: Path
) -> None:
    notes = twelve_notes(tmp_path / "notes")
    installer = Installer(tiny_model_dir, default_setup, pause=1.0)
    with Engine(models=ModelSource(installer=installer), refresh_budget_s=0.05) as e:
        first = e.search(notes, "restic cabbage", mode="hybrid")
        assert first.notices == [] and first.mode == "hybrid"
        assert "vec" in first[0].found_by
        assert installer.calls == 1


def test_what_the_refresh_said_before_the_model_came_stands(
    tmp_path: Path, default_setup: Path, tiny_model_dir: Path
) -> None:
    """A small folder's first search refreshes by words while the model installs, then
    again with it: what the first refresh said (here, that an index made with other
    passage sizes was rebuilt, said once) is in the answer, not only what the second said."""
    notes = twelve_notes(tmp_path / "notes")
    with Engine(models=ModelSource(enabled=False), tuning=Tuning(chunk_max_chars=300)) as e:
        e.refresh(notes)
    installer = Installer(tiny_model_dir, default_setup, pause=1.0)
    with Engine(models=ModelSource(installer=installer), refresh_budget_s=0.05) as e:
        first = e.search(notes, "restic cabbage", mode="hybrid")
        assert first.mode == "hybrid" and "vec" in first[0].found_by
        assert [n.kind for n in first.notices] == [NoticeKind.REBUILT]


def test_memo_search_in_a_pipe_answers_a_small_folder_with_its_vectors(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    notes = twelve_notes(tmp_path / "notes")
    env = {**os.environ, "MEMO_MODEL_DIR": str(tiny_model_dir), "MEMO_REFRESH_BUDGET": "0"}
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "search", str(notes), "restic cabbage", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["notices"] == [] and answer["mode"] == "hybrid"
    assert "vec" in answer["hits"][0]["found_by"]
