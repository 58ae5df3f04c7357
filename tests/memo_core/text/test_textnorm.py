"""memo_core.text.textnorm: words lower-cased, ё→е and stemmed, the same for a note and a
query; a note's path as words; a query's distinct stems without stopwords."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from memo_core.text.textnorm import (
    STOPWORDS,
    cyrillic_share,
    group_stems,
    normalize,
    path_text,
    query_groups,
    query_terms,
    words,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, World!", ["hello", "world"]),
        ("Ёлка и ЁЖ", ["елка", "и", "еж"]),
        ("snake_case 42 x2", ["snake_case", "42", "x2"]),  # \w: the underscore holds
        ("Wi-Fi", ["wi", "fi", "wifi"]),  # parts first, the compound at the end
        ("e\u2011mail и wi\u2010fi", ["e", "mail", "и", "wi", "fi", "email", "wifi"]),
        ("мульти-пульти-шоу", ["мульти", "пульти", "шоу", "мультипультишоу"]),
        ("a - b", ["a", "b"]),  # a dash between words joins nothing
        ("", []),
        ("... !!!", []),
        # Chinese, Japanese and Korean runs: overlapping pairs, a lone character as it is.
        ("产品组", ["产品", "品组"]),
        ("MCP端口8080", ["mcp", "端口", "8080"]),
        ("是 東京タワー", ["是", "東京", "京タ", "タワ", "ワー"]),
        ("데이터 격리", ["데이", "이터", "격리"]),
    ],
)
def test_words_are_lowered_folded_and_compounds_joined(text: str, expected: list[str]) -> None:
    assert words(text) == expected


def test_words_without_joining_keeps_only_the_parts() -> None:
    assert words("Wi-Fi e-mail", joined=False) == ["wi", "fi", "e", "mail"]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("cat", "cats"),
        ("running", "run"),
        ("восстановление", "восстановления"),
        ("бэкап", "бэкапа"),
        ("ёлки", "Елки"),  # ё folded before stemming
        ("ЁЖИК", "ёжик"),
        ("wifi", "Wi-Fi"),  # the compound written together is among its words
    ],
)
def test_inflections_normalise_alike(one: str, other: str) -> None:
    assert set(normalize(one).split()) & set(normalize(other).split())
    assert normalize(one) == normalize(one.lower())


def test_normalize_gives_stems_separated_by_single_spaces() -> None:
    text = normalize("  Cats\tand\n\nDOGS,  кошки — собаки ")
    assert text == " ".join(text.split())
    assert text.split() == [normalize(w) for w in ["cats", "and", "dogs", "кошки", "собаки"]]


@pytest.mark.parametrize(
    "word",
    [
        "a" * 41 + "ing",  # longer than a word: a hash or base64, not stemmed
        "2024",
        "x86_64",
        "ᏣᎳᎩ",  # a script Snowball has no stemmer for (Cherokee): as it is
    ],
)
def test_what_is_no_word_of_a_stemmed_language_is_kept_as_it_is(word: str) -> None:
    assert normalize(word) == word.lower()


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("λόγος", "λόγοι"),  # Greek
        ("الكتاب", "كتاب"),  # Arabic
        ("համակարգիչներ", "համակարգիչ"),  # Armenian
    ],
)
def test_a_script_that_says_its_language_is_stemmed_in_it(one: str, other: str) -> None:
    assert normalize(one) == normalize(other)
    assert normalize(one, "german") == normalize(one)  # whatever its passage's language


def test_latin_words_are_stemmed_in_their_passages_language() -> None:
    assert normalize("Sicherungen", "german") == normalize("Sicherung", "german")
    assert normalize("Sicherungen") != normalize("Sicherung")  # as English: apart
    assert normalize("копии Sicherungen", "german").split()[0] == normalize("копии")


def test_a_query_word_is_a_group_of_its_stems_in_each_language() -> None:
    groups = query_groups("Sicherungen der Datenbank и копии", ["english", "german"])
    assert groups == [
        ("sicherungen", "sicherung"),  # English first: the stem `query_terms` gives
        ("der",),  # the same stem in both
        ("datenbank",),
        (normalize("копии"),),  # Cyrillic: Russian in any passage
    ]
    assert [g[0] for g in groups] == query_terms("Sicherungen der Datenbank и копии")
    assert query_groups("cats and dogs", ["english"]) == [("cat",), ("dog",)]


def test_a_latin_word_with_cyrillic_in_it_is_stemmed_as_russian() -> None:
    # A mixed word ("Cтол" with a Latin C) goes to the Russian stemmer: its ending is cut.
    assert normalize("Cтолами") == normalize("Cтол")


@pytest.mark.parametrize(
    ("rel", "whole", "expected"),
    [
        ("projects/MessageBox_v2.md", True, "projects MessageBox Message Box v2"),
        ("projects/MessageBox_v2.md", False, "projects Message Box v2"),
        ("Notes.MD", True, "Notes"),  # any case of .md
        ("a/b.c/d e.md", True, "a b c d e"),
        ("заметкиПлан.md", True, "заметкиПлан заметки План"),  # humps in Cyrillic too
        ("readme", True, "readme"),  # no suffix to drop
        ("x//y__z.md", True, "x y z"),  # empty segments give nothing
        ("2024Plan.md", True, "2024Plan 2024 Plan"),
    ],
)
def test_a_path_reads_as_its_words(rel: str, whole: bool, expected: str) -> None:
    assert path_text(rel, whole) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how do I set up the VPN", ["set", "up", "vpn"]),
        ("как настроить бэкап", [normalize("настроить"), normalize("бэкап")]),
        ("the how", ["the", "how"]),  # nothing but stopwords: they are the query
        ("cat cats CAT", ["cat"]),  # distinct stems, in order of first appearance
        ("dogs and cats", ["dog", "cat"]),
        ("Wi-Fi", ["wi", "fi", "wifi"]),
        ("", []),
    ],
)
def test_query_terms_are_distinct_stems_without_stopwords(query: str, expected: list[str]) -> None:
    assert query_terms(query) == expected


def test_query_terms_stop_at_the_limit_and_may_leave_compounds_apart() -> None:
    many = " ".join(f"word{i}" for i in range(100))
    assert query_terms(many) == [f"word{i}" for i in range(64)]
    assert query_terms(many, limit=3) == ["word0", "word1", "word2"]
    assert query_terms("Wi-Fi", joined=False) == ["wi", "fi"]


def test_stopwords_are_dropped_from_queries_only() -> None:
    assert {"the", "как", "в"} <= STOPWORDS
    assert normalize("the cat") == "the cat"  # the index keeps every word
    assert query_terms("the cat") == ["cat"]


def test_a_query_and_a_note_agree_on_each_word() -> None:
    note = "Как восстановить файлы из резервной копии: restic restore"
    indexed = set(normalize(note).split())
    assert set(query_terms("восстановить файлы restic")) <= indexed
    assert set(query_terms("Восстановить ФАЙЛЫ Restic")) <= indexed


def test_threads_stem_side_by_side_as_one_stemmer_does_alone() -> None:
    """PyStemmer forbids concurrent calls on one stemmer: each thread has its own. Words
    no other test stems (normalize remembers stems), each stemmed on one of 8 threads."""
    import Stemmer

    ru, en = Stemmer.Stemmer("russian"), Stemmer.Stemmer("english")
    cyrillic, latin = "абвгдежзиклмнопрст", "abcdefghijklmnopqr"
    pairs = [
        (ru_a + ru_b, la_a + la_b)
        for ru_a, la_a in zip(cyrillic, latin, strict=True)
        for ru_b, la_b in zip(cyrillic, latin, strict=True)
    ]
    texts = [f"зыб{ru}ениями quux{la}ations" for ru, la in pairs]
    expected = [
        f"{ru.stemWord(f'зыб{r}ениями')} {en.stemWord(f'quux{la}ations')}" for r, la in pairs
    ]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(normalize, texts))
    assert together == expected


@pytest.mark.parametrize(
    ("note", "query"),
    [
        ("按产品组聚合上下文数据", "产品组"),
        ("不同产品组的数据完全隔离", "隔离"),
        ("東京タワーへ行く", "タワー"),
        ("데이터를 격리합니다", "데이터"),
    ],
)
def test_a_word_inside_a_run_is_found_by_its_pairs(note: str, query: str) -> None:
    """A run of Han, Kana or Hangul was one token: no word inside it could be found."""
    assert set(query_terms(query)) <= set(normalize(note).split())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Как настроить бэкап restic на сервере", "как настро бэкап restic на сервер"),
        ("How to set up backups with restic, Wi-Fi", "how to set up backup with restic wi fi wifi"),
    ],
)
def test_russian_and_english_are_normalised_as_before(text: str, expected: str) -> None:
    """No pairs where no character of those scripts is: the index of Russian and English
    notes is the same as before them."""
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("бэкап", 1.0),
        ("Backup", 0.0),
        ("бэкап restic", 5 / 11),  # letters counted, not words
        ("Ёлка: 42 — ok", 4 / 6),
        ("42 — 产品组", None),  # neither script
        ("", None),
    ],
)
def test_the_cyrillic_share_of_a_text(text: str, share: float | None) -> None:
    assert cyrillic_share(text) == (share if share is None else pytest.approx(share))


def test_group_stems_are_every_stem_once_in_the_query_order() -> None:
    groups = query_groups("Sicherungen der Datenbanken Sicherung", ["english", "german"])
    assert group_stems(groups) == ["sicherungen", "sicherung", "der", "datenbanken", "datenbank"]
    assert group_stems([]) == []
