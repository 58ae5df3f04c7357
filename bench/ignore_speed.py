"""Ignore matching: memo's own matcher (memo_core.files.globmatch, memo_core.files.ignore) against
pathspec's GitIgnoreSpec, which memo used before, side by side in one run.

    python bench/ignore_speed.py ../shared/data/office-dev-en [--from DIR ...]
        [--max-files 400] [--rounds 3] [--pathspec-timeout 20]

1. Real ignore files: `.gitignore` files, and github/gitignore's templates (`*.gitignore`),
   found below the --from folders (default: home, /usr, /opt and this Python's prefix),
   each applied to every file and folder of the notes as if it lay at their root: compile
   time and time per path for both (alternately, --rounds times), how many of their
   answers differ (pathspec strays from git on some syntax), and on how many of those
   `git check-ignore` answers as memo does.
2. Patterns that make a backtracking matcher take forever, against names of n `a`s:
   pathspec runs in a child process killed after --pathspec-timeout seconds.
3. A 100,000-line `.gitignore` (~900 KB of names): compile and time per path for both
   (pathspec's on a sample of paths), and memo's whole walk (`scan`) of a copy of the
   notes holding it: the first walk (the file compiled) and the next (kept compiled).
4. The worst memo applies: as many costly patterns as its limits let in force.

The notes folder is only read; the copy for (3) and the empty tree git checks in (1) go
under --workdir.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import pathspec  # noqa: E402

from memo_core.files.ignore import MAX_COMPLEX, MAX_PATTERNS, RuleSet, compiled  # noqa: E402
from memo_core.files.walker import scan  # noqa: E402

SKIP = {"/proc", "/sys", "/dev", "/run", "/tmp"}
PATHOLOGICAL = [
    "*a*a*a*a*a*a*a*a*a*a*a*a*b",
    "**/*a*a*a*a*a*a*a*a*a*a*a*a*b",
    "[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*b",
    "?*?*?*?*?*?*?*?*?*?*?*?*?*b/",
]
Entry = tuple[str, bool]


def entries_of(root: Path) -> list[Entry]:
    """Every file and folder below `root` (relative, '/'-separated; is it a folder)."""
    out: list[Entry] = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        out += [(prefix + d, True) for d in dirs] + [(prefix + f, False) for f in files]
    return sorted(out)


def ignore_files(roots: list[Path], most: int) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if os.path.join(folder, d) not in SKIP]
            for f in files:
                path = Path(folder, f)
                if f.endswith(".gitignore") and path.is_file() and path.stat().st_size < 200_000:
                    found.append(path)
                    if len(found) >= most:
                        return found
    return found


def walked(entries: list[Entry], answers: list[bool]) -> list[bool]:
    """The answers as a walk gives them: what lies in an ignored folder is ignored too
    (pathspec's patterns match below a folder they match; git's and memo's do not, the
    walk just never enters it). `entries` are sorted: a folder comes before its contents."""
    out: dict[str, bool] = {}
    for (rel, _), answer in zip(entries, answers, strict=True):
        parent = rel.rpartition("/")[0]
        out[rel] = answer or out.get(parent, False)
    return list(out.values())


def memo_answers(spec: RuleSet | None, entries: list[Entry]) -> list[bool]:
    if spec is None:
        return [False] * len(entries)
    return [bool(spec.decide(os.fsencode(rel), is_dir)) for rel, is_dir in entries]


def pathspec_answers(spec: pathspec.GitIgnoreSpec, entries: list[Entry]) -> list[bool]:
    return [bool(spec.check_file(rel + "/" if d else rel).include) for rel, d in entries]


def median_time(fn, rounds: int) -> float:  # type: ignore[no-untyped-def]
    return statistics.median(C.timed(fn)[0] for _ in range(rounds))


def decide_time(spec: RuleSet, name: bytes) -> float:
    return median_time(lambda: spec.decide(name, False), 5)


def skeleton(entries: list[Entry], root: Path) -> Path | None:
    """A git work tree holding `entries` (empty files), for `git check-ignore` to settle
    where memo and pathspec differ; None without git."""
    git = shutil.which("git")
    if git is None:
        return None
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for rel, is_dir in entries:  # sorted: a folder comes before what it holds
        (root / rel).mkdir() if is_dir else (root / rel).touch()
    subprocess.run([git, "init", "-q", str(root)], check=True)
    return root


def git_sides_with_memo(tree: Path, data: bytes, differ: list[Entry], mine: set[str]) -> int:
    """Of the entries where memo and pathspec differ, how many git answers as memo does."""
    (tree / ".gitignore").write_bytes(data)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    out = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=tree,
        input=b"".join(os.fsencode(rel) + b"\0" for rel, _ in differ),
        capture_output=True,
        env=env,
        check=False,
    ).stdout
    git = {os.fsdecode(p) for p in out.split(b"\0") if p}
    return sum((rel in git) == (rel in mine) for rel, _ in differ)


def one_file(
    path: Path, entries: list[Entry], rounds: int, tree: Path | None
) -> dict[str, float] | None:
    """Compile and per-path times of both on one ignore file; None if pathspec refuses it."""
    data = path.read_bytes()
    lines = data.decode("utf-8", "replace").splitlines()
    try:
        t_ps_compile, old = C.timed(lambda: pathspec.GitIgnoreSpec.from_lines(lines))
    except Exception as e:  # pathspec refuses some lines git reads (`[z-a]`, `\`)
        print(f"{str(path)[-44:]:<44} pathspec refuses it: {type(e).__name__}")
        return None
    compiled.cache_clear()  # the compile is timed, not what an earlier walk kept
    t_compile, spec = C.timed(lambda: compiled(data))
    t_memo = t_ps = 0.0
    for _ in range(rounds):  # alternately, so the machine's noise falls on both alike
        t_memo += C.timed(lambda: memo_answers(spec, entries))[0]
        t_ps += C.timed(lambda: pathspec_answers(old, entries))[0]
    mine = walked(entries, memo_answers(spec, entries))
    theirs = walked(entries, pathspec_answers(old, entries))
    differ = [e for e, a, b in zip(entries, mine, theirs, strict=True) if a != b]
    settled = ""
    if differ and tree is not None:
        ignored = {rel for (rel, _), a in zip(entries, mine, strict=True) if a}
        settled = f"  git sides with memo on {git_sides_with_memo(tree, data, differ, ignored)}"
    per = 1e6 / len(entries) / rounds
    print(
        f"{str(path)[-44:]:<44} {spec.size if spec else '-':>6} {t_memo * per:>7.2f} "
        f"{t_ps * per:>9.2f} {t_ps / t_memo:>6.1f}× {len(differ):>6}{settled}"
    )
    return {
        "memo": t_memo / rounds,
        "pathspec": t_ps / rounds,
        "memo_compile": t_compile,
        "pathspec_compile": t_ps_compile,
    }


def real_files(files: list[Path], entries: list[Entry], rounds: int, workdir: Path) -> dict:
    print(f"1. {len(files)} real ignore files over {len(entries)} paths (µs per path)")
    print(f"{'file':<44} {'rules':>6} {'memo':>7} {'pathspec':>9} {'ratio':>7} {'differ':>6}")
    tree = skeleton(entries, workdir / "ignore_speed" / "skeleton")
    rows = [r for r in (one_file(f, entries, rounds, tree) for f in files) if r]
    if not rows:
        return {"files": 0}
    total = {k: sum(r[k] for r in rows) for k in rows[0]}
    ratios = [r["pathspec"] / r["memo"] for r in rows]
    print(
        f"{len(rows)} files: memo {total['memo']:.3f} s, pathspec {total['pathspec']:.3f} s "
        f"({total['pathspec'] / total['memo']:.1f}× faster); per file: median "
        f"{statistics.median(ratios):.1f}×, least {min(ratios):.1f}×; compiling them all: "
        f"memo {C.ms(total['memo_compile'])}, pathspec {C.ms(total['pathspec_compile'])}\n"
    )
    return {"files": len(rows), **total}


CHILD = """
import sys, time, pathspec
spec = pathspec.GitIgnoreSpec.from_lines([sys.argv[1]])
for n in map(int, sys.argv[2:]):
    t = time.perf_counter()
    spec.check_file("a" * n + ".md")
    print(n, time.perf_counter() - t, flush=True)
"""


def old_times(line: str, lengths: list[int], timeout: float) -> dict[int, float]:
    """pathspec's seconds per name length, in a child killed after `timeout` (a regular
    expression that backtracks holds the GIL: no thread of this process could stop it)."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, line, *map(str, lengths)],
            capture_output=True,
            text=True,
            timeout=timeout,
        ).stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
    return {int(n): float(t) for n, t in (row.split() for row in out.splitlines() if row)}


def pathological(lengths: list[int], timeout: float) -> dict:
    print(f"2. pathological patterns against names of n `a`s (pathspec killed after {timeout} s)")
    found: dict = {}
    for line in PATHOLOGICAL:
        spec = compiled(line.encode() + b"\n")
        assert spec is not None
        mine = {n: decide_time(spec, b"a" * n + b".md") for n in lengths}
        old = old_times(line, lengths, timeout)
        found[line] = {"memo_s": mine, "pathspec_s": old}
        print(f"  {line}")
        for n in lengths:
            was = f"{old[n]:.4f} s" if n in old else f"> {timeout:.0f} s (killed)"
            print(f"    n={n:<4} memo {mine[n] * 1e6:8.1f} µs   pathspec {was}")
        if len(old) < len(lengths):
            break  # the others hang alike; one killed child is enough
    print()
    return found


def big_file(src: Path, entries: list[Entry], workdir: Path) -> dict:
    notes = [rel for rel, d in entries if not d and rel.endswith(".md")]
    names = sorted({rel.rsplit("/", 1)[-1] for rel in notes})
    lines = [f"x{i}.md" for i in range(100_000 - 100)] + names[:100]
    random.Random(1).shuffle(lines)
    data = "".join(line + "\n" for line in lines).encode()
    print(f"3. a 100,000-line .gitignore ({len(data) / 1000:.0f} KB: names, 100 of notes')")
    compiled.cache_clear()
    t_compile, spec = C.timed(lambda: compiled(data))
    t_paths = C.timed(lambda: memo_answers(spec, entries))[0]
    t_ps_compile, old = C.timed(lambda: pathspec.GitIgnoreSpec.from_lines(lines))
    sample = random.Random(2).sample(entries, min(30, len(entries)))
    t_ps_sample = C.timed(lambda: pathspec_answers(old, sample))[0]
    per_ps = t_ps_sample / len(sample)
    print(f"  compile: memo {C.ms(t_compile)}, pathspec {C.ms(t_ps_compile)}")
    print(
        f"  per path: memo {t_paths / len(entries) * 1e6:.2f} µs, pathspec "
        f"{per_ps * 1e6:.0f} µs (on {len(sample)} paths): {per_ps * len(entries) / t_paths:.0f}×"
    )
    root = C.copy_tree(src, workdir / "ignore_speed" / "notes")
    (root / ".gitignore").write_bytes(data)
    compiled.cache_clear()
    t_cold, found = C.timed(lambda: scan(root))
    t_warm = median_time(lambda: scan(root), 3)
    (root / ".gitignore").unlink()
    t_none = median_time(lambda: scan(root), 3)
    print(
        f"  memo's walk of {len(found.files)} notes ({found.ignored} ignored): first "
        f"{C.ms(t_cold)}, next {C.ms(t_warm)} (without the file: {C.ms(t_none)}); pathspec "
        f"would take {t_ps_compile + per_ps * len(entries):.0f} s (compile + every path)\n"
    )
    return {"compile_s": t_compile, "notes": len(found.files), "ignored": found.ignored,
            "walk_s": t_warm, "walk_without_s": t_none}  # fmt: skip


def worst_allowed(entries: list[Entry]) -> dict:
    """The most memo applies, written to cost the most: MAX_COMPLEX patterns that each need
    a full match, or MAX_PATTERNS that all pass the screen and must be tried in turn."""
    name = b"a" * 60 + b"0123456789" * 3 + b".md"
    print(f"4. the worst memo applies (limits: {MAX_PATTERNS} patterns, {MAX_COMPLEX} complex)")
    complex_lines = ["*a*a*a*a*a*a*a*a*a*a*a*[b]"] * MAX_COMPLEX  # one `a` passes the screen
    simple_lines = ["*[.]md", *(f"*{i % 10}[!.]" for i in range(MAX_PATTERNS - 1))]
    found: dict = {}
    for label, lines in (
        ("complex `*a*a…*a*[b]`", complex_lines),
        ("simple, first wins", simple_lines),
    ):
        spec = compiled("".join(line + "\n" for line in lines).encode())
        assert spec is not None
        one = decide_time(spec, name)
        each = median_time(lambda spec=spec: memo_answers(spec, entries), 1) / len(entries)
        print(
            f"  {label:<22} {one * 1e3:5.2f} ms for a {len(name)}-byte name made to pass, "
            f"{each * 1e6:5.0f} µs a path of the notes (all of them: {each * len(entries):.2f} s)"
        )
        found[label] = {"one_s": one, "each_s": each}
    return found


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("notes", type=Path)
    p.add_argument("--from", dest="roots", type=Path, action="append", default=None)
    p.add_argument("--max-files", type=int, default=400)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--pathspec-timeout", type=float, default=20.0)
    p.add_argument("--lengths", default="16,20,24,28,60", help="name lengths for (2)")
    p.add_argument("--workdir", type=Path, default=C.DEFAULT_WORKDIR)
    args = p.parse_args(argv)
    roots = args.roots or [Path.home(), Path("/usr"), Path("/opt"), Path(sys.prefix)]
    src = C.corpus_dir(args.notes)
    entries = entries_of(src)
    print(f"pathspec {pathspec.__version__}; notes: {src}\n")
    return {
        "real_files": real_files(
            ignore_files(roots, args.max_files), entries, args.rounds, args.workdir
        ),
        "pathological": pathological(
            [int(n) for n in args.lengths.split(",")], args.pathspec_timeout
        ),
        "big_file": big_file(src, entries, args.workdir),
        "worst_allowed": worst_allowed(entries),
    }


if __name__ == "__main__":
    main()
