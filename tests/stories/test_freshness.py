"""Freshness in a long-lived process: the OS reports what changed (Linux inotify), a refresh
looks only there, and every change made before a call is in its answer."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import pytest
from conftest import write_notes
from race_helpers import exchange, require_exchange

from memo_core import Engine, ModelSource
from memo_core.files import feed, inotify, walker

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="change reports come from Linux inotify"
)


@pytest.fixture
def engine():
    with Engine(models=ModelSource(enabled=False), notify=True, refresh_budget_s=None) as e:
        yield e


@pytest.fixture
def notes(tmp_path: Path, engine: Engine) -> Path:
    root = write_notes(
        tmp_path / "notes",
        {"a.md": "# A\n\ncat\n", "sub/b.md": "# B\n\ndog\n", "sub/deep/c.md": "# C\n\nbird\n"},
    )
    assert engine.refresh(root).walked  # the first refresh walks (and starts the feed)
    assert not engine.refresh(root).walked  # from then on, the OS tells
    return root


def found(engine: Engine, notes: Path, word: str) -> list[str]:
    return sorted(h.relpath for h in engine.search(notes, word, mode="lex", k=50))


def test_edit_create_delete(engine: Engine, notes: Path) -> None:
    (notes / "sub" / "b.md").write_text("# B\n\nzebra\n", encoding="utf-8")
    assert found(engine, notes, "zebra") == ["sub/b.md"]
    (notes / "sub" / "deep" / "new.md").write_text("# N\n\nyak\n", encoding="utf-8")
    assert found(engine, notes, "yak") == ["sub/deep/new.md"]
    (notes / "a.md").unlink()
    assert found(engine, notes, "cat") == []
    stats = engine.refresh(notes)
    assert not stats.walked and not stats.changed_anything


def test_rename_and_move_a_note(engine: Engine, notes: Path) -> None:
    (notes / "a.md").rename(notes / "renamed.md")
    assert found(engine, notes, "cat") == ["renamed.md"]
    (notes / "renamed.md").rename(notes / "sub" / "deep" / "moved.md")
    assert found(engine, notes, "cat") == ["sub/deep/moved.md"]


def test_new_folders_and_their_notes(engine: Engine, notes: Path) -> None:
    write_notes(notes, {"x/y/z/new.md": "# New\n\nowl\n", "x/other.md": "# O\n\nowl\n"})
    assert found(engine, notes, "owl") == ["x/other.md", "x/y/z/new.md"]
    (notes / "x" / "y" / "z" / "later.md").write_text("# L\n\nowl\n", encoding="utf-8")
    assert found(engine, notes, "owl") == ["x/other.md", "x/y/z/later.md", "x/y/z/new.md"]
    assert not engine.refresh(notes).walked  # the new folders are watched too


def test_folders_moved_and_deleted(engine: Engine, notes: Path) -> None:
    (notes / "sub").rename(notes / "moved")
    assert found(engine, notes, "bird") == ["moved/deep/c.md"]
    (notes / "moved" / "deep" / "c.md").write_text("# C\n\nbird again\n", encoding="utf-8")
    assert found(engine, notes, "again") == ["moved/deep/c.md"]
    shutil.rmtree(notes / "moved")
    assert found(engine, notes, "bird") == [] and found(engine, notes, "dog") == []
    outside = notes.parent / "outside"
    write_notes(outside, {"o.md": "# O\n\nemu\n"})
    outside.rename(notes / "came-in")
    assert found(engine, notes, "emu") == ["came-in/o.md"]


def test_a_burst_of_a_thousand_files(engine: Engine, notes: Path) -> None:
    for i in range(1000):
        (notes / "sub" / f"burst{i}.md").write_text(f"# Burst {i}\n\nburst w{i}\n", "utf-8")
    assert len(found(engine, notes, "burst")) == 50  # k
    assert found(engine, notes, "w999") == ["sub/burst999.md"]
    [st] = engine.status(notes)
    assert st.files == 1003
    assert not engine.refresh(notes).walked


def test_an_overflow_falls_back_to_a_walk(engine: Engine, notes: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 60_000:
        pytest.skip(f"the inotify queue holds {limit} events: too many to overflow here")
    for i in range(limit // 2 + 100):  # each new file: create, modify, close-write events
        (notes / f"o{i}.md").write_text(f"# O\n\noverflow {i}\n", encoding="utf-8")
    stats = engine.refresh(notes)
    assert stats.walked and stats.added == limit // 2 + 100
    assert not engine.refresh(notes).walked  # and then the feed is exact again
    (notes / "o0.md").unlink()
    assert engine.refresh(notes).deleted == 1


def test_every_change_just_before_a_call_is_in_its_answer(engine: Engine, notes: Path) -> None:
    for i in range(100):
        rel = f"sub/t{i % 7}.md"
        (notes / rel).write_text(f"# T\n\nword{i}\n", encoding="utf-8")
        assert found(engine, notes, f"word{i}") == [rel], i
        if i % 10 == 9:
            os.unlink(notes / rel)
            assert found(engine, notes, f"word{i}") == [], i


def test_changed_ignore_rules_apply(engine: Engine, notes: Path) -> None:
    (notes / ".gitignore").write_text("sub/deep/\n", encoding="utf-8")
    assert found(engine, notes, "bird") == []
    (notes / ".gitignore").unlink()
    assert found(engine, notes, "bird") == ["sub/deep/c.md"]


def test_symlinks_make_it_walk(engine: Engine, notes: Path) -> None:
    os.symlink(notes / "sub" / "b.md", notes / "link.md")
    engine.refresh(notes)  # the walk that follows the link
    (notes / "sub" / "b.md").write_text("# B\n\nviolin\n", encoding="utf-8")
    assert found(engine, notes, "violin") == ["link.md", "sub/b.md"]
    assert engine.refresh(notes).walked


def test_a_folder_no_longer_ignored_is_watched(engine: Engine, tmp_path: Path) -> None:
    notes = write_notes(
        tmp_path / "ignoring",
        {".gitignore": "deep/\n", "a.md": "# A\n\ncat\n", "deep/c.md": "# C\n\nbird\n"},
    )
    assert engine.refresh(notes).walked  # the feed starts: `deep` is ignored, not watched
    assert found(engine, notes, "bird") == []
    (notes / ".gitignore").write_text("", encoding="utf-8")
    assert found(engine, notes, "bird") == ["deep/c.md"]
    (notes / "deep" / "new.md").write_text("# N\n\nowl\n", encoding="utf-8")
    assert found(engine, notes, "owl") == ["deep/new.md"]  # its folder is watched now
    assert not engine.refresh(notes).walked


ODD_TREE = {
    "a.md": "# A\n\ncat\n",
    ".gitignore": "build/\n",
    "build/b.md": "# B\n",
    "build/inner/i.md": "# I\n",
    ".hidden/h.md": "# H\n",
    ".memo/x.md": "# X\n",
    "node_modules/pkg/n.md": "# N\n",
    "venv/v.md": "# V\n",
    "docs/.gitignore": "/*\n!/open/\n",
    "docs/open/deep/o.md": "# O\n",
    "docs/shut/s.md": "# S\n",
    "sub/.memoignore": "drafts/\n",
    "sub/drafts/d.md": "# D\n",
    "sub/kept/k.md": "# K\n",
}


def _watch_set(
    root: Path, monkeypatch: pytest.MonkeyPatch, act
) -> tuple[set[str], set[str], set[str]]:
    """(folders a fresh feed watches, after `act(feed)`; folders a walk enters; those it
    enters through a symlink, or below one), '/'-terminated relative paths."""
    watched: set[str] = set()
    real_add = inotify.add_watch

    def add_watch(fd: int, path: str) -> int:
        wd = real_add(fd, path)
        if wd >= 0:
            rel = os.path.relpath(path, root)
            watched.add("" if rel == "." else rel + "/")
        return wd

    monkeypatch.setattr(inotify, "add_watch", add_watch)
    one = inotify.Inotify()
    change_feed = feed.ChangeFeed(root, one)
    try:
        assert change_feed.start()
        act(change_feed)
    finally:
        change_feed.close()
        one.close()
    entered: set[str] = set()
    real_rules_in = walker.rules_in

    def rules_in(rules, fd: int, rel: str, entries):  # each folder the walk lists
        entered.add(rel)
        return real_rules_in(rules, fd, rel, entries)

    monkeypatch.setattr(walker, "rules_in", rules_in)
    two_names = walker.scan(root).two_names
    real = root.resolve()
    linked = {rel for rel in entered if rel and Path(os.path.realpath(root / rel)) != real / rel}
    assert two_names == bool(linked)
    return watched, entered, linked


def test_the_feed_watches_the_folders_the_walker_enters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One traversal policy: the feed watches exactly the folders a walk enters, but those
    reached through a symlink (a walk that enters one says so, and the collection then
    walks at every refresh: see test_symlinks_make_it_walk)."""
    root = write_notes(tmp_path / "odd", ODD_TREE)
    outside = write_notes(tmp_path / "outside", {"o.md": "# O\n"})
    os.symlink(root / "sub" / "kept", root / "linked")
    os.symlink(outside, root / "out")

    def grow(change_feed: feed.ChangeFeed) -> None:
        # Folders made after the feed started, in watched folders and not: ignored ones
        # (by a rule above, by a negation's rest), a hidden one, a tool's, a kept one.
        made = ["sub/kept/build/x", "docs/later", "sub/.cache", "sub/node_modules"]
        made += ["build/new/deeper", "docs/shut/new", ".hidden/new", "sub/kept/new"]
        for rel in made:
            (root / rel).mkdir(parents=True)
        assert change_feed.changes() is not None

    watched, entered, linked = _watch_set(root, monkeypatch, grow)
    assert linked == {"linked/", "linked/new/"}
    assert watched == entered - linked
    assert watched == {"", "docs/", "docs/open/", "docs/open/deep/", "sub/", "sub/kept/"} | {
        "sub/kept/new/"
    }


def test_what_the_walker_leaves_out_stays_out_after_the_feed_started(
    engine: Engine, tmp_path: Path
) -> None:
    """A folder made, or ignored, after the feed started is left out as a walk leaves it
    out (the feed watched a new ignored folder and a refresh indexed its notes; a folder
    ignored while watched had its later edits indexed)."""
    notes = write_notes(
        tmp_path / "late", {".gitignore": "build/\n", "a.md": "# A\n\ncat\n", "sub/b.md": "# B\n"}
    )
    assert engine.refresh(notes).walked
    assert not engine.refresh(notes).walked
    (notes / "build" / "deep").mkdir(parents=True)
    (notes / "build" / "deep" / "x.md").write_text("# X\n\nheron\n", encoding="utf-8")
    (notes / "build" / "y.md").write_text("# Y\n\nheron\n", encoding="utf-8")
    assert found(engine, notes, "heron") == []
    (notes / ".gitignore").write_text("build/\nsub/\n", encoding="utf-8")
    assert found(engine, notes, "heron") == []
    (notes / "sub" / "b.md").write_text("# B\n\nemu\n", encoding="utf-8")
    assert found(engine, notes, "emu") == []
    assert not engine.refresh(notes).walked  # still told by the OS


def test_a_note_edited_through_a_hard_link_elsewhere(
    engine: Engine, notes: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No event names a note changed through another name: a periodic walk finds the
    second name (then that collection is walked every time)."""
    os.link(notes / "a.md", tmp_path / "other-name.md")
    monkeypatch.setattr(feed, "WALK_EVERY_S", 0.0)
    assert engine.refresh(notes).walked  # the walk that sees a note with two names
    monkeypatch.setattr(feed, "WALK_EVERY_S", 300.0)
    with open(tmp_path / "other-name.md", "w", encoding="utf-8") as f:  # the same file
        f.write("# A\n\nwalrus\n")
    assert found(engine, notes, "walrus") == ["a.md"]
    assert engine.refresh(notes).walked


def _inotify_instances() -> int:
    fds = os.listdir("/proc/self/fd")
    return sum(
        1
        for fd in fds
        if os.path.exists(f"/proc/self/fd/{fd}") and _link(fd) == "anon_inode:inotify"
    )


def _link(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def test_one_inotify_instance_for_every_collection(engine: Engine, tmp_path: Path) -> None:
    """A user has 128 inotify instances in all: memo takes one, however many folders."""
    before = _inotify_instances()
    for i in range(12):
        folder = write_notes(tmp_path / "many" / f"c{i}", {"n.md": f"# N\n\nword{i}\n"})
        engine.refresh(folder)
        engine.refresh(folder)  # the feed started
    assert _inotify_instances() - before <= 1
    (tmp_path / "many" / "c3" / "n.md").write_text("# N\n\nheron\n", encoding="utf-8")
    assert found(engine, tmp_path / "many" / "c3", "heron") == ["n.md"]
    assert not engine.refresh(tmp_path / "many" / "c3").walked


def test_a_flipping_folder_does_not_keep_the_feed_draining(
    engine: Engine, notes: Path, tmp_path: Path
) -> None:
    """A folder swapped with a symlink as fast as possible floods the queue: a refresh
    reads a bounded amount, then walks, and ends."""
    require_exchange(tmp_path)
    outside = write_notes(tmp_path / "outside", {"x.md": "# X\n\nx\n"})
    os.symlink(outside, notes / "flip")
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            exchange(os.fsencode(notes / "sub"), os.fsencode(notes / "flip"))

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    try:
        done = threading.Event()
        refresher = threading.Thread(target=lambda: (engine.refresh(notes), done.set()))
        refresher.start()
        assert done.wait(30), "the refresh never ended"
    finally:
        stop.set()
        flipper.join()
        if (notes / "sub").is_symlink():
            exchange(os.fsencode(notes / "sub"), os.fsencode(notes / "flip"))


def test_out_of_watches_walks_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def no_watch(fd: int, path: str) -> int:
        raise inotify.Unavailable("No space left on device")

    monkeypatch.setattr(inotify, "add_watch", no_watch)
    notes = write_notes(tmp_path / "n", {"a.md": "# A\n\ncat\n"})
    with Engine(models=ModelSource(enabled=False), notify=True, refresh_budget_s=None) as e:
        for word in ("cat", "emu", "gnu"):
            (notes / "a.md").write_text(f"# A\n\n{word}\n", encoding="utf-8")
            assert found(e, notes, word) == ["a.md"]
            assert e.refresh(notes).walked
    warned = [r.getMessage() for r in caplog.records if "no change reports" in r.getMessage()]
    assert len(warned) == 1 and "No space left on device" in warned[0]
