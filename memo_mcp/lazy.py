"""The server's one Engine, made on first use.

The engine's modules load numpy, SQLite and (on a search) the model, so memo-mcp builds its
Engine when a tool or resource first needs it: `initialize` and `tools/list` never pay for
it, and a client's first answer comes sooner.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from memo_core import SERVER_REFRESH_BUDGET_S, Message, refresh_budget

if TYPE_CHECKING:
    from memo_core import Engine

log = logging.getLogger("memo_mcp")


class LazyEngine:
    """`get()` gives the Engine (made once, for `roots`)."""

    def __init__(
        self,
        roots: Sequence[Path],
        engine: Engine | None = None,
        say: Callable[[object], None] | None = None,
    ) -> None:
        self.roots = list(roots)
        self._engine = engine
        # How the engine's messages reach the user (stderr: stdout is the protocol's): a
        # model install's steps, a close that does not wait; worded in their language.
        self._say = say
        self._listeners: list[Callable[[object], None]] = []
        self._heard = threading.Lock()  # the listeners' (not held while an Engine is made)
        self._lock = threading.Lock()

    @contextmanager
    def listening(self, listener: Callable[[object], None] | None) -> Iterator[None]:
        """While in it, `listener` hears what the engine says too (a model install's steps),
        besides stderr: the client of a call under way."""
        if listener is None:
            yield
            return
        with self._heard:
            self._listeners.append(listener)
        try:
            yield
        finally:
            with self._heard:
                self._listeners.remove(listener)

    def said(self, step: object) -> None:
        """What the engine says (its `log`): on stderr, and to every call listening."""
        if self._say is not None:
            self._say(step)
        with self._heard:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(step)

    def get(self) -> Engine:
        with self._lock:
            if self._engine is None:
                from memo_core import Engine, ModelSource  # the heavy part, on first use

                # A long-lived process: searches wait a bounded time, changes come from the OS.
                self._engine = Engine(
                    models=ModelSource(log=self.said),
                    roots=self.roots,
                    refresh_budget_s=refresh_budget(SERVER_REFRESH_BUDGET_S),
                    notify=True,
                )
            return self._engine

    def close(self) -> None:
        """Close the Engine's indexes, if it was ever made (it stays usable)."""
        if self._engine is not None:
            self._engine.close()

    def close_within(self, seconds: float) -> None:
        """`close()`, waiting at most `seconds`. A call stuck in a dead drive holds its
        index until the kernel lets go; closing then goes on in the background, on a
        daemon thread, which never keeps the process alive."""
        closing = threading.Thread(target=self.close, name="memo-mcp close", daemon=True)
        closing.start()
        closing.join(seconds)
        if closing.is_alive():
            busy = Message("mcp.still_busy")
            if self._say is not None:
                self._say(busy)
            else:
                log.warning("memo-mcp: %s", busy.key)
