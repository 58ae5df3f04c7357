"""Output a folder can forge: names that try to drive the terminal or add lines,
notes built to swell the index, and a socket named like a note."""

from __future__ import annotations

import itertools
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import default_sigint, write_notes

from memo_core import Engine, FileNote, ModelSource
from memo_core.text.chunking import chunk_markdown

# A window title, a cleared screen, and a line of its own: what the name would do raw.
HOSTILE = "notes\x1b]0;PWNED\x07\x1b[2J\nmemo: forged"
ESCAPED = "notes\\x1b]0;PWNED\\x07\\x1b[2J\\nmemo: forged"
# README, Safety, "Odd input": the most an index holds for any note, times the note's size.
INDEX_SIZE_BOUND = 10


def engine() -> Engine:
    return Engine(models=ModelSource(enabled=False))


def memo(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "memo_cli.main", *args], capture_output=True, timeout=timeout
    )


def assert_inert(output: bytes) -> None:
    """No byte a terminal obeys, and every line one of memo's own."""
    assert b"\x1b" not in output and b"\x07" not in output, output
    assert not any(line.startswith(b"memo: forged") for line in output.splitlines()), output


# -- names on the terminal ------------------------------------------------------------------


def test_watch_shows_a_hostile_folder_name_escaped(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / HOSTILE, {"a.md": "# A\n\ncat\n"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "memo_cli.main", "watch", str(notes), "--debounce", "100"],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_sigint,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out_pipe = proc.stdout
    lines: queue.Queue[bytes] = queue.Queue()

    def read_lines() -> None:
        for line in out_pipe:
            lines.put(line)

    pump = threading.Thread(target=read_lines, daemon=True)
    pump.start()
    seen: list[bytes] = []

    def until(word: str) -> None:
        deadline = time.monotonic() + 30
        while not seen or word.encode() not in seen[-1]:
            seen.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))

    try:
        until("слежу за")
        time.sleep(0.3)
        (notes / "b.md").write_text("# B\n\ndog\n", encoding="utf-8")
        until("новых 1")  # an update line names the folder too
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 130  # interrupted
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    pump.join(10)
    while not lines.empty():
        seen.append(lines.get())
    out = b"".join(seen) + proc.stderr.read()
    assert_inert(out)
    assert f"слежу за {tmp_path}/{ESCAPED} (Ctrl-C — стоп)".encode() in out
    assert f"{tmp_path}/{ESCAPED}: новых 1".encode() in out


@pytest.mark.parametrize(
    "args",
    [["search", "{path}", "x"], ["watch", "{path}"], ["status", "{path}"], ["changes", "{path}"]],
    ids=lambda a: a[0],
)
def test_an_error_naming_a_hostile_path_is_one_escaped_line(
    tmp_path: Path, args: list[str]
) -> None:
    missing = tmp_path / HOSTILE
    r = memo(*(a.format(path=missing) for a in args), timeout=30)
    assert r.returncode == 1 and r.stdout == b""
    assert_inert(r.stderr)
    [line] = r.stderr.decode().splitlines()
    assert line.startswith(f"memo: путь не существует: {tmp_path}/{ESCAPED}; укажите ")


# -- a socket named like a note -------------------------------------------------------------


def test_a_socket_named_like_a_note_is_skipped_for_good(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = write_notes(tmp_path / "notes", {"a.md": "# A\n\ncat\n"})
    monkeypatch.chdir(notes)  # a socket's path is limited to about 100 bytes: bind it by name
    with socket.socket(socket.AF_UNIX) as server, engine() as e:
        server.bind("sock.md")
        first = e.refresh(notes)
        assert first.notes == [("sock.md", FileNote.SPECIAL, "")]
        assert e.refresh(notes).notes == []  # not opened again: it is no note, now or later
        [st] = e.status(notes)
        assert st.skipped == 1 and ("sock.md", FileNote.SPECIAL) in st.notes
        assert e.changes(notes).files == [str(notes / "a.md")]


# -- notes built to swell the index ---------------------------------------------------------


def index_multiple(tmp_path: Path, text: str) -> float:
    notes = write_notes(tmp_path / "notes", {"n.md": text})
    with engine() as e:
        e.refresh(notes)
    index = sum(p.stat().st_size for p in (notes / ".memo").iterdir())
    return index / (notes / "n.md").stat().st_size


def _unique_words(size: int, counter: itertools.count[int], joiner: int = 1) -> str:
    """About `size` characters of words no other place repeats (the costliest to index),
    `joiner` of them hyphenated together (each compound is indexed written together too)."""
    out: list[str] = []
    total = 0
    while total < size:
        out.append("-".join(format(next(counter), "x") for _ in range(joiner)))
        total += len(out[-1]) + 1
    return " ".join(out)


SWELLING = {
    # The note: every bare heading once stored its 200-character title (37x).
    "bare-headings-under-a-long-title": "# "
    + "t" * 200
    + "\n"
    + "".join(f"## h{i}\n" for i in range(100_000)),
    "one-letter-headings": "# a\n" * 200_000,  # 37x, without any long path
}


@pytest.mark.parametrize("text", SWELLING.values(), ids=SWELLING.keys())
def test_an_index_stays_within_its_stated_multiple_of_the_note(tmp_path: Path, text) -> None:
    assert index_multiple(tmp_path, text) < INDEX_SIZE_BOUND


def test_a_note_just_within_the_rule_stays_within_the_multiple_too(tmp_path: Path) -> None:
    # Sections as small as the rule lets them be, with bodies of unique hyphenated words
    # (the costliest text to index): the worst note found (7.3x). 40 characters a body
    # instead of 41 and it would be chunked by size.
    words = itertools.count()
    text = "".join(f"# x\n{_unique_words(41, words, 2)}\n" for _ in range(5000))
    assert len(chunk_markdown(text)) == 5000  # one chunk a section: the rule let it be
    assert index_multiple(tmp_path, text) < INDEX_SIZE_BOUND


def test_a_note_of_bare_headings_stays_findable_line_by_line(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", {"n.md": SWELLING["bare-headings-under-a-long-title"]})
    # Waiting for the whole index: on a loaded machine 100,000 headings take longer than the
    # refresh budget, and a search within it would answer before the note is in.
    with Engine(models=ModelSource(enabled=False), refresh_budget_s=None) as e:
        [hit] = e.search(notes, "h77777", mode="lex", k=1)
    line = hit.text.split("\n").index("## h77777")
    assert hit.line + line == 77_777 + 2  # the heading's own line, counted from the hit's
    assert hit.heading.startswith("t" * 150)


def test_chunked_by_size_every_line_is_kept_in_order_under_its_path() -> None:
    text = "---\ntitle: x\n---\nintro\n# Top\n" + "".join(
        f"## s{i}\n{'body ' * (i % 3)}\n" for i in range(3000)
    )
    chunks = chunk_markdown(text, 500)
    assert len(chunks) < 3000 / 10  # packed, not one chunk per section
    source = text.split("\n")
    assert [c.line for c in chunks] == sorted({c.line for c in chunks})
    kept = [line for c in chunks for line in c.text.split("\n") if line.strip()]
    assert kept == [line for line in source[3:] if line.strip()]  # front matter aside
    for c in chunks:
        assert len(c.text) <= 500 and source[c.line - 1] == c.text.split("\n")[0]
        above = [ln for ln in source[: c.line] if ln.startswith("#")]
        want = {"": "", "# Top": "Top"}.get(above[-1] if above else "")
        assert c.heading == (want if want is not None else f"Top > {above[-1][3:]}")


def test_notes_of_one_line_sections_keep_a_chunk_per_section() -> None:
    text = "# Contacts\n" + "".join(
        f"## Person {i}\nphone 555-01{i:02}, met at the spring conference in Lisbon\n"
        for i in range(200)
    )
    chunks = chunk_markdown(text)
    assert [c.heading for c in chunks] == [f"Contacts > Person {i}" for i in range(200)]
