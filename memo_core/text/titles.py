"""A note's title, and what the model reads above each of its passages.

A passage is embedded under its heading path ("Setup > Linux"). A note with no `# title` of
its own (an Obsidian vault's, a site generator's page titled in its front matter) leaves
its passages without the one name that says what they are about: its title leads their
heading path where no heading holds it.
"""

from __future__ import annotations

from collections.abc import Sequence

# Bump whenever a change here can embed a passage under another heading: indexes record it
# and rebuild. 2: the note's title leads a heading path that does not hold it.
EMBEDDED_VERSION = 2
# File names that say nothing of a note but that it leads its folder (a site's section
# page, a repository's readme): such a note is titled by its folder's name.
FOLDER_PAGES = frozenset({"index", "_index", "readme"})


def title_of(path: str, names: Sequence[object]) -> str:
    """A note's title: the first of its names (front matter `title`, else an alias), else
    its file name without `.md` (a folder's `index.md`, `_index.md` or `README.md`: the
    folder's name)."""
    if names and isinstance(names[0], str) and names[0].strip():
        return names[0].strip()
    parts = path.rsplit("/", 2)
    name = parts[-1]
    stem = name[:-3] if name.lower().endswith(".md") and len(name) > 3 else name
    if stem.lower() in FOLDER_PAGES and len(parts) > 1:
        return parts[-2]
    return stem


def lead_of(path: str, names: Sequence[object], titled: bool) -> str:
    """The title a note's passages are embedded under: none for a note `titled` by a
    level-1 heading of its own (its heading paths begin with it), else `title_of` it."""
    return "" if titled else title_of(path, names)


def embedded_heading(lead: str, heading: str) -> str:
    """What the model reads above a passage's text: its heading path, led by its note's
    `lead_of` where the path does not hold it already."""
    if not lead or lead.casefold() in heading.casefold():
        return heading
    return f"{lead} > {heading}" if heading else lead
