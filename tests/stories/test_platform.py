"""Where memo runs: an OS without folder descriptors (Windows) gets one clear error at the
first engine call, from every front end; the version and the parser work everywhere.

These tests run on Windows too (the CI's Windows leg): there the refusal is real, on
Linux and macOS it is made by saying the OS lacks the descriptors."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client

import memo_core
from memo_cli.main import main
from memo_core import Engine, MemoError
from memo_core.errors import UnsupportedPlatformError
from memo_core.files import fsafe
from memo_mcp.server import build_server


@pytest.fixture
def unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    """This OS as memo sees Windows: no folder descriptors."""
    monkeypatch.setattr(fsafe, "supported", lambda: False)


def test_the_engine_runs_where_folders_have_descriptors() -> None:
    assert fsafe.supported() == (sys.platform != "win32")


def test_wrapped_os_functions_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test or a tracer that wraps os.open is no other OS (the stuck-folder tests do)."""
    real = fsafe.supported()
    monkeypatch.setattr(os, "open", lambda *a, **kw: real_open(*a, **kw))
    assert fsafe.supported() == real


real_open = os.open


def test_the_first_engine_call_says_to_use_wsl(unsupported: None) -> None:
    with pytest.raises(UnsupportedPlatformError, match="WSL") as caught:
        Engine()
    assert isinstance(caught.value, MemoError)  # every front end maps it like any other


def test_memo_search_says_so_in_one_line_and_exits_1(
    unsupported: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", str(tmp_path), "backup"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "WSL" in err and "Traceback" not in err


async def test_a_memo_mcp_tool_says_so(unsupported: None, tmp_path: Path) -> None:
    async with Client(build_server([tmp_path]), mode="legacy") as c:
        r = await c.call_tool("memo_search", {"path": str(tmp_path), "query": "backup"})
    assert r.is_error and "WSL" in str(r.content)


def test_memo_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"memo {memo_core.__version__}\n"
