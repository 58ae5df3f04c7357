"""memo_core/text/sentences.py: a passage's sentences, the units the second look embeds."""

from __future__ import annotations

import pytest

from memo_core.text.sentences import MAX_CHARS, MAX_SENTENCES, MIN_CHARS, sentences


def test_prose_is_split_at_sentence_ends() -> None:
    text = (
        "Restic backs up the home folder every night to a bucket. The password lives in a "
        "manager and on paper in a safe! Without it, the copy is useless? Keep both."
    )
    assert sentences(text) == [
        "Restic backs up the home folder every night to a bucket.",
        "The password lives in a manager and on paper in a safe!",
        "Without it, the copy is useless? Keep both.",  # a short one joins its neighbour
    ]


def test_russian_prose_and_abbreviations_without_a_capital_after() -> None:
    text = (
        "Ключ лежит в /etc/wireguard, т. е. на сервере. "
        "Порт 51820 давно открыт на домашнем роутере Keenetic."
    )
    assert sentences(text) == [
        "Ключ лежит в /etc/wireguard, т. е. на сервере.",
        "Порт 51820 давно открыт на домашнем роутере Keenetic.",
    ]


def test_list_items_table_rows_and_quotes_are_units_of_their_own() -> None:
    text = (
        "Steps to restore a single folder from the snapshots:\n"
        "1. List the snapshots with `restic snapshots` and pick one.\n"
        "- Restore one folder with `restic restore latest --include`.\n"
        "| restic mount | mounts the repository as a folder you can copy from |\n"
        "> A backup never restored is a hope, not a backup at all.\n"
    )
    got = sentences(text)
    assert got == [
        "Steps to restore a single folder from the snapshots:",
        "1. List the snapshots with `restic snapshots` and pick one.",
        "Restore one folder with `restic restore latest --include`.",
        "restic mount | mounts the repository as a folder you can copy from",
        "A backup never restored is a hope, not a backup at all.",
    ]


def test_a_code_fence_is_one_unit_cut() -> None:
    code = "\n".join(f"echo line number {i} of a long script here" for i in range(40))
    got = sentences(f"Run this script every night from cron please:\n\n```sh\n{code}\n```\n")
    assert got[0] == "Run this script every night from cron please:"
    assert got[1].startswith("echo line number 0 of a long script here echo line number 1")
    assert len(got) == 2 and len(got[1]) == MAX_CHARS


def test_bounds() -> None:
    long = "word " * 2000
    assert all(len(s) <= MAX_CHARS for s in sentences(long))
    many = " ".join(f"Sentence number {i} says something quite long enough." for i in range(100))
    assert len(sentences(many)) == MAX_SENTENCES
    assert sentences("") == [] and sentences("   \n\n ") == []
    assert sentences("Tiny.") == ["Tiny."]  # a lone short one is kept
    assert all(len(s) >= MIN_CHARS for s in sentences(many))


@pytest.mark.parametrize(
    "hostile",
    ["." * 1_000_000, "a. " * 300_000, "`" * 1_000_000, "\n" * 500_000, "- " * 400_000],
)
def test_hostile_input_ends(hostile: str) -> None:
    got = sentences(hostile)  # linear: a hang fails the run's timeout
    assert len(got) <= MAX_SENTENCES and all(len(s) <= MAX_CHARS for s in got)
