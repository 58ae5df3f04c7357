"""End to end on the real default (e5-small and use-m3 as one, as `memo model install`
installs them and .ci/run does) over examples/notes: questions across languages, and nonsense
answered with `ничего не найдено`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE_QUESTIONS, REPO

from memo_core import Searcher
from memo_core.model.embedder import Embedder
from memo_core.model.pair import PairedEmbedder
from memo_core.model.sources import DEFAULT_SOURCE, E5_SMALL_SOURCE, E5_USE_SOURCE, USE_SOURCE

pytestmark = pytest.mark.default_model


@pytest.fixture(scope="module")
def example_searcher(tmp_path_factory: pytest.TempPathFactory, real_default: Embedder):
    notes = tmp_path_factory.mktemp("ex") / "notes"
    shutil.copytree(REPO / "examples" / "notes", notes)
    with Searcher(notes, embedder=real_default) as s:
        s.refresh()  # every vector made first (a search waits 3 s at most)
        yield s


def test_the_default_is_e5_small_and_use_m3(real_default: Embedder) -> None:
    assert DEFAULT_SOURCE is E5_USE_SOURCE and real_default.dim == 384 + 512
    first, second = real_default.model_id.split("+")
    assert first.startswith(E5_SMALL_SOURCE.model_id) and second.startswith(USE_SOURCE.model_id)


@pytest.mark.parametrize("mode", ["hybrid", "vec"])
@pytest.mark.parametrize(("query", "expected"), EXAMPLE_QUESTIONS)
def test_questions_find_the_note_across_languages(example_searcher, query, expected, mode):
    hits = example_searcher.search(query, k=3, mode=mode)
    assert hits[0].relpath == expected, [(h.relpath, h.heading) for h in hits]
    first = hits[0]
    lines = Path(first.path).read_text(encoding="utf-8").split("\n")
    heading_line = lines[first.line - 1]
    assert (
        first.heading.split(" > ")[-1] in heading_line or first.text.split("\n")[0] in heading_line
    )


def test_real_model_vectors(real_model: Embedder) -> None:
    q = real_model.embed(["how to configure a backup"], query=True)[0]
    p = real_model.embed(["Как настроить резервное копирование", "Рецепт борща со свёклой"])
    assert p.shape == (2, real_model.dim)
    assert float(q @ p[0]) > float(q @ p[1]) + 0.02  # e5's cosines run high (.8 unrelated)


@pytest.mark.parametrize("mode", ["hybrid", "vec"])
@pytest.mark.parametrize("query", ["zzqxv плюмбус", "xyzzy frobnicate"])
def test_gibberish_finds_nothing(example_searcher, query: str, mode: str) -> None:
    model = example_searcher.engine.models.get()
    assert isinstance(model, PairedEmbedder)
    assert model.looks_like_nonsense(model.embed([query], query=True)[0])
    assert list(example_searcher.search(query, mode=mode)) == []
