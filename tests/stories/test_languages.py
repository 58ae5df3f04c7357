"""Notes in the languages the model reads, found by words too: a Chinese design note's words
inside runs of Han characters (one token to FTS5's tokenizer), Japanese and Korean alike,
cited by `path:line  heading` as any other note."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import apsw
import pytest
from conftest import REPO, write_notes

from memo_core import Engine, NoticeKind

DESIGN = """\
# 嵌入式 MCP 服务器设计

## 端口

服务器监听 8080 端口。

## 产品组

按产品组聚合上下文数据，定期检查 staleness。

## 隔离

不同产品组的数据完全隔离。
"""


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(
        tmp_path / "notes",
        {
            "design.md": DESIGN,
            "tokyo.md": "# 旅行\n\n東京タワーへ行く予定です。\n",
            "seoul.md": "# 보안\n\n테넌트 데이터를 격리합니다.\n",
            "backup.md": "# Бэкап\n\nrestic копирует данные каждую ночь.\n",
        },
    )


@pytest.mark.parametrize(
    ("query", "path", "line", "heading"),
    [
        ("产品组", "design.md", 7, "产品组"),  # also in "隔离"; first where it heads
        ("数据隔离", "design.md", 11, "隔离"),
        ("端口", "design.md", 3, "端口"),
        ("staleness", "design.md", 7, "产品组"),
        ("タワー", "tokyo.md", 1, "旅行"),
        ("데이터", "seoul.md", 1, "보안"),
    ],
)
def test_a_word_inside_a_run_finds_its_note_by_words(
    notes: Path, query: str, path: str, line: int, heading: str
) -> None:
    with Engine() as e:
        hits = e.search(notes, query, mode="lex")
    assert hits, f"nothing found for {query}"
    first = hits[0]
    assert (first.relpath, first.line) == (path, line)
    assert first.heading.endswith(heading)


def test_russian_still_found_beside_them(notes: Path) -> None:
    with Engine() as e:
        [hit] = e.search(notes, "бэкапы", mode="lex")
    assert hit.relpath == "backup.md"


# -- English and Russian notes, exactly as before other languages were stemmed -----------

# Notes in Russian and English with what they hold in practice: code, Latin identifiers and
# commands inside Russian prose, a copy kept in an archive.
AS_BEFORE = {
    "deploy.md": """\
        # Деплой сервиса

        Перед выкаткой проверить config.yaml и переменные окружения.
        Метод getUserById теперь кэширует ответы; см. UserRepository.

        ## Kubernetes

        Применить манифесты: `kubectl apply -f deploy/`, затем дождаться rollout.
        Если поды падают, смотреть `kubectl logs` и события неймспейса.
        """,
    "release.md": """\
        # Release checklist

        Bump the version in pyproject.toml, tag the commit and push the tag.
        The CI builds wheels for Linux and macOS and uploads them to the index.

        ## Rollback

        If the release is broken, yank it and publish a fixed patch version.
        """,
    "archive/release-old.md": """\
        # Release checklist

        Bump the version in pyproject.toml, tag the commit and push the tag.
        The CI builds wheels for Linux and macOS and uploads them to the index.
        """,
}

AS_BEFORE_QUERIES = [
    "backup restore",
    "how do I restore files from backup",
    "sourdough starter feeding",
    "Wi-Fi password",
    "git rebase workflow",
    "python packaging pyproject",
    "release checklist",
    "rollback broken release",
    "как настроить бэкап",
    "резервные копии каждую ночь",
    "что взять с собой в поездку",
    "restic бэкап",
    "getUserById кэширует",
    "kubectl apply",
    "config.yaml окружения",
    "the",
    "zzqx",
]


def _as_before_answers(base: Path) -> list[object]:
    """Every hit of each query in AS_BEFORE_QUERIES, with its figures, over `base`'s two
    collections searched together and the first alone."""
    out: list[object] = []
    with Engine() as e:
        for where in (base / "notes", base / "more", base):
            for q in AS_BEFORE_QUERIES:
                hits = e.search(where, q, k=6, mode="lex", explain=True)
                out.append(
                    [
                        (
                            h.relpath,
                            h.line,
                            h.end_line,
                            h.text,
                            round(h.score, 9),
                            [round(x or 0.0, 9) for x in (h.explain.bm25, h.explain.naming)]
                            if h.explain
                            else None,
                            round(h.explain.proximity or 0.0, 9) if h.explain else None,
                            [Path(p).name for p in h.also_in],
                        )
                        for h in hits
                    ]
                )
    return out


def _vocabulary(index: Path) -> list[tuple[str, int, int]]:
    """The index's words: each stem, in how many passages and how often it occurs."""
    db = apsw.Connection(str(index), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'fts', 'row')")
        return [tuple(r) for r in db.execute("SELECT term, doc, cnt FROM temp.v ORDER BY term")]
    finally:
        db.close()


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode()).hexdigest()[:16]


def test_english_and_russian_notes_are_indexed_and_found_exactly_as_before(
    tmp_path: Path,
) -> None:
    shutil.copytree(REPO / "examples" / "notes", tmp_path / "notes")
    write_notes(tmp_path / "more", AS_BEFORE)
    answers = _as_before_answers(tmp_path)
    words = [_vocabulary(tmp_path / c / ".memo" / "index.db") for c in ("notes", "more")]
    # Computed by memo before it stemmed other languages (b6fc82f, Russian and English
    # Snowball stems by script): 150 hits of 51 searches, and both indexes' vocabularies.
    assert (_digest(answers), _digest(words)) == ("acdbb758fb7d49b5", "83762c31d902dd2f")


# -- Latin-script languages other than English -------------------------------------------

GERMAN = """\
    # Sicherungen

    Die Datenbanken werden jede Nacht gesichert, und die Sicherungen liegen eine Woche
    auf dem zweiten Server. Wenn etwas fehlt, wird eine Warnung verschickt.

    ## Wiederherstellung

    Zuerst den Dienst stoppen. Dann sind die Tabellen aus den letzten Kopien
    wiederherzustellen; die Rechte muss man danach neu konfigurieren.
    """

FRENCH = """\
    # Le poste et le serveur

    Les fichiers sont chiffrés avant d'être sauvegardés : le chiffrement se fait sur le
    poste, pas sur le serveur. Les copies sauvegardées sont gardées pendant un mois.
    """

SPANISH = """\
    # Copias de seguridad

    Las configuraciones del servidor se guardan cada noche en un disco externo, y las
    copias más antiguas se borran cuando el disco está lleno.
    """

ENGLISH_NOTES = {
    "running.md": """\
        # Running plan

        Three easy runs a week, one long run on Sunday. Running in the rain is fine.
        """,
    "backups.md": """\
        # Backups

        The backups run every night; restoring one takes about ten minutes.
        """,
}


@pytest.fixture
def europe(tmp_path: Path) -> Path:
    return write_notes(
        tmp_path / "notes",
        {**ENGLISH_NOTES, "nacht.md": GERMAN, "serveur.md": FRENCH, "copias.md": SPANISH},
    )


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("Sicherung", "nacht.md"),  # the note says Sicherungen
        ("Datenbank", "nacht.md"),  # … Datenbanken
        ("konfiguriere", "nacht.md"),  # … konfigurieren: a verb's other form
        ("fichier", "serveur.md"),  # fichiers: French plurals by English's rules
        ("sauvegardée", "serveur.md"),  # sauvegardées
        ("configuración", "copias.md"),  # configuraciones
        ("guardar", "copias.md"),  # guardan
    ],
)
def test_an_inflected_word_finds_its_note_in_its_own_language(
    europe: Path, query: str, path: str
) -> None:
    with Engine() as e:
        hits = e.search(europe, query, mode="lex")
    assert [h.relpath for h in hits][:1] == [path]


def test_english_queries_find_english_notes_beside_other_languages(
    europe: Path, tmp_path: Path
) -> None:
    alone = write_notes(tmp_path / "alone", ENGLISH_NOTES)
    with Engine() as e:
        for query in ("run", "restore backup", "running plan"):
            mixed = e.search(europe, query, mode="lex")
            before = e.search(alone, query, mode="lex")
            assert [(h.relpath, h.line, h.text) for h in mixed] == [
                (h.relpath, h.line, h.text) for h in before
            ]


def test_a_german_hit_shows_the_lines_that_hold_the_query_words(europe: Path) -> None:
    with Engine() as e:
        [hit, *_] = e.search(europe, "Tabelle Kopie", mode="lex")
    assert hit.relpath == "nacht.md"
    assert hit.heading.endswith("Wiederherstellung")
    assert hit.text.startswith("Zuerst den Dienst stoppen. Dann sind die Tabellen")


def test_an_english_note_with_a_few_german_words_stays_english(tmp_path: Path) -> None:
    notes = write_notes(
        tmp_path / "notes",
        {
            "trip.md": """\
                # Trip to Berlin

                We were running late, so the Sicherung der Daten waited until the hotel:
                the backups ran from the laptop there, über the hotel Wi-Fi.
                """,
            "other.md": "# Other\n\nNothing here.\n",
        },
    )
    with Engine() as e:
        assert [h.relpath for h in e.search(notes, "run", mode="lex")] == ["trip.md"]
        assert [h.relpath for h in e.search(notes, "backup", mode="lex")] == ["trip.md"]


def test_a_russian_note_full_of_identifiers_stays_russian(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", AS_BEFORE)
    with Engine() as e:
        for query, line in [
            ("манифестов", 6),  # "манифесты": Russian stems
            ("выкатки", 1),
            ("getUserById", 1),
            ("config.yaml", 1),
            ("kubectl apply -f", 6),
            ("apply", 6),
        ]:
            hits = e.search(notes, query, mode="lex")
            assert [(h.relpath, h.line) for h in hits][:1] == [("deploy.md", line)], query


def test_an_index_of_older_words_is_rebuilt_in_its_notes_languages(europe: Path) -> None:
    with Engine() as e:
        e.refresh(europe, embed=False)
    # What memo made before it stemmed other languages: schema 6, its words' version 3.
    db = apsw.Connection(str(europe / ".memo" / "index.db"))
    identity = json.loads(db.execute("SELECT value FROM meta WHERE key = 'identity'").fetchone()[0])
    db.execute(
        "UPDATE meta SET value = ? WHERE key = 'identity';"
        "DELETE FROM meta WHERE key = 'languages';"
        "DROP INDEX chunks_lang; ALTER TABLE chunks DROP COLUMN lang; PRAGMA user_version = 6",
        (json.dumps({**identity, "words": 3}),),
    )
    db.close()
    with Engine() as e:
        hits = e.search(europe, "Sicherung", mode="lex")
        assert [n.kind for n in hits.notices] == [NoticeKind.REBUILT]
        assert hits[0].relpath == "nacht.md"


@pytest.mark.parametrize(
    "languages",
    ['{"klingon": 3}', "not json", "[1, 2]", '{"german": "x", "../etc": 1}', 7, b"\x00\xff"],
)
def test_languages_an_index_memo_did_not_write_holds_are_read_as_english(
    europe: Path, languages: object
) -> None:
    """An index written over by something else (its languages' count, each passage's
    language) still answers: a language memo does not stem in is read as English."""
    with Engine() as e:
        e.refresh(europe, embed=False)
    db = apsw.Connection(str(europe / ".memo" / "index.db"))
    db.execute("UPDATE meta SET value = ? WHERE key = 'languages'", (languages,))
    db.execute("UPDATE chunks SET lang = 'klingon' WHERE lang = 'english'")
    db.close()
    with Engine() as e:
        hits = e.search(europe, "backups", mode="lex", refresh=False)
        assert [h.relpath for h in hits][:1] == ["backups.md"]
        assert "backups" in hits[0].text
