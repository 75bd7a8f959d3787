"""An agent whose answers are big: a search tool returning 5 MiB of rows, and a reply of
200,000 characters.

    librarian (LlmAgent)   "search ..." -> search_archive (a dict of rows, RESULT_BYTES of
                           JSON), then a short answer about it; "recite ..." -> LONG_TEXT,
                           streamed in tokens of 1,000 characters.

What search, RAG and database tools return routinely; the transports must carry it whole to
a client that reads (tests/clients/test_big_answers.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from google.adk.agents import LlmAgent
from google.genai import types

from ..team.scripted import Reply, ScriptedModel, latest

__all__ = ("LONG_TEXT", "RESULT_BYTES", "ROW_COUNT", "build_root_agent", "root_agent", "rows")

ROW_COUNT: Final = 5 * 1024
RESULT_BYTES: Final = 5 * 1024 * 1024
_ROW_TEXT: Final = 1000  # characters of text per row: ~1 KiB of JSON each
# 200 words of 1,000 characters and a space between (the scripted model streams a word per chunk).
LONG_TEXT: Final = " ".join(f"{i:04d}" + "x" * 996 for i in range(200))


def rows() -> list[dict[str, Any]]:
    """What the search returns: ROW_COUNT rows, each with a distinct text."""
    return [{"id": i, "text": f"{i:06d}" + "r" * (_ROW_TEXT - 6)} for i in range(ROW_COUNT)]


def search_archive(query: str) -> dict[str, Any]:
    """Search the archive: every matching row."""
    return {"query": query, "rows": rows()}


def librarian(contents: Sequence[types.Content]) -> Reply | None:
    said = latest(contents)
    if said is None:
        return None
    if said.responses:
        found = said.responses[0].response or {}
        return Reply(text=f"Found {len(found.get('rows', []))} rows.")
    text = (said.text or "").lower()
    if "search" in text:
        return Reply(calls=(("search_archive", {"query": text}),))
    if "recite" in text:
        return Reply(text=LONG_TEXT)
    return Reply(text=f"You said: {said.text}")


def build_root_agent(delay: float = 0.0) -> LlmAgent:
    return LlmAgent(
        name="librarian",
        model=ScriptedModel(planner=librarian, delay=delay),
        instruction="Answer from the archive.",
        tools=[search_archive],
    )


root_agent = build_root_agent()
