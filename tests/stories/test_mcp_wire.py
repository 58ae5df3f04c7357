"""memo-mcp on the wire: the real console script over stdio, raw JSON-RPC lines.

The five tests the MCP contract names come first; then the exact shapes of errors, the tool
texts on a small real collection (with the real default model where it is installed), and a
check that stdout carried nothing but JSON-RPC.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_helpers import (
    DEFAULT_MODEL_READY,
    MEMO_MCP,
    REAL_MODEL_DIR,
    WireServer,
    line_of,
    make_notes,
    server_env,
)

import memo_core

HIT = re.compile(r"^(/.+?):(\d+)  (.+)$")
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)"
STATUS = re.compile(
    rf"^(/.+): файлов (\d+), чанков (\d+), индекс ({ISO})(, без векторов \d+)?"
    r"(?:, векторы модели \S+)?"
    rf", отпечаток ([0-9a-f]{{24}}), проверено ({ISO})$"
)


def needs_default_model(test):
    skip = pytest.mark.skipif(
        not DEFAULT_MODEL_READY, reason=f"default model not installed at {REAL_MODEL_DIR}"
    )
    return pytest.mark.default_model(skip(test))


@pytest.fixture(scope="module")
def tmp_mod(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("wire")


@pytest.fixture(scope="module")
def wire(tmp_mod: Path) -> Iterator[WireServer]:
    """One memo-mcp for the module, on the real default model (when installed)."""
    server = WireServer(server_env(tmp_mod, REAL_MODEL_DIR), cwd=tmp_mod)
    answer = server.initialize()
    assert "result" in answer, answer
    yield server
    assert server.close() == 0, server.stderr_text()
    server.check_stdout()


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return make_notes(tmp_path)


def hits(text: str) -> list[tuple[str, int, str]]:
    return [(m[1], int(m[2]), m[3]) for line in text.splitlines() if (m := HIT.match(line))]


# -- the tests the MCP contract names---------------------------------------------------------


def test_initialize_handshake(tmp_path: Path) -> None:
    server = WireServer(server_env(tmp_path))
    try:
        answer = server.initialize("2024-11-05")
        assert answer["id"] == 1
        result = answer["result"]
        assert result["protocolVersion"] == "2024-11-05"
        assert result["serverInfo"]["name"] == "memo"
        assert result["serverInfo"]["version"] == memo_core.__version__
        assert "tools" in result["capabilities"]
        assert len(result["instructions"].splitlines()) == 2
        assert server.call("ping")["result"] == {}
    finally:
        assert server.close() == 0
    server.check_stdout()
    assert len(server.raw) == 2  # the two answers, nothing else


def test_tools_list_has_three_tools(wire: WireServer) -> None:
    """The names are the contract's: memo_search and memo_status, then memo_reindex,
    memo_changes and memo_read."""
    tools = {t["name"]: t for t in wire.call("tools/list")["result"]["tools"]}
    assert set(tools) == {"memo_search", "memo_status", "memo_reindex", "memo_changes", "memo_read"}
    search = tools["memo_search"]["inputSchema"]
    assert search["type"] == "object"
    assert sorted(search["required"]) == ["path", "query"]
    props = search["properties"]
    assert props["path"]["type"] == "string"
    assert props["query"]["type"] == "string"
    assert props["k"]["type"] == "integer" and props["k"]["default"] == 8
    assert props["k"]["minimum"] == 1 and props["k"]["maximum"] == 100
    assert props["mode"]["enum"] == ["hybrid", "lex", "vec"]
    assert props["mode"]["default"] == "hybrid"
    for name in ("memo_status", "memo_reindex"):
        schema = tools[name]["inputSchema"]
        assert schema["required"] == ["path"]
        assert list(schema["properties"]) == ["path"]
    changes = tools["memo_changes"]["inputSchema"]
    assert changes["required"] == ["path"] and list(changes["properties"]) == ["path", "since"]
    read = tools["memo_read"]
    assert read["annotations"]["readOnlyHint"] is True and len(read["description"]) <= 100
    assert sorted(read["inputSchema"]["required"]) == ["note", "path"]
    props = list(read["inputSchema"]["properties"])
    assert props == ["path", "note", "from_line", "to_line", "around"]


def test_unknown_method_returns_32601(wire: WireServer) -> None:
    rid = wire.request("memo/unknown", {})
    answer = wire.response(rid)
    assert answer["jsonrpc"] == "2.0" and answer["id"] == rid and "result" not in answer
    assert answer["error"]["code"] == -32601
    assert answer["error"]["message"] == "Method not found"


def test_search_without_path_is_error(wire: WireServer) -> None:
    result = wire.tool("memo_search", {"query": "бэкап"})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith('memo_search: не хватает обязательного аргумента "path"\n')
    assert "\nиспользование: {" in text


def test_notification_produces_no_response(wire: WireServer) -> None:
    wire.notify("notifications/initialized")
    wire.notify("notifications/cancelled", {"requestId": 999, "reason": "test"})
    wire.notify("notifications/memo-unknown", {"x": 1})
    rid = wire.request("ping")
    # The next message on stdout is the answer to the ping: the notifications got none.
    assert wire.next_message() == {"jsonrpc": "2.0", "id": rid, "result": {}}


# -- errors, exactly ----------------------------------------------------------------------


def test_unknown_tool_is_error_result(wire: WireServer) -> None:
    assert wire.tool("memo_nope", {"path": "/"}) == {
        "content": [{"type": "text", "text": "unknown tool: memo_nope"}],
        "isError": True,
    }


@pytest.mark.parametrize(
    "arguments, first_line",
    [
        ({"path": "/x"}, 'memo_search: не хватает обязательного аргумента "query"'),
        (
            {"path": "/x", "query": "q", "k": 0},
            'memo_search: плохое значение "k": нужно не меньше 1 (дано 0)',
        ),
        (
            {"path": "/x", "query": "q", "k": 101},
            'memo_search: плохое значение "k": нужно не больше 100 (дано 101)',
        ),
        (
            {"path": "/x", "query": "q", "mode": "fuzzy"},
            "memo_search: плохое значение \"mode\": нужно одно из: 'hybrid', 'lex' или 'vec' "
            "(дано 'fuzzy')",
        ),
        (
            {"path": 5, "query": "q"},
            'memo_search: плохое значение "path": нужна строка (дано 5)',
        ),
    ],
)
def test_bad_arguments_are_readable(wire: WireServer, arguments: dict, first_line: str) -> None:
    result = wire.tool("memo_search", arguments)
    assert result["isError"] is True
    assert [c["type"] for c in result["content"]] == ["text"]
    lines = result["content"][0]["text"].splitlines()
    assert lines[0] == first_line
    assert lines[-1].startswith('использование: {"path": "~/notes", "query": ')


def test_search_scopes_on_the_wire(wire: WireServer, tmp_path: Path) -> None:
    """Scopes: `under`, `tags`, `after`, `before` are optional, described, and a bad one
    is a result with isError and a text saying what to write."""
    tools = {t["name"]: t for t in wire.call("tools/list")["result"]["tools"]}
    props = tools["memo_search"]["inputSchema"]["properties"]
    for name in ("under", "after", "before"):
        assert props[name]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    for name in ("under", "tags", "after", "before"):
        assert props[name]["default"] is None and 0 < len(props[name]["description"]) <= 80
    assert sorted(tools["memo_search"]["inputSchema"]["required"]) == ["path", "query"]
    notes = str(make_notes(tmp_path))
    found = wire.tool("memo_search", {"path": notes, "query": "backup", "under": "home"})
    assert found["isError"] is False and "home/backup.md" in found["content"][0]["text"]
    for scope, says in [
        ({"under": "a["}, "under 'a[' — шаблон, которому не подойдёт ни один путь"),
        ({"tags": ["#"]}, "не тег: '#'"),
        ({"after": "2024-13-01"}, "after: '2024-13-01' — не дата; напишите дату ISO"),
        ({"after": "2024-06-01", "before": "2024-05-01"}, "after (2024-06-01T00:00:00"),
    ]:
        result = wire.tool("memo_search", {"path": notes, "query": "backup", **scope})
        assert result["isError"] is True
        assert result["content"][0]["text"].startswith(says), result


def test_status_without_path_is_error(wire: WireServer) -> None:
    result = wire.tool("memo_status", {})
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        'memo_status: не хватает обязательного аргумента "path"\nиспользование: {"path": "~/notes"}'
    )


def test_path_errors_say_which_path_and_what_to_do(wire: WireServer, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    a_file = tmp_path / "note.txt"
    a_file.write_text("x")
    empty = tmp_path / "empty"
    (empty / "a" / "b" / "c").mkdir(parents=True)
    (empty / "a" / "b" / "c" / "deep.md").write_text("# too deep\n")

    def error(tool: str, path: str) -> str:
        result = wire.tool(
            tool, {"path": path, "query": "x"} if tool == "memo_search" else {"path": path}
        )
        assert result["isError"] is True, result
        return result["content"][0]["text"]

    for tool in ("memo_search", "memo_status", "memo_reindex", "memo_changes"):
        assert error(tool, str(missing)) == (
            f"путь не существует: {missing}; укажите существующую папку с заметками, "
            "например ~/notes"
        )
        assert error(tool, str(a_file)).startswith(f"это не папка: {a_file}; укажите папку")
        text = error(tool, str(empty))
        assert text.startswith(f"в {empty} нет заметок: ни одного файла *.md на глубине до 2")
    # A relative path: the agent learns where the server runs.
    text = error("memo_search", "some/relative/notes")
    assert text.startswith("путь не существует: some/relative/notes; укажите существующую")
    assert "рабочей папки memo-mcp" in text and "абсолютный путь" in text


# -- the tool texts on a real collection ----------------------------------------------------


@needs_default_model
def test_search_hits_point_at_the_right_line(wire: WireServer, notes: Path) -> None:
    garden = notes / "garden.md"
    text = wire.text("memo_search", {"path": str(notes), "query": "как поливать томаты"})
    found = hits(text)
    assert found, text
    path, line, heading = found[0]
    assert (path, heading) == (str(garden), "Сад > Полив томатов")
    assert line == line_of(garden, "## Полив томатов") == 8
    # The passage follows its location line; blocks are separated by a blank line.
    block = text.split("\n\n")[0].splitlines()
    assert block[0] == f"{garden}:8  Сад > Полив томатов"
    assert block[1].startswith("Томаты поливаю утром")


def test_lex_search_finds_english_note_by_word(wire: WireServer, notes: Path) -> None:
    backup = notes / "home" / "backup.md"
    text = wire.text("memo_search", {"path": str(notes), "query": "restore", "mode": "lex", "k": 1})
    assert hits(text) == [
        (str(backup), line_of(backup, "## Restore drill"), "Backup > Restore drill")
    ]
    assert text.endswith("\n")
    assert wire.text("memo_search", {"path": str(notes), "query": "zzzqqq", "mode": "lex"}) == (
        "ничего не найдено\n"
    )


def test_status_and_reindex_texts(wire: WireServer, notes: Path) -> None:
    before = wire.text("memo_status", {"path": str(notes)})
    assert before.startswith(
        f"{notes}: файлов 0, чанков 0, индекс нет, ещё не проиндексировано 2, отпечаток "
    )
    wire.text("memo_search", {"path": str(notes), "query": "малина"})
    status = wire.text("memo_status", {"path": str(notes)})
    m = STATUS.match(status)
    assert m, status
    assert (m[1], m[2]) == (str(notes), "2")
    assert int(m[3]) >= 5
    if DEFAULT_MODEL_READY:  # every chunk has its vector, and the status says whose
        assert m[5] is None and ", векторы модели multilingual-e5-small-q4-" in status, status
    fingerprint = m[6]
    result = wire.tool("memo_reindex", {"path": str(notes)})
    assert result == {
        "content": [{"type": "text", "text": "переиндексировано файлов: 2"}],
        "isError": False,
    }
    after = STATUS.match(wire.text("memo_status", {"path": str(notes)}))
    assert after and after[6] == fingerprint  # same content, same change token


def test_status_lists_each_collection(wire: WireServer, tmp_path: Path) -> None:
    make_notes(tmp_path / "a")
    make_notes(tmp_path / "b")
    lines = wire.text("memo_status", {"path": str(tmp_path)}).splitlines()
    assert [line.split(":")[0] for line in lines] == [
        str(tmp_path / "a" / "notes"),
        str(tmp_path / "b" / "notes"),
    ]


def test_file_edited_between_searches_is_found(wire: WireServer, notes: Path) -> None:
    args = {"path": str(notes), "query": "кабачки", "mode": "lex"}
    assert wire.text("memo_search", args) == "ничего не найдено\n"
    garden = notes / "garden.md"
    garden.write_text(
        garden.read_text(encoding="utf-8") + "\n## Кабачки\n\nКабачки сажаю в мае.\n",
        encoding="utf-8",
    )
    found = hits(wire.text("memo_search", args))
    assert found == [(str(garden), line_of(garden, "## Кабачки"), "Сад > Кабачки")]


def test_two_calls_at_once_both_answer(wire: WireServer, notes: Path) -> None:
    a = wire.request(
        "tools/call",
        {
            "name": "memo_search",
            "arguments": {"path": str(notes), "query": "малина", "mode": "lex"},
        },
    )
    b = wire.request(
        "tools/call",
        {
            "name": "memo_search",
            "arguments": {"path": str(notes), "query": "restic", "mode": "lex"},
        },
    )
    got = wire.responses([a, b])
    assert "Сад > Обрезка малины" in got[a]["result"]["content"][0]["text"]
    assert "Backup > Restic" in got[b]["result"]["content"][0]["text"]


def test_progress_token_gets_progress_notifications(wire: WireServer, notes: Path) -> None:
    wire.notifications.clear()
    result = wire.tool(
        "memo_search",
        {"path": str(notes), "query": "restic", "mode": "lex"},
        meta={"progressToken": "memo-1"},
    )
    assert result["isError"] is False
    progress = [n["params"] for n in wire.notifications if n["method"] == "notifications/progress"]
    assert progress, wire.notifications
    assert all(p["progressToken"] == "memo-1" for p in progress)
    assert progress[-1]["progress"] == progress[-1]["total"] == 2
    assert progress[-1]["message"].endswith("2/2 файлов проиндексировано")


def test_stdout_is_jsonrpc_only_so_far(wire: WireServer) -> None:
    wire.call("ping")
    wire.check_stdout()
    assert wire.raw


def test_nothing_on_stdout_but_answers(tmp_path: Path) -> None:
    """Importing the server prints nothing; a client that hangs up gets a clean exit."""
    env = server_env(tmp_path)
    imported = subprocess.run(
        [sys.executable, "-c", "import memo_mcp.server"], capture_output=True, env=env
    )
    assert (imported.returncode, imported.stdout) == (0, b"")
    hung_up = subprocess.run([str(MEMO_MCP)], input=b"", capture_output=True, env=env, timeout=60)
    assert (hung_up.returncode, hung_up.stdout) == (0, b"")
