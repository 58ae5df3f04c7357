"""Search modes, fusion, fallbacks, and any user text."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import InvalidArgumentError, ModelUnavailableError, NoticeKind, Searcher
from memo_core.model.embedder import Embedder
from memo_text import notice_text


@pytest.fixture
def searcher(notes: Path, tiny_embedder: Embedder):
    with Searcher(notes, embedder=tiny_embedder) as s:
        yield s


@pytest.mark.parametrize("mode", ["lex", "vec", "hybrid"])
def test_each_mode_finds_the_passage(searcher: Searcher, mode: str) -> None:
    hits = searcher.search("borscht soup recipe", k=3, mode=mode)
    assert hits.mode == mode
    assert hits[0].relpath == "cooking/soup.md"
    assert (hits[0].line, hits[0].heading) == (1, "Soup recipe")
    assert hits[0].text == "Borscht soup: cook the beets first, then add cabbage."
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_russian_stems_and_yo_match(searcher: Searcher) -> None:
    # "восстановлении" and "Восстановление" share a stem; "ё" folds to "е".
    hit = searcher.search("о восстановлении файлов", mode="lex")[0]
    assert (hit.relpath, hit.line, hit.heading) == ("backup.md", 5, "Бэкап > Восстановление")
    assert searcher.search("проверкё", mode="lex")[0].relpath == "backup.md"


def test_question_is_not_an_implicit_and(searcher: Searcher) -> None:
    hits = searcher.search("how would a cat feel about the weather on mars", mode="lex")
    assert hits and hits[0].relpath == "pets.md"


def test_k_limits_and_several_hits_per_file(searcher: Searcher) -> None:
    assert len(searcher.search("the", k=1, mode="lex")) <= 1
    files = [h.relpath for h in searcher.search("bird cat dog sun", k=5, mode="lex")]
    assert files.count("pets.md") == 2


def test_hybrid_keeps_hits_only_one_side_found(notes: Path, tiny_embedder: Embedder) -> None:
    # "xylophone" exists only in one note and is unknown to the tiny model (vector side blind);
    # the words side finds it, and hybrid must still return it.
    write_notes(notes, {"music.md": "# Music\n\nxylophone lessons on monday\n"})
    with Searcher(notes, embedder=tiny_embedder) as s:
        hits = s.search("xylophone cat", k=8, mode="hybrid")
        by_file = {h.relpath: h for h in hits}
        assert "music.md" in by_file and "lex" in by_file["music.md"].found_by
        assert any(h.found_by == ("vec",) for h in hits)  # vector-only hits survive too


def test_hybrid_without_model_falls_back_to_words_and_says_so(notes: Path) -> None:
    with Searcher(notes) as s:  # MEMO_MODEL_DIR points nowhere in tests
        hits = s.search("borscht", mode="hybrid")
        assert hits.mode == "lex" and hits[0].relpath == "cooking/soup.md"
        assert [n.kind for n in hits.notices] == [NoticeKind.MODEL_UNAVAILABLE]
        assert "только по словам" in notice_text(hits.notices[0])


def test_vec_without_model_is_a_clear_error(notes: Path) -> None:
    with Searcher(notes) as s, pytest.raises(ModelUnavailableError, match="use mode lex or hybrid"):
        s.search("borscht", mode="vec")


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        "'",
        "*",
        "-x",
        "col:x",
        "heading:cat",
        "NEAR(cat dog)",
        "cat AND",
        "OR",
        "NOT cat",
        "cat NEAR/2 dog",
        "(((",
        "^cat",
        "cat*",
        "{a b}",
        "\\",
        "\x00\x01\x1b[31m",
        "!!!???...",
        "кот 🐈 cat ✓",
        "日本語のテキスト",
        "a" * 100_000,
        "bird " * 5000,
        "SELECT * FROM chunks; --",
        "\u202e\u2028\ufeff",
    ],
)
@pytest.mark.parametrize("mode", ["lex", "hybrid", "vec"])
def test_any_text_is_safe(searcher: Searcher, query: str, mode: str) -> None:
    hits = searcher.search(query, k=3, mode=mode)
    assert len(hits) <= 3
    # Syntax is text, never FTS5's: a query that holds a word of the notes finds that word's
    # passage by words (whatever quotes, operators or noise surround it).
    words = {w for w in ("cat", "dog", "bird") if w in query.lower().split() or f"{w}*" in query}
    words |= {w for w in ("cat", "dog") if f"({w}" in query or f"{w})" in query}
    words |= {w for w in ("cat",) if f":{w}" in query or f"^{w}" in query}
    if words and mode == "lex":
        assert hits and hits[0].relpath == "pets.md", (query, [h.relpath for h in hits])


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_an_error(searcher: Searcher, query: str) -> None:
    with pytest.raises(InvalidArgumentError, match="empty"):
        searcher.search(query)


@pytest.mark.parametrize("k", [0, -1, 101, 10**9, 1.5, True, "3"])  # 1..100, no clamp
def test_bad_k_is_an_error(searcher: Searcher, k: object) -> None:
    with pytest.raises(InvalidArgumentError, match="k must be"):
        searcher.search("cat", k=k)  # type: ignore[arg-type]


def test_unknown_mode_is_an_error(searcher: Searcher) -> None:
    with pytest.raises(InvalidArgumentError, match="hybrid, lex, vec"):
        searcher.search("cat", mode="fuzzy")


def test_several_collections_under_one_path(tmp_path: Path, tiny_embedder: Embedder) -> None:
    write_notes(tmp_path / "home" / "notes", {"a.md": "# Cats\n\nThe cat sleeps.\n"})
    write_notes(tmp_path / "home" / "work" / "wiki", {"b.md": "# Dogs\n\nThe dog barks.\n"})
    with Searcher(tmp_path / "home", embedder=tiny_embedder) as s:
        assert len(s.collections) == 2
        assert s.search("dog", mode="lex")[0].path == str(tmp_path / "home/work/wiki/b.md")
        assert s.search("cat", mode="lex")[0].path == str(tmp_path / "home/notes/a.md")
        assert {st.files for st in s.status()} == {1}


@pytest.mark.parametrize(
    ("query", "relpath"),
    [
        ("sourdough", "kitchen/sourdough.md"),  # a file name
        ("kitchen", "kitchen/sourdough.md"),  # a folder name
        ("router", "Home_Network/RouterSetup.md"),  # camelCase and _ split
        ("wifi", "net/wi-fi.md"),  # the words of the text and the name, joined
        ("Wi-Fi", "net/wi-fi.md"),
        ("email", "mail.md"),
        ("e-mail", "mail.md"),
        ("вайфай", "дом/вай-фай.md"),
    ],
)
def test_words_in_paths_and_hyphenated_compounds(tmp_path: Path, query: str, relpath: str) -> None:
    notes = write_notes(
        tmp_path / "notes",
        {
            "kitchen/sourdough.md": "# Хлеб на закваске\n\nМука и вода.\n",
            "Home_Network/RouterSetup.md": "# Настройка\n\nПароль на обороте.\n",
            "net/wi-fi.md": "# Сеть\n\nПароль от Wi-Fi.\n",
            "mail.md": "# Почта\n\nПисать на e-mail.\n",
            "дом/вай-фай.md": "# Дом\n\nТочка доступа.\n",
            "other.md": "# Other\n\nnothing here\n",
        },
    )
    with Searcher(notes, use_model=False) as s:
        hits = s.search(query, mode="lex")
        assert hits and hits[0].relpath == relpath, [h.relpath for h in hits]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Deploy the app with make deploy.\n\n# Later\n\nmore\n", "task"),  # the file's name
        ("---\ntitle: Выкатка\n---\nDeploy the app with make deploy.\n", "Выкатка"),
        ("---\naliases: [ship it]\n---\nDeploy the app with make deploy.\n", "ship it"),
    ],
)
def test_a_passage_before_the_first_heading_is_shown_under_the_notes_title(
    tmp_path: Path, text: str, title: str
) -> None:
    from memo_text import format_hits

    notes = write_notes(tmp_path / "notes", {"task.md": text, "other.md": "# Other\n\nx\n"})
    with Searcher(notes, use_model=False) as s:
        hits = s.search("make deploy", mode="lex")
        assert hits[0].relpath == "task.md" and hits[0].heading == title
        assert format_hits(hits).startswith(f"{notes / 'task.md'}:")
        assert f":{hits[0].line}  {title}\n" in format_hits(hits)
