"""memo_core.index.scoped: the chunks a search's scope keeps in one index, put in scope for
the word side too, and kept while the index stays as it was."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core.files.fsafe import Folder
from memo_core.files.scope import Scope
from memo_core.index.indexer import Indexer
from memo_core.index.scoped import ScopedChunks
from memo_core.index.store import Store
from memo_core.text import textnorm
from memo_core.tuning import Tuning

OLD = int(datetime(2020, 1, 1).timestamp() * 1e9)
NEW = int(datetime(2024, 6, 1).timestamp() * 1e9)

NOTES = {
    "top.md": "# Top\n\nzebra at the top\n",
    "a/one.md": "---\ntags: [work]\n---\n# One\n\nzebra one\n\n## More\n\nzebra more\n",
    "a/two.md": "# Two\n\nzebra two #home\n",
    "b/three.md": "# Three\n\nzebra three #work\n",
}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "notes", NOTES)
    for rel in NOTES:
        when = OLD if rel.startswith("a/") else NEW
        os.utime(root / rel, ns=(when, when))
    return root


def _refresh(notes: Path, store: Store) -> None:
    with Folder(notes) as root:
        Indexer(root, store, None, Tuning()).refresh()


@pytest.fixture
def store(notes: Path, tmp_path: Path) -> Iterator[Store]:
    made = Store.create(tmp_path / "index.db")
    _refresh(notes, made)
    yield made
    made.close()


def _paths(store: Store, ids) -> set[str]:
    return {row.path for row in store.chunk_rows([int(i) for i in ids]).values()}


def test_a_scope_that_leaves_no_note_out_is_none(store: Store) -> None:
    assert ScopedChunks().among(store, Scope(), "") is None
    assert ScopedChunks().among(store, Scope(under="a"), "a") is None  # the index is `a`
    assert ScopedChunks().among(store, Scope(after=datetime(2000, 1, 1)), "") is None


@pytest.mark.parametrize(
    ("scope", "below", "paths"),
    [
        (Scope(under="a"), "", {"a/one.md", "a/two.md"}),
        (Scope(under="a/*.md"), "", {"a/one.md", "a/two.md"}),
        (Scope(under="notes/b"), "notes", {"b/three.md"}),  # the index is a folder below
        (Scope(under="elsewhere"), "", set()),
        (Scope(under="b"), "notes", set()),  # `b` of the path searched is not this index's
        (Scope(tags=("work",)), "", {"a/one.md", "b/three.md"}),
        (Scope(tags=("home",)), "", {"a/two.md"}),
        (Scope(tags=("nowhere",)), "", set()),
        (Scope(under="a", tags=("work",)), "", {"a/one.md"}),
        (Scope(before=datetime(2021, 1, 1)), "", {"a/one.md", "a/two.md"}),
        (Scope(after=datetime(2021, 1, 1)), "", {"top.md", "b/three.md"}),
        (Scope(after=datetime(2021, 1, 1), tags=("work",)), "", {"b/three.md"}),
    ],
)
def test_the_chunks_in_scope_are_those_of_the_notes_it_keeps(
    store: Store, scope: Scope, below: str, paths: set[str]
) -> None:
    ids = ScopedChunks().among(store, scope, below)
    assert ids is not None
    assert list(ids) == sorted(ids)
    assert _paths(store, ids) == paths
    every = store.chunk_rows(list(range(1, 100)))  # ids from 1: every chunk of these notes
    in_notes = {cid for cid, row in every.items() if row.path in paths}
    assert set(ids.tolist()) == in_notes  # all of their chunks, not only some


def test_the_word_side_searches_only_the_chunks_in_scope(store: Store) -> None:
    zebra = textnorm.query_groups("zebra", ["english"])
    assert len(store.lex(zebra, 50, (1.0, 1.0))) == 5
    ids = ScopedChunks().among(store, Scope(under="a"), "")
    assert ids is not None
    found = store.lex(zebra, 50, (1.0, 1.0), scoped=True)
    assert sorted(cid for cid, _ in found) == sorted(ids.tolist())
    assert _paths(store, [cid for cid, _ in found]) == {"a/one.md", "a/two.md"}


def test_the_same_scope_on_the_same_index_is_kept(store: Store) -> None:
    scoped = ScopedChunks()
    first = scoped.among(store, Scope(under="a"), "")
    assert scoped.among(store, Scope(under="a"), "") is first
    other = scoped.among(store, Scope(under="b"), "")
    assert other is not first and _paths(store, other) == {"b/three.md"}  # type: ignore[arg-type]


def test_a_commit_by_another_connection_is_seen(notes: Path, tmp_path: Path) -> None:
    reader = Store.create(tmp_path / "index.db")
    writer = Store.create(tmp_path / "index.db")
    try:
        _refresh(notes, writer)
        scoped = ScopedChunks()
        first = scoped.among(reader, Scope(under="a"), "")
        assert _paths(reader, first) == {"a/one.md", "a/two.md"}  # type: ignore[arg-type]
        write_notes(notes, {"a/new.md": "# New\n\nzebra new\n"})
        _refresh(notes, writer)
        again = scoped.among(reader, Scope(under="a"), "")
        assert _paths(reader, again) == {"a/one.md", "a/two.md", "a/new.md"}  # type: ignore[arg-type]
    finally:
        reader.close()
        writer.close()


def test_another_index_is_looked_at_anew(notes: Path, tmp_path: Path, store: Store) -> None:
    other = Store.create(tmp_path / "other.db")
    try:
        write_notes(tmp_path / "few", {"a/only.md": "# Only\n\nzebra\n", "c.md": "# C\n\nc\n"})
        _refresh(tmp_path / "few", other)
        scoped = ScopedChunks()
        mine = scoped.among(store, Scope(under="a"), "")
        theirs = scoped.among(other, Scope(under="a"), "")
        assert _paths(store, mine) == {"a/one.md", "a/two.md"}  # type: ignore[arg-type]
        assert _paths(other, theirs) == {"a/only.md"}  # type: ignore[arg-type]
    finally:
        other.close()
