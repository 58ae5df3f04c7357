"""Typed values the engine and both front ends share: search modes, file notes, notices.

Each is defined once here; CLI choices, the MCP tool's `Literal`, usage texts and the texts
a user reads are derived from these (the wording lives in `memo_text.formatting`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal, get_args

from memo_core import settings
from memo_core.errors import InvalidArgumentError

ModeName = Literal["hybrid", "lex", "vec"]
MODES: tuple[ModeName, ...] = get_args(ModeName)
DEFAULT_MODE: ModeName = "hybrid"
DEFAULT_K = 8
MAX_K = 100
MAX_OFFSET = 1000  # how deep paging goes (every page ranks the hits before it again)
MAX_QUERY_CHARS = 4000  # a longer query is cut
CUT = "…"  # where a line shown was cut (a hit's one overlong line, a budget's last hit)


class FileNote(str, Enum):
    """Why a file was skipped, or that it was cut; stored in the index by value."""

    EMPTY = "empty"
    BINARY = "binary"
    UNREADABLE = "unreadable"
    SPECIAL = "special"  # a FIFO, device or socket named *.md: never read
    CUT = "cut"

    @property
    def skipped(self) -> bool:
        return self is not FileNote.CUT

    @classmethod
    def parse(cls, stored: str) -> FileNote:
        """A stored value; also the texts that indexes of schema 1 stored."""
        try:
            return cls(stored)
        except ValueError:
            legacy = {"skipped: empty": cls.EMPTY, "skipped: binary data": cls.BINARY}
            for prefix, note in legacy.items():
                if stored.startswith(prefix):
                    return note
            return cls.CUT if stored.startswith("cut") else cls.UNREADABLE


class NoticeKind(str, Enum):
    """Something about an answer the user should know (the front ends word it)."""

    MODEL_UNAVAILABLE = "model_unavailable"  # detail: why; the answer is from words only
    # a rebuild is under way; answered from the old index (where counted: the new one's
    # pass in `detail`, "index" for files or "embed" for passages' vectors, done of total)
    REBUILDING = "rebuilding"
    # another process refreshes; answered from the last snapshot (done / total: its passages
    # with vectors so far, for a search by meaning, while some lack them)
    BUSY = "busy"
    REBUILT = "rebuilt"  # the index was rebuilt: what decides its content changed (detail)
    OTHER_MODEL = "other_model"  # its vectors are another model's; words only there
    UNREADABLE_FOLDER = "unreadable_folder"  # detail: the folder; its notes were kept as they were
    INDEXING = "indexing"  # still indexing (done / total files): answered from what is in
    EMBEDDING = "embedding"  # words are in, vectors still coming (done / total chunks)
    # Passages' vectors are in, their sentences' still coming (done / total chunks): the
    # second look at a first page sees those done so far.
    SENTENCES = "sentences"
    # detail: why a refresh failed, said once; for several collections (out of descriptors,
    # a full disk), one notice: the first `folders` of `total`, relative to `collection`.
    REFRESH_FAILED = "refresh_failed"
    # Folders of notes without an index that a broad path left alone (the first `folders`
    # of `total`); collection: the path; detail: the command that indexes them.
    NOT_INDEXED = "not_indexed"
    # Collections a search could not read (the first `folders` of `total`, relative to
    # `collection`); detail: why (a resource: too many files open).
    NOT_SEARCHED = "not_searched"


NAMED_FOLDERS = 5  # a notice about many folders names this many of them; the rest it counts


@dataclass(frozen=True, slots=True)
class Notice:
    kind: NoticeKind
    collection: str | None = None  # the collection it concerns; None: the whole answer
    detail: str = ""
    done: int = 0  # how far work under way got, of `total`
    total: int = 0
    folders: tuple[str, ...] = ()  # the folders it names, relative to `collection`

    @classmethod
    def of_folders(cls, kind: NoticeKind, roots: Sequence[str], detail: str) -> Notice:
        """One notice for several collections, not a line for each: the folder they share,
        the first few named from it, how many in all."""
        where = os.path.commonpath(roots)
        if where in roots:  # a folder named from itself would read "."
            where = os.path.dirname(where)
        named = tuple(os.path.relpath(r, where) for r in roots[:NAMED_FOLDERS])
        return cls(kind, where, detail, total=len(roots), folders=named)


# How long a search waits for its refresh before answering from what is committed (the
# indexing goes on meanwhile); `MEMO_REFRESH_BUDGET` (seconds, `settings`) changes it.
DEFAULT_REFRESH_BUDGET_S = 3.0
# ... in memo-mcp, where an agent waits for the answer and gets progress meanwhile: longer
# than a person at a prompt is kept waiting, well within the 60 s that MCP clients give a
# call by default (the TypeScript SDK's DEFAULT_REQUEST_TIMEOUT_MSEC, Claude Desktop).
SERVER_REFRESH_BUDGET_S = 10.0


def refresh_budget(default: float = DEFAULT_REFRESH_BUDGET_S) -> float:
    """The configured refresh budget: MEMO_REFRESH_BUDGET, else `default`."""
    return settings.refresh_budget(default)


def whole_number(name: str, value: object, low: int, high: int) -> int:
    """`value`, a whole number from `low` to `high`, or the InvalidArgumentError saying so:
    the check of every numeric argument, the front ends' own too (memo watch's debounce),
    so a value out of range is refused, never clamped."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InvalidArgumentError("search.whole_range", name=name, low=low, high=high, got=value)
    return value


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def search_arguments(query: object, k: object, mode: object) -> tuple[int, str]:
    """(k, the query) of a search, once its mode, k and query are known to be good: the
    query cut at MAX_QUERY_CHARS, its lone surrogates made U+FFFD."""
    if mode not in MODES:
        raise InvalidArgumentError("search.mode", mode=mode, modes=", ".join(MODES))
    k = whole_number("k", k, 1, MAX_K)  # as memo_search's schema: 1..MAX_K, no clamp
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgumentError("search.empty_query")
    # Lone surrogates (bytes a terminal's argv could not decode, "\\udcff" in JSON) are
    # not text: each becomes one U+FFFD, so the words and the model see valid text.
    query = _LONE_SURROGATE.sub("\ufffd", query[:MAX_QUERY_CHARS])
    return k, query
