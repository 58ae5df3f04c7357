"""Where an Engine gets its embedding model: loaded once, shared by all its collections.

A `ModelSource` is built by each front end and passed to the Engine (no process globals).
Asking for a model without installing (`get(install=False)`) never installs anything and
never waits for an install; only `get(install=True)` may fetch the default model (with
pip, minutes at worst), and a lock held meanwhile is the install's own, not the one every
caller passes.
A search asks with `background=True`: the install then runs on a thread of its own while
the search answers by words (`installing`, `wait_installed`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NoReturn

from memo_core import settings
from memo_core.errors import MemoError, ModelInstallError, ModelUnavailableError
from memo_core.messages import Message
from memo_core.model.embedder import Embedder
from memo_core.model.sources import (
    DEFAULT_SOURCE,
    PairSource,
    Source,
    chosen_source,
    install_command,
    model_dir_of,
)

# After a failed load, wait this long before trying again (a user may install meanwhile).
RETRY_AFTER_S = 30.0

Installer = Callable[[], Path]

log = logging.getLogger("memo")


class ModelSource:
    """The model of `MEMO_MODEL_DIR` (read when built), else the one `MEMO_MODEL` names,
    else the default (a pair: both its models as one).

    `embedder`: use this model and no other (tests, benchmarks); `enabled=False`: no model
    at all (words only). `auto_install`: whether `get()` installs the default model when it
    is missing; `installer` does that (default: `install_default_model`).
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        enabled: bool = True,
        auto_install: bool = True,
        model_dir: Path | None = None,
        installer: Installer | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        env = settings.model_dir()
        self.custom = model_dir is not None or env is not None
        # MEMO_MODEL names the registry model; a name memo does not know is said on use.
        self._bad_name: ModelUnavailableError | None = None
        try:
            self.source = chosen_source()
        except ModelInstallError as e:
            self._bad_name = ModelUnavailableError(e.message)
            self.source = DEFAULT_SOURCE
        self.model_dir = model_dir or env or model_dir_of(self.source)
        self.enabled = enabled
        self.auto_install = auto_install
        # `log`: how an install it starts reports each step (a front end words it for its
        # reader); without one, on the `memo` logger.
        self._installer = installer or partial(_install_default, log)
        self._embedder = embedder
        self._installed = False  # by this source's installer, in this process
        self._failure: tuple[float, ModelUnavailableError] | None = None
        self._state = threading.Lock()  # held only for quick reads and writes of the above
        self._load_lock = threading.Lock()  # one load at a time (seconds)
        self._install_lock = threading.Lock()  # one install at a time (minutes)
        self._installer_thread: threading.Thread | None = None  # a search's, in the background

    @property
    def loaded(self) -> bool:
        return self._embedder is not None

    @property
    def installing(self) -> bool:
        """Whether an install started by `get(background=True)` is under way."""
        thread = self._installer_thread
        return thread is not None and thread.is_alive()

    def wait_installed(self, timeout: float | None = None) -> bool:
        """Wait at most `timeout` seconds (None: until it ends) for a background install;
        whether none is under way any more (it ended, well or not: `get` says which)."""
        thread = self._installer_thread
        if thread is not None:
            thread.join(None if timeout is None else max(0.0, timeout))
        return not self.installing

    def get(
        self, *, install: bool | None = None, ready: bool = True, background: bool = False
    ) -> Embedder:
        """The model; ModelUnavailableError says why there is none. `install` (default:
        `auto_install`) lets a missing default model be installed first; with `background`
        on a thread of its own, while this call raises `model.installing`. `ready=False`
        (a search): the model may still be loading its graph on a thread (see
        `load_model_dir`); `get()` again, or its first embedding, waits for it. Otherwise a
        model is loaded on the calling thread, whole."""
        embedder = self._embedder
        if embedder is None:
            embedder = self._load(install, ready, background)
        if ready:
            try:
                embedder.ready()
            except ModelUnavailableError as e:
                with self._state:
                    if self._embedder is embedder:
                        self._embedder = None  # a broken graph: loaded again after a while
                self._fail(e)
        return embedder

    def _load(self, install: bool | None, ready: bool, background: bool) -> Embedder:
        if not self.enabled:
            raise ModelUnavailableError("model.disabled")
        if self._bad_name is not None and not self.custom:
            raise self._bad_name
        with self._state:
            failure = self._failure
        if failure and time.monotonic() - failure[0] < RETRY_AFTER_S:
            raise failure[1]
        if (
            not self.custom
            and not self._installed
            and not _is_installed(self.model_dir, self.source)
        ):
            allowed = self.auto_install if install is None else install
            if allowed and background:
                self._install_behind()
            self._install(allowed)
        with self._load_lock:
            if self._embedder is None:
                try:
                    self._embedder = self._loaded(ready)
                except ModelUnavailableError as e:
                    self._fail(e)
                with self._state:
                    self._failure = None
            return self._embedder

    def _loaded(self, ready: bool) -> Embedder:
        """The model folder's model, or a pair's two models as one (`model.pair`)."""
        from memo_core.model.onnx_embedder import load_model_dir  # with the first load
        from memo_core.model.pair import paired

        first = load_model_dir(self.model_dir, ready=ready)
        source = self.source
        if self.custom or not isinstance(source, PairSource):
            return first
        # The second model's tenth of the say needs no faster batches: it is loaded lean
        # (one session, small batches), so a server asked while it indexes holds it once.
        second = load_model_dir(model_dir_of(source.second), ready=ready, lean=True)
        return paired(source, first, second)

    def _install(self, allowed: bool) -> None:
        if not allowed:
            busy = self._install_lock.locked()
            if busy:
                raise ModelUnavailableError("model.installing", name=self.source.name)
            raise ModelUnavailableError(
                "model.not_installed", name=self.source.name, command=install_command(self.source)
            )
        with self._install_lock:  # a second caller waits for the same install
            if self._installed or _is_installed(self.model_dir, self.source):
                return
            try:
                self._installer()
            except MemoError as e:
                self._fail(ModelUnavailableError(e.message))
            self._installed = True

    def _install_behind(self) -> NoReturn:
        """Start the install on a thread of its own (unless one runs) and say so."""
        with self._state:
            if not self.installing:
                self._installer_thread = threading.Thread(
                    target=self._install_logged, name="memo-model-install", daemon=True
                )
                self._installer_thread.start()
        raise ModelUnavailableError("model.installing", name=self.source.name)

    def _install_logged(self) -> None:
        try:
            self._install(True)
        except ModelUnavailableError as e:  # kept for the next get(), and said once here
            log.error("memo: %s", Message("log.install_failed", reason=e))

    def _fail(self, err: ModelUnavailableError) -> NoReturn:
        with self._state:
            self._failure = (time.monotonic(), err)
        raise err


# The installer's module (zip files, hashes, a converter) is imported when a model is
# looked for or installed, not when a source is made: a search by words never needs it.


def _install_default(log: Callable[[str], None] | None) -> Path:
    from memo_core.model.install import install_default_model

    return install_default_model(log=log) if log else install_default_model()


def _is_installed(model_dir: Path, source: Source) -> bool:
    from memo_core.model.install import is_installed

    return is_installed(model_dir, source)
