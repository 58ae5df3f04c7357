"""memo_core.model.nonsense: made-up strings that mark where a model puts meaningless input."""

from __future__ import annotations

import pytest

from memo_core.model.nonsense import CYRILLIC, KEYBOARD_ROWS, LATIN, nonsense


@pytest.mark.parametrize("n", [0, 1, 4, 64, 200])
def test_n_strings_of_one_to_four_words(n: int) -> None:
    out = nonsense(n)
    assert len(out) == n
    for s in out:
        words = s.split(" ")
        assert 1 <= len(words) <= 4
        assert all(words)  # single spaces, no empty words


def test_the_same_seed_gives_the_same_strings_and_another_seed_others() -> None:
    assert nonsense(32) == nonsense(32)
    assert nonsense(32, seed=1) == nonsense(32, seed=1)
    assert nonsense(32, seed=1) != nonsense(32)


def test_fewer_strings_are_the_first_of_more() -> None:
    """A centroid checked on the first few strings (Embedder.fits_nonsense) sees the strings
    the whole centroid was made from."""
    assert nonsense(8) == nonsense(64)[:8]


def test_the_kinds_take_turns_latin_cyrillic_mixed_and_mashes() -> None:
    out = nonsense(40, seed=3)
    latin, cyrillic = set(LATIN), set(CYRILLIC)
    for i, s in enumerate(out):
        letters = set(s.replace(" ", ""))
        if i % 4 == 0:
            assert letters <= latin
        elif i % 4 == 1:
            assert letters <= cyrillic
        elif i % 4 == 2:
            for word in s.split():  # each word in one alphabet
                assert set(word) <= latin or set(word) <= cyrillic
        else:
            for word in s.split():
                assert any(_mashed_from(word, row) for row in KEYBOARD_ROWS), word


def _mashed_from(word: str, row: str) -> bool:
    """Whether `word` is a run of at least 3 neighbouring keys of `row`, each once or twice."""
    keys = []
    for c in word:
        if not keys or keys[-1][0] != c:
            keys.append([c, 1])
        else:
            keys[-1][1] += 1
    run = "".join(k for k, _ in keys)
    return len(run) >= 3 and run in row and all(count <= 2 for _, count in keys)


def test_made_up_words_are_three_to_nine_letters() -> None:
    for i, s in enumerate(nonsense(80, seed=7)):
        if i % 4 != 3:
            assert all(3 <= len(w) <= 9 for w in s.split())


def test_the_strings_are_not_all_alike() -> None:
    out = nonsense(64)
    assert len(set(out)) == 64
