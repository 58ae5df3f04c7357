"""End to end on the real default model (USE multilingual) over examples/notes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE_QUESTIONS, REPO

from memo_core import Searcher
from memo_core.model.embedder import Embedder

pytestmark = pytest.mark.default_model


@pytest.fixture(scope="module")
def example_searcher(tmp_path_factory: pytest.TempPathFactory, real_model: Embedder):
    notes = tmp_path_factory.mktemp("ex") / "notes"
    shutil.copytree(REPO / "examples" / "notes", notes)
    with Searcher(notes, embedder=real_model) as s:
        yield s


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
    v = real_model.embed(["как настроить бэкап", "how to configure backup", "рецепт борща"])
    assert v.shape == (3, 512)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.3


@pytest.mark.parametrize("mode", ["hybrid", "vec"])
@pytest.mark.parametrize("query", ["zzqxv плюмбус", "xyzzy frobnicate"])
def test_gibberish_finds_nothing(example_searcher, query: str, mode: str) -> None:
    model = example_searcher.engine.models.get()
    assert (model.min_similarity, model.min_margin) == (None, -0.15)
    assert list(example_searcher.search(query, mode=mode)) == []
