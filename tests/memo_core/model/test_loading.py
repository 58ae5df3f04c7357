"""memo_core.model.loading: `ModelSource`, one model per engine, loaded (or installed) once."""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path

import pytest
from conftest import HANG_S

from memo_core.errors import ModelInstallError, ModelUnavailableError
from memo_core.model.embedder import Embedder
from memo_core.model.loading import ModelSource
from memo_core.model.onnx_embedder import OnnxEmbedder
from memo_core.model.sources import (
    DEFAULT_SOURCE,
    USE_SOURCE,
    chosen_source,
    install_command,
    model_dir_of,
    model_dirs_of,
)


def _key(e: pytest.ExceptionInfo[ModelUnavailableError]) -> str:
    return e.value.message.key


@pytest.fixture
def use_m3(monkeypatch: pytest.MonkeyPatch) -> Path:
    """MEMO_MODEL names one model (not the default pair); where it would be installed."""
    monkeypatch.delenv("MEMO_MODEL_DIR")
    monkeypatch.setenv("MEMO_MODEL", "use-m3")
    return model_dir_of(USE_SOURCE)


@pytest.fixture
def default_pair(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Neither MEMO_MODEL nor MEMO_MODEL_DIR: the default pair, two folders; its first's."""
    monkeypatch.delenv("MEMO_MODEL_DIR")
    monkeypatch.delenv("MEMO_MODEL", raising=False)
    return model_dir_of(DEFAULT_SOURCE)


# The chosen source either way: one model, or the default pair (two folders to install).
CHOSEN = ["use_m3", "default_pair"]


class Installer:
    """Installs the tiny model where the source looks for its model (once `gate` is set)."""

    def __init__(self, tiny: Path, target: Path, fail: bool = False) -> None:
        self.tiny, self.target, self.fail = tiny, target, fail
        self.calls = 0
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()

    def __call__(self) -> Path:
        self.calls += 1
        self.started.set()
        assert self.gate.wait(HANG_S)
        if self.fail:
            raise ModelInstallError("install.one_wheel", name="x")
        for folder in model_dirs_of(chosen_source()):  # a pair: both its models
            shutil.copytree(self.tiny, folder)
        return self.target


def test_a_given_embedder_is_the_model(tiny_embedder: Embedder) -> None:
    ms = ModelSource(tiny_embedder)
    assert ms.loaded
    assert ms.get() is tiny_embedder and ms.get(install=False) is tiny_embedder


def test_a_disabled_source_has_no_model(tiny_embedder: Embedder) -> None:
    ms = ModelSource(tiny_embedder, enabled=False)
    assert ms.get() is tiny_embedder  # a given embedder is used as it is
    with pytest.raises(ModelUnavailableError) as e:
        ModelSource(enabled=False).get()
    assert _key(e) == "model.disabled"


def test_memo_model_dir_is_loaded_once(tiny_model_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMO_MODEL_DIR", str(tiny_model_dir))
    ms = ModelSource()
    assert ms.custom and ms.model_dir == tiny_model_dir and not ms.loaded
    model = ms.get()
    assert isinstance(model, OnnxEmbedder) and model.path == tiny_model_dir
    assert ms.loaded and ms.get() is model


def test_a_model_dir_given_wins_over_memo_model_dir(tiny_model_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMO_MODEL_DIR", "/nowhere")
    ms = ModelSource(model_dir=tiny_model_dir)
    assert ms.custom and ms.get().path == tiny_model_dir


def test_the_default_is_the_pair_in_the_cache(monkeypatch) -> None:
    monkeypatch.delenv("MEMO_MODEL_DIR")
    monkeypatch.delenv("MEMO_MODEL", raising=False)
    ms = ModelSource()
    assert not ms.custom and ms.source is DEFAULT_SOURCE
    assert ms.model_dir == model_dir_of(DEFAULT_SOURCE)


@pytest.mark.parametrize("chosen", CHOSEN)
def test_a_model_not_installed_is_said_with_the_command_and_not_installed(
    chosen: str, request: pytest.FixtureRequest
) -> None:
    target: Path = request.getfixturevalue(chosen)
    never = Installer(Path("/nowhere"), target)
    for ms, kwargs in [
        (ModelSource(installer=never), {"install": False}),
        (ModelSource(installer=never, auto_install=False), {}),
    ]:
        with pytest.raises(ModelUnavailableError) as e:
            ms.get(**kwargs)
        assert _key(e) == "model.not_installed"
        assert e.value.message.params["command"] == install_command(chosen_source())
        assert not ms.loaded
    assert never.calls == 0 and not target.exists()


def test_a_missing_model_is_installed_once_then_loaded(tiny_model_dir: Path, use_m3: Path) -> None:
    installer = Installer(tiny_model_dir, use_m3)
    ms = ModelSource(installer=installer)
    model = ms.get()
    assert isinstance(model, OnnxEmbedder) and model.path == use_m3
    assert ms.get() is model and ms.get(install=False) is model
    assert installer.calls == 1


@pytest.mark.parametrize("chosen", CHOSEN)
def test_callers_at_once_share_one_install(
    tiny_model_dir: Path, chosen: str, request: pytest.FixtureRequest
) -> None:
    installer = Installer(tiny_model_dir, request.getfixturevalue(chosen))
    installer.gate.clear()
    ms = ModelSource(installer=installer)
    got: list[Embedder] = []
    threads = [threading.Thread(target=lambda: got.append(ms.get())) for _ in range(3)]
    for t in threads:
        t.start()
    assert installer.started.wait(HANG_S)
    with pytest.raises(ModelUnavailableError) as e:  # one that may not install is told so
        ms.get(install=False)
    assert _key(e) == "model.installing"
    installer.gate.set()
    for t in threads:
        t.join(HANG_S)
    assert len(got) == 3 and all(m is got[0] for m in got)
    assert installer.calls == 1
    assert ms.get(install=False) is got[0]  # installed: asking without installing has it


def test_a_failed_install_is_said_and_not_tried_again_at_once(use_m3: Path) -> None:
    installer = Installer(Path("/nowhere"), use_m3, fail=True)
    ms = ModelSource(installer=installer)
    for _ in range(2):
        with pytest.raises(ModelUnavailableError) as e:
            ms.get()
        assert _key(e) == "install.one_wheel"  # the install's own reason
    assert installer.calls == 1


def test_a_search_installs_in_the_background_and_answers_meanwhile(
    tiny_model_dir: Path, use_m3: Path
) -> None:
    installer = Installer(tiny_model_dir, use_m3)
    installer.gate.clear()
    ms = ModelSource(installer=installer)
    assert not ms.installing and ms.wait_installed(0)
    with pytest.raises(ModelUnavailableError) as e:
        ms.get(background=True)
    assert _key(e) == "model.installing"
    assert installer.started.wait(HANG_S)
    assert ms.installing
    with pytest.raises(ModelUnavailableError) as e:  # asked again: the same install
        ms.get(background=True)
    assert _key(e) == "model.installing"
    installer.gate.set()
    assert ms.wait_installed(HANG_S)
    assert not ms.installing
    assert ms.get(install=False).path == use_m3
    assert installer.calls == 1


def test_a_background_install_that_fails_is_logged_and_said_next(
    use_m3: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="memo")
    ms = ModelSource(installer=Installer(Path("/nowhere"), use_m3, fail=True))
    with pytest.raises(ModelUnavailableError):
        ms.get(background=True)
    assert ms.wait_installed(HANG_S)
    with pytest.raises(ModelUnavailableError) as e:
        ms.get()
    assert _key(e) == "install.one_wheel"
    assert [r.args[0].key for r in caplog.records if r.name == "memo"] == ["log.install_failed"]


def test_an_unknown_memo_model_is_said_on_use(monkeypatch, tiny_model_dir: Path) -> None:
    monkeypatch.delenv("MEMO_MODEL_DIR")
    monkeypatch.setenv("MEMO_MODEL", "no-such")
    ms = ModelSource()  # made: a misspelt setting does not stop a front end starting
    assert ms.source is DEFAULT_SOURCE
    with pytest.raises(ModelUnavailableError) as e:
        ms.get()
    assert _key(e) == "model.unknown"
    # ... unless a folder of the user's own is used: then the name does not matter
    assert ModelSource(model_dir=tiny_model_dir).get().path == tiny_model_dir


def test_a_broken_folder_is_said_and_not_loaded_again_at_once(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "model"
    ms = ModelSource(model_dir=folder)
    with pytest.raises(ModelUnavailableError) as e:
        ms.get()
    assert _key(e) == "modeldir.broken"
    shutil.copytree(tiny_model_dir, folder)  # put right: tried again only after a while
    with pytest.raises(ModelUnavailableError) as again:
        ms.get()
    assert again.value is e.value
    assert ModelSource(model_dir=folder).get().dim  # a new source loads it at once


def test_a_model_may_still_be_loading_when_not_asked_ready(tiny_model_dir: Path) -> None:
    ms = ModelSource(model_dir=tiny_model_dir)
    model = ms.get(ready=False)
    assert ms.loaded and model.dim == 16  # the folder names it: known before the graph
    model.ready()
    assert model.embed(["cat"]).shape == (1, 16)
    assert ms.get() is model


def test_a_graph_that_fails_loading_is_dropped_and_said(tiny_model_dir: Path, tmp_path) -> None:
    folder = Path(shutil.copytree(tiny_model_dir, tmp_path / "model"))
    (folder / "model.onnx").write_bytes(b"not a graph")
    ms = ModelSource(model_dir=folder)
    model = ms.get(ready=False)  # returns while the graph loads
    with pytest.raises(ModelUnavailableError) as e:
        ms.get()
    assert _key(e) == "modeldir.broken"
    assert not ms.loaded  # not kept: loaded again after a while
    assert not model.usable()
    for ready in (True, False):  # meanwhile the failure is remembered, not loaded again
        with pytest.raises(ModelUnavailableError) as again:
            ms.get(ready=ready)
        assert _key(again) == "modeldir.broken"
