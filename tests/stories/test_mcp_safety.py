"""memo-mcp's safety: it stays inside the folders its user allowed, and no input breaks it.

An MCP server acts on paths chosen by a language model, which may be steered by whatever text
it read. So every `path` is resolved (`~`, relative, `..`, symlinks) and must lie inside an
allowed root (`--root`, `MEMO_ROOTS`, default: home), and every bad input (query text, `k`,
`mode`, a broken JSON-RPC line) gets results or a clear error, never a traceback, while the
server keeps serving. Most tests run the real `memo-mcp` over stdio; the query tables also run
in process (`Client(build_server())`), where they are cheap.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_helpers import MEMO_MCP, WireServer, make_notes, server_env
from test_crash_and_concurrency import check_consistent

from memo_mcp import server as memo_server

TOOLS = ("memo_search", "memo_status", "memo_reindex", "memo_changes", "memo_read")
HIT = re.compile(r"^(/.+?):(\d+)  (.*)$")  # the heading is empty before the first one


def arguments(tool: str, path: str) -> dict[str, Any]:
    more = {"memo_search": {"query": "restic"}, "memo_read": {"note": "garden.md"}}
    return {"path": path} | more.get(tool, {})


def outside_text(path: str, roots: list[Path]) -> str:
    names = ", ".join(str(r) for r in roots)
    return (
        f"{path} лежит вне папок, которые memo разрешено использовать ({names}); "
        "добавьте её через MEMO_ROOTS или --root при запуске memo-mcp"
    )


# -- confinement ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """allowed/notes (the one root), and around it what the server must never touch."""
    base = tmp_path_factory.mktemp("safety").resolve()
    make_notes(base / "allowed")
    make_notes(base / "secret")
    make_notes(base / "allowed-private")  # shares a prefix with the root, is not inside it
    make_notes(base / "home")  # the server's HOME, outside its root
    foreign = base / "secret" / "notes" / ".memo"
    foreign.mkdir()
    (foreign / "index.db").write_bytes(b"someone else's index")
    os.symlink(base / "secret", base / "allowed" / "link-out")
    os.symlink(base / "allowed" / "notes", base / "allowed" / "link-in")
    os.symlink(base / "allowed" / "notes", base / "outside-link-in")
    return base


@pytest.fixture(scope="module")
def guarded(place: Path, tiny_model_dir: Path) -> Iterator[WireServer]:
    """memo-mcp --root <place>/allowed, HOME outside it, working in allowed/notes."""
    env = server_env(place, tiny_model_dir)
    env["MEMO_ROOTS"] = ""
    env["HOME"] = str(place / "home")
    server = WireServer(
        env, cwd=place / "allowed" / "notes", args=["--root", str(place / "allowed")]
    )
    assert "result" in server.initialize()
    yield server
    assert server.close() == 0, server.stderr_text()
    server.check_stdout()


OUTSIDE = [
    "{base}/secret/notes",
    "{base}/secret",
    "{base}",
    "{base}/allowed/../secret/notes",
    "{base}/allowed/notes/../../secret/notes",
    "{base}/allowed/link-out",
    "{base}/allowed/link-out/notes",
    "{base}/allowed-private/notes",
    "~/notes",
    "~",
    "../../secret/notes",  # relative to the server's working directory, allowed/notes
    "..//../secret",
    "/",
    "/etc",
]


def untouched(place: Path) -> None:
    """No index was made or changed outside the root, nor kept in the cache instead."""
    assert (place / "secret" / "notes" / ".memo" / "index.db").read_bytes() == (
        b"someone else's index"
    )
    assert sorted(p.name for p in (place / "secret" / "notes" / ".memo").iterdir()) == ["index.db"]
    for folder in ("secret", "allowed-private", "home"):
        assert not (place / folder / ".memo").exists()
    for folder in ("allowed-private", "home"):
        assert not (place / folder / "notes" / ".memo").exists()
    indexes = place / "cache" / "indexes"
    assert not indexes.exists() or not any(indexes.iterdir())


@pytest.mark.parametrize("tool", TOOLS)
def test_paths_outside_the_roots_are_refused(guarded: WireServer, place: Path, tool: str) -> None:
    for raw in OUTSIDE:
        path = raw.format(base=place)
        assert guarded.tool(tool, arguments(tool, path)) == {
            "content": [{"type": "text", "text": outside_text(path, [place / "allowed"])}],
            "isError": True,
        }, path
    untouched(place)


def test_paths_inside_the_roots_work_however_written(guarded: WireServer, place: Path) -> None:
    notes = place / "allowed" / "notes"
    backup = notes / "home" / "backup.md"
    for path in (
        str(notes),
        str(place / "allowed"),
        ".",
        "../notes/home/..",
        f"{place}/secret/../allowed/notes",
        f"{place}/allowed/link-in",
        f"{place}/outside-link-in",  # the name is outside, the folder it leads to is inside
    ):
        text = guarded.text("memo_search", {"path": path, "query": "restic", "mode": "lex", "k": 1})
        assert text.startswith(f"{backup}:3  Backup > Restic\n"), (path, text)
    assert guarded.text("memo_status", {"path": "."}).startswith(f"{notes}: файлов 2, чанков ")
    assert guarded.text("memo_reindex", {"path": f"{place}/allowed/link-in"}) == (
        "переиндексировано файлов: 2"
    )
    untouched(place)


def test_path_errors_inside_the_roots_stay_path_errors(guarded: WireServer, place: Path) -> None:
    missing = place / "allowed" / "nowhere"
    result = guarded.tool("memo_status", {"path": str(missing)})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith(f"путь не существует: {missing}; ")
    for bad in ("", "   ", "\x00", "a\x00b", "x" * 5000):
        result = guarded.tool("memo_status", {"path": bad})
        assert result["isError"] is True, bad
        text = result["content"][0]["text"]
        assert text.startswith(("путь пуст", "путь не существует")), (bad, text)


def test_home_folders_of_users_answer_alike_whether_the_user_exists(guarded: WireServer) -> None:
    """No user-name oracle: ~root (exists) and ~no-such-user answer the same way."""
    for user in ("root", "no-such-user-memo"):
        result = guarded.tool("memo_status", {"path": f"~{user}/notes"})
        text = result["content"][0]["text"]
        assert result["isError"] is True
        assert text.startswith(f"~{user}/notes лежит вне папок, которые memo разрешено"), text
        assert "относительный путь" not in text


def test_roots_from_memo_roots_and_root_arguments(tmp_path: Path) -> None:
    a, b, c, d = (make_notes(tmp_path / name) for name in "abcd")
    env = server_env(tmp_path, roots=[tmp_path / "a", tmp_path / "b"])  # MEMO_ROOTS=a:b
    server = WireServer(env, args=["--root", str(tmp_path / "c")])
    try:
        server.initialize()
        for notes in (a, b, c):
            status = server.text("memo_status", {"path": str(notes)})
            assert status.startswith(f"{notes}: файлов 0, чанков 0, индекс нет"), status
        result = server.tool("memo_status", {"path": str(d)})
        roots = [tmp_path / "c", tmp_path / "a", tmp_path / "b"]
        assert result["content"][0]["text"] == outside_text(str(d), roots)
    finally:
        assert server.close() == 0, server.stderr_text()
    server.check_stdout()


def test_the_default_root_is_home(tmp_path: Path) -> None:
    home_notes = make_notes(tmp_path / "home")
    other = make_notes(tmp_path / "other")
    env = server_env(tmp_path)
    del env["MEMO_ROOTS"]
    env["HOME"] = str(tmp_path / "home")
    server = WireServer(env)
    try:
        server.initialize()
        assert server.text("memo_status", {"path": "~/notes"}).startswith(f"{home_notes}: ")
        result = server.tool("memo_reindex", {"path": str(other)})
        assert result["content"][0]["text"] == outside_text(str(other), [tmp_path / "home"])
    finally:
        assert server.close() == 0, server.stderr_text()
    assert not (other / ".memo").exists()


def test_memo_mcp_arguments(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    helped = subprocess.run([str(MEMO_MCP), "--help"], capture_output=True, env=env, timeout=60)
    assert helped.returncode == 0
    assert b"--root DIR" in helped.stdout and b"MEMO_ROOTS" in helped.stdout
    wrong = subprocess.run([str(MEMO_MCP), "--bogus"], capture_output=True, env=env, timeout=60)
    assert (wrong.returncode, wrong.stdout) == (2, b"")
    assert b"--bogus" in wrong.stderr
    parsed = memo_server.build_arg_parser().parse_args(["--root", "x", "--root", "~/y"])
    assert parsed.root == ["x", "~/y"]
    assert memo_server.build_arg_parser().parse_args([]).root == []


async def test_build_server_takes_its_roots(tmp_path: Path) -> None:
    inside = make_notes(tmp_path / "in")
    outside = make_notes(tmp_path / "out")
    server = memo_server.build_server([tmp_path / "in"])
    assert server.roots == [tmp_path / "in"]
    async with Client(server, mode="legacy") as c:
        r = await c.call_tool("memo_status", {"path": str(inside)})
        assert not r.is_error
        r = await c.call_tool("memo_search", {"path": str(outside), "query": "x"})
        assert r.is_error
        assert r.content[0].text == outside_text(str(outside), [tmp_path / "in"])
    assert not (outside / ".memo").exists()


def test_build_server_defaults_to_memo_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMO_ROOTS", f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}")
    assert memo_server.build_server().roots == [tmp_path / "a", tmp_path / "b"]
    monkeypatch.delenv("MEMO_ROOTS")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert memo_server.build_server().roots == [tmp_path]


# -- hostile and odd queries ---------------------------------------------------------------

LONG = ("restic " + "слово " * 14)[:100] * 1000  # 100 KB that still holds a real word

# query -> the heading lex search must put first (None: any answer, no hits included)
ODD_QUERIES: dict[str, str | None] = {
    LONG: "Backup > Restic",
    " ".join(f"w{i}x" for i in range(20_000))[:100_000]: None,  # 100 KB of distinct words
    "?!.,;:()[]{}<>/\\|@#$%^&*+=~`'": None,
    '"': None,
    '"restic': "Backup > Restic",
    'restic"': "Backup > Restic",
    "*": None,
    "restic*": "Backup > Restic",
    "NEAR": None,
    "NEAR(restic snapshots)": "Backup > Restic",
    "restic NEAR/2 snapshots": "Backup > Restic",
    "AND": None,
    "OR NOT AND": None,
    "-x": None,
    "-restic": "Backup > Restic",
    "col:x": None,
    "text:restic": "Backup > Restic",
    "^restic": "Backup > Restic",
    "(restic)": "Backup > Restic",
    "{restic}": "Backup > Restic",
    "\x00\x01\x02\x1b[31m\x7f": None,
    "restic\x00": "Backup > Restic",
    "малина restore 番茄 مرحبا שלום": None,
    "🍅🍓🔥": None,
    "🍅 томаты": "Сад > Полив томатов",
    "\u202erestic": None,
    "\u0301\u0301": None,
}
EMPTY = "запрос пуст: напишите, что искать"
BAD_QUERIES = {
    "": "memo_search: плохое значение \"query\": нужен хотя бы 1 символ (дано '')",
    " ": EMPTY,
    "\t\n\r  ": EMPTY,
}
# arguments (beside path and query) -> the first line of the error
BAD_ARGUMENTS: list[tuple[dict[str, Any], str]] = [
    ({"k": 0}, 'memo_search: плохое значение "k": нужно не меньше 1'),
    ({"k": -1}, 'memo_search: плохое значение "k": нужно не меньше 1'),
    ({"k": 10**6}, 'memo_search: плохое значение "k": нужно не больше 100'),
    ({"k": 10**30}, 'memo_search: плохое значение "k": нужно не больше 100'),
    ({"k": 2.5}, 'memo_search: плохое значение "k": нужно целое число'),
    ({"k": "many"}, 'memo_search: плохое значение "k": нужно целое число'),
    ({"k": None}, 'memo_search: плохое значение "k": нужно целое число'),
    ({"mode": "fuzzy"}, 'memo_search: плохое значение "mode": нужно одно из: '),
    ({"mode": "LEX"}, 'memo_search: плохое значение "mode": нужно одно из: '),
    ({"mode": ""}, 'memo_search: плохое значение "mode": нужно одно из: '),
    ({"mode": None}, 'memo_search: плохое значение "mode": нужно одно из: '),
    ({"mode": ["lex"]}, 'memo_search: плохое значение "mode": нужно одно из: '),
    ({"query": 5}, 'memo_search: плохое значение "query": нужна строка'),
    ({"query": None}, 'memo_search: плохое значение "query": нужна строка'),
]


def odd_cases(notes: Path) -> list[dict[str, Any]]:
    return [
        {"path": str(notes), "query": q, "mode": mode}
        for q in ODD_QUERIES
        for mode in ("lex", "hybrid", "vec")
    ]


def check_odd(args: dict[str, Any], is_error: bool, text: str) -> None:
    """An odd query answers: hits inside the collection, or no hits; never an error."""
    where = (args["query"][:40], args["mode"], text[:300])
    assert not is_error, where
    first = ODD_QUERIES[args["query"]]
    if text == "ничего не найдено\n":
        assert first is None or args["mode"] != "lex", where
        return
    found = [m for line in text.splitlines() if (m := HIT.match(line))]
    assert found, where
    assert all(Path(m[1]).is_relative_to(args["path"]) for m in found), where
    if args["mode"] == "lex" and first is not None:
        assert found[0][3] == first, where


def bad_cases(notes: Path) -> list[dict[str, Any]]:
    return [
        {"path": str(notes), "query": q, "mode": mode}
        for q in BAD_QUERIES
        for mode in ("lex", "hybrid", "vec")
    ] + [{"path": str(notes), "query": "restic", **extra} for extra, _ in BAD_ARGUMENTS]


def check_bad(args: dict[str, Any], is_error: bool, text: str) -> None:
    """A bad query or argument is an error result that says what is wrong."""
    assert is_error, (args, text)
    lines = text.splitlines()
    if args["query"] in BAD_QUERIES and len(args) == 3:
        assert lines[0] == BAD_QUERIES[args["query"]], (args, text)
        return
    extra = {k: v for k, v in args.items() if k != "path"}
    if extra.get("query") == "restic":
        del extra["query"]
    [first_line] = [line for e, line in BAD_ARGUMENTS if e == extra]
    assert lines[0].startswith(first_line), (args, text)
    assert lines[-1].startswith('использование: {"path": "~/notes", "query": '), (args, text)


def no_crash_text(text: str) -> None:
    assert "Traceback" not in text and "Error executing tool" not in text, text


@pytest.fixture
def odd_notes(tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMO_MODEL_DIR", str(tiny_model_dir))
    return make_notes(tmp_path)


@pytest.mark.parametrize("cases, check", [(odd_cases, check_odd), (bad_cases, check_bad)])
async def test_odd_and_bad_queries_in_process(odd_notes: Path, cases, check) -> None:
    async with Client(memo_server.build_server([odd_notes]), mode="legacy") as c:
        for args in cases(odd_notes):
            r = await c.call_tool("memo_search", args)
            assert [x.type for x in r.content] == ["text"]
            no_crash_text(r.content[0].text)
            check(args, r.is_error, r.content[0].text)


@pytest.mark.parametrize("cases, check", [(odd_cases, check_odd), (bad_cases, check_bad)])
def test_odd_and_bad_queries_on_the_wire(guarded: WireServer, place: Path, cases, check) -> None:
    for args in cases(place / "allowed" / "notes"):
        result = guarded.tool("memo_search", args)
        assert [c["type"] for c in result["content"]] == ["text"], result
        no_crash_text(result["content"][0]["text"])
        check(args, result["isError"], result["content"][0]["text"])


def test_a_query_the_server_cannot_decode_is_a_parse_error(guarded: WireServer) -> None:
    """A lone surrogate (valid to Python's json, not to the SDK's): -32700 naming the request."""
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": "surrogate",
            "method": "tools/call",
            "params": {"name": "memo_search", "arguments": {"path": ".", "query": "\ud800"}},
        }
    )
    guarded.send(line)
    answer, before = guarded.until("surrogate")
    assert answer["error"]["code"] == -32700 and before == [], answer


# -- the JSON-RPC stream -------------------------------------------------------------------

PING = '{"jsonrpc":"2.0","id":%s,"method":"ping"}'
DEEP = '{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":' + "[" * 5000 + "]" * 5000
NULL_ID_ERRORS: dict[str, tuple[int, str]] = {
    # line -> (code, a word of the error's data)
    "{not json": (-32700, "Invalid JSON"),
    "\ufeff" + PING % 1: (-32700, "Invalid JSON"),
    PING % 1 + PING % 2: (-32700, "Invalid JSON"),
    DEEP + "}}": (-32700, "recursion"),
    "x" * 8_000_000: (-32700, "Invalid JSON"),
    "[]": (-32600, "batch"),
    f"[{PING % 1}, {PING % 2}]": (-32600, "batch"),
    "42": (-32600, "not a JSON-RPC object"),
    '"ping"': (-32600, "not a JSON-RPC object"),
    "null": (-32600, "not a JSON-RPC object"),
    "true": (-32600, "not a JSON-RPC object"),
    "{}": (-32600, "jsonrpc"),
    PING % 1.5: (-32600, "id must be a string or an integer (got 1.5)"),
    PING % "null": (-32600, "id must be a string or an integer (got null)"),
    PING % "true": (-32600, "id must be a string or an integer (got true)"),
    PING % "[1]": (-32600, "id must be a string or an integer (got [1])"),
    PING % '{"a": 1}': (-32600, "id must be a string or an integer"),
    '{"jsonrpc":"2.0","method":5}': (-32600, "method"),
}
ID_ERRORS: dict[str, tuple[int, str]] = {
    # line (its id is "bad") -> (code, a word of the error's data)
    '{"jsonrpc":"1.0","id":"bad","method":"ping"}': (-32600, "jsonrpc"),
    '{"id":"bad","method":"ping"}': (-32600, "jsonrpc"),
    '{"jsonrpc":"2.0","id":"bad","method":5}': (-32600, "method"),
    '{"jsonrpc":"2.0","id":"bad"}': (-32600, "method"),
    '{"jsonrpc":"2.0","id":"bad","method":"ping","params":[1]}': (-32600, "params"),
    '{"jsonrpc":"2.0","id":"bad","method":"tools/call","params":"x"}': (-32600, "params"),
    '{"jsonrpc":"2.0","id":"bad","method":"ping","params":{"a":"\\udc00"}}': (-32700, "JSON"),
}
NO_ANSWER = [
    "",
    "   \t",
    '{"jsonrpc":"2.0","method":"notifications/memo-unknown","params":{"x":[1,2]}}',
    '{"jsonrpc":"2.0","method":"memo/not-a-notification-name"}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}',
    '{"jsonrpc":"2.0","id":"r1","result":{}}',  # an answer to nothing the server asked
    '{"jsonrpc":"2.0","id":"r2","result":5}',  # a broken answer: never answered back
    '{"jsonrpc":"2.0","id":"r3","error":{"code":1,"message":"no"}}',
]


@pytest.fixture(scope="module")
def ping_ids() -> Iterator[int]:
    return itertools.count(10_000)


def served_after(server: WireServer, ping_ids: Iterator[int]) -> list[dict[str, Any]]:
    """What came before the answer to a ping sent now: the server still serves."""
    rid = next(ping_ids)
    server.send(PING % rid)
    answer, before = server.until(rid)
    assert answer == {"jsonrpc": "2.0", "id": rid, "result": {}}
    return [m for m in before if "method" not in m]  # answers only, no notifications


@pytest.mark.parametrize("line", list(NULL_ID_ERRORS), ids=lambda s: repr(s[:30]))
def test_unreadable_lines_get_an_error_with_null_id(
    guarded: WireServer, ping_ids: Iterator[int], line: str
) -> None:
    code, word = NULL_ID_ERRORS[line]
    guarded.send(line)
    [answer] = served_after(guarded, ping_ids)
    assert answer["id"] is None and answer["error"]["code"] == code, answer
    assert answer["error"]["message"] == ("Parse error" if code == -32700 else "Invalid Request")
    assert word in answer["error"]["data"], answer


@pytest.mark.parametrize("line", list(ID_ERRORS), ids=lambda s: repr(s[:40]))
def test_bad_requests_get_an_error_with_their_id(
    guarded: WireServer, ping_ids: Iterator[int], line: str
) -> None:
    code, word = ID_ERRORS[line]
    guarded.send(line)
    [answer] = served_after(guarded, ping_ids)
    assert answer["id"] == "bad" and answer["error"]["code"] == code, answer
    assert word in answer["error"]["data"], answer


@pytest.mark.parametrize("line", NO_ANSWER, ids=lambda s: repr(s[:40]))
def test_notifications_and_stray_answers_get_no_answer(
    guarded: WireServer, ping_ids: Iterator[int], line: str
) -> None:
    guarded.send(line)
    assert served_after(guarded, ping_ids) == []


def test_odd_but_valid_requests_are_answered(guarded: WireServer, ping_ids) -> None:
    ids: list[Any] = [10**30, -7, 0, "", "ключ 🔑", "x" * 10_000]
    for rid in ids:
        guarded.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        assert guarded.until(rid)[0] == {"jsonrpc": "2.0", "id": rid, "result": {}}
    huge = {"jsonrpc": "2.0", "id": "huge", "method": "ping", "params": {"x": "y" * 8_000_000}}
    guarded.send(huge)
    assert guarded.until("huge")[0] == {"jsonrpc": "2.0", "id": "huge", "result": {}}
    # Bytes that are not UTF-8 inside a string: replaced, the request still works.
    guarded.send(b'{"jsonrpc":"2.0","id":"bytes","method":"ping","params":{"x":"\xff\xfe"}}')
    assert guarded.until("bytes")[0]["result"] == {}
    guarded.send(b"\xff\xfe\x00garbage")
    [answer] = served_after(guarded, ping_ids)
    assert answer["id"] is None and answer["error"]["code"] == -32700
    # Bad params the SDK itself rejects: its own -32602, and the session goes on.
    guarded.send('{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":5}}')
    assert guarded.until("p")[0]["error"]["code"] == -32602
    assert served_after(guarded, ping_ids) == []


def test_the_stream_stays_pure_and_bad_lines_are_noted_on_stderr(
    guarded: WireServer, ping_ids: Iterator[int]
) -> None:
    guarded.send("{not json, noted")
    served_after(guarded, ping_ids)
    assert guarded.proc.poll() is None
    guarded.check_stdout()
    assert "ignored a line" in guarded.stderr_text()
    assert "Traceback" not in guarded.stderr_text()


# -- property: random lines and random Markdown --------------------------------------------

_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_bad_id = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6).map(lambda i: i + 0.5),
    st.lists(_scalar, max_size=2),
    st.dictionaries(st.text(max_size=4), _scalar, max_size=2),
)
NOTES = "@NOTES@"
_tool_arguments = st.fixed_dictionaries(
    {},
    optional={
        "path": st.one_of(
            st.sampled_from([NOTES, NOTES, "/", "~", "..", "/etc", "", "."]), st.text(max_size=8)
        ),
        "query": st.one_of(st.sampled_from(['"', "NEAR(", "col:x", "-", "*"]), st.text()),
        "k": st.one_of(st.integers(-3, 120), _scalar),
        "mode": st.one_of(st.sampled_from(["lex", "hybrid", "vec"]), _scalar),
    },
)
_tool_params = st.fixed_dictionaries(
    {
        "name": st.one_of(
            st.sampled_from(["memo_search", "memo_search", "memo_status", "memo_reindex"]),
            st.text(max_size=8),
        ),
        "arguments": st.one_of(_tool_arguments, _tool_arguments, _json),
    }
)
_known_method = st.sampled_from(
    [
        "ping",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
        "resources/list",
        "prompts/list",
        "logging/setLevel",
        "memo/unknown",
        "notifications/initialized",
        "notifications/memo",
    ]
)
_method = st.one_of(_known_method, _known_method, _known_method, st.text(max_size=10), _scalar)


@st.composite
def _message(draw) -> tuple[str, dict[str, Any]]:
    """(how its id is: "good" | "bad" | "none", a JSON-RPC-ish object)."""
    msg: dict[str, Any] = {}
    jsonrpc = draw(st.sampled_from(["2.0"] * 8 + ["1.0", None, 2]))
    if jsonrpc is not None:
        msg["jsonrpc"] = jsonrpc
    kind = draw(st.sampled_from(["good", "good", "good", "bad", "none"]))
    if kind == "bad":
        msg["id"] = draw(_bad_id)
    method = draw(_method)
    msg["method"] = method
    if method == "tools/call":
        if draw(st.integers(0, 9)):
            msg["params"] = draw(_tool_params)
    elif draw(st.booleans()):
        msg["params"] = draw(_json)
    return kind, msg


_line = st.one_of(
    _message(),
    _message(),
    st.builds(lambda v: ("json", v), _json),
    st.builds(lambda t: ("text", t), st.text(max_size=40)),
    st.builds(lambda b: ("bytes", b), st.binary(max_size=40)),
    st.builds(
        lambda rid: ("cancel", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": rid}}),
        st.sampled_from(["nope", -5, 10**20]),
    ),
)  # fmt: skip

_md_line = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(["# H", "## Sub", "```", "~~~", "---", "    # code", "- item", "", "cat"]),
)
_doc = st.lists(_md_line, max_size=20).map("\n".join)
_edits = st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), _doc)), max_size=3)


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path):
    base = tmp_path_factory.mktemp("fuzz").resolve()
    notes = base / "notes"
    notes.mkdir()
    (notes / "base.md").write_text("# Base\n\ncat\n", encoding="utf-8")
    server = WireServer(server_env(base, tiny_model_dir, roots=[base]), cwd=base)
    assert "result" in server.initialize()
    state = {
        "server": server,
        "notes": notes,
        "sent_ids": set(),  # every id sent, as repr (answers to random lines may come late)
        "done": set(),  # the ids of requests answered in earlier examples
        "ids": itertools.count(),
    }
    yield state
    assert server.close() == 0, server.stderr_text()
    server.check_stdout()
    assert "Traceback" not in server.stderr_text()


def _encode(kind: str, value: Any, notes: Path, ascii_json: bool) -> bytes:
    if kind == "bytes":
        return value.replace(b"\n", b" ").replace(b"\r", b" ")
    if kind == "text":
        return value.replace("\n", " ").replace("\r", " ").encode("utf-8", "surrogatepass")
    text = json.dumps(value, ensure_ascii=ascii_json)
    return text.replace(json.dumps(NOTES)[1:-1], str(notes)).encode("utf-8", "surrogatepass")


def _ids_in(data: bytes) -> list[str]:
    """How the server may write the id of this line back (repr, to tell 1 from True)."""
    try:
        obj = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return []
    if not isinstance(obj, dict) or "id" not in obj:
        return []
    rid = obj["id"]
    if isinstance(rid, float) and rid.is_integer():
        return [repr(rid), repr(int(rid))]
    return [repr(rid)]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(lines=st.lists(_line, max_size=12), edits=_edits, ascii_json=st.booleans())
def test_random_lines_and_markdown_never_break_the_server(fuzz, lines, edits, ascii_json) -> None:
    server: WireServer = fuzz["server"]
    notes: Path = fuzz["notes"]
    sent_ids: set = fuzz["sent_ids"]
    waiting: set[str] = set()  # requests with a usable id: each must get exactly one answer
    for i, doc in edits:
        p = notes / f"n{i}.md"
        if doc is None:
            p.unlink(missing_ok=True)
        else:
            p.write_text(doc, encoding="utf-8", newline="")
    for kind, value in lines:
        if kind == "good":
            value = {**value, "id": f"fz-{next(fuzz['ids'])}"}
            waiting.add(value["id"])
            if value["method"] == "tools/call":
                event("sent a tools/call")
        data = _encode(kind, value, notes, ascii_json)
        sent_ids.update(_ids_in(data))
        server.send(data)
    probe = f"probe-{next(fuzz['ids'])}"
    server.send(
        {
            "jsonrpc": "2.0",
            "id": probe,
            "method": "tools/call",
            "params": {
                "name": "memo_search",
                "arguments": {"path": str(notes), "query": "cat", "mode": "hybrid", "k": 50},
            },
        }
    )
    waiting.add(probe)
    answered: dict[str, dict[str, Any]] = {}
    while waiting - answered.keys():
        msg = server.next_message(30)
        if "method" in msg:
            continue  # a notification (progress, log)
        rid = msg.get("id")
        assert rid is None or repr(rid) in sent_ids or rid in waiting, f"answer to {rid!r}: {msg}"
        if "error" in msg:
            event(f"error {msg['error']['code']}")
        elif isinstance(msg.get("result"), dict) and "isError" in msg["result"]:
            event(f"tool result, isError={msg['result']['isError']}")
        assert rid not in answered and rid not in fuzz["done"], f"two answers to {rid}: {msg}"
        if isinstance(rid, str) and rid in waiting:
            answered[rid] = msg
    fuzz["done"].update(answered)
    result = answered[probe]["result"]
    assert result["isError"] is False, result
    m = HIT.match(result["content"][0]["text"].split("\n", 1)[0])
    assert m and Path(m[1]).is_relative_to(notes), result  # base.md holds "cat", at least
    assert server.proc.poll() is None
    files, _ = check_consistent(notes / ".memo" / "index.db")
    assert files == len(list(notes.glob("*.md")))
