"""Index size per MB of notes, on real data sets and on one hostile note.

    python bench/size.py ../shared/data/scifact-en ../shared/data/office-dev-en [--no-model]

Each data set is copied and indexed under the work folder (cached like quality.py's
indexes); the figure is every file in `.memo/` (index, WAL, lock) against the notes' bytes,
after the engine is closed (WAL checkpointed). The hostile note: a 100 KB first-level
heading over 2,000 sections (each chunk once stored its whole heading path).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

MB = 1024 * 1024


def folder_bytes(folder: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in folder.rglob(pattern) if p.is_file())


def measure(root: Path) -> dict:
    notes = sum(
        p.stat().st_size for p in root.rglob("*.md") if p.is_file() and ".memo" not in p.parts
    )
    index = folder_bytes(root / ".memo", "*")
    return {"notes_mb": notes / MB, "index_mb": index / MB, "per_mb": index / max(notes, 1)}


def hostile(workdir: Path) -> dict:
    from memo_core import Engine, ModelSource

    root = workdir / "size-hostile"
    root.mkdir(parents=True, exist_ok=True)
    for p in root.glob("*"):
        if p.is_file():
            p.unlink()
    title = " ".join(f"word{i}" for i in range(12_000))
    sections = "".join(f"## Section {i}\n\ntext {i}\n\n" for i in range(2_000))
    (root / "huge.md").write_text(f"# {title}\n\n{sections}", encoding="utf-8")
    with Engine(models=ModelSource(enabled=False)) as e:
        e.reindex(root)
    return measure(root)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("datasets", type=Path, nargs="*")
    C.add_model_args(p)
    args = p.parse_args(argv)
    C.apply_model_args(args)
    embedder = C.get_embedder(args)
    tuning = C.tuning_from()
    out: dict = {}
    what = f"model {embedder.model_id}" if embedder is not None else "words only"
    print(f"{'set':24} {'notes MB':>9} {'index MB':>9} {'index per MB':>13}  ({what})")
    for ds in args.datasets:
        root, _ = C.cached_index(ds, args.workdir, tuning, embedder)
        out[ds.name] = r = measure(root)
        print(f"{ds.name:24} {r['notes_mb']:>9.1f} {r['index_mb']:>9.1f} {r['per_mb']:>12.2f}x")
    out["hostile note"] = r = hostile(args.workdir)
    print(f"{'hostile note':24} {r['notes_mb']:>9.2f} {r['index_mb']:>9.2f} {r['per_mb']:>12.2f}x")
    return out


if __name__ == "__main__":
    main()
