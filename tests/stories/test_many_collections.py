"""Many sibling collections searched at once (a folder of project folders, each with its
notes): the bookkeeping they share. A search refreshes only the collections where something
changed, an edit in any one of them is in the next answer, collections come and go between
searches, and the engine's budget of open collections holds across all of them, a search
over more reading the rest one at a time.

Real engines on real indexes; the OS's change reports where a long-lived engine has them.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import HANG_S, REPO, write_notes

from memo_core import Embedder, Engine, ModelSource, Notice, NoticeKind

PROJECTS = 24


def _projects(root: Path, n: int = PROJECTS) -> Path:
    for i in range(n):
        write_notes(
            root / f"proj{i:02}" / "docs",
            {
                "readme.md": f"# Project {i}\n\nThe readme of project {i}: token{i} inside.\n",
                "notes.md": f"# Notes {i}\n\nShared words in every project, and mark{i}.\n",
            },
        )
    return root


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    root = _projects(tmp_path / "projects")
    with Engine(models=ModelSource(enabled=False), refresh_budget_s=None) as e:
        assert e.refresh(root).added == 2 * PROJECTS  # every project indexed
    return root


def _root(projects: Path, name: str) -> str:
    """The collection of one project: its docs folder, where its notes are."""
    return str((projects / name / "docs").resolve())


def _top(e: Engine, root: Path, query: str, mode: str = "lex") -> str:
    hits = e.search(root, query, mode=mode)  # type: ignore[arg-type]
    return hits[0].relpath if hits else ""


def _indexes_open() -> int:
    """The index files this process holds open now (each open collection holds its own)."""
    fds = Path("/proc/self/fd")
    names = []
    for fd in fds.iterdir():
        try:
            names.append(os.readlink(fd))
        except OSError:  # closed since it was listed
            continue
    return sum(name.endswith("index.db") for name in names)


@pytest.mark.parametrize("mode", ["lex", "hybrid"])
def test_an_edit_in_one_of_many_collections_is_found_and_only_it_refreshes(
    projects: Path, tiny_embedder: Embedder, mode: str
) -> None:
    with Engine(models=ModelSource(tiny_embedder), notify=True) as e:
        assert _top(e, projects, "token7", mode) == "readme.md"
        before = {c.root.parent.name: c.refreshed_at for c in e.collections(projects)}
        for i, project in enumerate(["proj03", "proj17", "proj23", "proj17"]):
            note = projects / project / "docs" / "readme.md"
            note.write_text(f"# Edited\n\nfreshword{i} only here now.\n", encoding="utf-8")
            hits = e.search(projects, f"freshword{i}", mode=mode)  # type: ignore[arg-type]
            assert [h.collection for h in hits][:1] == [_root(projects, project)]
            assert "freshword" in hits[0].text
        after = {c.root.parent.name: c.refreshed_at for c in e.collections(projects)}
    # The collections nothing happened in were not refreshed again: no refresh for each.
    untouched = set(before) - {"proj03", "proj17", "proj23"}
    assert untouched and all(after[name] == before[name] for name in untouched)
    assert all(after[name] != before[name] for name in ("proj03", "proj17", "proj23"))


def test_an_edit_between_one_shot_searches_is_found(projects: Path) -> None:
    """Without the OS's reports (a fresh `memo search` each time) each collection is walked
    and compared with its index: what changed is found, the rest is not refreshed."""
    for i, project in enumerate(["proj05", "proj20"]):
        (projects / project / "docs" / "notes.md").write_text(
            f"# Changed\n\nnewword{i}\n", encoding="utf-8"
        )
        with Engine(models=ModelSource(enabled=False)) as e:
            hits = e.search(projects, f"newword{i}", mode="lex")
            assert [h.collection for h in hits] == [_root(projects, project)]
            refreshed = [c.root.parent.name for c in e.collections(projects) if c.refreshed_at]
            assert refreshed == [project]


def test_one_collection_changed_is_walked_once_by_a_one_shot_search(
    projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's only collection, where the OS reports nothing (a fresh `memo search`): its
    refresh walks the folder, and no look before it walks it a second time."""
    import memo_core.collection
    import memo_core.index.indexer

    walks: list[str] = []
    for module in (memo_core.collection, memo_core.index.indexer):
        real = module.scan

        def spied(root: object, *args: Any, _real: Any = real, **kwargs: Any) -> object:
            walks.append(str(root))
            return _real(root, *args, **kwargs)

        monkeypatch.setattr(module, "scan", spied)
    docs = projects / "proj09" / "docs"
    (docs / "notes.md").write_text("# Changed\n\nonceword\n", encoding="utf-8")
    with Engine(models=ModelSource(enabled=False)) as e:
        assert [h.relpath for h in e.search(docs, "onceword", mode="lex")] == ["notes.md"]
    assert len(walks) == 1, walks


def test_a_refresh_that_ended_before_it_was_waited_for_is_not_started_again(
    projects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy machine may run a search's refresh to its end before the search waits for
    it: the search takes that refresh's result, it does not start (and walk) another."""
    import memo_core.collection
    import memo_core.index.indexer

    walks: list[str] = []
    real_scan = memo_core.index.indexer.scan

    def spied(root: object, *args: Any, **kwargs: Any) -> object:
        walks.append(str(root))
        return real_scan(root, *args, **kwargs)

    monkeypatch.setattr(memo_core.index.indexer, "scan", spied)
    real_start = memo_core.collection.Collection.start_refresh

    def slow_to_wait(self: Any, *args: Any, **kwargs: Any) -> Any:
        job = real_start(self, *args, **kwargs)
        job.done.wait(30)  # the caller gets the thread back only once the refresh ended
        return job

    monkeypatch.setattr(memo_core.collection.Collection, "start_refresh", slow_to_wait)
    docs = projects / "proj09" / "docs"
    (docs / "notes.md").write_text("# Changed\n\nonceword\n", encoding="utf-8")
    with Engine(models=ModelSource(enabled=False)) as e:
        assert [h.relpath for h in e.search(docs, "onceword", mode="lex")] == ["notes.md"]
    assert len(walks) == 1, walks


def test_collections_added_and_removed_between_searches(projects: Path) -> None:
    with Engine(models=ModelSource(enabled=False), notify=True) as e:
        assert _top(e, projects, "token4") == "readme.md"
        write_notes(projects / "newproj" / "docs", {"a.md": "# New\n\nnewcomer words\n"})
        hits = e.search(projects, "newcomer", mode="lex")
        assert [h.collection for h in hits] == [_root(projects, "newproj")]
        shutil.rmtree(projects / "proj04")
        assert e.search(projects, "token4", mode="lex") == []
        assert "proj04" not in {c.root.parent.name for c in e.collections(projects)}
        # A collection back under the same name is a new one: its notes, not the old ones.
        write_notes(projects / "proj04" / "docs", {"b.md": "# Back\n\nreturned token4b\n"})
        hits = e.search(projects, "returned", mode="lex")
        assert [h.relpath for h in hits] == ["b.md"]


@pytest.mark.parametrize("budget", [1, 5])
def test_the_open_budget_holds_across_collections_and_all_are_searched(
    projects: Path, tiny_embedder: Embedder, budget: int
) -> None:
    held = _indexes_open()
    with Engine(models=ModelSource(tiny_embedder), notify=True, max_open=budget) as e:
        for mode in ("lex", "hybrid", "lex"):
            # The first and the last collection: every one was read, past the budget too.
            for i in (0, PROJECTS - 1):
                hits = e.search(projects, f"token{i}", mode=mode)  # type: ignore[arg-type]
                assert hits[0].collection == _root(projects, f"proj{i:02}")
                assert hits[0].text.startswith("The readme")  # the hit read back in full
            assert _indexes_open() - held <= budget
        # An edit past the budget is still seen: the OS's reports outlive the connections.
        (projects / "proj22" / "docs" / "notes.md").write_text("# N\n\nlatecomer\n")
        hits = e.search(projects, "latecomer", mode="lex")
        assert [h.collection for h in hits] == [_root(projects, "proj22")]
        assert _indexes_open() - held <= budget


def _in_child(code: str, soft: int, hard: int) -> str:
    prelude = f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard}))\n"
    run = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=HANG_S,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


@pytest.mark.parametrize(("limit", "budget"), [(20, 1), (64, 4), (1024, 109), (20000, 1024)])
def test_the_default_budget_follows_the_descriptors_the_process_may_open(
    limit: int, budget: int
) -> None:
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] < limit:
        pytest.skip("the hard limit here is lower than the case needs")
    code = """
    from memo_core import Engine, ModelSource
    print(Engine(models=ModelSource(enabled=False)).max_open)
    """
    assert int(_in_child(code, limit, limit)) == budget


EDITED = 190  # collections, each edited: as many as fit the budget at the usual soft limit
SOFT = 1024


# "budget": a refresh budget (the path a search with one takes) long enough for any machine:
# this test counts descriptors, not seconds (at 3 s a busy machine answered before the end).
@pytest.mark.parametrize("wait", [600.0, None], ids=["budget", "until-done"])
def test_every_collection_refreshed_within_the_descriptors_the_process_may_open(
    tmp_path: Path, wait: float | None
) -> None:
    """At the usual soft limit (1024), a search over 190 collections each edited since
    refreshes them all and answers from all: the budget counts what a refreshed collection
    holds (its writer too), with a refresh budget and without (an interactive `memo
    search`). Nothing failed, nothing left unread."""
    root = tmp_path / "edited"
    for i in range(EDITED):
        write_notes(root / f"p{i:03}", {"a.md": f"# A{i}\n\nold words {i}\n"})
    with Engine(models=ModelSource(enabled=False), refresh_budget_s=None) as e:
        assert e.refresh(root).added == EDITED
    for i in range(EDITED):
        (root / f"p{i:03}" / "a.md").write_text(f"# A{i}\n\nnewword {i}\n", encoding="utf-8")
    code = f"""
    from memo_core import Engine, ModelSource
    with Engine(models=ModelSource(enabled=False), refresh_budget_s={wait}) as e:
        r = e.search({str(root)!r}, "newword", mode="lex", k=100)
        print(len(r), len({{h.collection for h in r}}), [n.kind.value for n in r.notices])
    """
    assert _in_child(code, SOFT, SOFT) == "100 100 []"


def test_a_refresh_asked_to_let_go_closes_its_writer_when_it_ends(
    tmp_path: Path, tiny_embedder: Embedder
) -> None:
    """A refresh started for one of more collections than the engine keeps open closes its
    connections as it ends, though its collection was let go of while it was at work (a
    search past the budget moved on): no descriptor is kept for it."""
    root = write_notes(tmp_path / "one", {"a.md": "# A\n\nwords\n"})
    embedding, go_on = threading.Event(), threading.Event()

    class Held(Embedder):
        model_id, dim = tiny_embedder.model_id, tiny_embedder.dim

        def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
            embedding.set()
            assert go_on.wait(HANG_S)
            return tiny_embedder.embed_batch(texts, query=query)

    held = _indexes_open()
    with Engine(models=ModelSource(enabled=False)) as e:
        [c] = e.collections(root)
        job = c.start_refresh(Held(), None, let_go=True)
        assert embedding.wait(HANG_S)  # the refresh holds its writer now
        c.close_connections()
        go_on.set()
        assert job.done.wait(HANG_S) and job.error is None
        assert _indexes_open() == held


def test_a_first_hybrid_search_while_the_model_loads_keeps_within_the_budget(
    tmp_path: Path, tiny_model_dir: Path, tiny_embedder: Embedder
) -> None:
    """The vectors loaded while the model's graph loads are those of the collections the
    engine keeps open, not of every one: 120 collections answer at a soft limit of 512."""
    root = tmp_path / "vectors"
    for i in range(120):
        write_notes(root / f"p{i:03}", {"a.md": f"# A{i}\n\nbeets cabbage {i}\n"})
    with Engine(models=ModelSource(tiny_embedder), refresh_budget_s=None) as e:
        assert e.refresh(root).added == 120
    code = f"""
    from memo_core import Engine, ModelSource
    with Engine(models=ModelSource(model_dir={str(tiny_model_dir)!r})) as e:
        r = e.search({str(root)!r}, "beets cabbage", mode="hybrid", k=100)
        print(len(r), [n.kind.value for n in r.notices])
    """
    assert _in_child(code, 512, 512) == "100 []"


@pytest.mark.parametrize(
    ("roots", "where", "named"),
    [
        (["/n/work"], "/n", ("work",)),
        (["/n/a", "/n/b/c"], "/n", ("a", "b/c")),
        (["/n/a", "/n/a/b"], "/n", ("a", "a/b")),
    ],
)
def test_folders_said_together_are_named_from_the_folder_above_them(
    roots: list[str], where: str, named: tuple[str, ...]
) -> None:
    """A notice for several collections names each from the folder they share; one that
    is that folder itself (or the only one) from the folder above it, never as "."."""
    n = Notice.of_folders(NoticeKind.NOT_SEARCHED, roots, "why")
    assert (n.collection, n.folders, n.total) == (where, named, len(roots))


def test_an_entry_point_raises_the_soft_limit_to_the_hard_one() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY or hard < 256:
        pytest.skip("needs a finite hard limit of at least 256")
    code = """
    import resource
    from memo_core.process import raise_descriptor_limit
    raise_descriptor_limit()
    print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    """
    assert int(_in_child(code, 128, hard)) == hard
