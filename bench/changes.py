"""The change log's cost: its size, the time to answer a delta, the fingerprint's price.

    python bench/changes.py ../shared/data/office-dev-ru [--versions 1000] [--edits 5]

The notes are copied to a scratch folder and indexed by words only (the log does not depend
on vectors). Then `--versions` refreshes, each after editing `--edits` notes, as a folder
that keeps changing sees them. Printed: the log's bytes after the first index and per
version (SQLite's own page accounting, dbstat), the time of `memo changes` against the
oldest and the newest fingerprint, of a refresh that changes nothing, and of the
fingerprint itself against hashing every (path, hash) row as memo did before (the old way,
side by side in this run).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from memo_core import Engine

LOG_TABLES = ("history", "history_fingerprint", "file_log", "file_log_version")


def log_bytes(db: Path) -> int:
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        marks = ",".join("?" * len(LOG_TABLES))
        sql = f"SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ({marks})"
        return int(conn.execute(sql, LOG_TABLES).fetchone()[0])
    finally:
        conn.close()


def old_fingerprint(db: Path) -> str:
    """The fingerprint as memo computed it before the log: every row, in path order."""
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        h = hashlib.blake2b(digest_size=12)
        for path, digest in conn.execute("SELECT path, hash FROM files ORDER BY path"):
            h.update(f"{path}\x00{digest}\n".encode())
        return h.hexdigest()
    finally:
        conn.close()


def timed(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--versions", type=int, default=1000)
    ap.add_argument("--edits", type=int, default=5)
    a = ap.parse_args(argv)
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "notes"
        shutil.copytree(a.corpus, root, ignore=shutil.ignore_patterns(".memo"))
        db = root / ".memo" / "index.db"
        with Engine(refresh_budget_s=None) as engine:  # each answer after its refresh
            t = time.perf_counter()
            listing = engine.changes(root)
            first, notes = listing.fingerprint, [Path(p) for p in listing.files]
            out["notes"], out["log_first_b"] = len(notes), log_bytes(db)
            print(f"{len(notes)} notes, first index {time.perf_counter() - t:.1f} s (words only)")
            print(f"log after the first index: {log_bytes(db) / 1024:.0f} KiB")
            start = log_bytes(db)
            newest = first
            for v in range(a.versions):
                for i in range(a.edits):
                    note = notes[(v * a.edits + i) % len(notes)]
                    with open(note, "a", encoding="utf-8") as f:
                        f.write(f"\nedit {v}\n")
                    st = note.stat()
                    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
                newest = engine.changes(root, newest).fingerprint
            grown = log_bytes(db) - start
            out["log_per_version_b"] = grown / a.versions if a.versions else 0.0
            print(
                f"{a.versions} versions of {a.edits} edits: log +{grown / 1024:.0f} KiB, "
                f"{grown / a.versions:.0f} B a version, {grown / a.versions / a.edits:.0f} B a "
                "changed note"
            )
            oldest = engine.changes(root, first)
            out["changed_since_oldest"], out["mode"] = len(oldest.changed), oldest.mode
            print(
                f"delta since the oldest fingerprint: {len(oldest.changed)} changed "
                f"({oldest.mode}), {timed(lambda: engine.changes(root, first)) * 1000:.1f} ms"
            )
            print(
                "delta since the newest: "
                f"{timed(lambda: engine.changes(root, newest)) * 1000:.1f} ms (a refresh with "
                "nothing to do included)"
            )
            store_fp = timed(lambda: engine.status(root), 20)
            old = timed(lambda: old_fingerprint(db), 20)
            out["status_s"], out["old_fingerprint_s"] = store_fp, old
            print(
                f"status (the fingerprint read from the log: O(1)) {store_fp * 1000:.2f} ms; "
                f"the old fingerprint over every row {old * 1000:.2f} ms "
                f"(x{old / store_fp:.1f})"
            )
    return out


if __name__ == "__main__":
    main()
