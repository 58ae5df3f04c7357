"""memo_core.searcher: `Searcher`, one path bound to an Engine: the Engine's own calls with
the path resolved once, and the engine closed only where the Searcher built it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memo_core.engine import Engine
from memo_core.errors import PathNotFoundError
from memo_core.model.embedder import Embedder
from memo_core.model.loading import ModelSource
from memo_core.searcher import Searcher
from memo_core.tuning import Tuning
from memo_core.values import NoticeKind


def test_search_on_the_bound_path(notes: Path, tiny_embedder: Embedder) -> None:
    with Searcher(notes, embedder=tiny_embedder) as s:
        hits = s.search("borscht soup", k=2, mode="lex")
        assert hits.mode == "lex" and len(hits) <= 2
        assert hits[0].relpath == "cooking/soup.md"
        assert hits[0].collection == str(notes)
        assert s.search("borscht soup", 1, "vec")[0].found_by == ("vec",)


def test_refresh_status_and_reindex_are_the_engines(notes: Path) -> None:
    with Searcher(notes, use_model=False) as s:
        assert s.status()[0].files == 0  # nothing indexed yet
        stats = s.refresh()
        assert stats.added == 3
        assert s.refresh().added == 0  # indexed already
        [status] = s.status()
        assert (status.root, status.files, status.model) == (str(notes), 3, None)
        assert s.reindex() == 3


def test_the_path_is_resolved_once(
    tmp_path: Path, notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = tmp_path / "link"
    link.symlink_to(notes)
    monkeypatch.chdir(tmp_path)
    with Searcher("link", use_model=False) as s:
        assert s.path == notes.resolve()
        assert [c.root for c in s.collections] == [notes.resolve()]
    monkeypatch.setenv("HOME", str(tmp_path))
    with Searcher("~/notes", use_model=False) as s:
        assert s.path == notes.resolve()


@pytest.mark.parametrize(
    ("where", "key"),
    [("missing", "path.missing"), ("file.md", "path.not_dir"), (" ", "path.empty")],
)
def test_a_path_that_is_no_folder_is_refused(tmp_path: Path, where: str, key: str) -> None:
    (tmp_path / "file.md").write_text("# A note\n")
    path = where if where.isspace() else tmp_path / where
    with pytest.raises(PathNotFoundError) as e:
        Searcher(path, use_model=False)
    assert e.value.message.key == key


def test_a_searcher_builds_its_engine_from_its_arguments(
    notes: Path, tiny_embedder: Embedder
) -> None:
    tuning = Tuning(proximity_weight=0.0)
    with Searcher(notes, embedder=tiny_embedder, tuning=tuning) as s:
        assert s.engine.tuning is tuning
        assert s.engine.models.get() is tiny_embedder
    with Searcher(notes, use_model=False) as s:
        assert s.engine.models.enabled is False
        # No model: hybrid answers from words, and says so.
        hits = s.search("borscht soup")
        assert hits[0].relpath == "cooking/soup.md" and hits[0].found_by == ("lex",)
        assert hits.mode == "lex"
        assert [n.kind for n in hits.notices] == [NoticeKind.MODEL_UNAVAILABLE]


def test_an_owned_engine_is_closed_with_the_searcher(notes: Path) -> None:
    s = Searcher(notes, use_model=False)
    before = s.collections[0]
    assert s.collections[0] is before  # one object per folder while open
    s.close()
    # A closed engine forgot its collections: asked again, it makes a new one.
    assert s.engine.collections(notes)[0] is not before
    s.engine.close()


def test_a_given_engine_is_left_open(notes: Path, tiny_embedder: Embedder) -> None:
    with Engine(models=ModelSource(tiny_embedder)) as engine:
        with Searcher(notes, engine=engine, tuning=Tuning(dense_weight=0.5)) as s:
            assert s.engine is engine
            assert s.engine.tuning is not None and s.engine.tuning.dense_weight != 0.5
            held = s.collections[0]
            assert s.search("borscht soup", mode="lex")[0].relpath == "cooking/soup.md"
        assert engine.collections(notes)[0] is held  # still the engine's, still open
        assert engine.search(notes, "borscht soup", mode="lex")[0].relpath == "cooking/soup.md"
