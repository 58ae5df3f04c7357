"""Proximity: a passage where the query's adjacent words stand together scores more than one
where they stand apart (memo_core.search.wordscore, Store.near)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import Engine, Tuning
from memo_core.index.store import Store
from memo_core.text import textnorm
from memo_core.text.chunking import Chunk

FILLER = " ".join(f"w{i}" for i in range(5))
NOTES = {
    "together.md": "# Notes\n\nSleep deprivation harms memory. "
    + " ".join(f"x{i}" for i in range(7))
    + "\n",
    # Each word twice, never within 3 words of the other: words alone rank this one first.
    "apart.md": "# Log\n\n" + " ".join(f"Sleep {FILLER} deprivation {FILLER}" for _ in range(2)),
    **{f"other{i}.md": f"# Other {i}\n\nunrelated text number {i}\n" for i in range(20)},
}


def test_words_that_stand_together_rank_first(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", NOTES)
    with Engine() as engine:
        hits = engine.search(notes, "sleep deprivation", k=2, mode="lex")
    assert [h.relpath for h in hits] == ["together.md", "apart.md"]
    # The mechanism: without proximity, the page with more of the words wins.
    with Engine(tuning=Tuning(proximity_weight=0.0)) as engine:
        hits = engine.search(notes, "sleep deprivation", k=2, mode="lex")
    assert [h.relpath for h in hits] == ["apart.md", "together.md"]


def store_with(tmp_path: Path, bodies: list[str]) -> tuple[Store, list[int]]:
    store = Store.create(tmp_path / "i.db")
    ids = []
    with store.write():
        for i, body in enumerate(bodies):
            fid = store.upsert_file(f"n{i}.md", 1, 1, f"h{i}", None)
            ids.append(store.insert_chunk(fid, 0, Chunk(1, "", body, 1), f"c{i}", "", "english"))
    return store, ids


@pytest.mark.parametrize(
    ("window", "found"),
    [(1, [0]), (3, [0, 1]), (6, [0, 1, 2])],
)
def test_near_finds_the_pairs_within_the_window(
    tmp_path: Path, window: int, found: list[int]
) -> None:
    store, ids = store_with(
        tmp_path,
        [
            "sleep deprivation",
            "sleep a b deprivation",  # 2 words between
            "deprivation a b c d e sleep",  # 5 between, in the other order
            "sleep only",
        ],
    )
    groups = textnorm.query_groups("sleep deprivation", ["english"])
    near = store.near(groups, 10, (2.0, 1.0), window)
    assert sorted(near) == [ids[i] for i in found]
    assert all(score > 0 for score in near.values())
    store.close()


def test_near_needs_two_words(tmp_path: Path) -> None:
    store, _ = store_with(tmp_path, ["sleep deprivation"])
    assert store.near([("sleep",)], 10, (2.0, 1.0), 3) == {}
    assert store.near([], 10, (2.0, 1.0), 3) == {}
    store.close()
