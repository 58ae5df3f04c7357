"""Headings as a reader sees them rendered: the text a hit shows and the words a heading
holds, without the markup converted documentation puts in every heading (an HTML anchor,
`<a name="x"></a>Title`, or an attribute block, `Title {#x}`).

Linear in the heading's length, as the chunker must be for hostile input (no regex that can
backtrack: the scans below stop at the next `<` or `>`).
"""

from __future__ import annotations

import html


def rendered(title: str) -> str:
    """A heading as a reader sees it rendered: inline HTML tags (`<a name="x"></a>`, an
    anchor many converted docs put in every heading) and a trailing attribute block
    (`{#id .class}`) dropped, entities decoded, tabs and runs of spaces one space."""
    text = _drop_attributes(_drop_tags(title))
    if "&" in text:
        text = html.unescape(text)
    return " ".join(text.split())


def _drop_tags(s: str) -> str:
    """`s` without its HTML tags; an autolink (`<https://…>`, `<a@b.c>`) keeps its text.
    Linear: each scan stops at the next `<`, and the next `>` is found once per tag."""
    out: list[str] = []
    i, close = 0, -1
    while (lt := s.find("<", i)) >= 0:
        after = s[lt + 1 : lt + 2]
        if not (after.isalpha() or after in ("/", "!")):
            out.append(s[i : lt + 1])  # "a < b": not a tag
            i = lt + 1
            continue
        if close < lt:
            close = s.find(">", lt)
            if close < 0:
                break  # no tag can close any more
        inner = s.find("<", lt + 1, close)
        if inner >= 0:  # "<a <b>": only the second can be a tag
            out.append(s[i:inner])
            i = inner
            continue
        tag = s[lt + 1 : close]
        autolink = not any(c in tag for c in " \t\"'") and (":" in tag or "@" in tag)
        out.append(s[i:lt] + (tag if autolink else " "))
        i = close + 1
    out.append(s[i:])
    return "".join(out)


def _drop_attributes(s: str) -> str:
    """`Title {#id .class}` (Pandoc, kramdown, Python-Markdown) without the block."""
    s = s.rstrip(" \t")
    if not s.endswith("}"):
        return s
    start = s.rfind("{")
    inner = s[start + 1 : -1].strip(" \t")
    if start < 0 or "}" in inner or inner[:1] not in ("#", ".", ":"):
        return s
    if start and s[start - 1] not in " \t":
        return s  # "f{#x}" is text
    return s[:start]
