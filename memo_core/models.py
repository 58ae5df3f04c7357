"""Which embedding model memo uses, loaded once per process and shared by all collections."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from .embedder import Embedder, load_model_dir
from .errors import MemoError, ModelUnavailableError
from .model_install import install_default_model, is_installed, resolve_model_dir

# After a failed load, wait this long before trying again (a user may install meanwhile).
RETRY_AFTER_S = 30.0

_lock = threading.Lock()
_loaded: dict[Path, Embedder] = {}
_failed: dict[Path, tuple[float, ModelUnavailableError]] = {}


def get_embedder(*, auto_install: bool = True) -> Embedder:
    """The model of `MEMO_MODEL_DIR`, else the default model (installed on first need)."""
    model_dir = resolve_model_dir()
    with _lock:
        if model_dir in _loaded:
            return _loaded[model_dir]
        failure = _failed.get(model_dir)
        if failure and time.monotonic() - failure[0] < RETRY_AFTER_S:
            raise failure[1]
        try:
            if not os.environ.get("MEMO_MODEL_DIR") and not is_installed(model_dir):
                if not auto_install:
                    raise ModelUnavailableError(
                        "the default model is not installed; run `memo model install`"
                    )
                install_default_model()
            embedder = load_model_dir(model_dir)
        except MemoError as e:
            err = e if isinstance(e, ModelUnavailableError) else ModelUnavailableError(str(e))
            _failed[model_dir] = (time.monotonic(), err)
            raise err from e
        _failed.pop(model_dir, None)
        _loaded[model_dir] = embedder
        return embedder
