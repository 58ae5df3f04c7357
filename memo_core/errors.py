"""One flat set of engine exceptions; each layer maps them once (CLI message, MCP ToolError).

An error carries a kind (its class), a text's key in the catalogue and the text's
parameters, not a sentence: `str(e)` is its English text (logs, Python callers), and a front
end words it in the reader's language with `Lang.word(e)`.
"""

from __future__ import annotations

from memo_core.messages import TEXTS, Message


class MemoError(Exception):
    """Base of every error memo reports to a user; the message says what to do next.

    `MemoError("path.missing", path=...)`: the catalogue's text `path.missing` with its
    parameters; or `MemoError(message)`: a Message made before (another error's, passed on).
    A sentence that is no key is kept as it is, in every language (tests/stories/test_catalogue.py
    finds any such raise: its text belongs in the catalogue).
    """

    def __init__(self, key: str | Message, /, **params: object) -> None:
        if not isinstance(key, Message):
            key = Message(key, **params) if key in TEXTS else Message("as_given", text=key)
        super().__init__(key)

    @property
    def message(self) -> Message:
        """The text, to word in the reader's language (`Lang.word`)."""
        message = self.args[0]
        assert isinstance(message, Message)
        return message


class PathNotFoundError(MemoError):
    """A path the user gave does not exist or is not a directory."""


class NoCollectionError(MemoError):
    """A directory holds no collection (no *.md within two levels, no .memo/index.db)."""


class ModelUnavailableError(MemoError):
    """No embedding model could be loaded (missing, broken, or not installed)."""


class ModelInstallError(MemoError):
    """Installing the default model failed (download, hash check, or extraction)."""


class IndexStoreError(MemoError):
    """The index file cannot be opened or used (corrupt, foreign, or from another memo version)."""


class InvalidArgumentError(MemoError):
    """An argument has a bad value (unknown mode, k out of range, ...)."""


class IndexLocationError(IndexStoreError):
    """The index cannot live in the collection folder (read-only, or no WAL there)."""


class IndexBusyError(IndexStoreError):
    """Another process holds the index's write lock for longer than memo waits."""


class OutsideRootsError(MemoError):
    """A path lies outside every folder memo was allowed to use."""


class FolderChangedError(MemoError):
    """A folder changed under memo while it worked (swapped for a symlink, moved, removed)."""


class SettingError(MemoError):
    """A MEMO_* environment variable holds a value memo cannot use (the message names it
    and says what it takes)."""


class ResourceLimitError(MemoError):
    """memo ran out of a system resource (open files): a limit to raise, not a damaged index."""


class DiskFullError(ResourceLimitError):
    """No room left on the disk (or in the quota): what the index saved is whole."""


class UnsupportedPlatformError(MemoError):
    """This OS has no folder descriptors (openat, O_NOFOLLOW), which memo needs: use WSL."""


class NotANoteError(MemoError):
    """A path names no note memo indexes (hidden, ignored, not *.md): read one a search found."""


class NoteNotFoundError(PathNotFoundError):
    """No note at that path (moved or deleted since it was listed): search again for it."""


class NoteUnreadableError(MemoError):
    """A note exists but cannot be read (permissions, I/O error): fix that, then read again."""
