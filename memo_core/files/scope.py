"""`Scope`: which notes a search ranks, by where they lie, their tags and when they changed.

One value for the CLI, MCP and Python alike, checked once when it is made: a bad glob, date
or tag is an InvalidArgumentError that says what to write. A search ranks only the notes in
scope (the candidates are restricted before the top-k is cut: `search.candidates`).

- `under`: a sub-folder (`projects`), a note (`projects/plan.md`) or a glob of note paths
  (`journal/2024-*`, `**/drafts`), relative to the path searched. A glob is matched as git
  matches one (`*` within a name, `**` across folders, linear time whatever it holds), and a
  note is in scope when the glob matches its path or a folder above it.
- `tags`: the note holds every one of them (`#` optional, any case; `a/b` is held by a note
  tagged `a/b/c` too).
- `after` / `before`: the note's modification time, both bounds inclusive. A bare date is a
  whole day in local time (`before 2024-05-31` includes all of May 31st); a date and time
  without an offset is local time too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone

from memo_core.errors import InvalidArgumentError
from memo_core.files.globmatch import ANY, DIRS, LIT, Token, match, path_glob, positions, regex
from memo_core.messages import Message
from memo_core.text.frontmatter import normalize_tag

# Hostile input stays cheap: a path glob longer than any path, or a list of tags no one
# types, is refused rather than matched.
MAX_UNDER_CHARS = 4096
MAX_TAGS = 32
MAX_DATE_CHARS = 64
_WILDCARDS = "*?[\\"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_DATE_HELP = Message("scope.date_help")


@dataclass(frozen=True, slots=True)
class Scope:
    """Which notes a search ranks (module docstring); every field optional. Made with
    `Scope.parse` from what a user typed, or directly (checked the same way)."""

    under: str | None = None  # '/'-separated, relative to the path searched; normalised
    tags: tuple[str, ...] = ()  # normalised: no '#', case-folded
    after: datetime | None = None  # changed at or after this (aware: local when naive)
    before: datetime | None = None  # changed at or before this
    _glob: tuple[Token, ...] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        under = _under(self.under) if self.under is not None else None
        object.__setattr__(self, "under", under)
        if under is not None and any(c in under for c in _WILDCARDS):
            object.__setattr__(self, "_glob", _glob(under))
        object.__setattr__(self, "tags", _tags(self.tags))
        after = _aware(self.after, "after")
        before = _aware(self.before, "before")
        if after is not None and before is not None and after > before:
            raise InvalidArgumentError(
                "scope.after_before",
                after=after.isoformat(timespec="seconds"),
                before=before.isoformat(timespec="seconds"),
            )
        object.__setattr__(self, "after", after)
        object.__setattr__(self, "before", before)

    @classmethod
    def parse(
        cls,
        *,
        under: str | None = None,
        tags: Iterable[str] | str | None = None,
        after: str | date | None = None,
        before: str | date | None = None,
    ) -> Scope:
        """A scope from a user's values: `after`/`before` as ISO text (or a date or
        datetime); a blank text is left out, as an argument not given."""
        for name, value in (("under", under), ("after", after), ("before", before)):
            _no_nul(name, value)
        for tag in (tags,) if isinstance(tags, str) else tags or ():
            _no_nul("tags", tag)
        return cls(
            under=under if not isinstance(under, str) or under.strip() else None,
            tags=(tags,) if isinstance(tags, str) else tuple(tags or ()),
            after=_moment(after, "after", end=False),
            before=_moment(before, "before", end=True),
        )

    def __bool__(self) -> bool:
        """Whether it leaves any note out."""
        return bool(self.under or self.tags or self.after or self.before)

    @property
    def after_ns(self) -> int | None:
        return _ns(self.after) if self.after is not None else None

    @property
    def before_ns(self) -> int | None:
        # A datetime counts in microseconds: the bound takes in its whole last microsecond.
        return _ns(self.before) + 999 if self.before is not None else None

    def path_test(self) -> Callable[[str], bool] | None:
        """A test of a note's path (relative to the path searched) against `under`; None
        when every path passes. Each test remembers its folders' answers, so a collection's
        notes cost one match each and one per folder."""
        under = self.under
        if under is None:
            return None
        glob = self._glob
        if glob is None:
            return lambda p: p == under or p.startswith(under + "/")
        # No `**` (or one leading `**/`): each '/'-part of the glob matches one name.
        if all(kind < ANY for kind, _ in glob):
            return _by_names(glob, anywhere=False)
        if glob[0][0] == DIRS and all(kind < ANY for kind, _ in glob[1:]):
            return _by_names(glob[1:], anywhere=True)
        matches = _matcher(glob)
        folders: dict[str, bool] = {}

        def folder_in(folder: str) -> bool:
            if folder not in folders:
                parent = folder.rpartition("/")[0]
                folders[folder] = matches(folder) or (bool(parent) and folder_in(parent))
            return folders[folder]

        def test(path: str) -> bool:
            folder = path.rpartition("/")[0]
            return matches(path) or (bool(folder) and folder_in(folder))

        return test


def _matcher(tokens: tuple[Token, ...]) -> Callable[[str], bool]:
    """Whether a text matches `tokens` whole: as a regular expression where it has one run
    (`journal/2024-*`), whose backtracking that bounds (globmatch.regex), 10 times faster
    in Python than the linear matcher that takes the rest."""
    source = regex(tokens)
    if source is not None:
        rx = re.compile(source)
        return lambda text: rx.fullmatch(os.fsencode(text)) is not None

    def matches(text: str) -> bool:
        raw = os.fsencode(text)
        return match(tokens, raw, positions(raw))

    return matches


def _by_names(glob: tuple[Token, ...], *, anywhere: bool) -> Callable[[str], bool]:
    """The test of a glob without `**`: its n '/'-parts each match one name, so a path is
    in scope when its first n names match them (the path, or the folder n names deep);
    `anywhere` (the glob was `**/` and these): any n names in a row. Each part is matched
    alone (most have one run, for a regular expression: `docs/*/[a-l]*.md` is three), and
    each name once per part: folders shared by many notes cost nothing."""
    parts: list[list[Token]] = [[]]
    for token in glob:  # `*`, `?` and classes never take a '/': a literal one splits
        if token == (LIT, 0x2F):
            parts.append([])
        else:
            parts[-1].append(token)
    tests = [_matcher(tuple(p)) for p in parts]
    seen: dict[tuple[int, str], bool] = {}

    def name_in(i: int, name: str) -> bool:
        if (i, name) not in seen:
            seen[(i, name)] = tests[i](name)
        return seen[(i, name)]

    def test(path: str) -> bool:
        names = path.split("/")
        starts = range(len(names) - len(tests) + 1) if anywhere else range(1)
        return any(
            len(names) - j >= len(tests)
            and all(name_in(i, names[j + i]) for i in range(len(tests)))
            for j in starts
        )

    return test


def _no_nul(name: str, value: object) -> None:
    """InvalidArgumentError for a text holding NUL: no name, tag or date holds one, and
    the reason must say so (not a length or a format it does not break)."""
    if isinstance(value, str) and "\0" in value:
        raise InvalidArgumentError("scope.nul", name=name)


def _under(raw: str) -> str | None:
    """`raw` as a '/'-separated path below the path searched; None for the whole of it."""
    _no_nul("under", raw)
    if not isinstance(raw, str) or len(raw) > MAX_UNDER_CHARS:
        raise InvalidArgumentError("scope.under_long", most=MAX_UNDER_CHARS)
    text = raw.strip()
    if text.startswith(("/", "~/")) or text == "~":
        raise InvalidArgumentError("scope.under_absolute", under=raw)
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise InvalidArgumentError("scope.under_up", under=raw)
    return "/".join(parts) or None


def _glob(under: str) -> tuple[Token, ...]:
    try:
        tokens = path_glob(os.fsencode(under))
    except UnicodeEncodeError:
        tokens = None  # a lone surrogate no file name can hold
    if tokens is None:
        raise InvalidArgumentError("scope.under_glob", under=under)
    return tokens


def _tags(raw: Iterable[str]) -> tuple[str, ...]:
    given = list(raw)
    if len(given) > MAX_TAGS:
        raise InvalidArgumentError("scope.tags_many", most=MAX_TAGS, got=len(given))
    out: list[str] = []
    for t in given:
        tag = normalize_tag(t) if isinstance(t, str) else ""
        if not tag:
            raise InvalidArgumentError("scope.not_a_tag", tag=t)
        out.append(tag)
    return tuple(dict.fromkeys(out))


def _moment(value: str | date | None, name: str, *, end: bool) -> datetime | None:
    """A bound as a datetime: a bare date is its day's first moment, or its last (`end`)."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if len(text) > MAX_DATE_CHARS:
            raise InvalidArgumentError(
                "scope.date_long", name=name, chars=len(text), help=_DATE_HELP
            )
        try:
            if len(text) == 10:  # YYYY-MM-DD: a day, not its midnight
                value = date.fromisoformat(text)
            else:
                return datetime.fromisoformat(text)
        except ValueError:
            raise InvalidArgumentError(
                "scope.not_a_date", name=name, value=text, help=_DATE_HELP
            ) from None
    if not isinstance(value, date):
        raise InvalidArgumentError("scope.not_a_date", name=name, value=value, help=_DATE_HELP)
    return datetime.combine(value, time.max if end else time.min)  # its last or first µs


def _aware(moment: datetime | None, name: str) -> datetime | None:
    """`moment` with its offset: naive means local time (what a user's clock says)."""
    if moment is None:
        return None
    if not isinstance(moment, datetime):
        raise InvalidArgumentError("scope.not_a_date", name=name, value=moment, help=_DATE_HELP)
    try:
        return moment if moment.tzinfo is not None else moment.astimezone()
    except (OverflowError, OSError, ValueError):  # beyond what the OS's clock can say
        raise InvalidArgumentError(
            "scope.date_range", name=name, value=str(moment), help=_DATE_HELP
        ) from None


def _ns(moment: datetime) -> int:
    """Nanoseconds since the epoch, exactly (a float timestamp would round them), within
    what SQLite's integers hold (year 9999 is beyond them; no file's time is)."""
    since = moment - _EPOCH
    ns = (since.days * 86_400 + since.seconds) * 10**9 + since.microseconds * 1000
    return max(-(2**63), min(ns, 2**63 - 1 - 999))
