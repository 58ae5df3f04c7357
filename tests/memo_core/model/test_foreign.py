"""memo_core.model.foreign: files memo reads and did not make, read safely and bounded."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from memo_core.model import foreign
from memo_core.model.foreign import (
    MAX_JSON_DEPTH,
    Refused,
    by_descriptor,
    open_regular,
    parse_json,
    read_all,
    read_json,
    read_regular,
)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")


def _file(tmp_path: Path, data: bytes, name: str = "f") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("data", [b"", b"x", b"hello\x00world", bytes(range(256)) * 40])
def test_a_regular_file_is_read_whole(tmp_path: Path, data: bytes) -> None:
    assert read_regular(_file(tmp_path, data), len(data)) == data


def test_a_file_at_its_bound_is_read_and_past_it_refused(tmp_path: Path) -> None:
    p = _file(tmp_path, b"12345")
    assert read_regular(p, 5) == b"12345"
    with pytest.raises(Refused) as e:
        read_regular(p, 4)
    assert e.value.what.key == "foreign.too_big"
    assert e.value.what.params["limit"] == 4


def test_refused_is_a_value_error_said_of_a_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as e:
        open_regular(tmp_path, 10)  # a folder
    assert isinstance(e.value, Refused)
    said = e.value.about("model.onnx")
    assert said.key == "file.is"
    assert said.params == {"path": "model.onnx", "what": e.value.what}
    assert e.value.what.key == "file.not_regular"


@needs_fifo
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(Refused) as e:
        read_regular(fifo, 100)  # would block forever if opened to read without O_NONBLOCK
    assert e.value.what.key == "file.not_regular"


@needs_fifo
def test_a_symlink_to_a_fifo_is_refused_and_one_to_a_file_followed(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "to-fifo").symlink_to(tmp_path / "fifo")
    (tmp_path / "to-file").symlink_to(_file(tmp_path, b"data"))
    with pytest.raises(Refused):
        read_regular(tmp_path / "to-fifo", 100)
    assert read_regular(tmp_path / "to-file", 100) == b"data"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/dev/null")
def test_a_device_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused) as e:
        read_regular(Path("/dev/null"), 100)
    assert e.value.what.key == "file.not_regular"


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets")
def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    if len(str(path)) > 100:
        pytest.skip("socket path too long")
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(path))
        with pytest.raises(Refused):
            read_regular(path, 100)
    finally:
        s.close()


def test_a_missing_file_is_os_error_not_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "none", 100)
    with pytest.raises(FileNotFoundError):
        read_json(tmp_path / "none", 100)


def test_read_all_reads_from_the_start_whatever_was_read_before(tmp_path: Path) -> None:
    fd = open_regular(_file(tmp_path, b"abcdef"), 6)
    try:
        os.read(fd, 4)
        assert read_all(fd, 6) == b"abcdef"
        assert read_all(fd, 6) == b"abcdef"
    finally:
        os.close(fd)


def test_a_file_that_grew_since_it_was_opened_is_not_read_on(tmp_path: Path) -> None:
    p = _file(tmp_path, b"abc")
    fd = open_regular(p, 4)
    try:
        with open(p, "ab") as f:
            f.write(b"defgh")
        with pytest.raises(Refused) as e:
            read_all(fd, 4)
        assert e.value.what.key == "foreign.too_big"
    finally:
        os.close(fd)


def test_the_descriptor_reads_the_file_checked_not_what_the_name_leads_to_later(
    tmp_path: Path,
) -> None:
    p = _file(tmp_path, b"first")
    fd = open_regular(p, 100)
    try:
        os.replace(_file(tmp_path, b"second", "other"), p)
        assert read_all(fd, 100) == b"first"
        name = by_descriptor(fd, p)
        with open(name, "rb") as f:  # a library opening it by that name reads the same file
            assert f.read() == b"first"
    finally:
        os.close(fd)


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": [1, 2, {"b": null}]}', {"a": [1, 2, {"b": None}]}),
        ('"один"', "один"),
        ("3.5", 3.5),
        ("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH, _nested(MAX_JSON_DEPTH)),
    ],
    ids=["nested", "string", "number", "at-the-depth-bound"],
)
def test_json_is_parsed(text: str, value: object) -> None:
    assert parse_json(text.encode()) == value


@pytest.mark.parametrize(
    "text",
    [
        "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1),
        '{"a": ' * (MAX_JSON_DEPTH + 1) + "1" + "}" * (MAX_JSON_DEPTH + 1),
        "[" * 100_000 + "]" * 100_000,  # past Python's recursion limit in the parser
    ],
    ids=["lists", "objects", "past-recursion-limit"],
)
def test_json_nested_too_deep_is_refused(text: str) -> None:
    with pytest.raises(Refused) as e:
        parse_json(text.encode())
    assert e.value.what.key == "foreign.too_deep"
    assert e.value.what.params["depth"] == MAX_JSON_DEPTH


@pytest.mark.parametrize("data", [b"{", b"\xff", b"", b"{'a': 1}"])
def test_json_that_is_not_json_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        parse_json(data)


def test_read_json_bounds_the_file(tmp_path: Path) -> None:
    p = _file(tmp_path, b'{"id": "m"}')
    assert read_json(p, foreign.CONFIG_LIMIT) == {"id": "m"}
    with pytest.raises(Refused):
        read_json(p, 5)
