"""Errors never vanish, and closing never hangs: a background refresh that fails past every
waiter's budget is logged and said once in the next answer and in status; a refresh stuck in
a batch delays neither a search (a folder vanished) nor an engine's close beyond a bound."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_S, BlockedEmbedder, write_notes

from memo_core import Embedder, Engine, FolderChangedError, ModelSource, NoticeKind
from memo_core.collection import CLOSE_WAIT_S
from memo_core.index.jobs import NO_SMALL_WORK as LONG  # a slow model: no folder is small
from memo_core.index.jobs import SMALL_WORK
from memo_mcp.lazy import LazyEngine
from memo_text import Lang, format_status, notice_text


class FailingEmbedder(Embedder):
    """A real tiny model whose note batches fail after `pause` seconds while `failing` is
    set (queries always work)."""

    def __init__(self, inner: Embedder, pause: float) -> None:
        self.inner, self.model_id, self.dim, self.pause = inner, inner.model_id, inner.dim, pause
        self.failing = threading.Event()
        self.failing.set()

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            time.sleep(self.pause)
            if self.failing.is_set():
                raise RuntimeError("the model crashed")
        return self.inner.embed_batch(texts, query=query)


def twenty_notes(root: Path) -> Path:
    return write_notes(root, {f"n{i}.md": f"# Note {i}\n\ncat {i}\n" for i in range(20)})


def idle(e: Engine, notes: Path) -> None:
    """Wait until no refresh runs in `notes` any more."""
    deadline = time.monotonic() + 30
    while e.status(notes)[0].indexing is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_refresh_failing_past_the_budget_is_said_once_and_tried_again(
    tmp_path: Path,
    tiny_embedder: Embedder,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    notes = twenty_notes(tmp_path / "notes")
    model = FailingEmbedder(tiny_embedder, pause=1.0)
    caplog.set_level(logging.ERROR, logger="memo")
    with Engine(models=ModelSource(model), refresh_budget_s=0.1, small=LONG) as e:
        e.refresh(notes, embed=False)  # the words first: the search waits for vectors only
        first = e.search(notes, "cat 7", mode="hybrid")
        [n] = first.notices  # words are in, the vectors fail after the budget
        assert n.kind is NoticeKind.EMBEDDING and first[0].relpath == "n7.md"
        idle(e, notes)

        second = e.search(notes, "cat 8", mode="hybrid")  # said once; a new try is under way
        told, n = second.notices
        assert (told.kind, told.collection) == (NoticeKind.REFRESH_FAILED, str(notes))
        assert notice_text(told) == (
            f"{notes}: обновление индекса не удалось (RuntimeError: the model crashed); "
            "ответ по последнему снимку"
        )
        assert n.kind is NoticeKind.EMBEDDING and second[0].relpath == "n8.md"
        [st] = e.status(notes)  # said until a refresh succeeds
        assert st.refresh_error == "RuntimeError: the model crashed"
        assert ", обновление не удалось (RuntimeError: the model crashed)" in format_status([st])
        third = e.search(notes, "cat 9", mode="hybrid")
        assert [n.kind for n in third.notices] == [NoticeKind.EMBEDDING]
        idle(e, notes)
        failures = [
            r for r in caplog.records if r.name == "memo" and "the model crashed" in r.getMessage()
        ]
        assert len(failures) == 2 and all(r.levelno == logging.ERROR for r in failures)

        model.failing.clear()  # the model works again: the next try succeeds and clears it
        again = e.search(notes, "cat 1", mode="hybrid")
        assert [n.kind for n in again.notices] == [NoticeKind.REFRESH_FAILED, NoticeKind.EMBEDDING]
        deadline = time.monotonic() + 30
        while (later := e.search(notes, "cat 2", mode="hybrid")).notices:
            assert time.monotonic() < deadline, later.notices
            time.sleep(0.1)
        assert "vec" in later[0].found_by and e.status(notes)[0].refresh_error is None
    assert capsys.readouterr().out == ""  # logged to stderr only, never to stdout


def test_a_failure_cured_by_the_next_try_is_not_said(tmp_path: Path, tiny_embedder) -> None:
    notes = twenty_notes(tmp_path / "notes")
    model = FailingEmbedder(tiny_embedder, pause=0.3)
    with Engine(models=ModelSource(model), refresh_budget_s=0.1, small=LONG) as e:
        e.refresh(notes, embed=False)
        assert e.search(notes, "cat 7", mode="hybrid").notices[0].kind is NoticeKind.EMBEDDING
        idle(e, notes)
        assert e.status(notes)[0].refresh_error is not None
        model.failing.clear()
        # The next try is waited for whole (a search whose words are in waits for the vectors
        # of small work only) and ends within the budget.
        e.refresh_budget_s, e.small = 30, SMALL_WORK
        assert e.search(notes, "cat 7", mode="hybrid").notices == []
        assert e.status(notes)[0].refresh_error is None


def test_a_failure_a_waiter_saw_is_not_said_again(tmp_path: Path, tiny_embedder) -> None:
    notes = twenty_notes(tmp_path / "notes")
    model = FailingEmbedder(tiny_embedder, pause=0.0)
    with Engine(models=ModelSource(model), refresh_budget_s=5, small=LONG) as e:
        with pytest.raises(RuntimeError, match="the model crashed"):
            e.search(notes, "cat 7", mode="hybrid")
        model.failing.clear()
        e.refresh_budget_s = 0  # the next try is not waited for: only a notice could say it
        kinds = [n.kind for n in e.search(notes, "cat 7", mode="hybrid").notices]
        assert kinds and NoticeKind.REFRESH_FAILED not in kinds  # how far the next try got


def test_a_vanished_folder_does_not_wait_for_its_stuck_refresh(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    home = tmp_path / "home"
    twenty_notes(home / "a")
    twenty_notes(home / "b")
    model = BlockedEmbedder(tiny_embedder)
    e = Engine(models=ModelSource(model), refresh_budget_s=0.2, small=LONG)
    try:
        e.search(home, "cat 7", mode="hybrid")  # both refreshes now wait inside a batch
        shutil.rmtree(home / "a")
        answer: list[object] = []
        searching = threading.Thread(
            target=lambda: answer.append(e.search(home, "cat 8", mode="hybrid")), daemon=True
        )
        searching.start()
        searching.join(HANG_S)
        assert not searching.is_alive()
        assert [c.root for c in e.collections(home)] == [home / "b"]
    finally:
        model.gate.set()
        e.close()


# The time it takes is asserted in the slow run only (a busy machine slows any close).
@pytest.mark.parametrize("timed", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_closing_returns_within_a_bound_when_a_refresh_is_stuck(
    tmp_path: Path,
    tiny_embedder: Embedder,
    caplog: pytest.LogCaptureFixture,
    timed: bool,
) -> None:
    home = tmp_path / "home"
    twenty_notes(home / "a")
    twenty_notes(home / "b")
    model = BlockedEmbedder(tiny_embedder)
    e = Engine(models=ModelSource(model), refresh_budget_s=0.2, small=LONG)
    try:
        e.search(home, "cat 7", mode="hybrid")
        closing = threading.Thread(target=e.close, daemon=True)
        t0 = time.monotonic()
        closing.start()
        closing.join(HANG_S)
        assert not closing.is_alive()
        if timed:  # one bound for both, the default one (not one each)
            assert time.monotonic() - t0 < CLOSE_WAIT_S + 2
        stuck = [r for r in caplog.records if r.name == "memo" and "did not stop" in r.getMessage()]
        assert len(stuck) == 2 and all(r.levelno == logging.WARNING for r in stuck)
    finally:
        model.gate.set()
    # Once the batch ends, the stuck refresh stops and closes the index: it can be read.
    deadline = time.monotonic() + 30
    while any(t.name.startswith("memo refresh") for t in threading.enumerate()):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with Engine(models=ModelSource(enabled=False)) as again:
        assert [st.files for st in again.status(home)] == [20, 20]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="change reports: Linux inotify")
def test_the_change_feed_says_when_it_falls_back_to_walking(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat\n", "sub/b.md": "# B\n\ndog\n"})
    caplog.set_level(logging.INFO, logger="memo")
    with Engine(models=ModelSource(enabled=False), notify=True, refresh_budget_s=None) as e:
        e.refresh(notes)  # the first walk starts the feed
        (notes / "sub").rename(notes / "moved")  # its watches now name other paths
        assert e.refresh(notes).walked
        os.symlink(notes / "a.md", notes / "link.md")  # a change would show under one name
        e.refresh(notes)
    said = [r.getMessage() for r in caplog.records if r.name == "memo"]
    assert any("lost track" in m and str(notes) in m for m in said), said
    assert any("walked at every search" in m and str(notes) in m for m in said), said


class SwappedFolderEmbedder(FailingEmbedder):
    """Note batches fail as a folder swapped under memo does: an expected MemoError."""

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query and self.failing.is_set():
            raise FolderChangedError("path.changed_link", path="/notes/sub")
        return self.inner.embed_batch(texts, query=query)


@pytest.mark.parametrize(
    ("model", "traceback"), [(SwappedFolderEmbedder, False), (FailingEmbedder, True)]
)
def test_an_expected_failure_in_the_background_is_one_line_in_the_log(
    tmp_path: Path, tiny_embedder, caplog: pytest.LogCaptureFixture, model, traceback: bool
) -> None:
    notes = twenty_notes(tmp_path / "notes")
    with Engine(models=ModelSource(model(tiny_embedder, pause=0.0)), refresh_budget_s=0.0,
                small=LONG) as e:  # fmt: skip
        e.search(notes, "cat 7", mode="hybrid")
        deadline = time.monotonic() + HANG_S
        while not (said := [r for r in caplog.records if "refreshing" in r.getMessage()]):
            assert time.monotonic() < deadline, "the failure was never logged"
            time.sleep(0.05)
    [record] = said
    assert (record.exc_info is not None) is traceback
    assert "\n" not in record.getMessage()


def test_memo_mcp_leaving_a_busy_index_says_so_in_the_users_language(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """memo-mcp's exit waits a bound for its indexes; past it, one line in the user's
    language that says what is going on (it was once English, and blamed the folder)."""
    notes = twenty_notes(tmp_path / "notes")
    model = BlockedEmbedder(tiny_embedder)
    said: list[object] = []
    e = Engine(models=ModelSource(model), refresh_budget_s=0.2, small=LONG)
    try:
        e.search(notes, "cat 7", mode="hybrid")  # its vectors stuck in a batch
        LazyEngine([tmp_path], engine=e, say=said.append).close_within(0.05)
    finally:
        model.gate.set()
        e.close()
    [busy] = said
    assert Lang.RU.word(busy).startswith("индекс ещё занят (идёт индексация или папка")
    assert Lang.EN.word(busy).startswith("an index is still busy (indexing, or a folder")


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (None, "не применяется: вместе с файлами исключений над ним он ввёл бы в силу больше"),
        ("en", "is not applied: with the ignore files above it, it would put more than"),
    ],
)
def test_the_engines_log_lines_are_in_the_users_language(
    tmp_path: Path, lang: str | None, said: str
) -> None:
    """What the engine logs reaches stderr worded like every other text (it was English
    under the Russian default, through Python's last-resort handler)."""
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat\n"})
    (notes / ".gitignore").write_text("".join(f"*x{i}*y*\n" for i in range(600)))
    env = {k: v for k, v in os.environ.items() if k != "MEMO_LANG"}
    if lang is not None:
        env["MEMO_LANG"] = lang
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "search", str(notes), "cat", "--mode", "lex"],
        capture_output=True, text=True, env=env, timeout=HANG_S,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    [line] = [x for x in run.stderr.splitlines() if ".gitignore" in x]
    assert line.startswith(f"memo: {str(notes / '.gitignore')!r} ") and said in line, line
    assert "a.md" in run.stdout
