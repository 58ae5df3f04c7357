"""Exhausted resources: out of descriptors (`ulimit -n`) and a full disk, in the CLI and
over MCP. One line, the right exit status, nothing left behind, and an answer from what is
committed where one is possible (never advice to rebuild an index that is whole)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import HANG_S, REPO
from mcp_helpers import WireServer

MANY = 160  # collections: each holds a few descriptors while a search reads it
# Open files allowed: far fewer than MANY collections need at once; the engine keeps a
# budget open and reads the rest one at a time, so the whole answer comes. TIGHT: too few
# even for that, what could be read answers.
LIMIT = 256
TIGHT = 12


def many_collections(root: Path) -> Path:
    for i in range(MANY):
        d = root / f"p{i:03d}"
        d.mkdir(parents=True)
        (d / "a.md").write_text(f"# A{i}\n\nzebra {i}\n", encoding="utf-8")
    return root


def limited(code: str, limit: int = LIMIT) -> list[str]:
    """Python running `code` with at most `limit` open files."""
    prelude = f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, {limit}))\n"
    return [sys.executable, "-c", prelude + textwrap.dedent(code)]


@pytest.fixture
def indexed_many(tmp_path: Path) -> Path:
    root = many_collections(tmp_path / "many")
    run = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "index", str(root), "--no-vectors"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=HANG_S * 4,
    )
    assert run.returncode == 0, run.stderr
    return root


def cache_indexes() -> list[Path]:
    return sorted(Path(os.environ["MEMO_CACHE_DIR"]).rglob("index.db"))


def cli_search(root: Path, query: str, limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        limited("from memo_cli.main import entry; entry()", limit)
        + ["search", str(root), query, "--mode", "lex", "-k", "2"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=HANG_S * 4,
    )


def test_a_cli_search_over_more_folders_than_descriptors_answers_from_all(
    indexed_many: Path,
) -> None:
    for query, first in (("zebra", "p000"), (f"zebra {MANY - 1}", f"p{MANY - 1:03d}")):
        run = cli_search(indexed_many, query, LIMIT)
        assert run.returncode == 0 and run.stderr == "", run.stderr
        hits = [line for line in run.stdout.splitlines() if line.startswith("/")]
        assert f"/{first}/a.md:1" in hits[0], run.stdout
        assert "не прочитано" not in run.stdout and "не удалось" not in run.stdout
    assert cache_indexes() == []


def test_a_cli_search_out_of_descriptors_answers_from_what_it_could_read(
    indexed_many: Path,
) -> None:
    run = cli_search(indexed_many, "zebra", TIGHT)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert len(run.stderr.splitlines()) <= 2, run.stderr  # one line, not one a folder
    assert run.returncode == 0, run.stderr  # what could be read answers
    assert "A0" in run.stdout
    notices = [line for line in run.stdout.splitlines() if line.startswith("(")]
    assert "не прочитано папок" in run.stdout or "не удалось обновить" in run.stdout
    assert len(notices) <= 2, notices  # a line for all the folders, not one a folder
    assert cache_indexes() == []  # no index made in the cache for want of descriptors


def test_memo_mcp_over_more_folders_than_descriptors_answers_from_all(indexed_many: Path) -> None:
    env = {**os.environ, "MEMO_ROOTS": str(indexed_many.parent)}
    server = WireServer(env, command=limited("from memo_mcp.server import main; main()"))
    try:
        server.initialize()
        args = {"path": str(indexed_many), "query": "zebra", "mode": "lex", "k": 2}
        result = server.tool("memo_search", args)
        text = result["content"][0]["text"]
        assert not result.get("isError"), text  # the engine reads past its budget in turn
        assert "zebra 0" in text and "не прочитано" not in text and "не удалось" not in text
    finally:
        assert server.close() == 0
    assert "Traceback" not in server.stderr_text()
    assert len(server.stderr_text().splitlines()) <= 2, server.stderr_text()
    assert cache_indexes() == []


# -- a full disk ----------------------------------------------------------------------------


def _can_mount_tmpfs() -> bool:
    if shutil.which("unshare") is None or sys.platform != "linux":
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


FULL_DISK = r"""
set -e
mount -t tmpfs -o size=400k tmpfs "$DISK"
mkdir "$DISK/notes"
for i in 1 2 3 4 5 6; do printf '# Note %s\n\ncabbage %s\n' $i $i > "$DISK/notes/n$i.md"; done
"$PY" -m memo_cli.main index "$DISK/notes" --no-vectors > /dev/null
# the disk filled by another program, then a note edited in place (no new blocks)
dd if=/dev/zero of="$DISK/filler" bs=4k 2>/dev/null || true
printf '# Note 1\n\nquokka 1\n' | dd of="$DISK/notes/n1.md" conv=notrunc 2>/dev/null
set +e
"$PY" -m memo_cli.main search "$DISK/notes" cabbage --mode lex -k 1 \
    > "$OUT/search.out" 2> "$OUT/search.err"
echo $? > "$OUT/search.rc"
"$PY" -m memo_cli.main index "$DISK/notes" --no-vectors > "$OUT/index.out" 2> "$OUT/index.err"
echo $? > "$OUT/index.rc"
"$PY" -m memo_cli.main status "$DISK/notes" > "$OUT/status.out" 2>&1
ls -A "$DISK/notes" "$DISK/notes/.memo" > "$OUT/files.txt"
"""


def on_a_small_disk(script: str, tmp_path: Path, **env: str) -> dict[str, str]:
    """`script` run by sh in a mount namespace of its own, where it mounts a small tmpfs at
    $DISK; what it wrote to $OUT, by file name ($PY: this Python; `env` besides)."""
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    run = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        env={**os.environ, "DISK": str(disk), "OUT": str(out), "PY": sys.executable, **env},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=HANG_S * 4,
    )
    assert run.returncode == 0, run.stderr
    return {name: (out / name).read_text() for name in os.listdir(out)}


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs unshare -rm and a tmpfs mount")
@pytest.mark.parametrize("free", [1, 2, 3, 4])
def test_a_walk_out_of_descriptors_says_so_and_takes_nothing_for_gone(
    tmp_path: Path, free: int
) -> None:
    """A walk that cannot open a folder for want of descriptors fails as such: it never
    calls the folder unreadable (a notice for each of many collections) nor leaves its
    notes out (a refresh would drop them from the index)."""
    root = tmp_path / "deep"
    for rel in ("a.md", "x/b.md", "x/y/c.md", "x/y/z/d.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# N\n", encoding="utf-8")
    code = f"""
    import os
    from memo_core import ResourceLimitError
    from memo_core.files.walker import scan
    held = []
    try:
        while True:
            held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        pass
    for fd in held[-{free}:]:
        os.close(fd)
    try:
        found = scan({str(root)!r})
    except ResourceLimitError as e:
        print("out of files", e.message.key)
    else:
        print(sorted(found.files), found.unreadable)
    """
    run = subprocess.run(limited(code, 64), capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr
    whole = "['a.md', 'x/b.md', 'x/y/c.md', 'x/y/z/d.md'] []"
    assert run.stdout.strip() in ("out of files os.out_of_files", whole)


def test_a_full_disk_is_one_line_and_the_committed_index_answers(tmp_path: Path) -> None:
    said = on_a_small_disk(FULL_DISK, tmp_path)
    # The search answers from what the index holds, and says the update could not be saved.
    assert said["search.rc"].strip() == "0", said
    assert "cabbage" in said["search.out"] and "на диске нет места" in said["search.out"]
    assert "Traceback" not in said["search.err"] and len(said["search.err"].splitlines()) <= 1
    # memo index: one line, exit 1, and no advice to rebuild (the index is whole).
    assert said["index.rc"].strip() == "1", said
    [line] = said["index.err"].splitlines()
    assert "на диске нет места" in line and "reindex" not in line
    assert "файлов 6" in said["status.out"], said["status.out"]
    files = said["files.txt"].split()
    assert not [f for f in files if f.endswith((".rebuild", ".tmp"))], files


READ_ONLY = r"""
set -e
mount -t tmpfs -o size=600k tmpfs "$DISK"
mkdir "$DISK/notes"
for i in $(seq 1 40); do
    printf '# Note %s\n\ncabbage %s and words to take room %s\n' $i $i $i > "$DISK/notes/n$i.md"
done
"$PY" -m memo_cli.main index "$DISK/notes" --no-vectors > /dev/null
dd if=/dev/zero of="$DISK/filler" bs=1k 2>/dev/null || true
set +e
# the disk fills while the vectors are made, then the index closes
"$PY" -m memo_cli.main index "$DISK/notes" > "$OUT/index.out" 2> "$OUT/index.err"
echo $? > "$OUT/index.rc"
# remounted read-only, the WAL left behind
mount -o remount,ro "$DISK"
"$PY" -m memo_cli.main search "$DISK/notes" cabbage --mode lex -k 1 \
    > "$OUT/search.out" 2> "$OUT/search.err"
echo $? > "$OUT/search.rc"
"$PY" -m memo_cli.main reindex "$DISK/notes" > "$OUT/reindex.out" 2> "$OUT/reindex.err"
echo $? > "$OUT/reindex.rc"
"""


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs unshare -rm and a tmpfs mount")
def test_a_disk_full_during_vectors_then_read_only_ends_in_one_line(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """To the end: a disk that fills while the vectors are made says so in one line, and
    the index closes without a traceback (its WAL kept); remounted read-only with the WAL
    left behind, a search answers from what the index saved and `memo reindex` says why it
    cannot, in one line (both once ended in a traceback, the search with no answer)."""
    said = on_a_small_disk(READ_ONLY, tmp_path, MEMO_MODEL_DIR=str(tiny_model_dir), MEMO_LANG="en")
    for step in ("index", "search", "reindex"):
        assert "Traceback" not in said[f"{step}.err"], said[f"{step}.err"]
    assert said["index.rc"].strip() == "1" and len(said["index.err"].splitlines()) == 1
    assert "no room left on the disk" in said["index.err"]
    assert said["search.rc"].strip() == "0" and "cabbage" in said["search.out"]
    assert "read-only file system" in said["search.out"]
    assert said["reindex.rc"].strip() == "1" and len(said["reindex.err"].splitlines()) == 1
    assert "read-only file system" in said["reindex.err"]


def test_memo_index_of_many_folders_keeps_within_the_descriptors(tmp_path: Path) -> None:
    """`memo index` of a parent of many one-note folders at a low open-files limit: each
    folder lets go of what it opened once it is indexed, as a search's do (it once failed
    with "too many open files" at the 254th folder of 5,000 at 1,024)."""
    root = many_collections(tmp_path / "many")
    for command in (["index", str(root), "--no-vectors"], ["reindex", str(root)]):
        code = f"""
        import sys
        from memo_cli.main import main
        sys.exit(main({command!r}))
        """
        run = subprocess.run(limited(code, 64), capture_output=True, text=True, cwd=REPO,
                             timeout=HANG_S * 4)  # fmt: skip
        assert run.returncode == 0, run.stderr[-2000:]
        assert len(list(root.glob("*/.memo/index.db"))) == MANY
