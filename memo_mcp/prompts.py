"""MCP prompts: ready workflows over memo's tools, each registered by its own function.

- `search_notes(question, path)`: search memo, read the hits, answer citing `path:line`.
- `topic_brief(topic, path)`: gather everything the notes say on a topic into a short brief
  with sources, contradictions and gaps.

The `path` argument is checked like a tool's path (it must lie inside the allowed roots, and
it is resolved in the folder's places, since that can hang on a dead drive) and written into
the prompt as an absolute path, so the model calls the tools with a path that means the same
thing wherever the server runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from pydantic import Field

from memo_core import MemoError, confine, for_terminal
from memo_text import Lang

from .places import FolderSlots, as_written

Roots = Sequence[Path]

PathArg = Annotated[
    str,
    Field(description="Folder of Markdown notes (or a folder of such folders), e.g. ~/notes"),
]


async def notes_folder(path: str, roots: Roots, places: FolderSlots, lang: Lang) -> str:
    """The absolute real path of `path`, when it is a folder inside the roots."""
    try:
        return str(await places.run(as_written(path), lambda: confine(path, list(roots))))
    except MemoError as e:
        raise MCPError(code=INVALID_PARAMS, message=for_terminal(lang.word(e))) from e


def required_text(name: str, value: str, lang: Lang) -> str:
    if not value.strip():
        raise MCPError(code=INVALID_PARAMS, message=lang.text("mcp.prompt_empty", name=name))
    return value.strip()


def search_notes_text(question: str, folder: str) -> str:
    return (
        f"Answer this question from my Markdown notes in {folder}:\n\n"
        f"{question}\n\n"
        "How:\n"
        f'1. Call memo_search with path "{folder}" and the question as the query. If the hits '
        "miss, search again with other words: synonyms, the key term alone, the other language "
        '(my notes are in Russian and English), or mode "lex" for exact names, commands and '
        "codes.\n"
        "2. Read the hits. Each starts with `path:line  heading` and is followed by the "
        "passage; when a passage is not enough, read more of that note: call memo_read "
        f'with path "{folder}" and the hit\'s `path:line` as the note (it shows the lines '
        "around it, numbered; from_line and to_line show other lines), or open the resource "
        "memo://note/<collection>/<path in it>.\n"
        "3. Answer briefly, only from what the notes say. After each statement cite where it "
        "comes from as `path:line`. If the notes do not answer the question, say so plainly "
        "and say what you searched for; do not fill the gap from general knowledge without "
        "saying that you do.\n"
        "Answer in the language of the question."
    )


def register_search_notes(
    server: MCPServer, roots: Roots, places: FolderSlots | None = None, lang: Lang = Lang.RU
) -> None:
    in_places = places or FolderSlots()

    @server.prompt(
        name="search_notes",
        title="Answer from my notes",
        description="Search the notes with memo, read the hits, answer citing path:line.",
    )
    async def search_notes(
        question: Annotated[str, Field(description="What you want to know")],
        path: PathArg,
    ) -> str:
        text = required_text("question", question, lang)
        return search_notes_text(text, await notes_folder(path, roots, in_places, lang))


def topic_brief_text(topic: str, folder: str) -> str:
    return (
        f"Collect everything my Markdown notes in {folder} say about: {topic}\n\n"
        "How:\n"
        f'1. Call memo_search with path "{folder}" several times, k=15: the topic itself, '
        "its synonyms and related terms, in Russian and in English, and the names, tools or "
        "places the first hits mention.\n"
        "2. Read the hits (where a passage is cut short, call memo_read with path "
        f'"{folder}" and the hit\'s `path:line` as the note) and drop the ones that are not '
        "about the topic.\n"
        "3. Write a brief: a one-paragraph summary, then the points grouped by sub-topic, each "
        "with its source as `path:line`. Then list what contradicts itself or looks out of "
        "date (say which notes disagree and their dates if they have them), and the open "
        "questions the notes leave unanswered.\n"
        "Use only what the notes say. Write in the language of the topic."
    )


def register_topic_brief(
    server: MCPServer, roots: Roots, places: FolderSlots | None = None, lang: Lang = Lang.RU
) -> None:
    in_places = places or FolderSlots()

    @server.prompt(
        name="topic_brief",
        title="Brief on a topic from my notes",
        description="Gather what the notes say on a topic: summary, sourced points, "
        "contradictions, gaps.",
    )
    async def topic_brief(
        topic: Annotated[str, Field(description="The topic, a few words")],
        path: PathArg,
    ) -> str:
        text = required_text("topic", topic, lang)
        return topic_brief_text(text, await notes_folder(path, roots, in_places, lang))


# The prompts whose `path` argument names a notes folder (completions offer collections).
PATH_PROMPTS = frozenset({"search_notes", "topic_brief"})

PROMPTS: tuple[Callable[[MCPServer, Roots, FolderSlots | None, Lang], None], ...] = (
    register_search_notes,
    register_topic_brief,
)


def register_prompts(
    server: MCPServer, roots: Roots, places: FolderSlots, lang: Lang = Lang.RU
) -> None:
    """Every prompt; the prompts themselves speak to the agent in English (it answers in
    the language of the question), their errors in `lang`."""
    for register in PROMPTS:
        register(server, roots, places, lang)
