"""An answer's pages: distinct notes on each, near-duplicates as one hit.

A reader asks for k passages to see k places to look; two passages of one note on a first
page show one place twice (78 of 120 real questions measured from outside had a note twice
in their top 3). So each page holds one passage of a note, its best, where the ranking has
enough notes: a note's further passages go to later pages, in their order, where nothing
is lost (the next page shows them first).

Copies of a text in several notes (an archived older copy of a page, one template filled
in for 40 products) would fill a page with one answer. A passage whose words repeat one
shown above it (its word shingles overlap by `NEAR_DUPLICATE` or more) and that holds no
word of the query the shown one lacks is not a hit of its own: the one shown names it
(`also in`). Of a group of copies the one shown is the best ranked, unless it lies where
an archive is kept and another does not.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from memo_core.text import textnorm
from memo_core.text.excerpt import matched
from memo_core.text.passagelang import ENGLISH

# Word 3-shingles two passages must share (Jaccard) to be copies: on the real question
# sets (bench/realsets.py --near-duplicate) .7 folds 12 top-3 hits' copies and loses no
# answer from the top 3, .5 folds 33 and loses one (BENCHMARKS.md, "Two models").
NEAR_DUPLICATE = 0.7
SHINGLE = 3
# A passage of fewer words is never a copy of another: short ones say alike what differs
# ("see also", a one-line note) and are cheap to show.
MIN_COPY_WORDS = 12
# Characters a whitespace-separated word has at most on average in a text written with
# spaces between words; more, and the text's words are found as the index finds them.
SPACED = 20
# Names of folders where old copies are kept aside.
ARCHIVED = frozenset(
    "archive archived archives old deprecated legacy obsolete outdated attic "
    "архив архивы старое устаревшее".split()
)

T = TypeVar("T")


@dataclass
class Shown(Generic[T]):
    """A passage an answer shows, and the notes whose copies of it it stands for."""

    item: T
    also_in: list[str] = field(default_factory=list)


Shingles = frozenset[int]


def shingles(text: str) -> Shingles:
    """The text's 3-grams of whitespace-separated words (lower-cased, ё as е); none for a
    text of fewer than MIN_COPY_WORDS words. A copy repeats its original's words, spaces
    and punctuation alike, so splitting at spaces tells copies apart as well as words do,
    at a quarter of the time: a warm search makes these for every passage of its window
    (with textnorm's words and a Python loop, a third of a search by words)."""
    words = text.lower().replace("ё", "е").split()
    if len(text) > SPACED * len(words):  # written without spaces (Chinese, Japanese)
        words = textnorm.words(text, joined=False)  # its characters in pairs
    if len(words) < MIN_COPY_WORDS:
        return frozenset()
    # Hashed once here: a set of tuples hashes each again in every overlap taken.
    return frozenset(map(hash, zip(*(words[i:] for i in range(SHINGLE)), strict=False)))


def overlap(a: Shingles, b: Shingles) -> float:
    """Their Jaccard index (the union counted, not built)."""
    if not a or not b:
        return 0.0
    both = len(a & b)
    return both / (len(a) + len(b) - both)


def copies(a: Shingles, b: Shingles) -> bool:
    """Whether two passages' shingles overlap by NEAR_DUPLICATE or more. Most pairs differ
    in size beyond what such an overlap allows (|a ∩ b| / |a ∪ b| is at most the smaller
    over the larger): those are told apart without a set operation."""
    small, large = sorted((len(a), len(b)))
    return small >= NEAR_DUPLICATE * large and overlap(a, b) >= NEAR_DUPLICATE


def archived(rel: str) -> bool:
    """Whether a note lies in a folder where old copies are kept aside (`archive/`,
    `old/`, `Deprecated/`), by its path relative to its collection."""
    return any(folder.casefold() in ARCHIVED for folder in rel.split("/")[:-1])


def collapsed(
    items: Sequence[T],
    text: Callable[[T], str],
    path: Callable[[T], str],
    note: Callable[[T], Hashable],
    terms: Iterable[str] = (),
    aside: Callable[[T], bool] = lambda _item: False,
    lang: Callable[[T], str] = lambda _item: ENGLISH,
) -> list[Shown[T]]:
    """`items` (best first) with each copy of a passage shown above it folded into that
    one (`also_in` its path): a copy holds none of the query's `terms` (stems, its words
    stemmed in its `lang`) that the one shown lacks. Of copies, the one shown is not one
    kept `aside` (`archived`) where another is not (it takes the place of the best
    ranked)."""
    wanted = set(terms)
    shown: list[Shown[T]] = []
    seen: list[tuple[Shingles, _Held]] = []
    for item in items:
        body = text(item)
        own, held = shingles(body), _Held(body, wanted, lang(item))
        twin = next(
            (
                i
                for i, (s, words) in enumerate(seen)
                if note(shown[i].item) != note(item)
                and copies(s, own)
                and held.words() <= words.words()
            ),
            None,
        )
        if twin is None:
            shown.append(Shown(item))
            seen.append((own, held))
            continue
        first = shown[twin]
        if aside(first.item) and not aside(item):
            first.also_in.append(path(first.item))
            first.item = item  # the current copy is the one to read: later copies
            seen[twin] = (own, held)  # are weighed against it
        else:
            first.also_in.append(path(item))
    for s in shown:
        s.also_in = list(dict.fromkeys(p for p in s.also_in if p != path(s.item)))
    return shown


class _Held:
    """The query's words (stems) a passage holds, found only when asked: most passages
    are no one's copy, and stemming every one of them cost a warm search most of its time."""

    def __init__(self, body: str, wanted: set[str], lang: str) -> None:
        self._body, self._wanted, self._lang = body, wanted, lang
        self._words: set[str] | None = None

    def words(self) -> set[str]:
        if self._words is None:
            self._words = matched(self._body, self._wanted, self._lang)
        return self._words


def paged(items: Sequence[T], note: Callable[[T], Hashable], k: int) -> list[T]:
    """`items` (best first) in pages of `k`, each holding one passage of a note where
    enough notes remain (else filled in the ranking's order): a note's further passages
    wait for the next page, where they come in their order among the rest."""
    out: list[T] = []
    waiting = list(range(len(items)))  # places in the ranking
    while waiting:
        page: list[int] = []
        later: list[int] = []
        notes: set[Hashable] = set()
        for i in waiting:
            if len(page) < k and note(items[i]) not in notes:
                page.append(i)
                notes.add(note(items[i]))
            else:
                later.append(i)
        fill = max(0, k - len(page))  # too few notes left for a page of distinct ones
        page, later = sorted(page + later[:fill]), later[fill:]
        out += [items[i] for i in page]
        waiting = later
    return out
