"""memo_core.text.escapes: names shown as one printable line that reads in its order, read
back to the name they came from; passages printed with their lines and tabs kept."""

from __future__ import annotations

import os
import unicodedata

import pytest

from memo_core.text.escapes import for_terminal, shown, unshown


@pytest.mark.parametrize(
    "name",
    ["notes/plan.md", "заметки/план.md", "ёлка 🎄.md", "a b\\c.md", "100% done.md", "ｆｕｌｌ.md"],
)
def test_a_printable_name_is_shown_as_it_is(name: str) -> None:
    assert shown(name) == name
    assert for_terminal(name) == name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("two\nlines.md", "two\\nlines.md"),  # a newline would forge a second hit line
        ("tab\there.md", "tab\\there.md"),
        ("cr\r.md", "cr\\r.md"),
        ("\x1b[2Jclear.md", "\\x1b[2Jclear.md"),  # a terminal would obey it
        ("\x07bell.md", "\\x07bell.md"),
        ("del\x7f.md", "del\\x7f.md"),
        ("c1\x85.md", "c1\\u0085.md"),  # not \x85: that spells an undecodable byte
        ("\u202egpj.md", "\\u202egpj.md"),  # right-to-left override: read backwards
        ("zero\u200bwidth.md", "zero\\u200bwidth.md"),  # shows as nothing
        ("\ufeffbom.md", "\\ufeffbom.md"),
        ("tag\U000e0041.md", "tag\\U000e0041.md"),  # a format character beyond the BMP
        ("bad\udcffname.md", "bad\\xffname.md"),  # the byte 0xff, as the OS decodes it
        ("\udcc3(.md", "\\xc3(.md"),  # a lead byte without its continuation
    ],
)
def test_controls_format_characters_and_undecodable_bytes_are_escaped(
    name: str, expected: str
) -> None:
    assert shown(name) == expected
    assert unshown(shown(name)) == name


def test_bytes_the_os_could_not_decode_come_back_as_the_same_bytes() -> None:
    raw = b"caf\xe9 \xff\xfe/\x80.md"
    name = os.fsdecode(raw)
    text = shown(name)
    assert text.isascii() and text.isprintable()
    assert os.fsencode(unshown(text)) == raw


def test_no_character_shows_as_a_control_or_format_one_and_each_comes_back() -> None:
    """Every character of the first planes (the OS's surrogates for bytes 0x80-0xff too):
    shown holds no control or format character, and reads back as the character it was."""
    chars = [chr(c) for c in range(0x3000) if not 0xD800 <= c <= 0xDFFF]
    chars += [chr(c) for c in range(0xFE00, 0x10000)]
    chars += [chr(0xDC00 + b) for b in range(0x80, 0x100)]
    for ch in chars:
        text = shown(ch)
        assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in text), hex(ord(ch))
        if ch != "\\":
            assert unshown(text) == ch, hex(ord(ch))


def test_a_shown_name_is_always_one_line() -> None:
    """Every character `str.splitlines` breaks at but the two separators of Unicode's own
    (category Zl and Zp, which no terminal breaks at)."""
    name = "a\nb\rc\x0bd\x0ce\x1cf\x1dg\x1eh\x85i.md"
    assert shown(name).splitlines() == [shown(name)]
    assert unshown(shown(name)) == name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("line one\nline two\tcell", "line one\nline two\tcell"),  # lines and tabs kept
        ("\x1b]0;owned\x07title", "\\x1b]0;owned\\x07title"),  # window retitled: escaped
        ("carriage\rreturn", "carriage\\rreturn"),  # \r would overwrite the line
        ("a\u202eb", "a\\u202eb"),  # bidirectional controls reorder the line
        ("a\u2066b\u2069", "a\\u2066b\\u2069"),
        ("emoji 👩\u200d💻 stays", "emoji 👩\u200d💻 stays"),  # a joiner is text here
        ("soft\xadhyphen", "soft\xadhyphen"),
        ("byte \udcff", "byte \\xff"),
    ],
)
def test_a_passage_keeps_its_lines_and_text_but_no_terminal_controls(
    text: str, expected: str
) -> None:
    assert for_terminal(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain.md", "plain.md"),
        ("a\\nb", "a\nb"),
        ("a\\tb\\rc", "a\tb\rc"),
        ("\\x1b", "\x1b"),
        ("\\xff", "\udcff"),  # a byte that is not UTF-8: the OS's surrogate for it
        ("\\u00ff", "\xff"),  # the character ÿ
        ("\\u202e", "\u202e"),
        ("\\U0001f600", "\U0001f600"),
        ("\\xZZ \\q \\u12", "\\xZZ \\q \\u12"),  # not escapes: left as they are
    ],
)
def test_unshown_reads_the_escapes_shown_writes(text: str, expected: str) -> None:
    assert unshown(text) == expected


def test_a_real_backslash_followed_by_n_reads_back_as_a_newline() -> None:
    """The one ambiguity the docstring names: a name that holds `\\n` itself is shown as it
    is, and `unshown` reads it as an escape (callers try the text as it is first)."""
    name = "dir\\name.md"
    assert shown(name) == name
    assert unshown(shown(name)) == "dir\name.md"
