"""memo-mcp resources: `memo://collections`, the note template, and completions.

Through the SDK's in-process client against the real server (`build_server(roots)`), so the
resources are confined by the same roots as the tools.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import apsw
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference
from mcp_helpers import BACKUP, make_notes

from memo_core import Engine
from memo_mcp import resources
from memo_mcp.lazy import LazyEngine
from memo_mcp.resources import (
    CHANGES_TEMPLATE,
    NOTE_TEMPLATE,
    find_indexed_collections,
    note_uri,
)
from memo_mcp.server import build_server

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)$")
NOTE_REF = ResourceTemplateReference(type="ref/resource", uri=NOTE_TEMPLATE)


@pytest.fixture
def allowed(tmp_path: Path) -> Path:
    root = tmp_path / "allowed"
    root.mkdir()
    return root


def client(*roots: Path) -> Client:
    return Client(build_server(list(roots)), mode="legacy")


def index(path: Path) -> None:
    with Engine() as engine:
        engine.refresh(path, embed=False)


async def listing(c: Client) -> dict[str, Any]:
    r = await c.read_resource("memo://collections")
    [content] = r.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


async def read(c: Client, uri: str) -> str:
    [content] = (await c.read_resource(uri)).contents
    assert content.mime_type == "text/markdown"
    return content.text


async def refused(c: Client, uri: str) -> str:
    with pytest.raises(MCPError) as err:
        await c.read_resource(uri)
    return err.value.error.message


# -- memo://collections -----------------------------------------------------------------


async def test_collections_lists_indexed_collections_under_the_roots(
    allowed: Path, tmp_path: Path
) -> None:
    a = make_notes(allowed / "a")
    b = make_notes(allowed / "deep" / "b")
    make_notes(allowed / "c")  # notes, but never indexed: not listed
    outside = make_notes(tmp_path / "outside")
    for p in (a, b, outside):
        index(p)
    async with client(allowed) as c:
        got = await listing(c)
    assert got["roots"] == [str(allowed)]
    assert got["note_uri_template"] == NOTE_TEMPLATE
    assert [e["path"] for e in got["collections"]] == [str(a), str(b)]
    entry = got["collections"][0]
    assert (entry["files"], entry["skipped"], entry["model"]) == (2, 0, None)
    assert (entry["empty"], entry["pending"]) == (0, 0)  # no empty note, nothing to come
    assert entry["chunks"] >= 5 and entry["chunks_without_vectors"] == entry["chunks"]
    assert re.fullmatch(r"[0-9a-f]{24}", entry["fingerprint"])
    assert ISO.match(entry["updated_at"]) and ISO.match(entry["refreshed_at"])
    assert entry["note_uri"] == "memo://note/" + str(a).replace("/", "%2F") + "/"


async def test_fingerprint_is_stable_and_changes_with_content(allowed: Path) -> None:
    notes = make_notes(allowed)
    async with client(allowed) as c:
        await c.call_tool("memo_search", {"path": str(notes), "query": "x", "mode": "lex"})
        first = (await listing(c))["collections"][0]
    # A new run of the server (the client above closed the first): same content, same token.
    async with client(allowed) as c:
        again = (await listing(c))["collections"][0]
        assert again["fingerprint"] == first["fingerprint"]
        garden = notes / "garden.md"
        garden.write_text(garden.read_text(encoding="utf-8") + "\nКабачки.\n", encoding="utf-8")
        await c.call_tool("memo_search", {"path": str(notes), "query": "x", "mode": "lex"})
        changed = (await listing(c))["collections"][0]
    assert changed["fingerprint"] != first["fingerprint"]
    assert changed["refreshed_at"] >= first["refreshed_at"]


def test_the_scan_is_bounded_and_skips_hidden_and_bulky_folders(allowed: Path) -> None:
    for rel in ("l1", "l1/l2/l3", "l1/l2/l3/l4", ".hidden/n", "node_modules/n", "x/venv"):
        (allowed / rel / ".memo").mkdir(parents=True)
        (allowed / rel / ".memo" / "index.db").write_bytes(b"")
    os.symlink(allowed / "l1", allowed / "link")
    assert find_indexed_collections([allowed]) == [allowed / "l1", allowed / "l1/l2/l3"]
    assert find_indexed_collections([allowed], max_dirs=2) == [allowed / "l1"]
    assert find_indexed_collections([allowed / "missing"]) == []


async def test_an_unusable_index_is_listed_with_its_error(allowed: Path) -> None:
    good = make_notes(allowed / "good")
    index(good)
    bad = make_notes(allowed / "bad")
    index(bad)
    db = apsw.Connection(str(bad / ".memo" / "index.db"))
    db.execute("PRAGMA user_version=99")  # made by a newer memo
    db.close()
    async with client(allowed) as c:
        entries = {e["path"]: e for e in (await listing(c))["collections"]}
    assert entries[str(good)]["files"] == 2
    assert entries[str(bad)]["error"]


# -- memo://note/{collection}/{+path} -------------------------------------------------------


async def test_a_hit_opens_as_a_note(allowed: Path) -> None:
    notes = make_notes(allowed)
    backup = notes / "home" / "backup.md"
    async with client(allowed) as c:
        args = {"path": str(notes), "query": "restic", "mode": "lex", "k": 1}
        hit = Path((await c.call_tool("memo_search", args)).content[0].text.split(":")[0])
        assert hit == backup
        # What a client does: the collection that holds the hit, then the path inside it.
        [entry] = (await listing(c))["collections"]
        relpath = hit.relative_to(entry["path"]).as_posix()
        assert await read(c, entry["note_uri"] + relpath) == backup.read_text()
        assert entry["note_uri"] + relpath == note_uri(notes, "home/backup.md")
        # Any folder inside the roots will do as the collection, e.g. the hit's own folder.
        assert await read(c, note_uri(backup.parent, backup.name)) == backup.read_text()
        # Spaces and Cyrillic in names are percent-encoded.
        odd = notes / "Мои заметки" / "план дня.md"
        odd.parent.mkdir()
        odd.write_text("# План\n", encoding="utf-8")
        assert await read(c, note_uri(notes, "Мои заметки/план дня.md")) == "# План\n"
        templates = (await c.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == [NOTE_TEMPLATE, CHANGES_TEMPLATE]


async def test_notes_outside_the_roots_or_not_notes_are_refused(
    allowed: Path, tmp_path: Path
) -> None:
    notes = make_notes(allowed)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "s.md").write_text("# secret\n")
    os.symlink(secret, notes / "link-out")
    os.symlink(secret / "s.md", notes / "s.md")
    (notes / "data.txt").write_text("x")
    (notes / ".memo").mkdir()
    (notes / ".memo" / "x.md").write_text("# hidden\n")
    async with client(allowed) as c:
        text = await refused(c, note_uri(secret, "s.md"))
        assert text.startswith(f"{secret} лежит вне папок, которые memo разрешено использовать")
        for rel in ("link-out/s.md", "s.md"):
            assert await refused(c, note_uri(notes, rel)) == f"{rel} ведёт за пределы {notes}"
        assert "не заметка Markdown" in await refused(c, note_uri(notes, "data.txt"))
        assert "не заметка Markdown" in await refused(c, note_uri(notes, "home"))
        assert "скрытых папок" in await refused(c, note_uri(notes, ".memo/x.md"))
        assert (
            await refused(c, note_uri(notes, "nope.md")) == f"нет такой заметки: nope.md в {notes}"
        )
        assert "Unknown resource" in await refused(c, note_uri(notes, "../secret/s.md"))
        assert "Unknown resource" in await refused(c, note_uri(notes) + "%2E%2E/x.md")
        text = await refused(c, note_uri(notes / "garden.md", "x.md"))
        assert text.startswith("это не папка:")
        assert "относительно коллекции" in await refused(c, note_uri(notes, ""))


async def test_notes_the_index_leaves_out_are_refused(allowed: Path) -> None:
    """`memo://note` served notes that .memoignore, a nested .gitignore or a
    hidden folder keep out of the index; it serves exactly what a search could find."""
    notes = make_notes(allowed)
    (notes / ".memoignore").write_text("private/\nhome/draft.md\n")
    (notes / "private").mkdir()
    (notes / "private" / "p.md").write_text("# private\n")
    (notes / "home" / "draft.md").write_text("# draft\n")
    (notes / "home" / ".gitignore").write_text("*.md\n!backup.md\n")
    (notes / "home" / "wip.md").write_text("# wip\n")
    (notes / ".obsidian").mkdir()
    (notes / ".obsidian" / "o.md").write_text("# obsidian\n")
    index(notes)
    async with client(allowed) as c:
        for folder, rel in [
            (notes, "private/p.md"),
            (notes / "private", "p.md"),  # a sub-folder as the collection: judged the same
            (notes, "home/draft.md"),
            (notes, "home/wip.md"),
            (notes / "home", "wip.md"),
        ]:
            text = await refused(c, note_uri(folder, rel))
            assert "исключена правилами .gitignore или .memoignore" in text, (folder, rel)
        assert "скрытых папок" in await refused(c, note_uri(notes, ".obsidian/o.md"))
        assert await read(c, note_uri(notes, "home/backup.md")) == BACKUP
        got = await c.complete(NOTE_REF, {"name": "path", "value": ""}, {"collection": str(notes)})
        assert got.completion.values == ["garden.md", "home/backup.md"]


async def test_a_huge_note_is_cut_at_a_line_end(
    allowed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources, "MAX_NOTE_BYTES", 100)
    big = allowed / "big.md"
    big.write_text("# Big\n" + "".join(f"строка {i}\n" for i in range(50)), encoding="utf-8")
    async with client(allowed) as c:
        text = await read(c, note_uri(allowed, "big.md"))
    body, note = text.rsplit("\n<!-- ", 1)
    assert big.read_text(encoding="utf-8").startswith(body) and body.endswith("\n")
    assert len(body.encode()) <= 100
    assert note.startswith(f"memo: здесь обрезано, первые {len(body.encode())} из ")


# -- completions -------------------------------------------------------------------------


async def test_completions_offer_collections_and_notes(allowed: Path) -> None:
    a = make_notes(allowed / "alpha")
    b = make_notes(allowed / "beta")
    index(a)
    index(b)
    async with client(allowed) as c:
        got = await c.complete(NOTE_REF, {"name": "collection", "value": str(allowed)})
        assert got.completion.values == [str(a), str(b)]
        got = await c.complete(NOTE_REF, {"name": "collection", "value": "BET"})
        assert got.completion.values == [str(b)]
        got = await c.complete(NOTE_REF, {"name": "path", "value": ""}, {"collection": str(a)})
        assert got.completion.values == ["garden.md", "home/backup.md"]
        got = await c.complete(NOTE_REF, {"name": "path", "value": "ho"}, {"collection": str(a)})
        assert got.completion.values == ["home/backup.md"]
        got = await c.complete(NOTE_REF, {"name": "path", "value": ""}, {"collection": "/etc"})
        assert got.completion.values == []
        prompt = PromptReference(type="ref/prompt", name="search_notes")
        got = await c.complete(prompt, {"name": "path", "value": "alp"})
        assert got.completion.values == [str(a)]
        assert c.server_capabilities.completions is not None


# -- each resource is its own unit --------------------------------------------------------


@pytest.mark.parametrize("register", resources.RESOURCES)
async def test_each_resource_registers_alone(register, allowed: Path) -> None:
    server = MCPServer(name="one")
    register(server, [allowed], LazyEngine([allowed]))
    async with Client(server, mode="legacy") as c:
        listed = [str(r.uri) for r in (await c.list_resources()).resources]
        listed += [t.uri_template for t in (await c.list_resource_templates()).resource_templates]
    assert len(listed) == 1
