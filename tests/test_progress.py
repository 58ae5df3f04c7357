"""memo_cli/progress.py: the bar names each pass of a refresh and counts its own units."""

from __future__ import annotations

import time

import pytest

from memo_cli.progress import render
from memo_core import Progress
from memo_text import Lang


@pytest.mark.parametrize(
    ("phase", "label", "counts"),
    [
        ("index", "индекс", "3/10 файлов  40 чанков"),
        ("embed", "векторы", "40/80 чанков"),
        ("sentences", "предложения", "40/80 чанков"),
    ],
)
def test_each_pass_has_its_bar(phase: str, label: str, counts: str) -> None:
    p = Progress(phase, 3, 10, 40, 80 if phase != "index" else None, time.monotonic() - 2)
    line = render(p)
    assert line.startswith(f"{label} [") and f"]  {counts}  " in line


def test_the_bar_in_english() -> None:
    p = Progress("sentences", 0, 0, 5, 10, time.monotonic() - 1)
    assert render(p, Lang.EN).startswith("sentences [############------------]  5/10 ")
