"""The `memo` command line: output shapes, exit codes, help for every command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import many_notes
from test_cli_reference import cli_reference

from memo_cli.main import main
from memo_cli.progress import ProgressBar
from memo_core import Progress

# Every memo command below `memo` itself, by its words after "memo": ("model", "install").
COMMANDS = {
    tuple(line.split()[1:]): parser
    for line, parser in cli_reference.parsers().items()
    if line.startswith("memo ")
}


def test_the_commands_are_found() -> None:
    assert {("search",), ("index",), ("model",), ("model", "install")} <= set(COMMANDS)


@pytest.mark.parametrize("cmd", list(COMMANDS), ids=" ".join)
def test_every_command_has_help(cmd: tuple[str, ...], capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main([*cmd, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "usage: memo" in out and len(out.splitlines()) >= 3


def test_search_prints_location_heading_and_text(notes: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(notes)
    assert main(["search", ".", "восстановить файлы", "--mode", "lex", "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert (
        out
        == "backup.md:5  Бэкап > Восстановление\nКак восстановить файлы: restic restore latest.\n"
    )


def test_search_outside_cwd_prints_absolute_paths(notes: Path, capsys, tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    main(["search", str(notes), "borscht", "--mode", "lex", "-k", "1"])
    assert capsys.readouterr().out.startswith(f"{notes / 'cooking' / 'soup.md'}:1  Soup recipe\n")


def test_hybrid_without_model_says_so(notes: Path, capsys) -> None:
    assert main(["search", str(notes), "borscht", "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("(модель недоступна") and "soup.md:1  Soup recipe" in out


def test_no_hits_is_success(notes: Path, capsys) -> None:
    assert main(["search", str(notes), "zzzqqq", "--mode", "lex"]) == 0
    assert capsys.readouterr().out.strip() == "ничего не найдено"


def test_json_output(notes: Path, capsys) -> None:
    main(["search", str(notes), "cat dog", "--mode", "lex", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "lex"
    hit = data["hits"][0]
    assert (hit["relpath"], hit["line"], hit["heading"]) == ("pets.md", 1, "Pets")
    assert hit["found_by"] == ["lex"]


def test_index_status_reindex(notes: Path, capsys) -> None:
    assert main(["index", str(notes)]) == 0
    assert "новых 3" in capsys.readouterr().out
    assert main(["status", str(notes)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{notes}: файлов 3, чанков 5, индекс 20")
    assert main(["reindex", str(notes)]) == 0
    assert capsys.readouterr().out == "переиндексировано файлов: 3\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "/no/such/dir", "x"], "путь не существует: /no/such/dir"),
        (["status", "{tmp}"], "нет заметок"),
        (["search", "{notes}", "x", "--mode", "vec"], "поиску по смыслу нужна модель"),
    ],
)
def test_errors_are_one_line_on_stderr_with_exit_1(notes, tmp_path, args, message) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    args = [a.format(tmp=empty, notes=notes) for a in args]
    r = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", *args], capture_output=True, text=True
    )
    assert r.returncode == 1, r.stderr
    assert r.stdout == ""
    assert r.stderr.startswith("memo: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [[], ["search"], ["search", "."]],  # a bad value: tests/stories/test_cli_exits.py
    ids=str,
)
def test_usage_errors_exit_2_as_the_cli_reference_says(args: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 2
    assert capsys.readouterr().err.startswith("usage: memo")
    cli_md = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
    assert "2 for a usage error" in cli_md.read_text(encoding="utf-8")


def test_mode_choices_come_from_the_engine() -> None:
    from memo_core import MODES

    usage = COMMANDS[("search",)].format_usage()
    assert f"--mode {{{','.join(MODES)}}}" in usage, usage


def _folder_with_empty_notes(root: Path, notes: int, empty: int) -> Path:
    (root / "d").mkdir(parents=True)
    for i in range(notes):
        (root / "d" / f"n{i}.md").write_text(f"# Note {i}\n\ncat {i}\n", encoding="utf-8")
    for i in range(empty):
        (root / f"empty{i}.md").write_text("", encoding="utf-8")
    return root


def test_index_outside_a_terminal_prints_progress_lines_and_one_line_of_empty_notes(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memo_cli import progress

    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)  # a line a batch: a long index
    root = _folder_with_empty_notes(tmp_path / "notes", 400, 8)
    assert main(["index", str(root)]) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert sum(line.startswith("memo: индекс [") for line in lines) >= 2
    assert "\r" not in err and "\x1b" not in err  # lines, not a bar redrawn in place
    [empty] = [line for line in lines if "пустых" in line]
    assert empty.strip() == "пустых заметок пропущено: 8 (список: memo index --list-empty)"
    assert not any("empty0.md" in line for line in lines)
    # the summary reads true: passages that share a text share its vector
    assert "фрагментов записано 400, получили векторы 0 (посчитано разных текстов: 0)" in out


def test_index_lists_the_empty_notes_when_asked(tmp_path: Path, capsys) -> None:
    root = _folder_with_empty_notes(tmp_path / "notes", 3, 2)
    assert main(["index", str(root), "--list-empty"]) == 0
    err = capsys.readouterr().err
    assert "empty0.md" in err and "empty1.md" in err and "пустых заметок" not in err


def test_the_summary_counts_passages_given_vectors_and_texts_embedded(
    tmp_path: Path, capsys, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMO_MODEL_DIR", str(tiny_model_dir))
    root = tmp_path / "notes"
    root.mkdir()
    for name in ("a", "b", "c"):  # three notes, one text: one embedding, three vectors
        (root / f"{name}.md").write_text("# Same\n\nrestic cabbage\n", encoding="utf-8")
    assert main(["index", str(root)]) == 0
    out = capsys.readouterr().out
    assert "фрагментов записано 3, получили векторы 3 (посчитано разных текстов: 1)" in out


def test_model_commands_make_no_engine(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    """`memo model info` touches no index: it runs where no engine can be made."""
    import memo_cli.main as cli

    def no_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("an engine was made")

    monkeypatch.setattr(cli, "Engine", no_engine)
    assert main(["model", "info"]) == 0
    assert "e5-small" in capsys.readouterr().out


def test_the_first_ctrl_c_answers_from_what_is_indexed(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, tiny_model_dir: Path
) -> None:
    """On a terminal a search waits for its whole index; Ctrl-C while the vectors come (a
    real SIGINT, sent as the bar first shows them) answers by the words already in, and
    says how far the vectors got."""
    notes = many_notes(tmp_path / "notes", 40)
    monkeypatch.setenv("MEMO_MODEL_DIR", str(tiny_model_dir))
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    drawn = ProgressBar.__call__
    pressed: list[Progress] = []

    def ctrl_c_at_the_vectors(bar: ProgressBar, p: Progress) -> None:
        if p.phase == "embed" and not pressed:
            pressed.append(p)
            signal.raise_signal(signal.SIGINT)
        drawn(bar, p)

    monkeypatch.setattr(ProgressBar, "__call__", ctrl_c_at_the_vectors)
    # Ctrl-C as a terminal delivers it (a CI job may start with SIGINT ignored)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert main(["search", str(notes), "cat 7", "-k", "1"]) == 0
    finally:
        signal.signal(signal.SIGINT, before)
    out, err = capsys.readouterr()
    assert pressed and "memo: ответ по уже проиндексированному; ещё раз Ctrl-C — выход" in err
    assert out.startswith(f"({notes}: векторов пока нет ни у одного из 41 фрагментов")
    assert "n7.md:1  Note 7" in out


def test_a_search_by_words_imports_no_model_no_watcher_and_no_numpy(notes: Path) -> None:
    """A one-shot `memo search --mode lex` pays for what it uses: not for the model's
    installer, runtime or tokenizer, nor for `memo watch`'s watcher, nor for numpy and
    sqlite-vec's Python part (about half of such a search's time): only vectors need them;
    nor for shutil (argparse's way to the terminal's width) or random (nonsense queries),
    nor for the threads a vectors pass makes its steps on (concurrent.futures)."""
    code = (
        "import sys; from memo_cli.main import main; "
        f"main(['search', {str(notes)!r}, 'borscht', '--mode', 'lex', '--json']); "
        "heavy = ('watchfiles', 'onnxruntime', 'tokenizers', 'memo_core.model.install', "
        "'memo_core.model.onnx_embedder', 'memo_core.model.q4convert', 'numpy', 'sqlite_vec', "
        "'sqlite3', 'memo_cli.watch', 'shutil', 'random', 'concurrent.futures'); "
        "print([m for m in heavy if m in sys.modules], file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "[]"
