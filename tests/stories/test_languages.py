"""Notes in the languages the model reads, found by words too: a Chinese design note's words
inside runs of Han characters (one token to FTS5's tokenizer), Japanese and Korean alike,
cited by `path:line  heading` as any other note."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_notes

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
