"""One flat set of engine exceptions; each layer maps them once (CLI message, MCP ToolError)."""

from __future__ import annotations


class MemoError(Exception):
    """Base of every error memo reports to a user; the message says what to do next."""


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


class ResourceLimitError(MemoError):
    """memo ran out of a system resource (open files): a limit to raise, not a damaged index."""


class UnsupportedPlatformError(MemoError):
    """This OS has no folder descriptors (openat, O_NOFOLLOW), which memo needs: use WSL."""


class NotANoteError(MemoError):
    """A path names no note memo indexes (hidden, ignored, not *.md): read one a search found."""


class NoteNotFoundError(PathNotFoundError):
    """No note at that path (moved or deleted since it was listed): search again for it."""


class NoteUnreadableError(MemoError):
    """A note exists but cannot be read (permissions, I/O error): fix that, then read again."""
