"""The second look at a first page: the best passages rescored by their best sentence.

A passage's vector is its mean meaning; a question is often answered by one sentence of a
passage that means, on the whole, something broader (a sibling paragraph of the same
article then ranks first). So the `DEPTH` best passages of a question or a sentence-long
query are looked at again: each one's best sentence (the largest cosine of the query to its
sentences' vectors, `Store.sentence_vectors`), min-max normalised among them (over a span
of at least `MIN_SPAN`: in a small folder the head is nearly every note, and cosines .01
apart must not weigh as if they were far apart), times the model's `second_look`, is added
to its score (the ranking's scores, min-max normalised over every ranked passage, so that
the two add up the same in every mode). Titles and a few
keywords are not looked at again: a title names a page, not a sentence of it, and on the
train sets the second look lost there what it gained on questions (BENCHMARKS.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from memo_core.results import Explain
from memo_core.search.ranking import Placed
from memo_core.text import textnorm
from memo_core.text.sentences import FENCES

if TYPE_CHECKING:  # a search by words takes no second look: numpy loads with the model
    import numpy as np

DEPTH = 20  # how many of the best passages are looked at again (chosen on train sets)
# A query of this many words or more, or one that asks (ends in "?"), is a question or a
# sentence: it gets a second look.
SENTENCE_WORDS = 6
# The smallest spread of best-sentence cosines taken as their whole range (the sentence
# model's cosines; on the train sets the spread is wider and this changes nothing).
MIN_SPAN = 0.03

# Inline code, Latin whatever a note's language (so are fenced blocks): for `across_scripts`.
_INLINE_CODE = re.compile(r"`[^`\n]*`")

# Sentence vectors of placed passages, by their place in the ranked list (the reader opens
# each collection's snapshot as it must).
SentenceReader = Callable[[Sequence[Placed]], dict[int, bytes]]


def wants_second_look(text: str) -> bool:
    """Whether a query reads as a question or a sentence, not a title or keywords."""
    return text.rstrip().endswith("?") or len(text.split()) >= SENTENCE_WORDS


def best_sentences(packed: bytes | None, query: np.ndarray) -> float | None:
    """The cosine of `query` (its vector in the sentence model's space) to the best of a
    passage's sentences (`vectors.pack`ed; None: the passage has none, or the blob does
    not hold vectors of the query's dimension)."""
    from memo_core.index.vectors import unpack

    if not packed:
        return None
    try:
        rows = unpack(packed, len(query))
    except ValueError:
        return None
    return float((rows @ query).max())


def across_scripts(query: str, head: Sequence[str]) -> bool:
    """Whether `query` is written mostly in the other script (Cyrillic or Latin letters)
    than the prose of the passages of the `head` is, on average (their code left out; one
    with neither counts as half): a Russian note about code is still Russian."""
    asked = textnorm.cyrillic_share(query)
    if asked is None or not head:
        return False
    shares = [textnorm.cyrillic_share(_prose(text)) for text in head]
    mean = sum(0.5 if s is None else s for s in shares) / len(shares)
    return (asked > 0.5) != (mean > 0.5)


def _prose(text: str) -> str:
    """`text` without its fenced blocks and inline code (split at the fences: a regular
    expression that looks for a block's end cost 5 ms over a head of long code blocks)."""
    for fence in FENCES:
        text = " ".join(text.split(fence)[::2])
    return _INLINE_CODE.sub(" ", text)


def second_look(
    placed: list[Placed],
    read: SentenceReader,
    query: np.ndarray,
    weight: float,
    *,
    stretched: bool = True,
) -> list[Placed]:
    """`placed` (best first) with every score min-max normalised over them (`stretched`
    False: kept on hybrid's own scale, 0 to 1, see the module's docstring) and the best DEPTH
    rescored by their best sentence, in the new order."""
    if not placed or weight <= 0:
        return placed
    scores = [p.score for p in placed]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    if stretched:
        normed = [replace(p, score=(p.score - lo) / span if span > 0 else 1.0) for p in placed]
    else:
        normed = list(placed)
    head, rest = normed[:DEPTH], normed[DEPTH:]
    packed = read(head)
    best = [best_sentences(packed.get(i), query) for i in range(len(head))]
    known = [b for b in best if b is not None]
    if not known:
        return normed
    low = min(known)
    span = max(max(known) - low, MIN_SPAN)
    gain = [0.0 if b is None else weight * (b - low) / span for b in best]
    raw = scores[:DEPTH]
    looked = [
        replace(p, score=p.score + g, explain=_explained(p, r, b, g))
        for p, r, b, g in zip(head, raw, best, gain, strict=True)
    ]
    looked.sort(key=lambda p: (-p.score, p.at, p.chunk))
    return looked + rest


def _explained(p: Placed, ranked: float, sentence: float | None, gain: float) -> Explain | None:
    if p.explain is None:
        return None
    return replace(p.explain, ranked=ranked, placed=p.score, sentence=sentence, second_look=gain)
