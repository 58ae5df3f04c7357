"""ModelSource: asking whether a model is there never installs it and never waits for an
install; `get` installs once, however many callers ask at once."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from memo_core import ModelSource, ModelUnavailableError
from memo_core.model.install import default_model_dir


@pytest.fixture
def default_setup(monkeypatch: pytest.MonkeyPatch) -> Path:
    """No MEMO_MODEL_DIR: the default model, not installed in this test's cache."""
    monkeypatch.delenv("MEMO_MODEL_DIR")
    assert not default_model_dir().exists()
    return default_model_dir()


class Installer:
    """Installs a tiny model where the default one goes; can be held at a gate."""

    def __init__(self, source: Path, target: Path) -> None:
        self.source, self.target = source, target
        self.calls = 0
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self) -> Path:
        self.calls += 1
        self.entered.set()
        assert self.gate.wait(30)
        shutil.copytree(self.source, self.target)
        return self.target


def test_available_never_installs(default_setup: Path, tiny_model_dir: Path) -> None:
    installer = Installer(tiny_model_dir, default_setup)
    models = ModelSource(installer=installer)
    assert models.available() is False
    with pytest.raises(ModelUnavailableError, match="memo model install"):
        models.get(install=False)
    assert installer.calls == 0 and not default_setup.exists()


def test_get_installs_once_for_callers_at_once(default_setup: Path, tiny_model_dir: Path) -> None:
    installer = Installer(tiny_model_dir, default_setup)
    installer.gate.clear()
    models = ModelSource(installer=installer)
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(models.get())) for _ in range(3)]
    for t in threads:
        t.start()
    assert installer.entered.wait(10)
    # While it installs, asking costs nothing and says why there is no model yet.
    with pytest.raises(ModelUnavailableError, match="being installed"):
        models.get(install=False)
    assert models.available() is False
    installer.gate.set()
    for t in threads:
        t.join(30)
    assert installer.calls == 1
    assert len(got) == 3 and got[0] is got[1] is got[2]
    assert models.available() is True


def test_disabled_and_fixed_sources(tiny_embedder) -> None:
    assert ModelSource(enabled=False).available() is False
    fixed = ModelSource(tiny_embedder)
    assert fixed.loaded and fixed.get() is tiny_embedder
