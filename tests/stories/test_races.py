"""Races that lead outside the roots: a writer inside a notes folder swaps a note,
a sub-folder or the collection itself with a symlink to something outside the allowed
roots, atomically and in a tight loop, while memo searches and reads.

Whatever the timing, no answer may carry a byte of what lies outside (every outside file
holds `MARKER`), nothing outside may change (its tree is hashed before and after), and an
error is memo's own, with a message (never an OSError or a tool's generic failure). Each
race runs for a bounded time: `short` in the default run, `long` (marked slow) on demand.
Each counts its attempts and the swaps, and fails if the race did not really run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from conftest import HANG_S, write_notes
from mcp import Client
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.shared.exceptions import MCPError
from race_helpers import (
    DURATIONS,
    MARKER,
    SWAPS,
    Flipper,
    Tally,
    changes,
    require_exchange,
    tree_state,
)

from memo_core import Engine, MemoError, ModelSource
from memo_core.files.confine import confine
from memo_mcp.lazy import LazyEngine
from memo_mcp.resources import read_note
from memo_mcp.server import build_server
from memo_text import format_hits

INSIDE = "INSIDE-NOTE-b1c9"  # the inside note's text: an answer that has it raced the right way
NOTE = f"# Inside\n\nzebra {INSIDE}\n"
SECRET = f"# Secret\n\nzebra {MARKER}\n"
GENERIC_TOOL_ERROR = "Error executing tool"


@dataclass
class Arena:
    """`allowed/` (the only root) holds the collection `allowed/root/`; `outside/` lies
    outside the roots and holds files whose text carries MARKER."""

    allowed: Path
    root: Path
    outside: Path

    @property
    def roots(self) -> list[Path]:
        return [self.allowed]


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    allowed = tmp_path / "allowed"
    root = write_notes(
        allowed / "root",
        {"a.md": "# A\n\ncat and dog\n", "note.md": NOTE, "sub/note.md": NOTE, "sub/b.md": "# B\n"},
    )
    outside = write_notes(
        tmp_path / "outside",
        {"secret.md": SECRET, "sub/note.md": SECRET, "sub/more.md": SECRET},
    )
    return Arena(allowed, root, outside)


def engine(roots: list[Path] | None, *, notify: bool = False) -> Engine:
    return Engine(models=ModelSource(enabled=False), roots=roots, notify=notify)


def search_once(tally: Tally, e: Engine, path: Path) -> None:
    """One search (lex, after a refresh), its answer or error counted."""
    try:
        results = e.search(path, "zebra", k=10, mode="lex")
    except MemoError as err:
        tally.clean(str(err))
    except Exception as err:  # an OSError (EINVAL from realpath, say) is a crash, not an answer
        tally.generic(repr(err))
    else:
        tally.answer(format_hits(results) + repr(list(results)), inside=INSIDE)


async def mcp_search_once(tally: Tally, client: Client, path: Path) -> None:
    """One memo_search over MCP, its answer or error counted."""
    args = {"path": str(path), "query": "zebra", "mode": "lex", "k": 10}
    try:
        r = await client.call_tool("memo_search", args)
    except MCPError as err:  # a protocol error, not a tool's answer
        tally.generic(f"MCPError: {err}")
        return
    text = "".join(getattr(c, "text", "") for c in r.content)
    if not r.is_error:
        tally.answer(text, inside=INSIDE)
    elif text.startswith(GENERIC_TOOL_ERROR) or not text.strip():
        tally.generic(text or "an empty tool error")
    else:
        tally.clean(text)


def read_note_once(tally: Tally, collection: Path, rel: str, roots: list[Path]) -> None:
    """One read of the note resource, its text or error counted."""
    try:
        text = read_note(LazyEngine(roots), str(collection), rel, roots)
    except (MCPError, ResourceError, MemoError) as err:
        tally.clean(str(err))
    except Exception as err:
        tally.generic(repr(err))
    else:
        tally.answer(text, inside=INSIDE)


def race(flipper: Flipper, seconds: float, tally: Tally, attempt: Callable[[], None]) -> None:
    """`attempt()` again and again for `seconds` while `flipper` swaps (then it is stopped
    and the tree put back), and on until the race is proven to have run both ways
    (`_racing`)."""
    start = time.monotonic()
    with flipper:
        while _racing(start, seconds, tally, flipper):
            attempt()


async def arace(
    flipper: Flipper, seconds: float, tally: Tally, attempt: Callable[[], Awaitable[None]]
) -> None:
    """`race`, for attempts that are coroutines."""
    start = time.monotonic()
    with flipper:
        while _racing(start, seconds, tally, flipper):
            await attempt()


def _racing(start: float, seconds: float, tally: Tally, flipper: Flipper) -> bool:
    """On for `seconds`, then until the race is proven to have run (`tally.want` attempts,
    one answer with the inside note, `SWAPS` swaps), however busy the machine, up to a
    hang's bound."""
    spent = time.monotonic() - start
    proven = tally.found_inside > 0 and tally.attempts >= tally.want and flipper.swaps >= SWAPS
    return spent < seconds or (not proven and spent < HANG_S)


def verdict(tally: Tally, flipper: Flipper, arena: Arena, before: dict[str, str]) -> None:
    """No leak, nothing outside changed, no generic error; at least `tally.want` attempts
    raced."""
    tally.check(flipper.swaps, changes(before, tree_state(arena.outside)), min_attempts=tally.want)


# -- a note swapped with a symlink to an outside file ---------------------------------------


def note_swap(arena: Arena) -> Flipper:
    require_exchange(arena.allowed)
    spare = arena.allowed / "spare.md"  # inside the roots, outside the collection
    os.symlink(arena.outside / "secret.md", spare)
    return Flipper(arena.root / "note.md", spare)


@pytest.mark.parametrize("seconds", DURATIONS)
def test_a_note_swapped_with_an_outside_symlink_never_leaks_into_search(
    arena: Arena, seconds: float
) -> None:
    before = tree_state(arena.outside)
    tally = Tally(want=20)
    flipper = note_swap(arena)
    with engine(arena.roots) as e:
        race(flipper, seconds, tally, lambda: search_once(tally, e, arena.root))
    verdict(tally, flipper, arena, before)


@pytest.mark.parametrize("seconds", DURATIONS)
async def test_a_note_swapped_with_an_outside_symlink_never_leaks_over_mcp(
    arena: Arena, seconds: float
) -> None:
    before = tree_state(arena.outside)
    tally = Tally(want=20)
    flipper = note_swap(arena)
    async with Client(build_server(arena.roots), mode="legacy") as c:
        await arace(flipper, seconds, tally, lambda: mcp_search_once(tally, c, arena.root))
    verdict(tally, flipper, arena, before)


@pytest.mark.parametrize("seconds", DURATIONS)
def test_a_note_swapped_while_the_resource_reads_it_never_leaks(
    arena: Arena, seconds: float
) -> None:
    before = tree_state(arena.outside)
    tally = Tally(want=200)
    flipper = note_swap(arena)
    race(flipper, seconds, tally, lambda: read_note_once(tally, arena.root, "note.md", arena.roots))
    verdict(tally, flipper, arena, before)


# -- a sub-folder swapped with a symlink to an outside folder --------------------------------


def folder_swap(arena: Arena) -> Flipper:
    require_exchange(arena.allowed)
    spare = arena.allowed / "spare-sub"
    os.symlink(arena.outside / "sub", spare)
    return Flipper(arena.root / "sub", spare)


@pytest.mark.parametrize("seconds", DURATIONS)
@pytest.mark.parametrize("notify", [False, True], ids=["polling", "notify"])
def test_a_folder_swapped_with_an_outside_symlink_never_leaks_into_search(
    arena: Arena, seconds: float, notify: bool
) -> None:
    before = tree_state(arena.outside)
    tally = Tally(want=20)
    flipper = folder_swap(arena)
    with engine(arena.roots, notify=notify) as e:
        race(flipper, seconds, tally, lambda: search_once(tally, e, arena.root))
    verdict(tally, flipper, arena, before)


@pytest.mark.parametrize("seconds", DURATIONS)
def test_a_folder_swapped_while_the_resource_reads_below_it_never_leaks(
    arena: Arena, seconds: float
) -> None:
    before = tree_state(arena.outside)
    tally = Tally(want=200)
    flipper = folder_swap(arena)
    race(
        flipper,
        seconds,
        tally,
        lambda: read_note_once(tally, arena.root, "sub/note.md", arena.roots),
    )
    verdict(tally, flipper, arena, before)


# -- the collection swapped with a symlink to another collection outside ---------------------


def other_collection(arena: Arena) -> Path:
    """Another memo collection outside the roots, indexed by memo (its own .memo/index.db),
    and the inside collection indexed too; both indexes closed."""
    other = write_notes(
        arena.outside / "other",
        {f"o{i}.md": f"# Other {i}\n\nzebra {MARKER} other note {i}\n" for i in range(20)},
    )
    with engine(None) as e:
        e.refresh(other, embed=False)
        e.refresh(arena.root, embed=False)
    assert (other / ".memo" / "index.db").is_file()
    return other


def root_swap(arena: Arena, other: Path) -> Flipper:
    require_exchange(arena.allowed)
    spare = arena.allowed / "spare-root"
    os.symlink(other, spare)
    return Flipper(arena.root, spare)


@pytest.mark.parametrize("seconds", DURATIONS)
def test_a_collection_swapped_with_another_outside_never_leaks_or_writes_there(
    arena: Arena, seconds: float
) -> None:
    other = other_collection(arena)
    before = tree_state(arena.outside)
    tally = Tally(want=20)
    flipper = root_swap(arena, other)
    with engine(arena.roots) as e:
        race(flipper, seconds, tally, lambda: search_once(tally, e, arena.root))
    # the other collection's .memo/index.db (and all beside it) byte for byte too
    verdict(tally, flipper, arena, before)


@pytest.mark.parametrize("seconds", DURATIONS)
async def test_a_collection_swapped_under_a_long_running_server(
    arena: Arena, seconds: float
) -> None:
    other = other_collection(arena)
    before = tree_state(arena.outside)
    tally = Tally(want=20)
    flipper = root_swap(arena, other)
    async with Client(build_server(arena.roots), mode="legacy") as c:
        await arace(flipper, seconds, tally, lambda: mcp_search_once(tally, c, arena.root))
    verdict(tally, flipper, arena, before)


@pytest.mark.parametrize("seconds", DURATIONS)
async def test_a_collection_swapped_under_fresh_servers(arena: Arena, seconds: float) -> None:
    other = other_collection(arena)
    before = tree_state(arena.outside)
    tally = Tally(want=10)
    flipper = root_swap(arena, other)

    async def fresh_call() -> None:
        async with Client(build_server(arena.roots), mode="legacy") as c:
            await mcp_search_once(tally, c, arena.root)

    await arace(flipper, seconds, tally, fresh_call)
    verdict(tally, flipper, arena, before)


# -- an ignore file that is a symlink to an outside file -------------------------------------


@pytest.mark.parametrize("name", [".gitignore", ".memoignore"])
@pytest.mark.parametrize("folder", ["", "sub/"], ids=["root", "sub"])
def test_an_ignore_file_that_is_an_outside_symlink_is_not_applied(
    arena: Arena, name: str, folder: str
) -> None:
    rules = arena.outside / "rules"
    rules.write_text("note.md\n*.md\n", encoding="utf-8")  # would leave out every note
    os.symlink(rules, arena.root / folder / name)
    with engine(arena.roots) as e:
        found = {h.relpath for h in e.search(arena.root, "zebra", k=10, mode="lex")}
        [st] = e.status(arena.root)
    assert f"{folder}note.md" in found  # as git does (2.32+): a symlinked .gitignore is not read
    assert st.ignored == 0


def test_git_itself_does_not_follow_a_symlinked_gitignore(tmp_path: Path) -> None:
    """What the test above asks of memo is what git does (so the rule is not memo's own)."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    version = subprocess.run([git, "--version"], capture_output=True, text=True).stdout.split()
    numbers = tuple(int(n) for n in version[2].split(".")[:2] if n.isdigit())
    if numbers < (2, 32):
        pytest.skip(f"git {version[2]} still follows a symlinked .gitignore (before 2.32)")
    repo = write_notes(tmp_path / "repo", {"note.md": NOTE})
    rules = tmp_path / "rules"
    rules.write_text("note.md\n", encoding="utf-8")
    os.symlink(rules, repo / ".gitignore")
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    r = subprocess.run([git, "-C", str(repo), "check-ignore", "-q", "note.md"])
    assert r.returncode == 1  # not ignored


# -- the oracle: one answer for a path outside, whatever lies behind it ----------------------


def outcome(raw: str, fn: Callable[[], object]) -> tuple[str, str]:
    """What `fn()` gave, with the path as given replaced (it differs from case to case)."""
    try:
        got = fn()
    except Exception as e:
        return type(e).__name__, str(e).replace(raw, "<path>")
    return "answer", str(got)


LINKS = ["nothing", "symlink far away", "symlink to another root", "dangling symlink"]


def make_link(outside: Path, kind: str) -> Path:
    link = outside / "link"
    if kind == "folder":
        link.mkdir(parents=True)
    elif kind == "symlink far away":
        (outside / "deep" / "a" / "b").mkdir(parents=True)
        os.symlink(outside / "deep" / "a" / "b", link)
    elif kind == "symlink to another root":  # its ../../root is a real folder of notes, outside
        (outside / "far" / "a" / "b").mkdir(parents=True)
        write_notes(outside / "far" / "root", {"a.md": SECRET})
        os.symlink(outside / "far" / "a" / "b", link)
    elif kind == "dangling symlink":
        outside.mkdir(parents=True, exist_ok=True)
        os.symlink(outside / "gone" / "x", link)
    else:
        outside.mkdir(parents=True, exist_ok=True)
    return link


@pytest.mark.parametrize("kind", LINKS)
def test_confine_answers_the_same_whatever_lies_behind_a_path_outside(
    tmp_path: Path, kind: str
) -> None:
    root = write_notes(tmp_path / "root", {"a.md": NOTE})
    answers = {}
    for case, top in (("folder", tmp_path / "o1"), (kind, tmp_path / "o2")):
        link = make_link(top, case)
        raw = f"{link}/../../root"
        answers[case] = outcome(raw, partial(confine, raw, [root]))
    assert answers[kind] == answers["folder"]


@pytest.mark.parametrize("kind", LINKS)
def test_the_note_resource_answers_the_same_whatever_lies_behind_a_path_outside(
    tmp_path: Path, kind: str
) -> None:
    root = write_notes(tmp_path / "root", {"a.md": NOTE})
    answers = {}
    for case, top in (("folder", tmp_path / "o1"), (kind, tmp_path / "o2")):
        link = make_link(top, case)
        raw = f"{link}/../../root"
        answers[case] = outcome(raw, partial(read_note, LazyEngine([root]), raw, "a.md", [root]))
        assert MARKER not in answers[case][1]
    assert answers[kind] == answers["folder"]
