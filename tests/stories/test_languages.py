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

from memo_core import Engine

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
