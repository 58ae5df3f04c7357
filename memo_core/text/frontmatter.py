"""A note's front matter (YAML between `---` lines, TOML between `+++` lines) and its inline
`#tags`, read for the index: the note's names (`title`, `aliases`), its tags, and the words
of its other scalar fields.

Front matter comes from anywhere (a synced vault, a downloaded folder), so it is read with
real parsers in their safe modes and bounded: a block over `MAX_BLOCK_CHARS`, a block a
parser rejects (a `!!python/object` or `!!binary` tag, a syntax error, a flow nested past
the parser's limit), or one whose values would take more than `MAX_NODES` steps to walk (an
alias bomb: YAML anchors are shared, not copied, when loaded, but a walk visits every use)
is not front matter but text, chunked as the rest of the note is. Nothing here constructs an
object a block names, and nothing raises on any input.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

__all__ = [
    "MAX_BLOCK_CHARS",
    "PARSER_VERSION",
    "FrontMatter",
    "inline_tags",
    "normalize_tag",
    "parse_front_matter",
]

# Bump whenever a change here can read a note's front matter or tags differently: it is part
# of the chunker's version, which indexes record and rebuild on.
PARSER_VERSION = 2
# A block longer than this (characters, delimiters excluded) is text: real front matter is
# a few hundred bytes, and a parser given megabytes is a parser given a weapon.
MAX_BLOCK_CHARS = 64 * 1024
# Values (containers and scalars) visited in one block, and how deep: past either, the block
# is text. 10,000 is far above any real note's fields, far below an alias bomb's 10^9.
MAX_NODES = 10_000
MAX_DEPTH = 32
# A tag longer than this is not a tag (a pasted hash, a base64 run), in the body or not.
MAX_TAG_CHARS = 200

_NAME_KEYS = ("title",)
_ALIAS_KEYS = ("aliases", "alias")
_TAG_KEYS = ("tags", "tag")
# Separators of tags written as one string ("a, b c").
_TAG_SPLIT = re.compile(r"[\s,]+")
# Values of other fields that are no words anyone searches by: numbers, dates and times, and
# identifiers (hashes, UUIDs, numeric ids: 8 or more hex digits and dashes, a digit among
# them). Indexed, they match a query's numbers and stray tokens in every note that has them:
# on office-dev, whose every page carries asset ids, commit hashes and dates, they cost
# English questions on the Russian pages .012 nDCG@10 (words only; BENCHMARKS.md).
_OPAQUE = re.compile(
    r"[+-]?\d+(?:[.,]\d+)?"  # 3, -2, 0.5
    r"|\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[ T].*)?"  # 2024-05-01, 04/20/2016, 2024-05-01T10:00
    r"|(?=\D*\d)[0-9A-Fa-f-]{8,}"  # 1c4937c4-0998-4f81-a994-50d3dd54727c, 758d0b25…, 32351697
)


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """What a note's front matter says: its names, tags and other fields' words."""

    title: str = ""
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # normalised (normalize_tag), in order of first mention
    words: str = ""  # the other scalar fields' values, one a line, numbers/dates/ids left out

    @property
    def names(self) -> tuple[str, ...]:
        """The note's names: its title, then its aliases."""
        return tuple(n for n in (self.title, *self.aliases) if n)


class _NotFrontMatter(Exception):
    """The block is text: too large to walk, or not a mapping of fields."""


def parse_front_matter(lines: list[str]) -> tuple[int, FrontMatter | None]:
    """The index of the first line after the note's front matter and what it says; (0,
    None) when the note has none, or its block is text (unclosed, too large, rejected)."""
    if not lines:
        return 0, None
    opener = lines[0].rstrip()
    if opener not in ("---", "+++"):
        return 0, None
    closers = ("---", "...") if opener == "---" else ("+++",)
    size = 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in closers:
            block = "\n".join(lines[1:i])
            front = _read(block, toml=opener == "+++")
            return (i + 1, front) if front is not None else (0, None)
        size += len(lines[i]) + 1
        if size > MAX_BLOCK_CHARS:
            return 0, None
    return 0, None  # unclosed: it was a thematic break, and the file is prose


@cache
def _parsers() -> tuple[Any, Any]:
    """(YAML's load with memo's loader, TOML's loads), imported on the first front matter:
    `import memo_core` (memo-mcp's start, `memo --version`) does not pay for PyYAML.

    The loader is PyYAML's safe one (libyaml's when built with it) without `!!binary`:
    bytes are no note's field, and a block that holds them is not front matter."""
    import yaml

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - 3.10
        import tomli as tomllib

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        yaml_constructors = {
            tag: fn
            for tag, fn in yaml.SafeLoader.yaml_constructors.items()
            if tag != "tag:yaml.org,2002:binary"
        }

    return (lambda block: yaml.load(block, Loader=Loader)), tomllib.loads  # noqa: S506


def _read(block: str, toml: bool) -> FrontMatter | None:
    load_yaml, load_toml = _parsers()
    try:
        data = load_toml(block) if toml else load_yaml(block)
        return _fields(data)
    except Exception:
        # Whatever a parser raises on what it was given (YAMLError, TOMLDecodeError,
        # ConstructorError for a named object, RecursionError for a deep TOML array,
        # ValueError for a date that is none): the block is text, never a crash.
        return None


def _fields(data: Any) -> FrontMatter:
    if data is None:
        return FrontMatter()  # an empty block: front matter that says nothing
    if not isinstance(data, dict):
        raise _NotFrontMatter  # "---\nJust a line\n---": a scalar, so prose between rules
    budget = [MAX_NODES]
    title = ""
    aliases: list[str] = []
    tags: list[str] = []
    words: list[str] = []
    for key, value in data.items():
        name = key.strip().lower() if isinstance(key, str) else ""
        found = list(_scalars(value, budget, 0))
        if name in _NAME_KEYS and not title and found:
            title = " ".join(found)
        elif name in _ALIAS_KEYS:
            # A string of aliases is one alias or several with commas, as Obsidian reads it.
            aliases += [a.strip() for s in found for a in s.split(",") if a.strip()]
        elif name in _TAG_KEYS:
            tags += [t for s in found for t in _TAG_SPLIT.split(s)]
        else:
            words += [v for v in found if not _OPAQUE.fullmatch(v)]
    return FrontMatter(title, tuple(_unique(aliases)), _tags(tags), "\n".join(words))


def _scalars(value: Any, budget: list[int], depth: int) -> Iterable[str]:
    """The scalar values in `value` as text, lists and nested mappings walked; raises
    _NotFrontMatter past MAX_NODES values or MAX_DEPTH levels (an alias bomb, a loop)."""
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise _NotFrontMatter
    if isinstance(value, bool) or value is None:
        return  # true/false/null say nothing a search could use
    if isinstance(value, str):
        if value.strip():
            yield value.strip()
    elif isinstance(value, (int, float, dt.date)):
        # Dates as ISO text (a datetime is a date too): what a person searching types.
        yield value.isoformat() if isinstance(value, dt.date) else str(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _scalars(v, budget, depth + 1)
    elif isinstance(value, (list, tuple, set)):
        for v in value:
            yield from _scalars(v, budget, depth + 1)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _tags(raw: Iterable[str]) -> tuple[str, ...]:
    return tuple(_unique(t for t in map(normalize_tag, raw) if t))


def normalize_tag(tag: str) -> str:
    """A tag as indexed and matched: without its `#`, case-folded, nested `a/b` kept (no
    leading or trailing `/`); "" when it is no tag (empty, blank inside, or too long)."""
    t = tag.strip().lstrip("#").strip("/").casefold()
    if not t or len(t) > MAX_TAG_CHARS or any(c.isspace() for c in t):
        return ""
    return t


# An inline tag: `#` at a line's start or after a space or an opening bracket, then a word
# character and more of them, `/` or `-` (Obsidian's tag characters). `C#`, `page#anchor`
# and `&#123;` have a word character or `&` before the `#`; `# Heading` has a space after it.
_INLINE_TAG = re.compile(r"(?<![^\s(\[{])#(\w[\w/-]*)")
# Spans whose `#` is no tag, blanked before tags are looked for: link targets `](…)`,
# wikilinks `[[Note#Heading]]`, autolinks `<…>` and bare URLs. Each class excludes its own
# opener, so a line of thousands of openers is still scanned once (no backtracking blow-up).
_NOT_TAGS = re.compile(
    r"\]\([^()\[\]\s]*\)|\[\[[^\[\]]*\]\]|<[^<>\s]*>|[A-Za-z][A-Za-z0-9+.-]{0,31}://\S*"
)
_TICKS = re.compile(r"`+")


def inline_tags(lines: Iterable[str]) -> tuple[str, ...]:
    """The normalised `#tags` of these body lines (those of code fences left out by the
    caller), outside inline code, links and URLs; `#123` (a number, as in issue numbers)
    is no tag."""
    found: list[str] = []
    for line in lines:
        if "#" not in line:
            continue
        text = _NOT_TAGS.sub(" ", _without_code(line))
        for m in _INLINE_TAG.finditer(text):
            tag = m.group(1).rstrip("/-")
            if tag.replace("/", "").isdigit():
                continue
            found.append(tag)
    return _tags(found)


def _without_code(line: str) -> str:
    """`line` with its inline code spans (a run of backticks to the next run as long)
    blanked. Runs are paired through a list per length, so a line of a thousand unmatched
    runs costs one pass, not one search per run."""
    if "`" not in line:
        return line
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line)]
    by_len: dict[int, list[int]] = {}
    for k, (a, b) in enumerate(runs):
        by_len.setdefault(b - a, []).append(k)
    nxt: dict[int, int] = {}  # run index -> the next run of the same length
    for ks in by_len.values():
        nxt.update(zip(ks, ks[1:], strict=False))
    out: list[str] = []
    pos, k = 0, 0
    while k < len(runs):
        close = nxt.get(k)
        if close is None:
            k += 1
            continue
        out.append(line[pos : runs[k][0]])
        pos = runs[close][1]
        out.append(" ")
        k = close + 1
    out.append(line[pos:])
    return "".join(out)
