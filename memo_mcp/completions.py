"""Completions (`completion/complete`) for the arguments that name notes.

- a prompt's `path` and the note template's `collection`: the indexed collections under the
  allowed roots (what `memo://collections` lists);
- the note template's `path`: the notes of the collection the client has already chosen.

A value matches when it starts with what was typed or contains it (case-insensitive).
A client asks once per key typed, so each list is kept a few seconds, computed by one walk
at a time in the folder's places (places.py), and waited for at most `WAIT_S`: a folder
too big to list in time (or one that hangs) gets no values now, and its list is ready for
a later key.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)

from memo_core import MemoError, confine, shown

from .lazy import LazyEngine
from .places import FolderSlots, RecentAnswers, as_written
from .prompts import PATH_PROMPTS
from .resources import LISTING, NOTE_TEMPLATE, find_indexed_collections

MAX_VALUES = 100  # the most one completion answer may carry
WAIT_S = 2.0  # the longest a completion waits for a list
TTL_S = 10.0  # how long a list is kept


def matching(candidates: Sequence[str], typed: str) -> Completion:
    needle = typed.casefold()
    hits = [c for c in candidates if c.startswith(typed)]
    hits += [c for c in candidates if needle in c.casefold() and not c.startswith(typed)]
    return Completion(values=hits[:MAX_VALUES], total=len(hits), has_more=len(hits) > MAX_VALUES)


def sendable(name: str) -> bool:
    """Whether a name can be offered as it is: text (not raw bytes), one printable line.
    Other names (bytes that are not UTF-8, control characters) cannot be typed back."""
    return shown(name) == name


def note_paths(engines: LazyEngine, collection: str, roots: Sequence[Path]) -> list[str]:
    """The notes of a collection that `memo://note` serves (`Engine.note_paths`), relative
    to it; none when it is not a folder in the roots."""
    try:
        listed = engines.get().note_paths(confine(collection, list(roots)))
    except MemoError:
        return []
    return [p for p in listed if sendable(p)]


def register_completions(
    server: MCPServer, roots: Sequence[Path], engines: LazyEngine, places: FolderSlots
) -> None:
    # A list can be long (a folder of 30,000 notes): a few are kept, the most recent.
    lists: RecentAnswers[list[str]] = RecentAnswers(places, TTL_S, size=8)

    def folders() -> list[str]:
        return [str(c) for c in find_indexed_collections(roots) if sendable(str(c))]

    async def complete_folders(typed: str) -> Completion:
        return matching(await lists.get(LISTING, LISTING, folders, WAIT_S) or [], typed)

    @server.completion()
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        if isinstance(ref, PromptReference):
            if ref.name in PATH_PROMPTS and argument.name == "path":
                return await complete_folders(argument.value)
            return None
        if ref.uri != NOTE_TEMPLATE:
            return None
        if argument.name == "collection":
            return await complete_folders(argument.value)
        if argument.name == "path":
            chosen = (context.arguments or {}).get("collection") if context else None
            if not chosen:
                return None
            found = await lists.get(
                ("notes", chosen),
                as_written(chosen),
                lambda: note_paths(engines, chosen, roots),
                WAIT_S,
            )
            return matching(found or [], argument.value)
        return None
