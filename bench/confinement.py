"""What reaching files through descriptors costs, side by side in one run.

    python bench/confinement.py ../shared/data/office-dev-en [--pages 1500] [--searches 60]
        [--no-model]

Two comparisons, each measured alternately (A, B, A, B, …) on one copy of the notes, so the
machine's noise falls on both alike:

- lookups below the collection: the kernel's `openat2` (RESOLVE_BENEATH|NO_SYMLINKS, one
  call per path) against memo's own walk, one name at a time with O_NOFOLLOW (what systems
  without openat2 get): a whole walk (`scan`), and reading every note;
- SQLite's files named through the descriptor (`/proc/self/fd/N/index.db` with the VFS that
  takes names as given: every file operation passes through apsw's Python VFS) against
  SQLite opening them by name (what systems without /proc get): a first index, a no-change
  refresh, and searches (hybrid with the default model, else words only).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from memo_core import Engine
from memo_core.files import fsafe
from memo_core.files.fsafe import Folder
from memo_core.files.walker import scan
from memo_core.index import directory as indexdir  # noqa: E402


@contextmanager
def lookups(kind: str):
    saved = fsafe._OPENAT2
    if kind == "by-name":
        fsafe._OPENAT2 = None
    try:
        yield
    finally:
        fsafe._OPENAT2 = saved


@contextmanager
def naming(kind: str):
    saved = indexdir.PROC_FD
    if kind == "by-name":
        indexdir.PROC_FD = "/nonexistent/proc/self/fd"
    try:
        yield
    finally:
        indexdir.PROC_FD = saved


def alternate(
    label: str, kinds: tuple[str, str], ctx: Callable, fn: Callable[[str], Any], rounds: int
) -> dict[str, float]:
    """Median seconds of `fn(kind)` under `ctx(kind)`, the two kinds taking turns."""
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(rounds):
        for kind in kinds:
            with ctx(kind):
                t0 = time.perf_counter()
                fn(kind)
                times[kind].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    a, b = kinds
    print(
        f"{label:<34} {a} {C.ms(med[a]):>9}   {b} {C.ms(med[b]):>9}   "
        f"{b}/{a} {med[b] / med[a]:.2f}×"
    )
    return med


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dataset", type=Path)
    p.add_argument("--pages", type=int, default=1500, help="notes copied (0: all)")
    p.add_argument("--searches", type=int, default=60)
    C.add_model_args(p)
    args = p.parse_args(argv)
    C.apply_model_args(args)
    embedder = C.get_embedder(args)
    src = C.corpus_dir(args.dataset)
    files = sorted(src.rglob("*.md"))
    if args.pages:
        files = random.Random(7).sample(files, min(args.pages, len(files)))
    work = args.workdir / "confinement"
    roots = {}
    for kind in ("proc", "by-name"):
        root = work / kind
        if root.exists():
            shutil.rmtree(root)
        for f in files:
            target = root / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
        roots[kind] = root.resolve()
    print(f"{len(files)} notes from {src}; model: {embedder.model_id if embedder else 'none'}")
    print(f"openat2 here: {fsafe.has_openat2()}\n")

    one = roots["proc"]
    rels = sorted(scan(one).files)

    def walk(_: str) -> None:
        scan(one)

    def read_all(_: str) -> None:
        with Folder(one) as folder:
            for rel in rels:
                folder.read(rel, 1 << 20)

    kinds = ("openat2", "by-name")
    figures: dict[str, dict[str, float]] = {}
    if fsafe.has_openat2():
        figures["walk"] = alternate("walk (scan)", kinds, lookups, walk, 9)
        figures["read"] = alternate(f"read {len(rels)} notes", kinds, lookups, read_all, 5)
    print()

    engine = Engine()  # the configured model (the one `embedder` is), loaded once
    mode = "hybrid" if embedder is not None else "lex"
    queries = [Path(rel).stem.replace("-", " ") for rel in rels[: args.searches]]
    try:
        embed = embedder is not None
        if embed:
            engine.models.get()  # loaded before anything is timed

        def first_index(kind: str) -> None:
            shutil.rmtree(roots[kind] / ".memo", ignore_errors=True)
            engine.close()  # no connection kept from the round before
            engine.refresh(roots[kind], embed=embed)

        figures["first index"] = alternate(
            "first index", ("proc", "by-name"), naming, first_index, 2
        )
        pair = ("proc", "by-name")
        figures["no-change refresh"] = alternate(
            "no-change refresh", pair, naming, lambda k: engine.refresh(roots[k], embed=embed), 15
        )
        for q in queries[:3]:  # warm: the vectors loaded once per collection
            for kind in pair:
                with naming(kind):
                    engine.search(roots[kind], q, mode=mode)
        lat: dict[str, list[float]] = {k: [] for k in pair}
        for q in queries:
            for kind in pair:
                with naming(kind):
                    t0 = time.perf_counter()
                    engine.search(roots[kind], q, mode=mode)
                    lat[kind].append(time.perf_counter() - t0)
        med = figures["search p50"] = {k: statistics.median(v) for k, v in lat.items()}
        print(
            f"{f'search p50 ({mode}, {len(queries)} queries)':<34} proc {C.ms(med['proc']):>9}   "
            f"by-name {C.ms(med['by-name']):>9}   by-name/proc "
            f"{med['by-name'] / med['proc']:.2f}×"
        )
    finally:
        engine.close()
    return figures


if __name__ == "__main__":
    main()
