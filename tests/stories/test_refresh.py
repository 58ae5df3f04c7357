"""Incremental refresh: new, changed, deleted, renamed files; vectors reused by content."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CountingEmbedder, write_notes

from memo_core import FileNote, NoticeKind, Searcher
from memo_text import format_status


@pytest.fixture
def searcher(notes: Path, counting: CountingEmbedder):
    with Searcher(notes, embedder=counting) as s:
        s.refresh()
        counting.texts.clear()
        yield s


def _counts(s: Searcher) -> tuple[int, int]:
    st = s.status()[0]
    return st.files, st.chunks


def test_first_refresh_indexes_everything(notes: Path, counting: CountingEmbedder) -> None:
    with Searcher(notes, embedder=counting) as s:
        stats = s.refresh()
        assert (stats.added, stats.changed, stats.deleted) == (3, 0, 0)
        assert _counts(s) == (3, 5)
        assert stats.chunks_embedded == len(counting.texts) == 5
        assert s.status()[0].chunks_without_vectors == 0


def test_nothing_changed_does_nothing(searcher: Searcher, counting: CountingEmbedder) -> None:
    stats = searcher.refresh()
    assert not stats.changed_anything and stats.touched == 0
    assert counting.texts == []


def test_touch_without_change_reads_but_does_not_reembed(
    searcher: Searcher, notes: Path, counting: CountingEmbedder
) -> None:
    p = notes / "pets.md"
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 5_000_000_000))
    stats = searcher.refresh()
    assert stats.touched == 1 and stats.changed == 0
    assert counting.texts == []
    assert searcher.refresh().touched == 0  # the new mtime was stored


def test_editing_one_chunk_reembeds_only_that_chunk(
    searcher: Searcher, notes: Path, counting: CountingEmbedder
) -> None:
    p = notes / "pets.md"
    p.write_text(p.read_text(encoding="utf-8").replace("sings", "sings loudly"), encoding="utf-8")
    stats = searcher.refresh()
    assert stats.changed == 1
    assert stats.chunks_embedded == 1
    assert counting.texts == ["Pets > Birds\nA bird sings loudly when the sun is out."]
    assert _counts(searcher) == (3, 5)
    hit = searcher.search("loudly", mode="lex")[0]
    assert (hit.relpath, hit.line) == ("pets.md", 5)


def test_inserting_lines_moves_line_numbers_without_reembedding(
    searcher: Searcher, notes: Path, counting: CountingEmbedder
) -> None:
    p = notes / "pets.md"
    p.write_text("\n\n\n" + p.read_text(encoding="utf-8"), encoding="utf-8")
    searcher.refresh()
    assert counting.texts == []
    hit = searcher.search("bird sings", mode="lex")[0]
    assert (hit.relpath, hit.line, hit.heading) == ("pets.md", 8, "Pets > Birds")


def test_new_file_is_found(searcher: Searcher, notes: Path, counting: CountingEmbedder) -> None:
    write_notes(notes, {"deep/er/weather.md": "# Weather\n\nRain tomorrow, sun on friday.\n"})
    stats = searcher.refresh()
    assert stats.added == 1 and len(counting.texts) == 1
    hit = searcher.search("rain", mode="lex")[0]
    assert hit.path == str(notes / "deep" / "er" / "weather.md")


def test_deleted_file_disappears(searcher: Searcher, notes: Path) -> None:
    (notes / "cooking" / "soup.md").unlink()
    assert searcher.refresh().deleted == 1
    assert _counts(searcher) == (2, 4)
    assert list(searcher.search("borscht", mode="lex")) == []


def test_rename_reuses_vectors(searcher: Searcher, notes: Path, counting: CountingEmbedder):
    (notes / "pets.md").rename(notes / "animals.md")
    stats = searcher.refresh()
    assert (stats.added, stats.deleted) == (1, 1)
    assert counting.texts == []
    hits = searcher.search("cat dog", mode="vec", k=1)
    assert hits[0].relpath == "animals.md"


def test_model_change_rebuilds_vectors(notes: Path, tiny_model_dir: Path, tmp_path: Path):
    from tinymodels import make_tiny_model_dir

    from memo_core.model.onnx_embedder import load_model_dir

    other = load_model_dir(make_tiny_model_dir(tmp_path / "m2", dim=8, seed=3))
    with Searcher(notes, embedder=load_model_dir(tiny_model_dir)) as s:
        s.refresh()
    with Searcher(notes, embedder=CountingEmbedder(other)) as s:
        stats = s.refresh()
        assert [(n.kind, n.detail) for n in stats.notices] == [(NoticeKind.REBUILT, "model")]
        assert stats.chunks_embedded == 5
        assert s.status()[0].model == other.model_id
        assert s.search("cat", mode="vec", k=1)[0].relpath == "pets.md"


def test_words_first_vectors_later(notes: Path, counting: CountingEmbedder) -> None:
    with Searcher(notes, embedder=counting) as s:
        s.refresh(embed=False)
        assert counting.texts == []
        assert s.status()[0].chunks_without_vectors == 5
        assert s.search("cat", mode="lex")[0].relpath == "pets.md"
        s.search("cat", mode="vec")  # fills the missing vectors first
        assert len(counting.texts) == 5
        assert s.status()[0].chunks_without_vectors == 0


@pytest.mark.parametrize(
    ("content", "note"),
    [
        (b"", FileNote.EMPTY),
        (b"   \n\n", FileNote.EMPTY),
        (b"\x00\x01\x02binary\x00" * 100, FileNote.BINARY),
    ],
)
def test_odd_files_are_skipped_and_counted(notes: Path, content: bytes, note: FileNote) -> None:
    (notes / "odd.md").write_bytes(content)
    with Searcher(notes, use_model=False) as s:
        stats = s.refresh(embed=False)
        st = s.status()[0]
        # An empty note is a note (`changes` lists it): among the files, counted as empty.
        empty = note is FileNote.EMPTY
        assert (st.files, st.empty, st.skipped) == ((4, 1, 0) if empty else (3, 0, 1))
        assert ("odd.md", note) in st.notes
        assert ("odd.md", note, "") in stats.notes


def test_invalid_utf8_is_decoded_with_replacement(notes: Path) -> None:
    (notes / "latin1.md").write_bytes("# Café\n\ncrème brûlée\n".encode("latin-1"))
    with Searcher(notes, use_model=False) as s:
        hit = s.search("cr me br l e", mode="lex")[0]
        assert hit.relpath == "latin1.md" and "\ufffd" in hit.text


def test_fingerprint_is_a_change_token(notes: Path) -> None:
    with Searcher(notes, use_model=False) as s:
        s.refresh(embed=False)
        first = s.status()[0]
    with Searcher(notes, use_model=False) as s:  # stable across runs
        s.refresh(embed=False)
        assert s.status()[0].fingerprint == first.fingerprint
        p = notes / "pets.md"
        os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns + 10**9))
        s.refresh(embed=False)
        assert s.status()[0].fingerprint == first.fingerprint  # touched, not changed
        p.write_text("# Pets\n\nchanged\n", encoding="utf-8")
        s.refresh(embed=False)
        changed = s.status()[0]
        assert changed.fingerprint != first.fingerprint
        assert changed.refreshed_at is not None and changed.refreshed_at >= first.updated_at


def _without_privileges() -> list[str]:
    """A command prefix under which permissions hold (root drops its capabilities)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root, and no setpriv to drop the capabilities that bypass permissions")
    return [setpriv, "--inh-caps=-all", "--bounding-set=-all"]


def test_an_unreadable_folder_is_not_a_deleted_one(notes: Path) -> None:
    with Searcher(notes, use_model=False) as s:
        s.refresh(embed=False)
    prefix = _without_privileges()
    (notes / "cooking").chmod(0)
    try:
        r = subprocess.run(
            [*prefix, sys.executable, "-m", "memo_cli.main", "index", str(notes), "--no-vectors"],
            capture_output=True,
            text=True,
        )
    finally:
        (notes / "cooking").chmod(0o755)
    assert r.returncode == 0, r.stderr
    assert "удалённых 0" in r.stdout
    assert f"{notes}: папку cooking/ не прочитать; её заметки оставлены в индексе" in r.stderr
    with Searcher(notes, use_model=False) as s:
        assert s.search("borscht", mode="lex", refresh=False)[0].relpath == "cooking/soup.md"
        assert s.status()[0].unreadable_folders == ["cooking/"]  # counted in status
        assert ", нечитаемых папок 1" in format_status(s.status())
