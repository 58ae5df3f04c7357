"""What a start would otherwise compute again for the same model files (their digest: 0.1 s
for 72 MB; where the model puts nonsense: 64 queries), kept in memo's cache folder.

Anyone who can write that folder can put anything in the file, so it is read as a foreign
file (`foreign`: never blocking, a regular file only, at most FACTS_LIMIT bytes), and a
fact is used only when the caller's check says it can be one; anything else is as if
nothing were kept (computed again, and kept right), said once in the log. It is written
whole by a rename, from a file of a fresh name created only if nothing is there.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from memo_core import settings
from memo_core.messages import Message
from memo_core.model import foreign

FACTS_FILE = "model-facts.json"
KINDS = ("digests", "centroids")
FACTS_KEPT = 8  # models remembered per kind, the latest
# 8 centroids of 512 floats and 8 digests take 100 KB; forty times that is no cache memo
# wrote.
FACTS_LIMIT = 4 << 20

log = logging.getLogger("memo")


def fact(kind: str, key: str, usable: Callable[[Any], bool]) -> Any:
    """The fact of `kind` kept under `key` when `usable` says it can be one; else None."""
    entries = _facts().get(kind)
    value = entries.get(key) if isinstance(entries, dict) else None
    if value is None or usable(value):
        return value
    _ignored(Message("log.fact_unlike", path=settings.cache_dir() / FACTS_FILE, kind=kind, key=key))
    return None


def keep_fact(kind: str, key: str, value: Any) -> None:
    """Remember one fact (the FACTS_KEPT latest of its kind), written whole by a rename so
    a reader never sees half; a cache that cannot be written is only a slower start."""
    facts = {k: v for k, v in _facts().items() if k in KINDS and isinstance(v, dict)}
    entries = facts.get(kind, {})
    entries.pop(key, None)
    entries[key] = value
    facts[kind] = dict(list(entries.items())[-FACTS_KEPT:])
    folder = settings.cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # mkstemp: a random name, opened O_EXCL | O_NOFOLLOW, so nothing planted at a name
        # memo would pick (a symlink to another file, a FIFO) is followed or written.
        fd, tmp = tempfile.mkstemp(prefix=f"{FACTS_FILE}.", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(facts, f)
        os.replace(tmp, folder / FACTS_FILE)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def _facts() -> dict[str, Any]:
    """The facts kept: {kind: {key: value}}; none when there are none or they are unusable."""
    path = settings.cache_dir() / FACTS_FILE
    try:
        facts = foreign.read_json(path, FACTS_LIMIT)
    except FileNotFoundError:
        return {}
    except foreign.Refused as e:
        _ignored(e.about(path))
        return {}
    except (OSError, ValueError) as e:
        _ignored(Message("log.file_error", path=path, reason=e))
        return {}
    if isinstance(facts, dict):
        return facts
    _ignored(Message("log.no_json_object", path=path))
    return {}


@lru_cache(maxsize=64)
def _ignored(why: Message) -> None:
    """Say once (the cache remembers it was said) why what is kept is not used."""
    log.warning("memo: %s", Message("log.kept_unused", why=why))
