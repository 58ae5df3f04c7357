"""A passage's sentences, for the second look at a search's first page (search.second_look).

A passage of 2,000 characters is one vector, its mean meaning; a question is often answered
by one sentence of it. Each sentence gets a vector of its own, and the best match of the
query among them says how well the passage's best sentence answers. A "sentence" here is a
unit a reader would quote: a sentence of prose, a list item, a table row, a line of a code
block (a fence as one unit, cut), a heading-like line. Tiny pieces join their neighbour;
long ones are cut at words.

Linear in the text (no backtracking regexes over whole lines of hostile input), and
deterministic: the same passage always gives the same sentences, whose vectors are reused by
the passage's hash.
"""

from __future__ import annotations

import re

# A sentence shorter than this joins the next (a "Note:" label, a list marker, "1.").
MIN_CHARS = 40
# ... and one longer is cut at a word boundary near this (a model reads about 128 tokens
# of it well; longer ones are passages again).
MAX_CHARS = 300
# A passage gives at most this many (its first ones): a 2,000-character chunk of short
# lines would otherwise cost 50 vectors.
MAX_SENTENCES = 16
# An end of sentence: . ! ? … (with closing quotes or brackets), then space, then what can
# begin a sentence. Fixed-width lookbehind, no nested quantifiers: linear.
_END = re.compile(r"(?<=[.!?…])[\"»”')\]]?\s+(?=[\"«“(\[]?[A-ZА-ЯЁ0-9])")
FENCES = ("```", "~~~")  # what opens and closes a fenced code block


def sentences(text: str) -> list[str]:
    """The passage's sentences in order (at most MAX_SENTENCES, each at most MAX_CHARS)."""
    units: list[str] = []
    fence: list[str] | None = None
    para: list[str] = []

    def flush() -> None:
        if para:
            # Only the first sentences are kept: a paragraph longer than they can hold is
            # cut before it is split (a 1 MB line costs what 10 KB do).
            units.extend(_split_prose(" ".join(para)[: 2 * MAX_SENTENCES * MAX_CHARS]))
            para.clear()

    for raw in text.split("\n"):
        line = raw.strip()
        if fence is not None:
            if line.startswith(FENCES):
                units.append(" ".join(fence)[:MAX_CHARS])
                fence = None
            elif line:
                fence.append(line)
            continue
        if line.startswith(FENCES):
            flush()
            fence = []
        elif not line:
            flush()
        elif line[0] in "-*+|>#" or _numbered(line):
            flush()  # a list item, table row, quote or heading: a unit of its own
            para.append(line.lstrip("-*+>#| ").rstrip("| "))
            flush()
        else:
            para.append(line)
        if len(units) > 4 * MAX_SENTENCES:
            break
    flush()
    if fence:
        units.append(" ".join(fence)[:MAX_CHARS])
    return _joined(units)[:MAX_SENTENCES]


def _numbered(line: str) -> bool:
    """`1. step` or `2) step`."""
    digits = len(line) - len(line.lstrip("0123456789"))
    return 0 < digits < 4 and line[digits : digits + 1] in (".", ")")


def _split_prose(paragraph: str) -> list[str]:
    """A paragraph's sentences; one longer than MAX_CHARS cut at a space near it."""
    out = []
    for s in _END.split(paragraph):
        at = 0
        while len(s) - at > MAX_CHARS:
            cut = s.rfind(" ", at + MAX_CHARS // 2, at + MAX_CHARS)
            cut = cut if cut > at else at + MAX_CHARS
            out.append(s[at:cut].strip())
            at = cut
        if s[at:].strip():
            out.append(s[at:].strip())
    return [u for u in out if u]


def _joined(units: list[str]) -> list[str]:
    """Units too short to mean much on their own joined to the next one."""
    out: list[str] = []
    carry = ""
    for u in units:
        if not u:
            continue
        u = f"{carry} {u}" if carry else u
        if len(u) < MIN_CHARS:
            carry = u
            continue
        carry = ""
        out.append(u[:MAX_CHARS])
    if carry:
        if out and len(out[-1]) + len(carry) < MAX_CHARS:
            out[-1] = f"{out[-1]} {carry}"
        else:
            out.append(carry)
    return out
