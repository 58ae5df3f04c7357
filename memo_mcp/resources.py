"""MCP resources: what memo holds (`memo://collections`), one note's Markdown, what changed.

Both stay inside the folders memo may use (the same roots as the tools):

- `memo://collections` (JSON): every collection under the allowed roots that has an index
  (`.memo/index.db`, looked for at most `SCAN_DEPTH` folders down), with its file and chunk
  counts, last index update, content fingerprint and last refresh.
- `memo://note/{collection}/{+path}`: the Markdown of one note. `collection` is a folder (the
  collection's `path` from `memo://collections`, or any folder inside the allowed roots),
  percent-encoded as one URI segment (`/home/me/notes` → `%2Fhome%2Fme%2Fnotes`); `path` is
  the note's path relative to it, with `/` between folders. So a search hit
  `/home/me/notes/home/backup.md:7` opens as `memo://note/%2Fhome%2Fme%2Fnotes/home/backup.md`.
- `memo://changes/{collection}{?since}` (JSON): what the tool memo_changes answers as
  structuredContent, for a folder encoded the same way.

Each resource is registered by its own small function; `register_resources` calls them all.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from memo_core import (
    Escape,
    MemoError,
    NotRegularFile,
    changes_data,
    confine,
    find_indexes,
    for_terminal,
    is_note_path,
    iso_time,
    open_collection,
    shown,
)
from memo_mcp.lazy import LazyEngine

COLLECTIONS_URI = "memo://collections"
NOTE_TEMPLATE = "memo://note/{collection}/{+path}"
NOTE_PREFIX = "memo://note/"
CHANGES_TEMPLATE = "memo://changes/{collection}{?since}"
CHANGES_PREFIX = "memo://changes/"

# How far below each allowed root `memo://collections` looks for indexes, and how many
# folders it looks at in all (a home folder can be big: the listing must stay cheap).
SCAN_DEPTH = 3
SCAN_MAX_DIRS = 20_000
# A note bigger than this is sent cut (at a line end), with a last line that says so.
MAX_NOTE_BYTES = 2 * 1024 * 1024

Roots = Sequence[Path]


def find_indexed_collections(
    roots: Roots, depth: int = SCAN_DEPTH, max_dirs: int = SCAN_MAX_DIRS
) -> list[Path]:
    """Folders at most `depth` levels below a root that hold memo's index (the walker's
    rules: hidden and tool folders and symlinks are skipped), sorted."""
    return find_indexes(roots, depth, max_dirs)


class CollectionCache:
    """`find_indexed_collections` remembered for a few seconds (completions ask per key)."""

    def __init__(self, roots: Roots, ttl_s: float = 5.0) -> None:
        self.roots = list(roots)
        self.ttl_s = ttl_s
        self._at = -1e9
        self._found: list[Path] = []

    def get(self) -> list[Path]:
        now = time.monotonic()
        if now - self._at > self.ttl_s:
            self._found = find_indexed_collections(self.roots)
            self._at = now
        return self._found


# -- memo://collections -----------------------------------------------------------------


def note_uri(collection: str | os.PathLike[str], relpath: str = "") -> str:
    """The `memo://note/...` URI of a note (or, without `relpath`, the prefix to append to)."""
    # Bytes, not text: a name that is not UTF-8 is percent-encoded byte by byte.
    folder = quote(os.fsencode(collection), safe="")
    return NOTE_PREFIX + folder + "/" + quote(os.fsencode(relpath), safe="/")


def _time(ts: float | None) -> str | None:
    return None if ts is None else iso_time(ts)


def collection_entry(engines: LazyEngine, root: Path) -> dict[str, Any]:
    """One collection as `memo://collections` shows it (an `error` if its index is unusable)."""
    entry: dict[str, Any] = {"path": shown(str(root)), "note_uri": note_uri(root)}
    try:
        statuses = engines.get().status(root)
    except MemoError as e:
        return entry | {"error": for_terminal(str(e))}
    for s in statuses:
        if Path(s.root) != root:
            continue
        entry |= {
            "files": s.files,
            "chunks": s.chunks,
            "skipped": s.skipped,
            "chunks_without_vectors": s.chunks_without_vectors,
            "model": s.model,
            "updated_at": _time(s.updated_at),
            "fingerprint": s.fingerprint,
            "refreshed_at": _time(s.refreshed_at),
            "unreadable_folders": [shown(f) for f in s.unreadable_folders],
            "ignored": s.ignored,
        }
        if s.location_note:
            entry["location_note"] = shown(s.location_note)
    return entry


def collections_json(engines: LazyEngine, roots: Roots, found: list[Path] | None = None) -> str:
    listed = find_indexed_collections(roots) if found is None else found
    return json.dumps(
        {
            "roots": [str(r) for r in roots],
            "note_uri_template": NOTE_TEMPLATE,
            "collections": [collection_entry(engines, c) for c in listed],
        },
        ensure_ascii=False,
        indent=2,
    )


def register_collections(server: MCPServer, roots: Roots, engines: LazyEngine) -> None:
    @server.resource(
        COLLECTIONS_URI,
        name="collections",
        title="Indexed note collections",
        description="Each indexed collection under the allowed folders: files, chunks, "
        "last update, content fingerprint (a change token) and last refresh.",
        mime_type="application/json",
    )
    def collections() -> str:
        return collections_json(engines, roots)


# -- memo://note/{collection}/{+path} -------------------------------------------------------


def _refuse(uri: str, text: str) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=text, data={"uri": uri})


def read_note(collection: str, path: str, roots: Roots) -> str:
    """The text of note `path` (relative) in folder `collection`, both inside the roots."""
    uri = note_uri(collection, path)
    try:
        base = confine(collection, list(roots))
    except MemoError as e:
        raise _refuse(uri, str(e)) from e
    rel = path.replace("\\", "/").strip("/")
    if not rel or "\0" in rel:
        raise _refuse(uri, "give the note's path relative to the collection, e.g. home/backup.md")
    if not is_note_path(rel):
        raise _refuse(
            uri,
            f"{rel} is not a Markdown note (*.md) outside hidden folders: memo opens notes only",
        )
    # Read through the folder's descriptor: a note or folder swapped for a symlink at any
    # moment is refused, never followed out. Where it leads is judged before whether it
    # exists, so a path that leads out gets one answer whatever lies there.
    try:
        with open_collection(base) as folder:
            data, size = folder.read(rel, MAX_NOTE_BYTES + 1)
    except MemoError as e:
        raise _refuse(uri, str(e)) from e
    except Escape as e:
        raise _refuse(uri, f"{rel} leads outside {base}") from e
    except FileNotFoundError as e:
        raise ResourceNotFoundError(f"no such note: {rel} in {base}") from e
    except NotRegularFile as e:
        raise _refuse(
            uri,
            f"{rel} is not a Markdown note (*.md) outside hidden folders: memo opens notes only",
        ) from e
    except OSError as e:  # unreadable, or swapped meanwhile
        raise _refuse(uri, f"{rel} cannot be read: {e.strerror or e}") from e
    if len(data) <= MAX_NOTE_BYTES:
        return data.decode("utf-8", errors="replace")
    cut = data[:MAX_NOTE_BYTES]
    cut = cut[: cut.rfind(b"\n") + 1] or cut
    where = base / rel
    return cut.decode("utf-8", errors="replace") + (
        f"\n<!-- memo: cut here, the first {len(cut)} of {size} bytes; the rest is in {where} -->\n"
    )


def register_note(server: MCPServer, roots: Roots, engines: LazyEngine) -> None:
    # `collection` is an absolute path by design; `read_note` confines it (and the note).
    security = ResourceSecurity(exempt_params=frozenset({"collection"}))

    @server.resource(
        NOTE_TEMPLATE,
        name="note",
        title="A note",
        description="The Markdown of one note: the collection folder, percent-encoded as one "
        "segment, then the note's path inside it, e.g. memo://note/%2Fhome%2Fme%2Fnotes/a/b.md",
        mime_type="text/markdown",
        security=security,
    )
    def note(collection: str, path: str) -> str:
        return read_note(collection, path, roots)


# -- memo://changes/{collection}{?since} --------------------------------------------------


def register_changes(server: MCPServer, roots: Roots, engines: LazyEngine) -> None:
    security = ResourceSecurity(exempt_params=frozenset({"collection"}))

    @server.resource(
        CHANGES_TEMPLATE,
        name="changes",
        title="What changed",
        description="memo_changes as JSON: the folder percent-encoded as one segment, then "
        "?since=<fingerprint>, e.g. memo://changes/%2Fhome%2Fme%2Fnotes?since=3f2a…",
        mime_type="application/json",
        security=security,
    )
    def changes(collection: str, since: str | None = None) -> str:
        uri = CHANGES_PREFIX + quote(os.fsencode(collection), safe="")
        try:
            report = engines.get().changes(confine(collection, list(roots)), since)
        except MemoError as e:
            raise _refuse(uri, str(e)) from e
        return json.dumps(changes_data(report), ensure_ascii=False, indent=2)


RESOURCES: tuple[Callable[[MCPServer, Roots, LazyEngine], None], ...] = (
    register_collections,
    register_note,
    register_changes,
)


def register_resources(server: MCPServer, roots: Roots, engines: LazyEngine) -> None:
    for register in RESOURCES:
        register(server, roots, engines)
