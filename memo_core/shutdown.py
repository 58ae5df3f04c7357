"""How a memo process ends once its engine is closed."""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn


def end_process(code: int) -> NoReturn:
    """End the process with `code` without the interpreter's finalization.

    A refresh stuck in a batch or a model still loading is left on its daemon thread
    (`Engine.close` waits a bounded time), possibly inside onnxruntime: finalizing would
    destroy what that thread uses, and the C++ runtime aborts with `terminate called
    without an active exception`. The engine is closed by then (its indexes are committed
    or left to SQLite's recovery, as after a kill): flush what was written and go.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed: nothing to flush to
            pass
    os._exit(code)
