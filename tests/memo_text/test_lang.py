"""memo_text.lang: the reader's language, and every text keyed in both languages."""

from __future__ import annotations

import errno
import logging
import re
import string

import pytest

from memo_core import ENGINE_TEXTS, Message
from memo_core.errors import ModelUnavailableError, PathNotFoundError
from memo_text import answers, fronts
from memo_text.lang import TEXTS, Lang, user_language, word_logs


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_every_text_is_in_both_languages_with_the_same_placeholders() -> None:
    assert set(TEXTS) == set(ENGINE_TEXTS) | set(answers.TEXTS) | set(fronts.TEXTS)
    for key, (ru, en) in TEXTS.items():
        assert ru and en, key
        assert _fields(ru) == _fields(en), key


@pytest.mark.parametrize(
    ("raw", "lang"),
    [
        (None, Lang.RU),
        ("", Lang.RU),
        ("  ", Lang.RU),
        ("ru", Lang.RU),
        ("ru_RU.UTF-8", Lang.RU),
        ("en", Lang.EN),
        ("EN", Lang.EN),
        (" en ", Lang.EN),
        ("en_US.UTF-8", Lang.EN),
        ("en-GB", Lang.EN),
        ("en.utf8", Lang.EN),
    ],
)
def test_memo_lang_names_the_language(raw: str | None, lang: Lang) -> None:
    assert user_language(raw) == (lang, None)


@pytest.mark.parametrize("raw", ["de", "english", "eng", "r", "enx", "fr_FR"])
def test_a_language_memo_does_not_speak_is_russian_and_a_warning(raw: str) -> None:
    lang, warning = user_language(raw)
    assert lang is Lang.RU
    assert warning is not None and warning.key == "lang.unknown"
    assert warning.params == {"value": raw, "known": "ru, en"}


def test_lang_is_its_code() -> None:
    assert Lang("en") is Lang.EN and Lang.RU == "ru"


def test_a_key_is_worded_in_each_language_its_parameters_filled() -> None:
    assert Lang.RU.text("hits.none") == "ничего не найдено"
    assert Lang.EN.text("hits.none") == "nothing found"
    en = Lang.EN.text("usage.error", prog="memo", message="bad")
    assert en == "memo: error: bad"
    assert Lang.RU.text("usage.error", prog="memo", message="плохо") == "memo: ошибка: плохо"


def test_an_unknown_key_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        Lang.EN.text("no.such.key")


def test_a_message_is_worded_with_its_parameters_in_the_same_language() -> None:
    inner = Message("model.disabled")
    outer = Message("log.kept_unused", why=inner)
    for lang in Lang:
        said = lang.word(outer)
        assert said == lang.text("log.kept_unused", why=lang.text("model.disabled"))
    assert Lang.EN.word(outer) == str(outer)  # a Message as a string is its English text
    assert Lang.RU.word(outer) != Lang.EN.word(outer)


def test_an_error_is_worded_by_its_message() -> None:
    e = ModelUnavailableError("model.disabled")
    assert Lang.EN.word(e) == str(e)
    assert Lang.RU.word(e) == Lang.RU.text("model.disabled")
    assert Lang.RU.word(e) != Lang.EN.word(e)
    p = PathNotFoundError(Message("model.disabled"))  # a Message made before, passed on
    assert Lang.RU.word(p) == Lang.RU.word(e)


def test_an_os_error_is_worded_by_its_errno_in_the_language() -> None:
    e = FileNotFoundError(errno.ENOENT, "No such file or directory")
    ru, en = Lang.RU.word(e), Lang.EN.word(e)
    assert en and ru and ru != en
    assert not re.search("[а-яё]", en, re.I) and re.search("[а-яё]", ru, re.I)


def test_another_exception_is_named_by_its_type() -> None:
    assert "ValueError" in Lang.EN.word(ValueError("x"))


@pytest.mark.parametrize("value", [3, 2.5, "plain", None, ["a"]])
def test_anything_else_is_its_string(value: object) -> None:
    assert Lang.EN.word(value) == Lang.RU.word(value) == str(value)


def test_parameters_keep_their_type_for_format_specs() -> None:
    assert Lang.EN.word_param(2.5) == 2.5 and Lang.EN.word_param("x") == "x"
    assert Lang.EN.word_param(Message("hits.none")) == "nothing found"
    assert Lang.RU.word_param(ModelUnavailableError("model.disabled")) == Lang.RU.text(
        "model.disabled"
    )


def test_logs_are_worded_on_stderr_in_the_language_chosen(capsys) -> None:
    log = logging.getLogger("memo")
    before = list(log.handlers)
    try:
        word_logs(Lang.RU)
        word_logs(Lang.EN)  # again: the language changes, no line is said twice
        log.warning("memo: %s", Message("hits.none"))
        log.info("memo: %s", "not said: below warnings")
        err = capsys.readouterr().err
        assert err == "memo: nothing found\n"
        word_logs(Lang.RU)
        log.error("memo: %s (%.1f)", ModelUnavailableError("model.disabled"), 2.25)
        err = capsys.readouterr().err
        assert err == f"memo: {Lang.RU.text('model.disabled')} (2.2)\n"
    finally:
        log.handlers[:] = before  # the logger as other tests found it
