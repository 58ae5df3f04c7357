"""A search as the user asked for it: checked once, whatever front end built it, and read by
every stage (candidates, ranking, hits)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from memo_core.errors import InvalidArgumentError
from memo_core.files.scope import Scope
from memo_core.text import textnorm
from memo_core.text.passagelang import ENGLISH
from memo_core.text.textnorm import Group
from memo_core.tuning import Tuning
from memo_core.values import (
    DEFAULT_K,
    DEFAULT_MODE,
    MAX_OFFSET,
    ModeName,
    search_arguments,
    whole_number,
)


@dataclass(frozen=True)
class Query:
    """`text` (its normalised `terms`), the `k` best passages after the `offset` better
    ones, in `mode`; `scope`: only the notes in it; `explain`: say why each ranks there."""

    text: str
    k: int = DEFAULT_K
    mode: ModeName = DEFAULT_MODE
    offset: int = 0
    scope: Scope | None = None
    explain: bool = False

    @classmethod
    def of(
        cls,
        text: str,
        k: int = DEFAULT_K,
        mode: ModeName = DEFAULT_MODE,
        *,
        offset: int = 0,
        scope: Scope | None = None,
        explain: bool = False,
    ) -> Query:
        """The query of a front end's arguments; InvalidArgumentError for one it cannot
        be (an empty text, a k or offset out of range, a mode memo lacks, a bad scope)."""
        k, text = search_arguments(text, k, mode)
        whole_number("offset", offset, 0, MAX_OFFSET)
        if scope is not None and not isinstance(scope, Scope):
            raise InvalidArgumentError("search.scope_type", got=scope)
        return cls(text, k, mode, offset, scope, explain)

    @cached_property
    def terms(self) -> list[str]:
        """The words of `text` as an English index holds them (`textnorm.query_terms`):
        each leads its group in `groups`, whatever the languages, and names it in the
        statistics every collection's are summed by (`ranking`)."""
        return textnorm.query_terms(self.text)

    def groups(self, langs: Iterable[str]) -> list[Group]:
        """The words of `text` as an index whose passages are in `langs` holds them: each
        word's stems in English and in each of `langs` (`textnorm.query_groups`)."""
        return list(_groups(self.text, tuple(sorted(set(langs) - {ENGLISH}))))

    @property
    def deep(self) -> int:
        """How many to rank: the pages before this one, this one, and one more hit to know
        whether there are more."""
        return self.offset + self.k + 1

    def wanted(self, tuning: Tuning) -> int:
        """Candidates to gather from each side: more than a page, so that a passage that
        names the note can rise to the top, a first page can be looked at again, and a
        note's passages spread over pages (search.second_look, search.page)."""
        return max(self.deep, tuning.fusion_candidates)

    def in_mode(self, mode: ModeName) -> Query:
        """The same query searched in `mode` (hybrid on words alone, without a model)."""
        return replace(self, mode=mode)


@lru_cache(maxsize=256)
def _groups(text: str, others: tuple[str, ...]) -> tuple[Group, ...]:
    """A query's groups, made once for each collection of a search that holds `others`."""
    return tuple(textnorm.query_groups(text, (ENGLISH, *others)))
