"""The real use-m3 (Universal Sentence Encoder Multilingual), memo's default until e5-small
was fast enough and now one command away (`memo model install use-m3`, `MEMO_MODEL=use-m3`;
.ci/run installs it): searches across languages over examples/notes, nonsense silenced."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE_QUESTIONS, REPO

from memo_core import Searcher
from memo_core.model.embedder import Embedder
from memo_core.model.install import is_installed
from memo_core.model.onnx_embedder import load_model_dir
from memo_core.model.sources import USE_SOURCE, model_dir_of

pytestmark = pytest.mark.use_model
# Resolved before conftest's fixtures point MEMO_CACHE_DIR at a test folder.
USE_DIR = Path(os.environ.get("MEMO_TEST_USE_MODEL_DIR") or model_dir_of(USE_SOURCE))


@pytest.fixture(scope="module")
def use() -> Embedder:
    if not is_installed(USE_DIR, USE_SOURCE):
        pytest.skip(f"use-m3 is not installed at {USE_DIR}: `memo model install use-m3`")
    return load_model_dir(USE_DIR)


@pytest.fixture(scope="module")
def example_searcher(tmp_path_factory: pytest.TempPathFactory, use: Embedder):
    notes = tmp_path_factory.mktemp("ex") / "notes"
    shutil.copytree(REPO / "examples" / "notes", notes)
    with Searcher(notes, embedder=use) as s:
        yield s


@pytest.mark.parametrize("mode", ["hybrid", "vec"])
@pytest.mark.parametrize(("query", "expected"), EXAMPLE_QUESTIONS)
def test_questions_find_the_note_across_languages(example_searcher, query, expected, mode):
    hits = example_searcher.search(query, k=3, mode=mode)
    assert hits[0].relpath == expected, [(h.relpath, h.heading) for h in hits]


def test_use_vectors(use: Embedder) -> None:
    v = use.embed(["как настроить бэкап", "how to configure backup", "рецепт борща"])
    assert v.shape == (3, 512)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.3


@pytest.mark.parametrize("mode", ["hybrid", "vec"])
@pytest.mark.parametrize("query", ["zzqxv плюмбус", "xyzzy frobnicate"])
def test_gibberish_finds_nothing(example_searcher, query: str, mode: str) -> None:
    model = example_searcher.engine.models.get()
    assert (model.min_similarity, model.min_margin) == (None, -0.15)
    assert list(example_searcher.search(query, mode=mode)) == []
