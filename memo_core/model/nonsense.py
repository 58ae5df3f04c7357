"""Made-up nonsense queries: where a model puts text that means nothing.

A model's cosines depend on the query: titles run high, questions and sentences lower, and a
string of random letters still lands somewhere, close to some passage (e5 gives unrelated
texts .7-.8). So "nothing found" is not decided by one absolute cosine. Each model's vectors
for these strings (random letters in Latin and Cyrillic, keyboard rows) mark where
meaningless input lands; a query's cosine to their mean says how much it looks like them,
and a passage must beat that by the model's margin (Embedder.relevance_floor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import random

LATIN = "abcdefghijklmnopqrstuvwxyz"
CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
# Rows of the two keyboards people mash: runs of neighbouring keys.
KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "йцукенгшщзхъ", "фывапролджэ", "ячсмитьбю")


def _word(rng: random.Random, letters: str) -> str:
    return "".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))


def _mash(rng: random.Random) -> str:
    row = rng.choice(KEYBOARD_ROWS)
    start = rng.randrange(len(row) - 2)
    run = row[start : start + rng.randint(3, len(row) - start)]
    return "".join(c * rng.choice((1, 1, 1, 2)) for c in run)


def nonsense(n: int, seed: int = 0) -> list[str]:
    """`n` strings of one to four made-up words: Latin, Cyrillic, mixed, keyboard mashes."""
    import random  # here: a search by words (the model's module loaded) makes none

    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 4
        words = []
        for _ in range(rng.randint(1, 4)):
            if kind == 0:
                words.append(_word(rng, LATIN))
            elif kind == 1:
                words.append(_word(rng, CYRILLIC))
            elif kind == 2:
                words.append(_word(rng, rng.choice((LATIN, CYRILLIC))))
            else:
                words.append(_mash(rng))
        out.append(" ".join(words))
    return out
