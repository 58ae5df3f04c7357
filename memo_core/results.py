"""What the engine answers: hits, search results and collection status (plain data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from memo_core.values import FileNote, ModeName, Notice, NoticeKind


@dataclass(frozen=True, slots=True)
class Explain:
    """Why a hit ranks where it does, as the ranking computed it (`search(..., explain=True)`).

    Its word score is (bm25 × naming + proximity) × scale; in hybrid its score is
    (1 − dense_weight) × lex_norm + dense_weight × vec_norm; in lex mode the word score, in
    vec mode the cosine. Parts of a side that did not find the hit are None.
    """

    bm25: float | None  # FTS5's BM25, heading and body weighted, in the hit's own collection
    naming: float | None  # × where the query names the passage (1: it does not)
    proximity: float | None  # + where the query's adjacent words stand close (0: nowhere)
    scale: float  # × putting its collection's word scores on all the collections' scale
    lex: float | None  # the word score, scaled
    vec: float | None  # cosine similarity to the query
    # Hybrid only (else None): each side min-max normalised among the query's candidates
    # (0: that side did not find it), the query's word strength (the best BM25, scaled,
    # over its IDF mass; None: a fixed weight) and the vector side's weight it gave.
    lex_norm: float | None
    vec_norm: float | None
    strength: float | None
    dense_weight: float | None
    # A question's first page is looked at again (search.second_look): its score is then
    # `placed` (the ranking's score above, `ranked`, min-max normalised over the ranked
    # passages) + `second_look`, which its best sentence's cosine (`sentence`) gave it.
    ranked: float | None = None
    placed: float | None = None
    sentence: float | None = None
    second_look: float | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    path: str  # absolute path of the file, as the user can open it
    relpath: str  # '/'-separated, relative to the collection root
    collection: str
    line: int  # 1-based line of the first line shown
    end_line: int  # 1-based line of the last line shown
    heading: str
    text: str  # the lines line..end_line that best match the query, not the whole passage
    score: float
    found_by: tuple[str, ...]  # "lex", "vec" or both
    explain: Explain | None = None  # why it ranks here, where the search was asked to say
    # Other notes holding a copy of this passage (absolute paths): one hit stands for them
    # (search.page).
    also_in: tuple[str, ...] = ()


class SearchResults(list[Hit]):
    """The hits, best first, plus notices the user should read (e.g. a fallback to words);
    `offset`: how many better hits came before (earlier pages); `next_offset`: where the
    next page starts (None: no hits beyond these); `all_hits`: a page that starts past the
    last hit says how many there are in all (None: any other page)."""

    def __init__(
        self,
        hits: list[Hit],
        mode: ModeName,
        notices: list[Notice] | None = None,
        *,
        offset: int = 0,
        next_offset: int | None = None,
        all_hits: int | None = None,
    ) -> None:
        super().__init__(hits)
        self.mode = mode
        self.notices = notices or []
        self.offset = offset
        self.next_offset = next_offset
        self.all_hits = all_hits


@dataclass(frozen=True)
class ChangeReport:
    """What changed under a path since a fingerprint: a delta, or (`mode` "full": no or an
    unknown fingerprint) every note. Paths are absolute, as hits show them."""

    mode: Literal["delta", "full"]
    since: str | None  # the fingerprint asked about
    fingerprint: str  # the content's fingerprint now
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # "full": every note
    reason: str | None = None  # "full": "no_fingerprint" or "unknown_fingerprint"
    notices: list[Notice] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CollectionStatus:
    root: str
    files: int  # notes the index holds, empty ones too (an empty note is a note)
    chunks: int
    skipped: int  # files named like notes and not indexed: binary, unreadable, not regular
    empty: int  # of `files`, notes with no text: nothing to search, still notes
    # Notes on disk whose content as it is now the index does not hold yet (new, or changed
    # since): a refresh under way here or in another process, one stopped half way, or
    # edits since the last. Counted by a walk when the status is read.
    pending: int
    updated_at: float | None  # unix time of the last index change; None: never indexed
    model: str | None  # which model made the vectors
    chunks_without_vectors: int
    # Passages whose sentences have no vectors yet (0 where the model takes no second look).
    chunks_without_sentences: int
    notes: list[tuple[str, FileNote]]  # (path, why skipped or cut)
    index_path: str
    location_note: str | None  # set when the index could not live in the collection folder
    fingerprint: str  # changes exactly when indexed content changes (a cheap change token)
    refreshed_at: float | None  # unix time of the last refresh that found it up to date
    unreadable_folders: list[str]  # folders the last refresh could not read ('/'-terminated)
    ignored: int  # entries (notes and folders) that .gitignore / .memoignore left out
    indexing: Notice | None = None  # a refresh under way in this process, and how far it got
    refresh_error: str | None = None  # why this process's last background refresh failed

    def unfinished(self) -> list[Notice]:
        """What the index does not hold yet, as an answer's notices say it: notes still to
        index (of the notes held and those to come: exact for a first index; a changed note
        counts in both), then passages without vectors, then without their sentences' (none:
        it is whole)."""
        if self.pending:
            total = self.files + self.pending
            return [Notice(NoticeKind.INDEXING, self.root, done=self.files, total=total)]
        for kind, left in (
            (NoticeKind.EMBEDDING, self.chunks_without_vectors),
            (NoticeKind.SENTENCES, self.chunks_without_sentences),
        ):
            if left:
                return [Notice(kind, self.root, done=self.chunks - left, total=self.chunks)]
        return []
