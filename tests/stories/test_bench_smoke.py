"""Smoke runs of the benchmark scripts in bench/ on a tiny generated data set, so they do not rot.

Benchmarks are not tests: these only check that each script's main runs end to end (tiny
notes, a tiny in-process model or none) and returns figures of the right shape.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from tinymodels import make_tiny_model_dir

BENCH = Path(__file__).resolve().parents[2] / "bench"

TOPICS = [
    ("Backup", "configure backup restore server disk"),
    ("Linux setup", "install linux server network config"),
    ("Docker", "docker build deploy release server"),
    ("Git", "git build test release log"),
    ("Python", "python test error log build"),
    ("Database", "database index search query user password"),
    ("Weather", "weather rain sun"),
    ("Soup", "soup recipe cook borscht"),
    ("Pets", "cat dog bird fish"),
    ("Fruit", "apple banana recipe"),
    ("Бэкап", "как настроить бэкап сервер пароль"),
    ("Сеть", "сеть сервер ошибка"),
]


def _load(name: str):
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses read their module from there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    ds = tmp_path / "tinyset"
    corpus = ds / "corpus"
    corpus.mkdir(parents=True)
    for i, (title, words) in enumerate(TOPICS):
        body = "\n\n".join(f"{words} {w}" for w in words.split())
        (corpus / f"d{i}.md").write_text(f"# {title}\n\n{body}\n\n## More\n\n{words}\n", "utf-8")
    for split, suffix in (("test", ""), ("train", "-train")):
        with open(ds / f"queries{suffix}.jsonl", "w", encoding="utf-8") as f:
            for i, (_, words) in enumerate(TOPICS):
                f.write(json.dumps({"id": f"{split}{i}", "text": words.split()[0]}) + "\n")
        with open(ds / f"qrels{suffix}.tsv", "w", encoding="utf-8") as f:
            f.write("query_id\tdoc_filename\trelevance\n")
            for i in range(len(TOPICS)):
                f.write(f"{split}{i}\td{i}.md\t1\n")
    return ds


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    words = {w for _, ws in TOPICS for w in ws.split()} | {"more", "benchmark", "edit"}
    return make_tiny_model_dir(tmp_path / "tiny-model", dim=16, words=sorted(words))


def test_quality_smoke(dataset: Path, model_dir: Path, tmp_path: Path) -> None:
    q = _load("quality")
    out = q.main(
        [
            str(dataset),
            "--workdir",
            str(tmp_path / "work"),
            "--model-dir",
            str(model_dir),
            "--chunk-chars",
            "300",
            "--dense-weight",
            "0.4",
            "--heading-weight",
            "3",
            "--json",
            str(tmp_path / "q.json"),
        ]
    )
    assert set(out["modes"]) == {"lex", "vec", "hybrid"}
    assert out["queries"] == len(TOPICS)
    assert out["modes"]["lex"]["ndcg"] > 0.5  # each query's word is in its own note
    for r in out["modes"].values():
        assert 0.0 <= r["ndcg"] <= 1.0 and 0.0 <= r["recall"] <= 1.0 and 0.0 <= r["mrr"] <= 1.0
    assert 0.0 <= out["hybrid_one_sided_share"]["any"] <= 1.0
    assert (tmp_path / "q.json").is_file()
    assert not (dataset / "corpus" / ".memo").exists()  # the data set is never written


def test_quality_smoke_without_model(dataset: Path, tmp_path: Path) -> None:
    out = _load("quality").main([str(dataset), "--workdir", str(tmp_path / "w"), "--no-model"])
    assert set(out["modes"]) == {"lex"}


def test_tune_smoke(dataset: Path, model_dir: Path, tmp_path: Path) -> None:
    out = _load("tune").main(
        [
            str(dataset),
            "--workdir",
            str(tmp_path / "work"),
            "--model-dir",
            str(model_dir),
            "--chunks",
            "200,2000",
            "--heading-weights",
            "1,2",
            "--candidates",
            "100",
            "--dense-weights",
            "0,0.5",
        ]
    )
    assert out["split"] == "train"
    modes = {r["mode"] for r in out["rows"]}
    assert modes == {"lex", "vec", "hybrid", "rrf60"}
    assert out["best"]["mode"] == "hybrid"


def test_speed_smoke(dataset: Path, model_dir: Path, tmp_path: Path) -> None:
    out = _load("speed").main(
        [
            str(dataset / "corpus"),
            "--workdir",
            str(tmp_path / "work"),
            "--model-dir",
            str(model_dir),
            "--queries",
            "6",
            "--repeat",
            "2",
            "--edits",
            "1,2",
            "--ten-k",
            "20",
            "--mcp-runs",
            "1",
        ]
    )
    assert out["full_index"]["chunks_embedded"] > 0
    assert out["pipeline_vs_embedder"] > 0
    assert out["refresh_unchanged"]["files"] == len(TOPICS)
    assert set(out["latency"]) == {
        "lex",
        "lex+refresh",
        "vec",
        "vec+refresh",
        "hybrid",
        "hybrid+refresh",
        "refresh alone",
    }
    assert out["edit_1"]["only_changed_embedded"] and out["edit_2"]["only_changed_embedded"]
    assert out["refresh_unchanged_10k"]["files"] == 20
    assert out["refresh_unchanged_10k"]["grow_embedded"] == 0  # copies reuse vectors
    assert "knn_vs_numpy" in out
    assert "skipped" in out["mcp_cold_start"] or out["mcp_cold_start"]["median_s"] > 0


def test_compare_smoke(
    dataset: Path, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from memo_core import Engine

    monkeypatch.setenv("MEMO_MODEL_DIR", str(model_dir))
    copies = [tmp_path / "one", tmp_path / "two"]
    for copy in copies:
        shutil.copytree(dataset / "corpus", copy)
        with Engine() as engine:
            engine.refresh(copy)
    out = _load("compare").main(
        [str(BENCH.parent), *map(str, copies), "--rounds", "1", "--queries", "3"]
        + ["--repeat", "2", "--cold-starts", "1"]
    )
    for side in ("before", "after"):
        [run] = out["runs"][side]
        assert run["ratio"] > 0 and all(run[m] > 0 for m in ("lex", "vec", "hybrid"))
        assert len(out["cold_start"][side]) == 1


def test_size_smoke(dataset: Path, tmp_path: Path) -> None:
    out = _load("size").main([str(dataset), "--workdir", str(tmp_path / "w"), "--no-model"])
    assert out["tinyset"]["index_mb"] > 0 and out["tinyset"]["per_mb"] > 0
    assert out["hostile note"]["per_mb"] < 20


def test_confinement_smoke(dataset: Path, tmp_path: Path) -> None:
    out = _load("confinement").main(
        [str(dataset), "--pages", "8", "--searches", "3", "--no-model", "--workdir", str(tmp_path)]
    )
    for step in ("first index", "no-change refresh", "search p50"):
        assert set(out[step]) == {"proc", "by-name"} and min(out[step].values()) > 0


def test_ignore_speed_smoke(dataset: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / ".gitignore").write_text("*.log\nbuild/\n!keep.md\n", encoding="utf-8")
    out = _load("ignore_speed").main(
        [
            str(dataset),
            "--from",
            str(rules),
            "--max-files",
            "1",
            "--rounds",
            "1",
            "--lengths",
            "8",
            "--pathspec-timeout",
            "2",
            "--workdir",
            str(tmp_path / "w"),
        ]
    )
    assert out["real_files"]["files"] == 1 and out["real_files"]["memo"] > 0
    for line in out["pathological"].values():
        assert set(line["memo_s"]) == {8} and line["memo_s"][8] > 0
    assert out["big_file"]["ignored"] > 0 and out["big_file"]["compile_s"] > 0  # its notes named
    assert len(out["worst_allowed"]) == 2
    assert all(w["one_s"] > 0 and w["each_s"] > 0 for w in out["worst_allowed"].values())


def test_scale_smoke(model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small generated vault indexed with a model (the tiny one, which MEMO_MODEL_DIR
    hands to the bench's child processes too): one-shot CLI searches, memo-mcp's lex and
    hybrid searches, and the memory of indexing and serving."""
    monkeypatch.setenv("MEMO_MODEL_DIR", str(model_dir))
    argv = ["--sizes", "120", "--rounds", "2", "--model", "--one-shot-runs", "1", "--no-vectors"]
    out = _load("scale").main([*argv, "--workdir", str(tmp_path / "w")])
    r = out["120"]
    index = r["index"]["new"]
    assert index["added"] == 121 and index["chunks"] >= 240  # 120 notes of 2 sections, a README
    assert 0 < index["index_peak_mb"] <= index["peak_rss_mb"]
    one = r["one_shot"]
    assert one["model_s"] > 0 and set(one["new"]) == {"selective", "generic"}
    assert all(q["s"] > 0 and q["peak_mb"] > 0 for q in one["new"].values())
    assert r["freshness"]["fresh_seen"] == 1.0
    served = r["at_rest"]["new"]
    assert served["first_hybrid_s"] > 0 and served["rss_hybrid_mb"] > 0


def test_scale_shapes_smoke(tmp_path: Path) -> None:
    """The two shapes, one collection and sibling collections of 100 notes, each measured in
    a fresh process with the stand-in model: every figure there, every edit seen."""
    out = _load("scale").main(
        ["--shapes", "300", "--rounds", "30", "--workdir", str(tmp_path / "w")]
    )
    shapes = out["shapes"]
    assert set(shapes) == {"one collection", "3 collections"}
    for by_side in shapes.values():
        r = by_side["new"]
        assert r["first_lex_s"] > 0 and r["second_lex_s"] > 0 and r["first_hybrid_s"] > 0
        assert r["peak_mb"] > 0 and r["ms"]["walk"] > 0
        assert r["edits_seen"] == "10 of 10"


def _results(scifact: float, cross: float, same: float):
    """A model's results as bench/models.py keeps them, every set at the given nDCG (each
    query's too, as quality.py and crossling.py keep them)."""

    def mode(v: float) -> dict:
        return {"hybrid": {"ndcg": v, "ndcg_ci95": 0.01, "_ndcg": [v] * 4}}

    styles = {
        style: {d: mode(cross if d in ("en→ru", "ru→en") else same)
                for d in ("en→ru", "ru→ru", "en→en", "ru→en")}
        for style in ("title", "sentence")
    }  # fmt: skip
    sci = {"modes": {"hybrid": {"ndcg": scifact, "ndcg_ci95": 0.04}}}
    return {"scifact": {**sci, "_per_query_hybrid": [scifact] * 4}, **styles}


GAINS = "gains >= 0.02 on SciFact and every cross-lingual set"


@pytest.mark.parametrize(
    ("new", "rules_failed"),
    [
        (_results(0.75, 0.90, 0.99), []),  # gains .03 and .05 where it must, loses nothing
        (_results(0.74, 0.90, 0.99), [GAINS]),
        (_results(0.75, 0.90, 0.90), ["no set loses beyond its interval"]),  # .09 below
        # SciFact .02 below: within its own interval (.04), beyond the paired one (0)
        (_results(0.71, 0.90, 0.99), ["no set loses beyond its interval", GAINS]),
    ],
)
def test_the_default_rule(new: dict, rules_failed: list[str]) -> None:
    models = _load("models")
    old = _results(0.73, 0.85, 0.99)
    verdict = models.default_verdict(new, old, full_index_s=600, first_answer=0.9)
    assert [r for r, ok in verdict["rules"].items() if not ok] == rules_failed
    assert verdict["passes"] is (not rules_failed)
    slow = models.default_verdict(new, old, full_index_s=1000, first_answer=1.5)
    assert not slow["rules"]["first full index within 15 minutes"]
    assert not slow["rules"]["first answer as fast as before"] and not slow["passes"]


def test_realsets_smoke(tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/realsets.py on a tiny set of its own shape: a tarball of pages, questions in
    two languages."""
    import tarfile

    pages = tmp_path / "pages"
    (pages / "guide").mkdir(parents=True)
    for i, (title, words) in enumerate(TOPICS):
        (pages / "guide" / f"p{i}.md").write_text(f"# {title}\n\n{words}\n", "utf-8")
    # A page and its archived copy: the question's answer is the copy, named under the hit.
    copy = (
        "# Kvass\n\nKvass wants rye bread, water, sugar and a little yeast, then two warm days.\n"
    )
    (pages / "archive").mkdir()
    for folder in ("guide", "archive"):
        (pages / folder / "kvass.md").write_text(copy, "utf-8")
    sets = tmp_path / "sets" / "tiny-en"
    sets.mkdir(parents=True)
    with tarfile.open(sets / "corpus.tar.xz", "w:xz") as tar:
        tar.add(pages, arcname=".")
    with open(sets / "questions.jsonl", "w", encoding="utf-8") as f:
        for i, (_, words) in enumerate(TOPICS):
            q = {"id": f"tiny-{i}", "lang": "ru" if i % 2 else "en", "text": words.split()[0]}
            f.write(json.dumps(q | {"answers": {f"guide/p{i}.md": 2}, "kind": "keywords"}) + "\n")
        q = {"id": "tiny-9", "lang": "en", "text": "kvass", "answers": {"archive/kvass.md": 2}}
        f.write(json.dumps(q) + "\n")
    monkeypatch.setenv("MEMO_MODEL_DIR", str(model_dir))
    out = _load("realsets").main(
        ["--sets-dir", str(tmp_path / "sets"), "--workdir", str(tmp_path / "w")]
    )
    assert set(out["sets"]) == {"tiny en→en", "tiny ru→en"}
    lex = out["sets"]["tiny en→en"]["lex"]
    assert lex["n"] == 7 and 0 <= lex["first"] <= lex["top3"] <= 7 and 0 <= lex["ndcg"] <= 1
    assert lex["copies"] >= 1 and lex["named"] == 1  # the archived answer, under the current
    assert set(out["sets"]["tiny ru→en"]) == {"hybrid", "vec", "lex"}


def test_the_real_question_sets_are_whole() -> None:
    """Every set in bench/realsets/ holds what realsets.py reads: at least 60 unique
    questions in its pages' language (its name's end) and more in others, each with a best
    answer that is one of its pages, and where it comes from."""
    import tarfile

    realsets = _load("realsets")
    found = realsets.names()
    assert len(found) >= 2
    for name in found:
        with tarfile.open(realsets.SETS / name / "corpus.tar.xz") as tar:
            pages = {m.name.removeprefix("./") for m in tar.getmembers() if m.isfile()}
        qs = realsets.questions(name)
        assert len({q["id"] for q in qs}) == len({q["text"] for q in qs}) == len(qs)
        own = realsets.pages_language(name)
        assert sum(q["lang"] == own for q in qs) >= 60, name
        assert len(realsets.languages(qs)) >= 2, name  # a second direction too
        for q in qs:
            assert max(q["answers"].values()) == 2 and set(q["answers"]) <= pages, q["id"]
        assert "licen" in (realsets.SETS / name / "SOURCE.md").read_text(encoding="utf-8").lower()


def test_costs_smoke(dataset: Path, model_dir: Path, tmp_path: Path) -> None:
    before = dict(os.environ)
    out = _load("costs").main(
        ["--models", f"dir:{model_dir}", "--data", str(dataset / "corpus"), "--pages", "6",
         "--rounds", "1", "--warm", "--serve", "--whole"]
    )  # fmt: skip
    [run] = out["index"].values()
    assert len(run["seconds"]) == 1 and run["peak_mb"][0] > 10
    assert out["warm"]["hybrid_median_ms"] > 0 and out["serve"][f"dir:{model_dir}"]["peak_mb"] > 10
    assert out["whole"]["seconds"] >= 0
    assert dict(os.environ) == before  # the warm pass borrows the environment and gives it back


def test_filling_smoke(dataset: Path, model_dir: Path) -> None:
    out = _load("filling").main(
        ["--model", f"dir:{model_dir}", "--data", str(dataset / "corpus"), "--pages", "6",
         "--minutes", "0.5"]
    )  # fmt: skip
    assert out["calls"] and all(c["took_s"] >= 0 for c in out["calls"])
    assert out["calls"][-1]["notice"] == ""  # a small folder: complete within half a minute
    assert out["restart"]["after"] == ""  # and a new server finds it whole


def test_warm_smoke(dataset: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memo_core import Engine

    monkeypatch.setenv("MEMO_MODEL_DIR", str(model_dir))
    with Engine() as e:
        e.refresh(dataset / "corpus")
    out = _load("warm").main([str(dataset / "corpus"), "--rounds", "1"])
    assert out["median_ms"]["hybrid"] > 0 and out["median_ms"]["bare fts"] > 0
    assert out["lex_over_bare_fts"] > 0 and out["hybrid_over_parts"] > 0


def test_answers_lab_smoke(
    dataset: Path, model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = {w for _, ws in TOPICS for w in ws.split()} | {"more"}
    second = make_tiny_model_dir(tmp_path / "second", dim=8, words=sorted(words), seed=4)
    _load("answers_lab").main(
        ["--sets", "scifact", "--scifact", str(dataset), "--e5", str(model_dir),
         "--use", str(second), "--workdir", str(tmp_path / "work"), "--gibberish", "3",
         "--report", "levers,stacks,sentmodel"]
    )  # fmt: skip
    out = capsys.readouterr().out
    # Every query of the tiny set finds its note first, under every policy.
    rows = [line.split() for line in out.splitlines() if line.startswith(("today", "stack"))]
    ndcg = [r for r in rows if len(r) >= 2 and r[1][:1].isdigit() and "gibberish" not in r]
    assert len(ndcg) >= 4 and all(r[1].startswith("1.0000") for r in ndcg), out
    assert "gibberish silenced" in out
    assert "== sentences by use" in out  # the second look by the other model too


# -- the parallel office-dev sets, in miniature -------------------------------------------------

# (file, English title, Russian title): the same page in both languages, at the same path.
PAGES = [
    ("backup", "Configure backup of the server", "Настроить бэкап сервера"),
    ("linux", "Install linux on a server", "Установить linux на сервер"),
    ("docker", "Docker build and deploy", "Сборка и выкладка docker"),
    ("git", "Git log and release", "Журнал git и релиз"),
    ("python", "Python test errors", "Ошибки тестов python"),
    ("db", "Database index and query", "Индекс и запрос базы"),
    ("weather", "Weather with rain and sun", "Погода с дождём и солнцем"),
    ("soup", "Soup recipe with borscht", "Рецепт супа и борща"),
    ("pets", "Cat and dog at home", "Кошка и собака дома"),
    ("fruit", "Apple and banana recipe", "Рецепт с яблоком и бананом"),
    ("network", "Network password for users", "Пароль сети для пользователей"),
    ("disk", "Disk memory and build", "Память диска и сборка"),
]


@pytest.fixture
def office(tmp_path: Path) -> tuple[Path, Path]:
    """office-dev-en and office-dev-ru as crossling.py reads them: the same paths, a title in
    the front matter, a first prose line of 8 to 40 words (the sentence queries)."""
    sets = []
    for lang, col in (("en", 1), ("ru", 2)):
        root = tmp_path / f"office-dev-{lang}"
        (root / "docs").mkdir(parents=True)
        (root / "README.md").write_text("# Docs\n\nThe docs.\n", "utf-8")
        for page in PAGES:
            title = page[col]
            line = " ".join((title.split() * 4)[:12]) + "."
            text = f'---\ntitle: "{title}"\n---\n\n# {title}\n\n{line}\n\n## More\n\n{title}\n'
            (root / "docs" / f"{page[0]}.md").write_text(text, "utf-8")
        sets.append(root)
    return sets[0], sets[1]


def _office_words() -> list[str]:
    words = {w.lower() for page in PAGES for t in page[1:] for w in t.split()}
    return sorted(words | {"docs", "the", "more"})


@pytest.fixture
def office_model(tmp_path: Path) -> Path:
    return make_tiny_model_dir(tmp_path / "office-model", dim=16, words=_office_words())


def test_crossling_smoke(office: tuple[Path, Path], office_model: Path, tmp_path: Path) -> None:
    en, ru = office
    out = _load("crossling").main(
        [str(en), str(ru), "--queries", "4", "--model-dir", str(office_model),
         "--workdir", str(tmp_path / "w")]
    )  # fmt: skip
    assert out["queries"] == {"en→ru": 4, "ru→ru": 4, "en→en": 4, "ru→en": 4}
    for direction in ("en→en", "ru→ru"):  # a page's own title finds it by its words
        assert out[direction]["lex"]["ndcg"] == 1.0
    for by_mode in (out[d] for d in ("en→ru", "ru→ru", "en→en", "ru→en")):
        assert set(by_mode) == {"lex", "vec", "hybrid"}
        assert all(0.0 <= r["ndcg"] <= 1.0 and len(r["_ndcg"]) == 4 for r in by_mode.values())


def test_crossling_sentence_pages_smoke(office: tuple[Path, Path], tmp_path: Path) -> None:
    """Sentence queries over a subset of pages, words only."""
    en, ru = office
    out = _load("crossling").main(
        [str(en), str(ru), "--queries", "3", "--style", "sentence", "--pages", "8",
         "--no-model", "--modes", "lex", "--workdir", str(tmp_path / "w")]
    )  # fmt: skip
    assert out["pages"] == 8 and out["queries"]["en→en"] == 3
    assert set(out["en→en"]) == {"lex"} and out["en→en"]["lex"]["ndcg"] == 1.0
    assert len(list((tmp_path / "w" / "subsets").glob("office-dev-en-p8-*/docs/*.md"))) == 7


def test_models_smoke(
    dataset: Path, office: tuple[Path, Path], office_model: Path, tmp_path: Path
) -> None:
    """Two models side by side on every set, and the default rule between them."""
    words = _office_words() + sorted({w for _, ws in TOPICS for w in ws.split()})
    second = make_tiny_model_dir(tmp_path / "second", dim=8, words=words, seed=4)
    first = make_tiny_model_dir(tmp_path / "first", dim=16, words=words)
    en, ru = office
    out = _load("models").main(
        [str(dataset), str(en), str(ru), "--model-dir", str(first), "--model-dir", str(second),
         "--pages", "0", "--queries", "4", "--workdir", str(tmp_path / "w")]
    )  # fmt: skip
    assert list(out["models"]) == [str(first), str(second)]
    for r in out["models"].values():
        assert r["scifact"]["modes"]["lex"]["ndcg"] > 0.5
        assert r["title"]["en→en"]["lex"]["ndcg"] == 1.0 and "hybrid" in r["sentence"]["ru→en"]
        assert r["latency"]["p50_ms"] > 0
    assert set(out["verdict"]["rules"]) == {
        "no set loses beyond its interval",
        "gains >= 0.02 on SciFact and every cross-lingual set",
    }
    assert len(out["verdict"]["sets"]) == 9  # SciFact and eight office-dev sets


def test_wordscore_smoke(
    dataset: Path, office: tuple[Path, Path], office_model: Path, tmp_path: Path
) -> None:
    en, ru = office
    out = _load("wordscore").main(
        [str(en), str(ru), "--queries", "4", "--rounds", "1", "--scifact", str(dataset),
         "--model-dir", str(office_model), "--workdir", str(tmp_path / "w")]
    )  # fmt: skip
    assert set(out) == {f"{s} {m}" for s in ("titles", "docs", "claims") for m in ("lex", "hybrid")}
    for row in out.values():  # every setting timed: (p50, p90) ms
        assert set(row) == {"off", "match", "names", "now"}
        assert all(0 < p50 <= p90 for p50, p90 in row.values())


def test_fusion_lab_smoke(
    dataset: Path, office: tuple[Path, Path], office_model: Path, tmp_path: Path
) -> None:
    en, ru = office
    out = _load("fusion_lab").main(
        [str(dataset), str(en), str(ru), "--queries", "4", "--model-dir", str(office_model),
         "--workdir", str(tmp_path / "w")]
    )  # fmt: skip
    words_only = out["fixed 0.0"]  # dense weight 0: the word ranking alone
    assert set(words_only) == {"scifact", "en→ru", "ru→ru", "en→en", "ru→en"}
    assert words_only["en→en"] == words_only["ru→ru"] == 1.0  # each title names its page
    assert all(0.0 <= v <= 1.0 for policy in out.values() if isinstance(policy, dict)
               for v in policy.values() if isinstance(v, float))  # fmt: skip


def test_floor_lab_smoke(
    dataset: Path, office: tuple[Path, Path], office_model: Path, tmp_path: Path
) -> None:
    en, ru = office
    out = _load("floor_lab").main(
        [str(dataset), str(en), str(ru), "--queries", "4", "--nonsense", "20",
         "--model-dir", str(office_model), "--workdir", str(tmp_path / "w")]
    )  # fmt: skip
    rules = [k for k in out if k.startswith(("none", "absolute", "margin"))]
    assert len(rules) == 1 + 9 + 12
    assert out["none"]["lost_vec"] == out["none"]["lost_hybrid"] == 0  # no floor drops nothing
    floors = [out[k]["lost_vec"] for k in rules if k.startswith("absolute")]
    assert floors == sorted(floors)  # a higher floor loses at least as many answers
    assert all(0.0 <= out[k][f] <= 1.0 for k in rules for f in ("lost_vec", "silenced_hybrid"))


def test_scopes_smoke(
    office: tuple[Path, Path], office_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from memo_core import Engine

    en, _ = office
    copy = tmp_path / "copy"
    shutil.copytree(en, copy)
    monkeypatch.setenv("MEMO_MODEL_DIR", str(office_model))
    with Engine() as engine:
        engine.refresh(copy)
    out = _load("scopes").main(
        [str(en), "--copy", str(copy), "--queries", "4", "--workdir", str(tmp_path / "w")]
    )
    assert out["queries"] == 4
    lat = out["latency"]
    assert len(lat) == 3 * 5 * 2  # modes × scopes × (new, repeated)
    assert lat["lex / none"]["share"] == 1.0 and lat["lex / under docs"]["share"] == 12 / 13
    assert all(0 < v["p50_ms"] <= v["p95_ms"] and 0 < v["share"] <= 1 for v in lat.values())


def test_changes_smoke(office: tuple[Path, Path]) -> None:
    _, ru = office
    out = _load("changes").main([str(ru), "--versions", "3", "--edits", "2"])
    assert out["notes"] == 13 and out["log_first_b"] > 0
    assert (out["changed_since_oldest"], out["mode"]) == (6, "delta")  # 3 versions of 2 edits
    assert out["status_s"] > 0 and out["old_fingerprint_s"] > 0
    assert not (ru / ".memo").exists()  # the notes are copied first


def test_http_sessions_smoke() -> None:
    out = _load("http_sessions").main(["--flood", "20"])
    assert out["plain_tools_list"] == 200  # a plain JSON-RPC POST answered without a session
    assert (out["flood"], out["refused"], out["next_initialize"]) == (20, 0, 200)
    assert out["rss_after_mb"] > 0 and out["ping_ms"] > 0


# -- every script has its test and its row -------------------------------------------------------

# Run by a test elsewhere: needs gcc, the registry and ../shared/data (a slow test).
RUN_ELSEWHERE = {
    "model_parity": "tests/stories/test_e5_real.py::test_parity_with_the_reference_engine"
}


def test_every_bench_script_is_run_by_a_test_and_listed() -> None:
    """bench/ holds only scripts a test runs (here on a tiny input, or RUN_ELSEWHERE), each
    with its row in bench/README.md; a script that is no longer worth a test is removed."""
    import re

    scripts = {p.stem for p in BENCH.glob("*.py") if not p.name.startswith("_")}
    loaded = set(re.findall(r'_load\("(\w+)"\)', Path(__file__).read_text(encoding="utf-8")))
    for name, test in RUN_ELSEWHERE.items():
        file, func = test.split("::")
        text = (BENCH.parent / file).read_text(encoding="utf-8")
        assert f"def {func}(" in text and f"{name}.main(" in text, test
    assert scripts - loaded - set(RUN_ELSEWHERE) == set()
    assert loaded <= scripts  # no test loads a script that is gone
    rows = set(re.findall(r"^\| (\w+)\.py \|", (BENCH / "README.md").read_text("utf-8"), re.M))
    assert rows == scripts
