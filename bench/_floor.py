"""What needs no engine, so any version of memo can be measured with it: the bare walk
(the floor of a refresh) and the `initialize` request of a cold start."""

from __future__ import annotations

import os

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "memo-bench", "version": "0"},
    },
}


def walk_stat(root: str) -> int:
    """The floor of a refresh: every non-hidden *.md under root, found and stat'ed."""
    n = 0
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                if e.name.startswith("."):
                    continue
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.name.lower().endswith(".md"):
                    e.stat(follow_symlinks=False)
                    n += 1
    return n
