"""What changed under a collection, learnt from the OS (Linux inotify), so a refresh in a
long-lived process looks at what changed instead of walking the whole tree.

Exactness: the kernel queues an inotify event inside the system call that makes the change,
so once that call has returned its event is in the queue. Draining the queue at the start of
a refresh therefore sees every change that completed before it (no barrier needed). A new
folder gets its watch before it is listed, and is walked whole, so notes written into it
before the watch existed are found too. Whenever the feed cannot be exact — the queue
overflowed, a watched folder moved, a watch could not be added, the file system is not a
local one (a network share changes without local events), no inotify — `changes()` says
so (None) and the caller walks everything.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from memo_core.files.fsafe import Folder, listing
from memo_core.files.ignore import IGNORE_FILES, Rules
from memo_core.files.inotify import (
    IN_CREATE,
    IN_DELETE_SELF,
    IN_ISDIR,
    IN_MOVE_SELF,
    IN_MOVED_FROM,
    IN_MOVED_TO,
    Inotify,
    Unavailable,
)
from memo_core.files.walker import (
    Changes,
    Verdict,
    is_note_name,
    judge_path,
    rules_in,
    skipped_name,
    verdict,
)
from memo_core.messages import Message
from memo_core.text.escapes import shown

log = logging.getLogger("memo")

# A collection learning from the OS is still walked whole this often: what no event names
# (a note hard-linked from elsewhere after the first walk, then edited through that other
# name) is found within this many seconds.
WALK_EVERY_S = 300.0


class ChangeFeed:
    """inotify watches on every folder of a collection the walker would enter (in the
    process's one `Inotify`), and what they reported since it was last asked."""

    def __init__(self, root: Path, inotify: Inotify) -> None:
        self.root = str(root)
        self._inotify = inotify
        # Since it was last asked (kept under the Inotify's lock): what changed, folders to
        # start watching (new ones, and those whose ignore rules changed), whether it lost
        # track (then everything is walked).
        self.pending = Changes()
        self.new_folders: list[str] = []
        self.lost = False

    def start(self) -> bool:
        """Watch the whole tree; whether the feed works here (else: walk every time)."""
        if not self._inotify.supported(self.root):
            # Expected off Linux and on network shares: said, but not as a problem.
            log.info(
                "memo: %s",
                Message(
                    "log.no_reports", root=shown(self.root), reason=Message("log.no_reports_here")
                ),
            )
            return False
        try:
            self._watch_tree("")
        except Unavailable as e:
            # Said once per collection: its searches stay exact, each walking the folder.
            log.warning("memo: %s", Message("log.no_reports", root=shown(self.root), reason=e))
            self.close()
            return False
        return True

    def close(self) -> None:
        self._inotify.forget(self)

    def quiet(self) -> bool:
        """Whether the OS reported nothing here since the last `changes` (nothing taken)."""
        return self._inotify.quiet(self)

    def changes(self) -> Changes | None:
        """The folders where something changed since the last call; None: unknown (walk)."""
        found, folders, lost = self._inotify.collect(self)
        try:
            for rel in folders:
                self._watch_tree(rel)
        except Unavailable:
            lost = True
        if lost:  # resync the watches, then one full walk
            log.info("memo: %s", Message("log.reports_lost", root=shown(self.root)))
            self._inotify.forget(self)
            try:
                self._watch_tree("")
            except Unavailable as e:
                log.info("memo: %s", Message("log.rewatch_failed", root=shown(self.root), reason=e))
                self.lost = True  # still: walk next time too
            return None
        return found

    # -- events ---------------------------------------------------------------------------

    def event(self, mask: int, name: str, folder: str) -> None:
        """Note what one event in `folder` (of this feed) touched."""
        found = self.pending
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            found.trees.add(folder)
            if folder == "":
                self.lost = True  # the root itself went away
            return
        if not name or skipped_name(name) and name not in IGNORE_FILES:
            return
        if mask & IN_ISDIR:
            sub = f"{folder}{name}/"
            if mask & IN_MOVED_FROM:
                self.lost = True  # watches below it now name other paths
            elif mask & (IN_CREATE | IN_MOVED_TO):
                self.new_folders.append(sub)
            found.trees.add(sub)
        elif name in IGNORE_FILES:
            found.trees.add(folder)  # its rules changed: all below may come or go,
            self.new_folders.append(folder)  # and folders it no longer ignores are watched
        elif is_note_name(name):
            found.dirs.add(folder)

    def _watch_tree(self, top: str) -> None:
        """Watch `top` and every folder below it the walker would enter (by its own rules:
        `judge_path`, `rules_in`, `verdict`), `top` itself only if a walk from the root enters
        it; each gets its watch before it is listed, so nothing created meanwhile goes
        unseen. Folders are listed through the root's descriptor (see `fsafe`), as the
        walker lists them. A folder reached through a symlink is not watched: a walk that
        enters one says so (`two_names`) and the collection then walks at every refresh."""
        try:
            root = Folder(self.root)
        except OSError as e:
            raise Unavailable(str(e)) from e
        with root:
            judged: Verdict = Verdict.TAKEN
            rules: Rules = ()
            try:
                if top:
                    judged, rules = judge_path(root, top[:-1], True)
            except OSError:
                return  # gone or swapped meanwhile: the walk of `top` finds nothing either
            stack: list[tuple[str, Rules]] = [(top, rules)] if judged is Verdict.TAKEN else []
            while stack:
                rel, rules = stack.pop()
                if not self._inotify.watch(self, os.path.join(self.root, rel), rel):
                    continue  # gone already
                try:
                    fd = root.open_dir(rel)
                except OSError:
                    continue
                try:
                    entries = listing(fd)
                    rules = rules_in(rules, fd, rel, entries)
                except OSError:
                    continue
                finally:
                    os.close(fd)
                for entry in entries:
                    try:
                        if not entry.is_dir(follow_symlinks=False):
                            continue
                    except OSError:
                        continue
                    if verdict(rules, rel, entry.name, True) is Verdict.TAKEN:
                        stack.append((f"{rel}{entry.name}/", rules))


class Freshness:
    """How a collection learns what changed: from a ChangeFeed while `notify` holds and the
    feed works, else by walking. The feed starts before the first walk, so nothing that
    happens during that walk is lost."""

    def __init__(self, root: Path, inotify: Inotify | None) -> None:
        self.root = root
        self.notify = inotify is not None
        self._inotify = inotify
        self._feed: ChangeFeed | None = None
        self._walked = 0.0  # when the last walk of everything was asked (monotonic)

    @property
    def reported(self) -> bool:
        """Whether the OS reports this collection's changes now (its feed is running)."""
        return self.notify and self._feed is not None

    def quiet(self) -> bool:
        """Whether a refresh would find nothing changed: the OS reports this collection's
        changes, reported none since the last `changes`, and no walk is due."""
        if not self.notify or self._feed is None:
            return False
        return time.monotonic() - self._walked <= WALK_EVERY_S and self._feed.quiet()

    def changes(self) -> Changes | None:
        """What changed since the last call; None: walk everything."""
        if not self.notify or self._inotify is None:
            return None
        if self._feed is None:
            feed = ChangeFeed(self.root, self._inotify)
            if not feed.start():
                self.notify = False  # not here: walk every time
                return None
            self._feed = feed
            return self._walk()
        found = self._feed.changes()
        if found is None or time.monotonic() - self._walked > WALK_EVERY_S:
            return self._walk()
        return found

    def walk_next(self) -> None:
        """The next `changes` walks everything (what the feed held was taken by a caller
        that did not refresh)."""
        self._walked = float("-inf")

    def _walk(self) -> Changes | None:
        """None: walk everything (and remember when)."""
        self._walked = time.monotonic()
        return None

    def give_up(self) -> None:
        """Walk from now on (e.g. symlinks were followed: a change shows under one name)."""
        log.info("memo: %s", Message("log.names_unreported", root=shown(str(self.root))))
        self.notify = False
        self.close()

    def close(self) -> None:
        if self._feed is not None:
            self._feed.close()
            self._feed = None
