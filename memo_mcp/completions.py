"""Completions (`completion/complete`) for the arguments that name notes.

- a prompt's `path` and the note template's `collection`: the indexed collections under the
  allowed roots (what `memo://collections` lists);
- the note template's `path`: the notes of the collection the client has already chosen.

A value matches when it starts with what was typed or contains it (case-insensitive).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)

from memo_core import MemoError, confine, open_collection, scan, shown

from .prompts import PATH_PROMPTS
from .resources import NOTE_TEMPLATE, CollectionCache

MAX_VALUES = 100  # the most one completion answer may carry


def matching(candidates: Sequence[str], typed: str) -> Completion:
    needle = typed.casefold()
    hits = [c for c in candidates if c.startswith(typed)]
    hits += [c for c in candidates if needle in c.casefold() and not c.startswith(typed)]
    return Completion(values=hits[:MAX_VALUES], total=len(hits), has_more=len(hits) > MAX_VALUES)


def sendable(name: str) -> bool:
    """Whether a name can be offered as it is: text (not raw bytes), one printable line.
    Other names (bytes that are not UTF-8, control characters) cannot be typed back."""
    return shown(name) == name


def note_paths(collection: str, roots: Sequence[Path]) -> list[str]:
    """The notes of a collection, relative to it; none when it is not a folder in the roots."""
    try:
        with open_collection(confine(collection, list(roots))) as root:
            return sorted(p for p in scan(root).files if sendable(p))
    except MemoError:
        return []


def register_completions(
    server: MCPServer, roots: Sequence[Path], collections: CollectionCache
) -> None:
    def folders() -> list[str]:
        return [str(c) for c in collections.get() if sendable(str(c))]

    @server.completion()
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        if isinstance(ref, PromptReference):
            if ref.name in PATH_PROMPTS and argument.name == "path":
                return matching(await anyio.to_thread.run_sync(folders), argument.value)
            return None
        if ref.uri != NOTE_TEMPLATE:
            return None
        if argument.name == "collection":
            return matching(await anyio.to_thread.run_sync(folders), argument.value)
        if argument.name == "path":
            chosen = (context.arguments or {}).get("collection") if context else None
            if not chosen:
                return None
            found = await anyio.to_thread.run_sync(note_paths, chosen, roots)
            return matching(found, argument.value)
        return None
