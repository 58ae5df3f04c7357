"""memo_core.errors: one flat set of exceptions, each carrying a keyed Message (not a
sentence), with the catalogue's English text as `str(e)`."""

from __future__ import annotations

import copy
import inspect
import pickle

import pytest

from memo_core import errors
from memo_core.errors import (
    DiskFullError,
    IndexBusyError,
    IndexLocationError,
    IndexStoreError,
    InvalidArgumentError,
    MemoError,
    NoteNotFoundError,
    PathNotFoundError,
    ResourceLimitError,
)
from memo_core.messages import TEXTS, Message

ALL_ERRORS = [
    cls
    for _, cls in inspect.getmembers(errors, inspect.isclass)
    if issubclass(cls, Exception) and cls.__module__ == errors.__name__
]


def test_every_error_is_a_memo_error() -> None:
    assert len(ALL_ERRORS) >= 15  # the module's whole set, found
    assert all(issubclass(cls, MemoError) for cls in ALL_ERRORS)


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_each_error_carries_a_catalogue_key(cls: type[MemoError]) -> None:
    e = cls("path.missing", path="/nowhere")
    assert isinstance(e.message, Message)
    assert e.message.key == "path.missing"
    assert e.message.params == {"path": "/nowhere"}
    assert str(e) == "path does not exist: /nowhere; give an existing folder of notes, e.g. ~/notes"
    assert "/nowhere" in str(e.message)


@pytest.mark.parametrize(
    ("child", "parent"),
    [
        (IndexLocationError, IndexStoreError),
        (IndexBusyError, IndexStoreError),
        (DiskFullError, ResourceLimitError),
        (NoteNotFoundError, PathNotFoundError),
    ],
)
def test_kinds_that_are_cases_of_another(child: type, parent: type) -> None:
    assert issubclass(child, parent)
    with pytest.raises(parent):
        raise child("path.missing", path="x")


def test_kinds_that_are_not_cases_of_another() -> None:
    assert not issubclass(InvalidArgumentError, IndexStoreError)
    assert not issubclass(PathNotFoundError, InvalidArgumentError)
    assert not issubclass(ResourceLimitError, IndexStoreError)


def test_a_sentence_that_is_no_key_is_kept_as_given() -> None:
    text = "something went wrong {not a field}"
    assert text not in TEXTS
    e = MemoError(text)
    assert e.message.key == "as_given"
    assert e.message.params == {"text": text}
    assert str(e) == text


def test_a_message_made_before_is_passed_on_unchanged() -> None:
    first = InvalidArgumentError("search.mode", mode="fuzzy", modes="hybrid, lex, vec")
    second = IndexStoreError(first.message)
    assert second.message is first.message
    assert second.message.key == "search.mode"
    assert str(second) == "unknown mode 'fuzzy': use one of hybrid, lex, vec"


def test_parameters_are_ignored_when_a_message_is_given() -> None:
    given = Message("search.empty_query")
    assert MemoError(given, path="ignored").message.params == {}


@pytest.mark.parametrize(
    "clone", [copy.copy, copy.deepcopy, lambda e: pickle.loads(pickle.dumps(e))]
)
def test_an_error_survives_copies_with_its_key(clone) -> None:
    e = NoteNotFoundError("path.missing", path="/gone")
    again = clone(e)
    assert type(again) is NoteNotFoundError
    assert again.message.key == "path.missing"
    assert again.message.params == {"path": "/gone"}
    assert str(again) == str(e)
