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
Every read runs in the folder's places (places.py), so a folder that hangs holds only its own.
Names are bytes: the folder and the note are read back from the URI as sent, percent-escapes
taken byte for byte, so every name memo lists opens through the URI memo builds (the SDK
decodes template parameters as UTF-8, losing bytes that are not).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, unquote_to_bytes

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.mcpserver.resources.templates import ResourceSecurity
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from memo_core import (
    NOTE_LIMIT,
    ChangeReport,
    MemoError,
    NoteNotFoundError,
    confine,
    find_indexes,
    for_terminal,
    shown,
)
from memo_mcp.lazy import LazyEngine
from memo_mcp.places import FolderSlots, RecentAnswers
from memo_text import Lang, changes_data, note_text, status_data

T = TypeVar("T")

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
MAX_NOTE_BYTES = NOTE_LIMIT  # the engine's bound (a test lowers it here)
# Each read walks afresh (reads at the same time share one walk), waiting at most this
# long: a folder under the roots may hang, and the walk then goes on in the background;
# a later read that waits in vain too gets the last listing that was made.
LISTING_WAIT_S = 10.0
# How long `memo://collections` waits for one collection's figures.
STATUS_WAIT_S = 5.0
# The place of the walk that looks for indexes (it spans every root).
LISTING = "memo://collections"

Roots = Sequence[Path]


def find_indexed_collections(
    roots: Roots, depth: int = SCAN_DEPTH, max_dirs: int = SCAN_MAX_DIRS
) -> list[Path]:
    """Folders at most `depth` levels below a root that hold memo's index (the walker's
    rules: hidden and tool folders and symlinks are skipped), sorted."""
    return find_indexes(roots, depth, max_dirs)


def listing(places: FolderSlots) -> RecentAnswers[list[Path]]:
    """`find_indexed_collections`, one walk at a time, in its own place."""
    return RecentAnswers(places, ttl_s=0, size=1)


# -- memo://collections -----------------------------------------------------------------


def note_uri(collection: str | os.PathLike[str], relpath: str = "") -> str:
    """The `memo://note/...` URI of a note (or, without `relpath`, the prefix to append to)."""
    # Bytes, not text: a name that is not UTF-8 is percent-encoded byte by byte.
    folder = quote(os.fsencode(collection), safe="")
    return NOTE_PREFIX + folder + "/" + quote(os.fsencode(relpath), safe="/")


# A collection's status fields `memo://collections` shows (its notes and paths are not).
_ENTRY_FIELDS = (
    "files",
    "chunks",
    "skipped",
    "empty",
    "pending",
    "chunks_without_vectors",
    "chunks_without_sentences",
    "model",
    "updated_at",
    "fingerprint",
    "refreshed_at",
    "ignored",
)


def _entry_head(root: Path) -> dict[str, Any]:
    return {"path": shown(str(root)), "note_uri": note_uri(root)}


def collection_entry(engines: LazyEngine, root: Path, lang: Lang = Lang.RU) -> dict[str, Any]:
    """One collection as `memo://collections` shows it (an `error` if its index is unusable)."""
    entry = _entry_head(root)
    try:
        statuses = engines.get().status(root)
    except MemoError as e:
        return entry | {"error": for_terminal(lang.word(e))}
    for s in statuses:
        if Path(s.root) != root:
            continue
        data = status_data(s)  # as `memo status --json` has them
        entry |= {key: data[key] for key in _ENTRY_FIELDS}
        entry["unreadable_folders"] = [shown(f) for f in s.unreadable_folders]
        if s.location_note:
            entry["location_note"] = shown(lang.word(s.location_note))
    return entry


async def collections_json(
    engines: LazyEngine,
    roots: Roots,
    places: FolderSlots,
    found: RecentAnswers[list[Path]],
    lang: Lang = Lang.RU,
) -> str:
    listed = await found.get(
        LISTING, LISTING, lambda: find_indexed_collections(roots), LISTING_WAIT_S
    )
    if listed is None:
        message = lang.text("mcp.listing_slow", seconds=LISTING_WAIT_S)
        raise MCPError(code=INTERNAL_ERROR, message=message)
    entries: list[dict[str, Any]] = [{} for _ in listed]

    async def fill(i: int, root: Path) -> None:
        with anyio.move_on_after(STATUS_WAIT_S):
            entries[i] = await places.run(root, lambda: collection_entry(engines, root, lang))
            return
        late = lang.text("mcp.status_slow", seconds=STATUS_WAIT_S)
        entries[i] = _entry_head(root) | {"error": late}

    async with anyio.create_task_group() as tg:
        for i, root in enumerate(listed):
            tg.start_soon(fill, i, root)
    return json.dumps(
        {
            "roots": [str(r) for r in roots],
            "note_uri_template": NOTE_TEMPLATE,
            "collections": entries,
        },
        ensure_ascii=False,
        indent=2,
    )


def register_collections(
    server: MCPServer,
    roots: Roots,
    engines: LazyEngine,
    places: FolderSlots | None = None,
    lang: Lang = Lang.RU,
) -> None:
    in_places = places or FolderSlots()
    found = listing(in_places)

    @server.resource(
        COLLECTIONS_URI,
        name="collections",
        title="Indexed note collections",
        description="Each indexed collection under the allowed folders: files, chunks, "
        "last update, content fingerprint (a change token) and last refresh.",
        mime_type="application/json",
    )
    async def collections() -> str:
        return await collections_json(engines, roots, in_places, found, lang)


# -- memo://note/{collection}/{+path} -------------------------------------------------------


def _refuse(uri: str, e: MemoError, lang: Lang) -> MCPError:
    return MCPError(code=INVALID_PARAMS, message=for_terminal(lang.word(e)), data={"uri": uri})


async def _in_folder(
    places: FolderSlots, roots: Roots, folder: str, fn: Callable[[Path], T], uri: str, lang: Lang
) -> T:
    """`fn(the folder's real path)` in the folder's places once it is confined to the roots
    (every template resource reads so); an engine error is the resource's, worded."""
    try:
        return await places.confined(folder, roots, fn)
    except MemoError as e:
        raise _refuse(uri, e, lang) from e


def read_note(
    engines: LazyEngine, collection: str, path: str, roots: Roots, lang: Lang = Lang.RU
) -> str:
    """The text of note `path` (relative) in folder `collection`, both inside the roots:
    what `memo://note` answers, read on the caller's thread."""
    uri = note_uri(collection, path)
    try:
        base = confine(collection, list(roots))
    except MemoError as e:
        raise _refuse(uri, e, lang) from e
    return read_below(engines, base, path, uri, lang)


def read_below(engines: LazyEngine, base: Path, path: str, uri: str, lang: Lang = Lang.RU) -> str:
    """The text of note `path` (relative, '/' between folders) in the confined folder `base`,
    as the engine serves it (`Engine.note`: only a note a search could find, read through
    descriptors), with a last line that says so when it is cut.

    A backslash is part of a name (as POSIX has it), not a separator. A `..` anywhere is
    refused as an unknown resource before anything is looked at (the SDK's own rule for
    template parameters), so it tells nothing about what lies where it leads.
    """
    rel = path.strip("/")
    if ".." in rel.split("/"):
        raise ResourceNotFoundError(f"Unknown resource: {uri}")
    try:
        note = engines.get().note(base, rel, limit=MAX_NOTE_BYTES)
    except NoteNotFoundError as e:
        raise ResourceNotFoundError(lang.word(e)) from e
    except MemoError as e:
        raise _refuse(uri, e, lang) from e
    return note_text(note, str(base / rel), lang)


def _as_sent(ctx: Context, prefix: str) -> list[str] | None:
    """The '/'-separated parts of the URI the client sent after `prefix` (its query left
    out), each percent-decoded byte for byte into a name as the OS has it; None when the
    request carries no such URI (a read from inside the server)."""
    params = ctx.request_context.params or {}
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri.startswith(prefix):
        return None
    rest = uri[len(prefix) :].partition("?")[0]
    return [os.fsdecode(unquote_to_bytes(part)) for part in rest.split("/")]


# Template parameters are taken as sent (see `_as_sent`) and checked by memo itself: the
# collection is confined to the roots, the note's path read below it through descriptors.
# The SDK's checks would refuse names that are fine on POSIX (`C:x.md`, `\\x.md`).
AS_SENT = ResourceSecurity(exempt_params=frozenset({"collection", "path"}))


def register_note(
    server: MCPServer,
    roots: Roots,
    engines: LazyEngine,
    places: FolderSlots | None = None,
    lang: Lang = Lang.RU,
) -> None:
    in_places = places or FolderSlots()

    @server.resource(
        NOTE_TEMPLATE,
        name="note",
        title="A note",
        description="The Markdown of one note: the collection folder, percent-encoded as one "
        "segment, then the note's path inside it, e.g. memo://note/%2Fhome%2Fme%2Fnotes/a/b.md",
        mime_type="text/markdown",
        security=AS_SENT,
    )
    async def note(collection: str, path: str, ctx: Context) -> str:
        sent = _as_sent(ctx, NOTE_PREFIX)
        if sent is not None:
            collection, path = sent[0], "/".join(sent[1:])
        uri = note_uri(collection, path)
        read = partial(read_below, engines, path=path, uri=uri, lang=lang)
        return await _in_folder(in_places, roots, collection, read, uri, lang)


# -- memo://changes/{collection}{?since} --------------------------------------------------


def register_changes(
    server: MCPServer,
    roots: Roots,
    engines: LazyEngine,
    places: FolderSlots | None = None,
    lang: Lang = Lang.RU,
) -> None:
    in_places = places or FolderSlots()

    @server.resource(
        CHANGES_TEMPLATE,
        name="changes",
        title="What changed",
        description="memo_changes as JSON: the folder percent-encoded as one segment, then "
        "?since=<fingerprint>, e.g. memo://changes/%2Fhome%2Fme%2Fnotes?since=3f2a…",
        mime_type="application/json",
        security=AS_SENT,
    )
    async def changes(ctx: Context, collection: str, since: str | None = None) -> str:
        sent = _as_sent(ctx, CHANGES_PREFIX)
        if sent is not None:
            collection = "/".join(sent)
        uri = CHANGES_PREFIX + quote(os.fsencode(collection), safe="")

        def changed(real: Path) -> ChangeReport:  # the engine made on the folder's thread
            return engines.get().changes(real, since)

        report = await _in_folder(in_places, roots, collection, changed, uri, lang)
        return json.dumps(changes_data(report), ensure_ascii=False, indent=2)


RESOURCES: tuple[Callable[[MCPServer, Roots, LazyEngine, FolderSlots | None, Lang], None], ...] = (
    register_collections,
    register_note,
    register_changes,
)


def register_resources(
    server: MCPServer, roots: Roots, engines: LazyEngine, places: FolderSlots, lang: Lang = Lang.RU
) -> None:
    """Every resource, its errors and texts in `lang`."""
    for register in RESOURCES:
        register(server, roots, engines, places, lang)
