"""Ignore rules: .gitignore files (nested, negations), .memoignore, and the default skips."""

from __future__ import annotations

import json
import logging
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_notes

from memo_core import Engine, ModelSource
from memo_core.files.fsafe import Folder
from memo_core.files.ignore import IGNORE_FILES, Rules, ignored, with_folder
from memo_core.files.walker import is_note_path, relevant_change, scan
from memo_text import format_status

FILES = {
    "a.md": "# A\n\ncat\n",
    "drafts/wip.md": "# Wip\n\ncat\n",
    "drafts/keep.md": "# Keep\n\ncat\n",
    "old/x.tmp.md": "# Tmp\n\ncat\n",
    "sub/secret.md": "# Secret\n\ncat\n",
    "sub/open.md": "# Open\n\ncat\n",
    "other/secret.md": "# Not so\n\ncat\n",
    "archive/one.md": "# One\n\ncat\n",
    "archive/important.md": "# Important\n\ncat\n",
    "node_modules/pkg/README.md": "# pkg\n",
    "venv/lib/x.md": "# venv\n",
    ".venv/lib/y.md": "# .venv\n",
    "__pycache__/z.md": "# cache\n",
    "site-packages/w.md": "# site\n",
    ".git/info.md": "# git\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = write_notes(tmp_path / "vault", FILES)
    (root / ".gitignore").write_text("drafts/*\n!drafts/keep.md\n*.tmp.md\narchive/\n")
    (root / "sub" / ".gitignore").write_text("secret.md\n")
    (root / ".memoignore").write_text("# memo's own\n!archive/\narchive/one.md\n")
    return root


def test_gitignore_memoignore_and_default_skips(vault: Path) -> None:
    found = scan(vault)
    assert sorted(found.files) == [
        "a.md",
        "archive/important.md",  # .memoignore takes the folder back, then leaves one out
        "drafts/keep.md",  # negated
        "other/secret.md",  # sub/.gitignore rules only sub/
        "sub/open.md",
    ]
    # drafts/wip.md, old/x.tmp.md, sub/secret.md, archive/one.md
    assert found.ignored == 4


def test_a_sub_folder_walked_alone_sees_the_rules_above_it(vault: Path) -> None:
    assert sorted(scan(vault, "drafts/").files) == ["drafts/keep.md"]
    assert sorted(scan(vault, "sub/").files) == ["sub/open.md"]


def test_status_counts_what_was_ignored_and_rules_apply_at_once(vault: Path) -> None:
    with Engine(models=ModelSource(enabled=False)) as e:
        e.refresh(vault)
        [st] = e.status(vault)
        assert (st.files, st.ignored) == (5, 4)
        assert ", игнорируется 4" in format_status([st])
        (vault / ".memoignore").write_text("a.md\n")  # archive/ ignored again, a.md too
        stats = e.refresh(vault)
        assert stats.deleted == 2
        assert {h.relpath for h in e.search(vault, "cat", mode="lex", k=10)} == {
            "drafts/keep.md",
            "other/secret.md",
            "sub/open.md",
        }


def test_an_ignore_file_that_is_a_fifo_is_not_read(vault: Path) -> None:
    (vault / "sub" / ".gitignore").unlink()
    os.mkfifo(vault / "sub" / ".gitignore")
    assert "sub/secret.md" in scan(vault).files


@pytest.mark.parametrize(
    ("rel", "deleted", "relevant"),
    [
        (".gitignore", False, True),
        ("sub/.memoignore", False, True),
        (".git/.gitignore", False, False),
        ("node_modules/.gitignore", False, False),
    ],
)
def test_changed_ignore_files_wake_the_watcher(
    vault: Path, rel: str, deleted: bool, relevant: bool
) -> None:
    assert relevant_change(vault, str(vault / rel), deleted=deleted) is relevant


# -- git's semantics, with `git check-ignore` as the oracle --------------------------------

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")
A60 = "a" * 60
# Every case is tried on all of these ('/' at the end: a folder; the rest are files).
TREE = [
    *("a.md", "b.md", "ab.md", "ba.md", "A.md", "0.md", "c", "ac", "-", "]", "t", "t "),
    *("[ab].md", "a*b.md", "a?b.md", "a\\b.md", "#x.md", "!x.md", "a b.md", "\tq.md"),
    *("я.md", "яя.md", "caf\udce9.md", ".hidden.md", "foobar", A60, A60 + "b", "d/", "abc/"),
    *("x/a.md", "x/b/a.md", "x/b/c.md", "x/y/b/c.md", "x/b.md/", "a/c.md", "a/b/c.md"),
    *("a/x/b/c.md", "a/x/y/b", "foo/bar", "foo/x/bar", "foox/y/bar", "sub dir/a.md"),
    *("я/б.md", "bin/x.md", "node_modules/p.md", "src/bin/y.md", "deep/1/2/3/4.md"),
]
# (id, {folder: its .gitignore's lines}): each feature of the syntax, and how files nest.
CASES = [
    ("name", {"": ["a.md"]}),
    ("suffix", {"": ["*.md"]}),
    ("anchored", {"": ["/a.md"]}),
    ("path", {"": ["x/b/a.md"]}),
    ("path-no-leading-slash-is-anchored", {"": ["b/c.md"]}),
    ("folder-only", {"": ["b/"]}),
    ("folder-only-file-named-so", {"": ["c/", "t/"]}),
    ("folder-only-anchored", {"": ["/x/"]}),
    ("folder-only-with-dot", {"": ["b.md/"]}),
    ("negation", {"": ["*.md", "!b.md"]}),
    ("negation-order", {"": ["!b.md", "*.md"]}),
    ("negation-of-folder-content", {"": ["x/*", "!x/b/"]}),
    ("no-taking-back-inside-ignored-folder", {"": ["x/", "!x/a.md"]}),
    ("negated-folder-only", {"": ["*", "!*/", "!*.md"]}),
    ("star-not-crossing-slash", {"": ["x/*.md"]}),
    ("star-folder-star", {"": ["a/*/b"]}),
    ("question", {"": ["?.md"]}),
    ("question-is-one-byte", {"": ["??.md"]}),
    ("question-not-slash", {"": ["x?a.md", "a?c.md"]}),
    ("starstar-leading", {"": ["**/c.md"]}),
    ("starstar-leading-folder", {"": ["**/b/"]}),
    ("starstar-leading-path", {"": ["**/b/c.md"]}),
    ("starstar-trailing", {"": ["a/**"]}),
    ("starstar-inner", {"": ["a/**/b"]}),
    ("starstar-inner-deep", {"": ["x/**/c.md"]}),
    ("starstar-alone", {"": ["**"]}),
    ("starstar-anchored-alone", {"": ["/**"]}),
    ("starstar-then-star", {"": ["**/*"]}),
    ("starstar-repeated", {"": ["**/**/b/**/**"]}),
    ("starstar-not-at-edges", {"": ["a**b", "x/b**"]}),
    ("starstar-after-literal-prefix", {"": ["foo**/bar", "a/x**/b"]}),
    ("starstar-escaped-slash", {"": ["a/**\\/b"]}),
    ("starstar-folders-only", {"": ["deep/**/"]}),
    ("three-stars", {"": ["***.md", "x/***/c.md"]}),
    ("class", {"": ["[ab].md"]}),
    ("class-negated-bang", {"": ["[!a].md"]}),
    ("class-negated-caret", {"": ["[^a].md"]}),
    ("class-range", {"": ["[a-c]*"]}),
    ("class-bracket-first", {"": ["[]]", "[!]]b.md"]}),
    ("class-named", {"": ["[[:digit:]].md", "[[:upper:]].md", "[[:space:]]q.md"]}),
    ("class-named-unknown", {"": ["[[:foo:]].md", "a.md"]}),
    ("class-unclosed", {"": ["[ab", "b.md"]}),
    ("class-reversed-range", {"": ["[z-a].md", "ab.md"]}),
    ("class-dash-edges", {"": ["[-a].md", "[a-].md"]}),
    ("class-escapes", {"": ["[\\]a].md", "[\\!]x.md"]}),
    ("class-slash-never-matches", {"": ["x[/]b", "x[!a]b"]}),
    ("class-cyrillic-bytes", {"": ["[а-я].md", "?[а-я].md"]}),
    ("escapes", {"": ["\\[ab].md", "a\\*b.md", "a\\?b.md", "\\#x.md", "\\!x.md"]}),
    ("escaped-backslash", {"": ["a\\\\b.md"]}),
    ("trailing-backslash", {"": ["a.md\\", "b.md"]}),
    ("comment-and-blank", {"": ["# a.md", "", "   ", " #x.md", "b.md"]}),
    ("trailing-spaces", {"": ["a.md   ", "t \\ ", "t\\  "]}),
    ("inner-space", {"": ["a b.md", "sub dir/"]}),
    ("tab", {"": ["\tq.md"]}),
    ("crlf", {"": ["a.md\r", "x/\r"]}),
    ("byte-order-mark", {"": ["\ufeffa.md", "b.md"]}),
    ("nul-ends-the-pattern", {"": ["a.md\0junk", "\0b.md"]}),
    ("not-utf8", {"": ["caf\udce9.md", "caf?.md"]}),
    ("pathological", {"": ["*a*a*a*a*a*a*a*a*a*a*a*a*b"]}),
    ("pathological-anchored", {"": ["/*a*a*a*a*a*a*a*a*a*a*a*a*b", "**/a*a*a*a*a*b/"]}),
    ("nested", {"": ["*.md"], "x": ["!*.md"]}),
    ("nested-anchored-to-its-folder", {"x": ["/a.md", "b/c.md"]}),
    ("nested-deeper-decides", {"": ["!c.md"], "a": ["c.md"], "a/b": ["!c.md"]}),
    ("nested-inside-ignored-folder", {"": ["a/"], "a": ["!*"]}),
    ("nested-starstar", {"a": ["**/c.md"], "x/b": ["**"]}),
    ("nested-folder-only", {"x": ["b/"], "foo": ["*"]}),
    ("all-but", {"": ["/*", "!/x/", "/x/*", "!/x/b/"]}),
    ("tool-and-hidden", {"": ["!node_modules/", "!.hidden.md", "bin/"]}),
]
# Random patterns from the syntax's pieces (seeded: the same cases on every run).
PIECES = [
    *("a", "b", "c", "x", ".md", "/", "*", "**", "***", "?", "??", "[ab]", "[!a]", "[^b]"),
    *("[a-c]", "[]]", "[!]a]", "[[:alpha:]]", "[а-я]", "я", "\\*", "\\", "\\ ", " ", "!"),
    *("#", "-", "]", "**/", "/**", "\\/", "[/]", "[a-", "[z-a]", "[[:"),
]


def _random_cases(count: int) -> list[tuple[str, dict[str, list[str]]]]:
    rnd = random.Random(20)
    cases = []
    for i in range(count):
        files = {"": []}
        for folder in rnd.choice([[""], [""], ["", "x"], ["a"], ["", "a/b"]]):
            files[folder] = [
                "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 6)))
                for _ in range(rnd.randint(1, 3))
            ]
        cases.append((f"random{i}", files))
    return cases


def _entries() -> list[tuple[str, bool]]:
    """Every file and folder of TREE (folders that hold others included)."""
    found: dict[str, bool] = {}
    for rel in TREE:
        parts = rel.rstrip("/").split("/")
        for depth in range(1, len(parts)):
            found["/".join(parts[:depth])] = True
        found[rel.rstrip("/")] = rel.endswith("/")
    return sorted(found.items())


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One git work tree holding TREE; each case writes its own ignore files into it."""
    root = tmp_path_factory.mktemp("oracle") / "repo"
    for rel in TREE:
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("# Note\n\ncat\n")
    if GIT:
        subprocess.run([GIT, "init", "-q", str(root)], check=True)
    return root


def _with_ignore_files(root: Path, files: dict[str, list[str]]) -> Path:
    for old in root.rglob(".gitignore"):
        old.unlink()
    for folder, lines in files.items():
        text = "".join(line + "\n" for line in lines)
        (root / folder / ".gitignore").write_bytes(os.fsencode(text))
    return root


def _git_ignored(root: Path, entries: list[tuple[str, bool]]) -> set[str]:
    env = {**os.environ, "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"}
    env["GIT_CONFIG_GLOBAL"] = os.devnull  # no user's excludesFile
    paths = b"".join(os.fsencode(rel) + b"\0" for rel, _ in entries)
    r = subprocess.run(
        [GIT, "check-ignore", "--no-index", "--stdin", "-z"],
        cwd=root,
        input=paths,
        capture_output=True,
        env=env,
        check=False,
    )
    assert r.returncode in (0, 1), r.stderr  # 1: nothing ignored
    return {os.fsdecode(p) for p in r.stdout.split(b"\0") if p}


def _rules_above(folder: Folder, rel: str) -> Rules:
    """The rules of the ignore files above `rel` ('/'-terminated), whatever the folders on
    the way are called: the oracle judges git's rules, not memo's skipping of hidden and
    tool folders (`walker.reach` adds that)."""
    rules: Rules = ()
    parts = rel.split("/")[:-1]
    for depth in range(len(parts)):
        sub = "".join(p + "/" for p in parts[:depth])
        fd = folder.open_dir(sub)
        try:
            rules = with_folder(rules, fd, sub, IGNORE_FILES)
        finally:
            os.close(fd)
    return rules


def _memo_ignored(root: Path, entries: list[tuple[str, bool]]) -> set[str]:
    """What memo's rules ignore, as a walk sees it: an entry in an ignored folder is
    ignored with it (the walk never enters it)."""

    def left_out(folder: Folder, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for depth in range(1, len(parts) + 1):
            sub = "/".join(parts[:depth])
            inner = depth < len(parts) or is_dir
            if ignored(_rules_above(folder, sub + "/"), sub, inner):
                return True
        return False

    with Folder(str(root)) as folder:
        return {rel for rel, is_dir in entries if left_out(folder, rel, is_dir)}


ALL_CASES = CASES + _random_cases(300)


@needs_git
@pytest.mark.parametrize("files", [f for _, f in ALL_CASES], ids=[i for i, _ in ALL_CASES])
def test_ignore_rules_match_git_check_ignore(repo: Path, files: dict[str, list[str]]) -> None:
    root = _with_ignore_files(repo, files)
    entries = _entries()
    expected = _git_ignored(root, entries)
    assert _memo_ignored(root, entries) == expected
    # The walk agrees: every note git does not ignore (hidden and tool folders aside).
    notes = {rel for rel, is_dir in entries if not is_dir and is_note_path(rel)}
    assert set(scan(root).files) == notes - expected


# Real-world rules (from github/gitignore's Python, Node and VisualStudio templates): here
# pathspec, the matcher memo used before, agrees with git, and so must memo.
REAL_WORLD = [
    *("__pycache__/", "*.py[cod]", "*$py.class", "*.so", ".Python", "build/", "develop-eggs/"),
    *("/dist/", "*.egg-info/", ".installed.cfg", "*.egg", "MANIFEST", "pip-log.txt", ".tox/"),
    *("htmlcov/", ".coverage", ".coverage.*", "nosetests.xml", "*.cover", "*.log", "*.mo"),
    *("instance/", "docs/_build/", "target/", ".ipynb_checkpoints", ".env", "venv/", "ENV/"),
    *("logs", "npm-debug.log*", "pids", "*.pid", "*.seed", "lib-cov", "coverage", "*.lcov"),
    *(".nyc_output", "bower_components", "node_modules/", "jspm_packages/", "*.tsbuildinfo"),
    *(".npm", ".eslintcache", ".next", "out", ".nuxt", ".cache/", "[Dd]ebug/", "[Rr]elease/"),
    *("[Bb]in/", "[Oo]bj/", "[Ll]og/", "**/[Pp]ackages/*", "!**/[Pp]ackages/build/", "*.suo"),
    *("*.user", "*.sln.docstates", "*_i.c", "*.[Cc]ache", "!?*.[Cc]ache/", "~$*", "*~"),
    *("[Tt]est[Rr]esult*/", "*.VisualState.xml", ".vscode/*", "!.vscode/settings.json"),
    *("**/.fake/", "**/*.HTMLClient/GeneratedArtifacts", "Backup*/", "UpgradeLog*.XML", "*.rpt"),
    *("docs/*.md", "!docs/keep-*.md", "notes/**/draft-*.md", "/archive/20[0-9][0-9]/"),
]
REAL_PATHS = [
    *("a.py", "a.pyc", "b$py.class", "lib.so", "build/x.md", "src/build/y.md", "dist/z.md"),
    *("src/dist/z.md", "pkg.egg-info/i.md", "x.log", "logs/l.md", "logs.md", "npm-debug.log.1"),
    *("node_modules/m/r.md", "a/node_modules/r.md", "Debug/d.md", "debug/d.md", "DEBUG/d.md"),
    *("bin/b.md", "src/Bin/b.md", "packages/p.md", "x/Packages/p.md", "packages/build/q.md"),
    *("a.cache", "a.Cache/", "x.cache/", ".cache/", "~$doc.md", "note.md~", "TestResult1/t.md"),
    *(".vscode/settings.json", ".vscode/launch.json", "x/.fake/f.md", "Backup2/b.md"),
    *("a/b.HTMLClient/GeneratedArtifacts", "docs/a.md", "docs/keep-a.md", "docs/sub/a.md"),
    *("notes/draft-1.md", "notes/x/y/draft-2.md", "notes/final.md", "archive/2023/a.md"),
    *("archive/1999/a.md", "x/archive/2023/a.md", "readme.md", "out/o.md", "out.md"),
]


def _pathspec_ignored(lines: list[str], entries: list[tuple[str, bool]]) -> set[str]:
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def left_out(rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for depth in range(1, len(parts) + 1):
            sub = "/".join(parts[:depth])
            if spec.check_file(sub + "/" if depth < len(parts) or is_dir else sub).include:
                return True
        return False

    return {rel for rel, is_dir in entries if left_out(rel, is_dir)}


@needs_git
def test_real_world_rules_agree_with_git_and_with_pathspec(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for rel in REAL_PATHS:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith("/"):
            (root / rel).mkdir()
        else:
            (root / rel).write_text("# Note\n\ncat\n")
    subprocess.run([GIT, "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("".join(line + "\n" for line in REAL_WORLD))
    found: dict[str, bool] = {}
    for rel in REAL_PATHS:
        parts = rel.rstrip("/").split("/")
        found.update({"/".join(parts[:d]): True for d in range(1, len(parts))})
        found[rel.rstrip("/")] = rel.endswith("/")
    entries = sorted(found.items())
    git = _git_ignored(root, entries)
    assert _memo_ignored(root, entries) == git
    assert _pathspec_ignored(REAL_WORLD, entries) == git
    assert 20 < len(git) < len(entries) - 10  # the rules do decide both ways


# -- the matcher itself ----------------------------------------------------------------


def _reference(tokens: tuple[tuple[int, int], ...]) -> re.Pattern[bytes]:
    """Any pattern as a backtracking regular expression: fine on the short paths below."""
    from memo_core.files.globmatch import ANY, LIT, ONE, STAR

    parts = []
    for kind, arg in tokens:
        if kind == LIT:
            parts.append(re.escape(bytes([arg])))
        elif kind == ONE:
            parts.append(b"[" + b"".join(b"\\x%02x" % c for c in range(256) if arg >> c & 1) + b"]")
        else:
            parts.append({STAR: b"[^/]*", ANY: b".*"}.get(kind, b"(?:.*/)?"))
    return re.compile(b"".join(parts), re.DOTALL)


SHORT_PATHS = [b"a", b"ab", b"a/b", b"ab/ab", b"b/a/b", b"a/b/c/a", b"aaa", b"a/", b"/a", b"]"]


@pytest.mark.parametrize("seed", range(40))
def test_match_and_its_regex_screen_agree_with_a_plain_regex(seed: int) -> None:
    from memo_core.files.globmatch import match, parse, positions, regex

    rnd = random.Random(seed)
    for _ in range(50):
        line = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 8))).encode()
        rule = parse(line)
        if rule is None or not rule.tokens:
            continue
        expected = _reference(rule.tokens)
        screen = regex(rule.tokens)
        for path in SHORT_PATHS:
            want = expected.fullmatch(path) is not None
            assert match(rule.tokens, path, positions(path)) is want, (line, path)
            if screen is not None:
                assert (re.fullmatch(screen, path) is not None) is want, (line, path)


def test_a_long_pattern_costs_no_more_than_the_path() -> None:
    """`match` looks at no more than 2n + 3 tokens of a path of n bytes."""
    from memo_core.files import globmatch

    rule = globmatch.parse(b"*a" * 100_000 + b"*b")
    assert rule is not None
    seen = []

    class Counting(tuple):  # type: ignore[type-arg]
        def __iter__(self):  # type: ignore[no-untyped-def]
            for token in super().__iter__():
                seen.append(token)
                yield token

    text = b"a" * 60 + b"b"
    assert not globmatch.match(Counting(rule.tokens), text, globmatch.positions(text))
    assert len(seen) <= 2 * len(text) + 3


# -- what no folder can do to memo ---------------------------------------------------------

PATHOLOGICAL = [
    "*a*a*a*a*a*a*a*a*a*a*a*a*b",
    "**/*a*a*a*a*a*a*a*a*a*a*a*a*b",
    "/a*a*a*a*a*a*a*a*a*a*a*a*a*/**/b",
    "[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*[a]*b",
    "?*?*?*?*?*?*?*?*?*?*?*?*?*b/",
    "!*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
]


def _memo_search(root: Path, query: str, timeout: float, **env: str) -> set[str]:
    r = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "search", str(root), query, "--mode", "lex"]
        + ["--json", "-k", "100", "--max-chars", "200000"],  # all 100, whatever their size
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
    )
    assert r.returncode == 0, r.stderr
    return {h["relpath"] for h in json.loads(r.stdout)["hits"]}


def test_patterns_that_made_the_old_matcher_backtrack_forever_answer_at_once(
    tmp_path: Path,
) -> None:
    """The old matcher (pathspec's regex) backtracked for hours on each of these against
    a name of 60 `a`s, holding the GIL: the CLI hung, memo-mcp froze."""
    notes = {
        f"{A60}.md": "# A\n\ncat\n",
        f"{A60}/{A60}.md": "# B\n\ncat\n",
        "ok.md": "# C\n\ncat\n",
    }
    root = write_notes(tmp_path / "notes", notes)
    (root / ".gitignore").write_text("".join(p + "\n" for p in PATHOLOGICAL))
    assert _memo_search(root, "cat", timeout=60) == set(notes)


def test_a_100000_line_gitignore_is_applied_and_searches_index_the_notes(tmp_path: Path) -> None:
    """A 100,000-line (~900 KB) .gitignore: with the old matcher each search here took
    18 s and answered with nothing indexed; now one search walks it well within a refresh
    budget of 8 s (the default is 3: this leaves room for a slow machine)."""
    notes = {f"note{i}.md": f"# Note {i}\n\ncat\n" for i in range(300)}
    root = write_notes(tmp_path / "notes", notes)
    lines = [f"x{i}.md" for i in range(99_990)] + [f"note{i}.md" for i in range(10)]
    random.Random(1).shuffle(lines)
    (root / ".gitignore").write_text("".join(line + "\n" for line in lines))
    assert 800_000 < (root / ".gitignore").stat().st_size < 1 << 20
    kept = set(notes) - {f"note{i}.md" for i in range(10)}
    hits = _memo_search(root, "cat", timeout=120, MEMO_REFRESH_BUDGET="8")
    assert len(hits) == 100 and hits <= kept  # the most a search returns
    r = subprocess.run(
        [sys.executable, "-m", "memo_cli.main", "status", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    [status] = json.loads(r.stdout)
    assert (status["files"], status["ignored"]) == (len(kept), 10)


@pytest.mark.parametrize("line", ["[z-a].md", "\\", "[[:nope:]]", "[ab", "\\/x\\/", "!", "a/**\\"])
def test_a_line_git_reads_as_matching_nothing_leaves_the_rest_working(
    vault: Path, line: str
) -> None:
    """The old matcher raised on most of these (a re.error, "Invalid git pattern"): the
    whole walk, and every search, failed."""
    (vault / ".gitignore").write_text(f"{line}\na.md\n")
    found = scan(vault).files
    assert "a.md" not in found and "drafts/wip.md" in found


def _over(limit: str) -> str:
    """An ignore file's text one step beyond `limit` (and `open.md`, which it would ignore)."""
    from memo_core.files.ignore import MAX_COMPLEX, MAX_IGNORE_BYTES, MAX_PATTERNS, MAX_RULES

    lines = {
        "rules": ["z"] * MAX_RULES,  # with open.md: one too many
        "patterns": [f"z{i}*" for i in range(MAX_PATTERNS + 1)],
        "complex": [f"*z{i}*" for i in range(MAX_COMPLEX + 1)],
        "bytes": ["z" * 1000] * (MAX_IGNORE_BYTES // 1000),
    }[limit]
    return "".join(line + "\n" for line in ["open.md", *lines])


@pytest.mark.parametrize("limit", ["rules", "patterns", "complex", "bytes"])
def test_an_ignore_file_beyond_the_limits_is_not_applied_and_said_once(
    vault: Path, caplog: pytest.LogCaptureFixture, limit: str
) -> None:
    (vault / "sub" / ".gitignore").write_text(_over(limit))
    with caplog.at_level(logging.WARNING, logger="memo"):
        for _ in range(3):  # every search walks again: one warning
            found = scan(vault).files
            assert "sub/open.md" in found and "sub/secret.md" in found  # none of it applies
    [record] = caplog.records
    assert f"{str(vault / 'sub' / '.gitignore')!r} is not applied" in record.getMessage()
    assert "a.md" in found and "drafts/wip.md" not in found  # the root's rules still apply
    (vault / "sub" / ".gitignore").write_text("open.md\n")
    assert "sub/open.md" not in scan(vault).files


@pytest.mark.parametrize("limit", ["rules", "patterns", "complex"])
def test_the_limits_count_the_rules_in_force_from_the_folders_above(
    vault: Path, limit: str
) -> None:
    """Half of a limit at the root and half (and one) below it: the root's file applies,
    the one below does not."""
    lines = _over(limit).splitlines()[1:]
    half = len(lines) // 2
    (vault / ".gitignore").write_text("".join(x + "\n" for x in ["a.md", *lines[:half]]))
    below = "".join(x.replace("z", "y") + "\n" for x in ["open.md", *lines[half:]])
    (vault / "sub" / ".gitignore").write_text(below)
    found = scan(vault).files
    assert "a.md" not in found
    assert "sub/open.md" in found and "sub/secret.md" in found
