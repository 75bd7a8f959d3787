"""An ADK app with memory tools, on a scripted model (offline).

    librarian (root)    load_memory (ADK's): searches the user's memory when asked to
                        "recall WORDS"
                        preload_memory (ADK's): puts what memory finds for each message
                        into the model's request (<PAST_CONVERSATIONS>)

"recall WORDS" calls ``load_memory(query=WORDS)`` and answers with what it returned;
"what do you know" answers with the preloaded past conversations; anything else is noted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.tools import load_memory, preload_memory
from google.genai import types
from pydantic_core import to_jsonable_python

from ..team.scripted import Reply, ScriptedModel, latest

__all__ = ("app", "build_app", "build_root_agent", "root_agent")

_PAST = re.compile(r"<PAST_CONVERSATIONS>\n(.*?)\n</PAST_CONVERSATIONS>", re.DOTALL)


def _texts(response: Any) -> list[str]:
    """The texts of load_memory's result, whatever shape ADK gave it (a pydantic object in
    the run, a dict once stored)."""
    found = json.dumps(to_jsonable_python(response))
    return sorted(set(re.findall(r'"text": "([^"]*)"', found)))


def _preloaded(content: types.Content) -> bool:
    return any(_PAST.search(p.text or "") for p in content.parts or ())


def librarian(contents: Sequence[types.Content]) -> Reply | None:
    # preload_memory's block is not something the user said.
    said = latest([c for c in contents if not _preloaded(c)])
    if said is None:
        return None
    if said.responses:
        texts = [t for r in said.responses for t in _texts(r.response)]
        return Reply(text="Memory says: " + (" | ".join(texts) or "nothing"))
    text = said.text or ""
    low = text.lower()
    if low.startswith("recall"):
        return Reply(calls=(("load_memory", {"query": text[6:].strip()}),))
    if "what do you know" in low:
        past = [
            m[1] for c in contents for p in c.parts or () if p.text and (m := _PAST.search(p.text))
        ]
        return Reply(text="Preloaded: " + (" | ".join(past).replace("\n", " | ") or "nothing"))
    return Reply(text=f"Noted: {text}")


def build_root_agent(delay: float = 0.0) -> LlmAgent:
    return LlmAgent(
        name="librarian",
        model=ScriptedModel(planner=librarian, delay=delay),
        description="Remembers what the user said in earlier chats.",
        instruction="Use memory to answer.",
        tools=[load_memory, preload_memory],
    )


def build_app(delay: float = 0.0) -> App:
    return App(
        name="memory",
        root_agent=build_root_agent(delay),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


root_agent = build_root_agent()
app = build_app()
