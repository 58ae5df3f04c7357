"""memo_core.model.facts: what a start would compute again, kept in memo's cache folder."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from memo_core import settings
from memo_core.model.facts import FACTS_FILE, FACTS_KEPT, FACTS_LIMIT, KINDS, fact, keep_fact


def _kept() -> Path:
    return settings.cache_dir() / FACTS_FILE


def _any(_value: object) -> bool:
    return True


def _why(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The keys of why kept facts were not used, as the `memo` logger said them."""
    keys = []
    for r in caplog.records:
        if r.name == "memo" and r.levelno == logging.WARNING and r.args:
            said = r.args[0]
            assert said.key == "log.kept_unused"
            keys.append(said.params["why"].key)
    return keys


def test_nothing_kept_is_none_and_no_file_is_made() -> None:
    assert fact("digests", "k", _any) is None
    assert not _kept().exists()


@pytest.mark.parametrize("value", ["a" * 64, [0.5, -0.25, 1.0], {"x": 1}, 3])
def test_a_kept_fact_is_read_back_as_it_was_kept(value: object) -> None:
    keep_fact("centroids", "model-1", value)
    seen: list[object] = []
    assert fact("centroids", "model-1", lambda v: seen.append(v) or True) == value
    assert seen == [value]  # the caller's check saw the very value


def test_kinds_and_keys_are_kept_apart() -> None:
    keep_fact("digests", "same", "d")
    keep_fact("centroids", "same", [1.0])
    assert fact("digests", "same", _any) == "d"
    assert fact("centroids", "same", _any) == [1.0]
    assert fact("digests", "other", _any) is None


def test_a_fact_the_check_refuses_is_none_and_said_once(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="memo")
    keep_fact("digests", "k", "not a digest")
    assert fact("digests", "k", lambda v: False) is None
    assert fact("digests", "k", lambda v: False) is None
    assert _why(caplog) == ["log.fact_unlike"]
    # ... and nothing is removed: a check that accepts it still finds it.
    assert fact("digests", "k", _any) == "not a digest"


def test_only_the_latest_facts_of_a_kind_are_kept() -> None:
    for i in range(FACTS_KEPT + 3):
        keep_fact("digests", f"k{i}", i)
    kept = [i for i in range(FACTS_KEPT + 3) if fact("digests", f"k{i}", _any) is not None]
    assert kept == list(range(3, FACTS_KEPT + 3))


def test_keeping_a_fact_again_makes_it_the_latest() -> None:
    for i in range(FACTS_KEPT):
        keep_fact("digests", f"k{i}", i)
    keep_fact("digests", "k0", "again")  # now the latest: k1 is the oldest
    keep_fact("digests", "new", "n")
    assert fact("digests", "k0", _any) == "again"
    assert fact("digests", "k1", _any) is None
    assert fact("digests", "new", _any) == "n"


def test_the_file_is_written_whole_and_holds_only_known_kinds() -> None:
    folder = settings.cache_dir()
    folder.mkdir(parents=True)
    _kept().write_text(json.dumps({"digests": {"a": "x"}, "junk": {"b": 1}, "centroids": 5}))
    keep_fact("centroids", "c", [0.0])
    assert json.loads(_kept().read_text()) == {"digests": {"a": "x"}, "centroids": {"c": [0.0]}}
    assert set(KINDS) == {"digests", "centroids"}
    assert os.listdir(folder) == [FACTS_FILE]  # no temporary file left beside it


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"{not json", "log.file_error"),
        (b"\xff\xfe", "log.file_error"),
        (b"[1, 2, 3]", "log.no_json_object"),
        (b"[" * 40 + b"]" * 40, "file.is"),
    ],
    ids=["not-json", "not-utf8", "a-list", "too-deep"],
)
def test_a_broken_file_is_as_if_nothing_were_kept_and_is_put_right(
    content: bytes, why: str, caplog
) -> None:
    caplog.set_level(logging.WARNING, logger="memo")
    settings.cache_dir().mkdir(parents=True)
    _kept().write_bytes(content)
    assert fact("digests", "k", _any) is None
    assert _why(caplog) == [why]
    keep_fact("digests", "k", "v")
    assert json.loads(_kept().read_text()) == {"digests": {"k": "v"}}
    assert fact("digests", "k", _any) == "v"


def test_a_file_past_the_bound_is_not_read(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="memo")
    settings.cache_dir().mkdir(parents=True)
    with open(_kept(), "wb") as f:
        f.truncate(FACTS_LIMIT + 1)  # sparse: past the bound without writing it
    assert fact("digests", "k", _any) is None
    assert _why(caplog) == ["file.is"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_fifo_at_the_name_is_refused_not_waited_on(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="memo")
    settings.cache_dir().mkdir(parents=True)
    os.mkfifo(_kept())
    assert fact("centroids", "k", _any) is None  # returns: no writer is waited for
    assert _why(caplog) == ["file.is"]
    keep_fact("centroids", "k", [1.0])  # the FIFO is replaced by a file, never written into
    assert _kept().is_file()
    assert fact("centroids", "k", _any) == [1.0]


def test_a_cache_folder_that_cannot_be_made_is_only_a_slower_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("MEMO_CACHE_DIR", str(blocker / "cache"))
    keep_fact("digests", "k", "v")  # no error
    assert fact("digests", "k", _any) is None
