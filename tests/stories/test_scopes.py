"""Scopes on search: `under`, `tags`, `after` / `before`, alike in Python and the
CLI (MCP: test_mcp_wire). A scoped search ranks among the notes in scope: the candidates are
filtered before the top-k (and the top-n of each side) is cut, never after."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

import pytest
from conftest import HANG_S, write_notes

from memo_cli.main import main
from memo_core import Engine, InvalidArgumentError, ModelSource, Scope, Searcher, Tuning
from memo_core.model.embedder import Embedder

# A small cut on the word side, so that filtering after it would show with a few decoys.
TUNING = Tuning(fusion_candidates=4)
DECOYS = 12  # notes out of every scope below that match "soup" better than any in it


def _local(text: str) -> float:
    """A local date and time as a file's mtime (a bare scope date means local time)."""
    return datetime.fromisoformat(text).timestamp()


VAULT = {
    "index.md": "# Vault\n\nThe start page.\n",
    "projects/memo/plan.md": "---\ntags: [work, project/memo]\n---\n# Plan\n\nsoup plan cat\n",
    "projects/other.md": "# Other\n\nsoup dog and a #work tag\n",
    "projects/drafts/x.md": "# X\n\nsoup bird draft\n",
    "drafts/idea.md": "# Idea\n\nsoup idea rain\n",
    "journal/2024-05-01.md": "# May day\n\nsoup on a rain day #personal\n",
    "journal/2024-06-01.md": "# June\n\nsoup in the sun\n",
    **{f"decoys/d{i:02}.md": "# Soup\n\nsoup soup soup soup\n" for i in range(DECOYS)},
}
MTIMES = {  # the rest: 2024-01-01 12:00 local
    "journal/2024-05-01.md": "2024-05-01T09:00:00",
    "projects/other.md": "2024-05-31T23:59:30",
    "journal/2024-06-01.md": "2024-06-01T00:00:30",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "vault", VAULT)
    for rel in VAULT:
        t = _local(MTIMES.get(rel, "2024-01-01T12:00:00"))
        os.utime(root / rel, (t, t))
    return root


@pytest.fixture
def searcher(vault: Path, tiny_embedder: Embedder):
    with Searcher(vault, embedder=tiny_embedder, tuning=TUNING) as s:
        yield s


def _found(s: Searcher, scope: Scope | None, mode: str = "lex", k: int = 100) -> list[str]:
    hits = s.search("soup", k=k, mode=mode, scope=scope)
    return [Path(h.path).relative_to(s.path).as_posix() for h in hits]


JOURNAL = {"journal/2024-05-01.md", "journal/2024-06-01.md"}
PLAN, OTHER = "projects/memo/plan.md", "projects/other.md"


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ({"under": "projects"}, {PLAN, OTHER, "projects/drafts/x.md"}),
        ({"under": "./projects/memo/"}, {PLAN}),
        ({"under": "projects/other.md"}, {OTHER}),  # one note
        ({"under": "projects/*.md"}, {OTHER}),  # `*` stays within one name
        ({"under": "projects/*t*e*r*.md"}, {OTHER}),  # several runs in one name
        ({"under": "*/*/plan.md"}, {PLAN}),
        ({"under": "*/m?mo"}, {PLAN}),  # a folder two names deep
        ({"under": "**/drafts"}, {"drafts/idea.md", "projects/drafts/x.md"}),  # any depth
        ({"under": "journal/2024-05-*"}, {"journal/2024-05-01.md"}),
        ({"under": "proj*"}, {PLAN, OTHER, "projects/drafts/x.md"}),  # a folder matched
        ({"under": "project"}, set()),  # a folder's name, not its prefix
        ({"tags": ["#Work"]}, {PLAN, OTHER}),  # front matter and inline, any case
        ({"tags": ["project"]}, {PLAN}),  # nested: project/memo is under project
        ({"tags": ["work", "project/memo"]}, {PLAN}),  # all of them
        ({"tags": "personal"}, {"journal/2024-05-01.md"}),  # one tag as a string (Python)
        ({"tags": ["proj"]}, set()),  # a prefix of a tag's name is no parent tag
        ({"after": "2024-05-01"}, {*JOURNAL, OTHER}),
        ({"after": "2024-05-01", "before": "2024-05-31"}, {"journal/2024-05-01.md", OTHER}),
        ({"after": "2024-06-01"}, {"journal/2024-06-01.md"}),  # a day from its first second
        ({"after": "2024-05-01T09:00", "before": "2024-05-01T09:00"}, {"journal/2024-05-01.md"}),
        ({"after": "2024-05-01T09:00:01", "before": "2024-05-31T23:59"}, set()),
        ({"under": "journal", "after": "2024-05-02"}, {"journal/2024-06-01.md"}),
        ({"under": "projects", "tags": ["work"], "before": "2024-05-01"}, {PLAN}),
    ],
)
def test_each_scope_holds_exactly_its_notes(
    searcher: Searcher, scope: dict, expected: set[str]
) -> None:
    assert set(_found(searcher, Scope.parse(**scope))) == expected


def test_a_date_with_an_offset_is_that_moment(searcher: Searcher) -> None:
    may_day = datetime.fromisoformat("2024-05-01T09:00:00").astimezone()
    stamp = may_day.isoformat()  # the same moment, written with the local offset
    scope = Scope.parse(after=stamp, before=stamp)
    assert _found(searcher, scope) == ["journal/2024-05-01.md"]
    utc = may_day.astimezone(datetime.now().astimezone().tzinfo).isoformat()
    assert _found(searcher, Scope.parse(after=utc, before=utc)) == ["journal/2024-05-01.md"]


@pytest.mark.parametrize("mode", ["lex", "vec", "hybrid"])
def test_the_notes_in_scope_are_ranked_before_the_cut(searcher: Searcher, mode: str) -> None:
    # Unscoped, the decoys fill the whole top of each side (more of them than the cut of
    # either side holds): a filter applied after the cut would leave nothing.
    unscoped = _found(searcher, None, mode, k=DECOYS - 2)
    assert all(p.startswith("decoys/") for p in unscoped)
    got = _found(searcher, Scope.parse(under="projects/*.md"), mode, k=2)
    assert got == [OTHER]
    got = _found(searcher, Scope.parse(tags=["work"]), mode, k=2)
    assert set(got) == {PLAN, OTHER}
    got = _found(searcher, Scope.parse(after="2024-06-01"), mode, k=2)
    assert got == ["journal/2024-06-01.md"]


def test_a_scoped_ranking_is_the_whole_ranking_filtered(searcher: Searcher) -> None:
    """The word statistics are the collection's, scoped or not: the notes in scope keep
    their scores and their order."""
    scope = Scope.parse(under="projects")
    every = searcher.search("soup dog bird", k=100, mode="lex")
    inside = [(h.path, h.score) for h in every if h.relpath.startswith("projects/")]
    scoped = searcher.search("soup dog bird", k=2, mode="lex", scope=scope)
    assert [(h.path, h.score) for h in scoped] == inside[:2]


def test_nothing_in_scope_finds_nothing(searcher: Searcher) -> None:
    for scope in (Scope.parse(under="nowhere"), Scope.parse(after="2030-01-01")):
        assert _found(searcher, scope, "hybrid") == []


def test_an_empty_scope_is_no_scope(searcher: Searcher) -> None:
    everything = _found(searcher, None)
    assert not Scope() and not Scope.parse(under=" ", tags=[], after="", before=None)
    assert _found(searcher, Scope.parse(under=".", after="")) == everything


@pytest.fixture
def teams(tmp_path: Path) -> Path:
    """Two collections below one folder, each with a drafts folder."""
    return write_notes(
        tmp_path / "teams",
        {
            "one/plan.md": "# Plan one\n\nsoup plan\n",
            "one/drafts/a.md": "# A\n\nsoup draft a\n",
            "two/plan.md": "# Plan two\n\nsoup plan\n",
            "two/drafts/b.md": "# B\n\nsoup draft b\n",
            "two/drafts/deep/c.md": "# C\n\nsoup draft c\n",
        },
    )


@pytest.mark.parametrize(
    ("under", "expected"),
    [
        ("*/drafts", {"one/drafts/a.md", "two/drafts/b.md", "two/drafts/deep/c.md"}),
        ("two", {"two/plan.md", "two/drafts/b.md", "two/drafts/deep/c.md"}),
        ("t*/drafts/*.md", {"two/drafts/b.md"}),
        ("**/c.md", {"two/drafts/deep/c.md"}),
        ("one/plan.md", {"one/plan.md"}),
        ("drafts", set()),  # relative to the path searched, not to each collection
    ],
)
def test_under_spans_the_collections_of_the_path_searched(
    teams: Path, tiny_embedder: Embedder, under: str, expected: set[str]
) -> None:
    with Searcher(teams, embedder=tiny_embedder) as s:
        assert len(s.collections) == 2
        assert set(_found(s, Scope.parse(under=under), "hybrid")) == expected


def test_under_is_read_from_the_collection_searched(teams: Path, tiny_embedder: Embedder) -> None:
    with Searcher(teams / "two", embedder=tiny_embedder) as s:
        assert set(_found(s, Scope.parse(under="drafts"))) == {"drafts/b.md", "drafts/deep/c.md"}


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"under": "notes/[draft"}, "is not a glob any path can match"),
        ({"under": "notes\\"}, "is not a glob any path can match"),
        ({"under": "/home/me/notes"}, "is not relative"),
        ({"under": "../elsewhere"}, "leaves the path searched"),
        ({"under": "a\0b"}, "under holds a NUL byte"),
        ({"tags": ["work", "a\0b"]}, "tags holds a NUL byte"),
        ({"after": "2024-01-01\0"}, "after holds a NUL byte"),
        ({"before": "\0"}, "before holds a NUL byte"),
        ({"under": "*" * 5000}, "under must be a folder or glob"),
        ({"tags": [""]}, "not a tag: ''"),
        ({"tags": ["#"]}, "not a tag: '#'"),
        ({"tags": ["two words"]}, "no spaces"),
        ({"tags": [f"t{i}" for i in range(1000)]}, "at most 32 tags"),
        ({"after": "yesterday"}, "after: 'yesterday' is not a date; write an ISO date"),
        ({"before": "2024-02-30"}, "before: '2024-02-30' is not a date"),
        ({"after": "2024-05-01T25:00"}, "is not a date"),
        ({"after": "9" * 100}, "not a date (100 characters)"),
        ({"after": "0001-01-01"}, "out of range"),
        ({"after": "2024-06-01", "before": "2024-05-01"}, "is later than before"),
    ],
)
def test_bad_values_say_what_to_write(values: dict, says: str) -> None:
    with pytest.raises(InvalidArgumentError, match=None) as e:
        Scope.parse(**values)
    assert says in str(e.value)


def test_hostile_values_are_plain_text(searcher: Searcher) -> None:
    everything = set(_found(searcher, None))
    for scope in (
        Scope.parse(under="x' OR 1=1 --"),
        Scope.parse(tags=["x');DROP_TABLE_files;--"]),
        Scope.parse(under="projects/*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"),
    ):
        started = time.monotonic()
        assert _found(searcher, scope) == []
        assert time.monotonic() - started < HANG_S
    assert set(_found(searcher, None)) == everything  # the index is as it was
    many = Scope.parse(tags=[f"t{i}" for i in range(32)])
    assert _found(searcher, many) == []


def test_a_scope_must_be_a_scope(vault: Path, tiny_embedder: Embedder) -> None:
    with Engine(models=ModelSource(tiny_embedder)) as engine:
        with pytest.raises(InvalidArgumentError, match="scope must be a Scope"):
            engine.search(vault, "soup", scope={"under": "projects"})  # type: ignore[arg-type]


def test_cli_scopes(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["search", str(vault), "soup", "--mode", "lex", "--json", "-k", "20"]
    assert main([*argv, "--under", "projects", "--tag", "#work", "--tag", "project"]) == 0
    out = capsys.readouterr().out
    assert "plan.md" in out and "other.md" not in out and "decoys" not in out
    assert main([*argv, "--after", "2024-06-01"]) == 0
    out = capsys.readouterr().out
    assert "2024-06-01.md" in out and "2024-05-01.md" not in out


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--under", "a["], "memo: under 'a[' — шаблон, которому не подойдёт ни один путь"),
        (["--tag", ""], "memo: не тег: ''"),
        (["--after", "2024-13-01"], "memo: after: '2024-13-01' — не дата"),
        (["--after", "2024-06-01", "--before", "2024-05-01"], "позже, чем before"),
    ],
)
def test_cli_bad_scope_is_an_error_line(
    vault: Path, capsys: pytest.CaptureFixture[str], flags: list[str], says: str
) -> None:
    assert main(["search", str(vault), "soup", "--mode", "lex", *flags]) == 2  # usage
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
