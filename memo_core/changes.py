"""What changed under a path since a fingerprint, over the collections the path spans.

One collection's fingerprint is its index's (index/history.py). Under a path that holds several
(or one below it), each part also names where its collection lies below the path
(`<fingerprint>@<folder, base64url>`), and the parts are joined by "." in path order. So a
collection that appeared is all added, and one renamed or moved under the path is its old
notes removed and its new ones added (its index still knows the old fingerprint); a part
whose collection went, and that no collection here knows, makes the answer every note.
Parts that name no folder (from before they did, or `status`'s joined by a client) are
matched to the collections in path order by what each index knows, so a collection that
appeared since is all added there too.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass
from pathlib import Path

from memo_core.collection import Collection
from memo_core.index.history import EMPTY_FINGERPRINT, Delta
from memo_core.results import ChangeReport
from memo_core.values import Notice

# A fingerprint's part: the collection's fingerprint, and its folder below the path (None:
# the path itself, or a fingerprint from before parts named their folder).
_Part = tuple[str, str | None]


@dataclass
class _Read:
    """One collection read in one snapshot: its fingerprint, every note (None: not read, a
    delta was expected), and its deltas since the fingerprints asked about (None where one
    is unknown to its index)."""

    fingerprint: str
    paths: list[str] | None
    deltas: dict[str, Delta | None]


def changes_since(
    base: Path, collections: list[Collection], since: str | None, notices: list[Notice]
) -> ChangeReport:
    """The delta since `since` when every part of it is accounted for, else every note."""
    where = [_where(base, c) for c in collections]
    old = _old(since, collections, where) if since is not None else None
    # What each collection's index is asked about: its own part, or (new here) the parts
    # of folders that went, one of which it may have been.
    gone = [fp for f, fp in (old or {}).items() if f not in where]
    reads = [
        _read(c, [old[w]], own=True) if old is not None and w in old else _read(c, gone, own=False)
        for c, w in zip(collections, where, strict=True)
    ]
    fingerprint = ".".join(_part(r.fingerprint, w) for r, w in zip(reads, where, strict=True))
    delta = _delta(base, collections, where, reads, dict(old)) if old is not None else None
    if delta is not None:
        added, changed, removed = delta
        return ChangeReport("delta", since, fingerprint, added, changed, removed, notices=notices)
    files = [c.absolute(p) for c, r in zip(collections, reads, strict=True) for p in _paths(c, r)]
    reason = "no_fingerprint" if since is None else "unknown_fingerprint"
    return ChangeReport("full", since, fingerprint, files=files, reason=reason, notices=notices)


def _old(
    since: str, collections: list[Collection], where: list[str | None]
) -> dict[str | None, str] | None:
    """Each folder's fingerprint in `since` (None: not a fingerprint that can be used)."""
    parts = [_parse(p) for p in since.split(".")]
    known = [p for p in parts if p is not None]
    if len(known) != len(parts):
        return None
    if all(folder is None for _, folder in known):
        return _aligned(collections, where, [fp for fp, _ in known])
    old = {folder: fp for fp, folder in known}
    return old if len(old) == len(known) else None


def _aligned(
    collections: list[Collection], where: list[str | None], parts: list[str]
) -> dict[str | None, str] | None:
    """Parts that name no folder (a fingerprint from before parts named theirs, or the
    collections' own from `status`, joined) are theirs in path order: each is the next
    collection's whose index knows it, and a collection that knows none came since (all
    added). None when a part is left over (its collection went, or its history expired)."""
    old: dict[str | None, str] = {}
    for c, w in zip(collections, where, strict=True):
        if len(old) < len(parts) and _knows(c, parts[len(old)]):
            old[w] = parts[len(old)]
    return old if len(old) == len(parts) else None


def _knows(c: Collection, fingerprint: str) -> bool:
    """Whether `c`'s index can answer what changed since `fingerprint`."""
    with c.snapshot() as s:
        return fingerprint == EMPTY_FINGERPRINT if s is None else s.history.knows(fingerprint)


def _delta(
    base: Path,
    collections: list[Collection],
    where: list[str | None],
    reads: list[_Read],
    old: dict[str | None, str],
) -> tuple[list[str], list[str], list[str]] | None:
    """(added, changed, removed) since `old`, absolute; None when a part is unaccounted for."""
    lists: tuple[list[str], list[str], list[str]] = ([], [], [])
    for c, w, r in zip(collections, where, reads, strict=True):
        if w in old:
            d = r.deltas.get(old.pop(w))
            if d is None:
                return None
            for out, rels in zip(lists, d.lists(), strict=True):
                out.extend(c.absolute(p) for p in rels)
            continue
        # New here, or moved from a folder that went (its index knows that fingerprint).
        moved = next(
            (f for f, fp in old.items() if fp != EMPTY_FINGERPRINT and r.deltas.get(fp)), None
        )
        paths = _paths(c, r)  # read with the rest: this one is not its own part
        if moved is not None:
            d = r.deltas[old.pop(moved)]
            assert d is not None
            then = (set(paths) - set(d.added)) | set(d.removed)
            folder = base.joinpath(*(moved or "").split("/"))
            lists[2].extend(str(folder.joinpath(*p.split("/"))) for p in sorted(then))
        lists[0].extend(c.absolute(p) for p in paths)
    return None if old else lists


def _read(c: Collection, since: list[str], *, own: bool) -> _Read:
    """`own`: `since` holds this collection's own part; then its notes are listed only when
    that part is unknown here (a delta needs no list of every note)."""
    with c.snapshot() as s:
        if s is None:  # not indexed yet: empty
            empty = {fp: Delta([], [], []) if fp == EMPTY_FINGERPRINT else None for fp in since}
            return _Read(EMPTY_FINGERPRINT, [], empty)
        deltas = {fp: s.history.delta_since(fp) for fp in set(since)}
        listed = not own or None in deltas.values()
        return _Read(s.history.fingerprint(), s.history.paths() if listed else None, deltas)


def _paths(c: Collection, r: _Read) -> list[str]:
    """Every note of `c`: as read, or (a delta was expected) read now."""
    if r.paths is not None:
        return r.paths
    with c.snapshot() as s:
        return s.history.paths() if s is not None else []


def _where(base: Path, c: Collection) -> str | None:
    """Where `c` lies below `base` ('/'-separated), None when it is `base` itself."""
    rel = os.path.relpath(c.root, base)
    return None if rel == "." else rel.replace(os.sep, "/")


def _part(fp: str, where: str | None) -> str:
    if where is None:
        return fp
    tag = base64.urlsafe_b64encode(os.fsencode(where)).decode("ascii").rstrip("=")
    return f"{fp}@{tag}"


def _parse(part: str) -> _Part | None:
    """(fingerprint, folder) of one part; None when it cannot be one of memo's."""
    fp, sep, tag = part.partition("@")
    if not sep:
        return fp, None
    try:
        raw = base64.urlsafe_b64decode(tag + "=" * (-len(tag) % 4))
    except (binascii.Error, ValueError):
        return None
    return fp, os.fsdecode(raw)
