"""Models in a search and an index (`ModelSource` itself: tests/memo_core/model/test_loading.py):
the words walked while a graph loads, a model waited for only where the index holds no
vectors of it, a graph that fails leaving the words and saying why, a model folder setting
that lies."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import onnxruntime
import pytest
from tinymodels import make_tiny_model_dir

from memo_core import Engine, ModelSource, ModelUnavailableError, NoticeKind, Progress


def broken_model(tmp_path: Path) -> Path:
    """A model folder whose graph onnxruntime cannot load (the rest of it sound)."""
    broken = tmp_path / "broken"
    shutil.copytree(make_tiny_model_dir(tmp_path / "tiny"), broken)
    (broken / "model.onnx").write_bytes(b"not an onnx file")
    return broken


def backup_note(tmp_path: Path) -> Path:
    """A folder of one note."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "backup.md").write_text("# Backup\n\nrestic backup of the server\n", "utf-8")
    return notes


def test_a_search_walks_while_the_model_loads(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a folder whose index holds the model's vectors, a search's refresh does not wait
    for the model's graph: here the graph loads only once the refresh has indexed the words
    of a new note (were they one after the other, the load would wait for a refresh that
    waits for it, and fail)."""
    notes = backup_note(tmp_path)
    with Engine(models=ModelSource(model_dir=tiny_model_dir)) as engine:
        engine.refresh(notes)  # the model's vectors
    (notes / "soup.md").write_text("# Soup\n\nborscht recipe\n", "utf-8")
    indexed = threading.Event()
    real = onnxruntime.InferenceSession

    def after_words(*args: object, **kwargs: object) -> object:  # each session onnxruntime makes
        assert indexed.wait(15), "the graph was loaded before the refresh"
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", after_words)

    def progress(p: Progress) -> None:
        if p.phase == "index" and p.files_done:
            indexed.set()

    with Engine(models=ModelSource(model_dir=tiny_model_dir)) as engine:
        results = engine.search(notes, "borscht recipe", mode="hybrid", progress=progress)
        assert results.mode == "hybrid" and not results.notices
        assert results[0].relpath == "soup.md"
        assert engine.status(notes)[0].chunks_without_vectors == 0  # its vectors came too


def test_a_model_is_waited_for_where_the_index_holds_no_vectors_of_it(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """A graph that fails on its thread never replaces the vectors of the model the index
    holds, and a new index is not made for it: the words answer, and once a working model
    is back no rebuild is needed."""
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model_dir, broken)
    (broken / "model.onnx").write_bytes(b"not an onnx file")
    notes = backup_note(tmp_path)
    with Engine(models=ModelSource(model_dir=tiny_model_dir)) as engine:
        engine.refresh(notes)
        held = engine.status(notes)[0]
    with Engine(models=ModelSource(model_dir=broken)) as engine:
        results = engine.search(notes, "restic backup", mode="hybrid")
        assert results.mode == "lex" and results[0].relpath == "backup.md"
    with Engine(models=ModelSource(model_dir=tiny_model_dir)) as engine:
        results = engine.search(notes, "restic backup", mode="hybrid")
        assert results.mode == "hybrid" and not results.notices  # no rebuild said
        assert engine.status(notes)[0].model == held.model


def test_memo_index_with_a_graph_that_fails_indexes_the_words_and_says_why(
    tmp_path: Path,
) -> None:
    """`Engine.refresh` indexes the words while the graph loads; a graph that fails then
    makes no vectors, and the refresh says why (it said so when it loaded first, too)."""
    broken, notes = broken_model(tmp_path), backup_note(tmp_path)
    with Engine(models=ModelSource(model_dir=broken)) as engine:
        stats = engine.refresh(notes)
        [st] = engine.status(notes)
    assert stats.added == 1 and stats.chunks_vectored == 0
    assert [n.kind for n in stats.notices] == [NoticeKind.MODEL_UNAVAILABLE]
    assert (st.files, st.chunks_without_vectors, st.model) == (1, 1, None)


def test_a_search_with_a_graph_that_fails_while_it_refreshes_answers_by_words(
    tmp_path: Path,
) -> None:
    """The graph fails on its thread while the search indexes new notes: the words are
    indexed and answer, and the answer says the model is not there (no vectors written)."""
    broken, notes = broken_model(tmp_path), backup_note(tmp_path)
    with Engine(models=ModelSource(model_dir=broken)) as engine:
        results = engine.search(notes, "restic backup", mode="hybrid")
        assert results.mode == "lex" and results[0].relpath == "backup.md"
        assert any(n.kind == NoticeKind.MODEL_UNAVAILABLE for n in results.notices)
        with pytest.raises(ModelUnavailableError):
            engine.search(notes, "restic backup", mode="vec")
        again = engine.search(notes, "restic backup", mode="hybrid")
        assert again.mode == "lex" and again[0].relpath == "backup.md"


@pytest.mark.parametrize(
    "value", ["/tmp/" + "a" * 6000, "~no-such-user-here/model"], ids=["too long", "no such user"]
)
def test_a_model_folder_setting_that_lies_leaves_the_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """MEMO_MODEL_DIR naming a folder no one can have (a name the OS refuses, a home no user
    has): a hybrid search answers by words and says why, once, never a traceback."""
    monkeypatch.setenv("MEMO_MODEL_DIR", value)
    notes = backup_note(tmp_path)
    with Engine() as engine:
        results = engine.search(notes, "restic backup", mode="hybrid")
    assert results.mode == "lex" and results[0].relpath == "backup.md"
    [n] = results.notices
    assert n.kind is NoticeKind.MODEL_UNAVAILABLE
