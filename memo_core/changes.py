"""What changed under a path since a fingerprint, over the collections the path spans.

One collection's fingerprint is its index's (changelog.py). Several: theirs joined by "."
in the order of the collections, and so is the delta; a fingerprint of another set of
collections (one appeared or went) is unknown, which answers with every note.
"""

from __future__ import annotations

from .changelog import EMPTY_FINGERPRINT, Delta
from .collection import Collection
from .results import ChangeReport
from .values import Notice

# One collection's state: its fingerprint; the delta since the fingerprint asked about
# (None: none asked, or unknown); and, when there is no delta, every note. Relative paths.
_State = tuple[str, Delta | None, list[str]]


def changes_since(
    collections: list[Collection], since: str | None, notices: list[Notice]
) -> ChangeReport:
    """The delta since `since` when every collection knows its part, else every note."""
    parts: list[str | None] = list(since.split(".")) if since is not None else []
    if len(parts) != len(collections):
        parts = [None] * len(collections)
    states = [_state(c, part) for c, part in zip(collections, parts, strict=True)]
    fingerprint = ".".join(fp for fp, _, _ in states)
    if since is not None and all(delta is not None for _, delta, _ in states):
        lists: list[list[str]] = [[], [], []]  # added, changed, removed
        for c, (_, delta, _) in zip(collections, states, strict=True):
            assert delta is not None
            for out, rels in zip(lists, delta.lists(), strict=True):
                out.extend(c.absolute(r) for r in rels)
        added, changed, removed = lists
        return ChangeReport("delta", since, fingerprint, added, changed, removed, notices=notices)
    files = [
        c.absolute(r) for c, (_, _, rels) in zip(collections, states, strict=True) for r in rels
    ]
    reason = "no_fingerprint" if since is None else "unknown_fingerprint"
    return ChangeReport("full", since, fingerprint, files=files, reason=reason, notices=notices)


def _state(collection: Collection, since: str | None) -> _State:
    """One snapshot's fingerprint, delta since `since`, or (no delta) every note."""
    with collection.snapshot() as s:
        if s is None:  # not indexed yet: empty
            empty = Delta([], [], []) if since == EMPTY_FINGERPRINT else None
            return EMPTY_FINGERPRINT, empty, []
        delta = s.delta_since(since) if since is not None else None
        return s.fingerprint(), delta, s.paths() if delta is None else []
