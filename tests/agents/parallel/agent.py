"""A research pipeline as ADK's docs build one: two researchers that stream at the same
time, then a writer that merges their notes.

    pipeline (SequentialAgent)
      +-- research (ParallelAgent)
      |     +-- historian (LlmAgent, output_key "history_notes")
      |     +-- futurist  (LlmAgent, output_key "future_notes")
      +-- writer (LlmAgent): "Merge {history_notes} and {future_notes}."

The researchers answer word by word with a delay, so their partial events interleave in
the run (ADK merges the branches as they produce). ``GEMINI_SCRIPT`` answers the same on
ADK's real ``Gemini`` against the Gemini API emulator (each agent named by its
instruction).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Final

from google.adk.agents import LlmAgent, ParallelAgent, SequentialAgent
from google.adk.models import BaseLlm
from google.genai import types

from adk_asgi.testing.gemini import Reply as EmulatedReply
from adk_asgi.testing.gemini import Request, Script

from ..team.scripted import Planner, Reply, ScriptedModel

__all__ = (
    "FUTURE",
    "GEMINI_SCRIPT",
    "HISTORY",
    "MERGED",
    "WRITTEN",
    "build_root_agent",
    "root_agent",
)

HISTORY: Final = "Ships were built of oak and tar for a thousand years before steel came."
FUTURE: Final = "Hulls will be printed from recycled carbon and sail on wind and sun."
MERGED: Final = "From oak to carbon: the notes agree that ships follow their materials."
_INSTRUCTIONS: Final = {
    "historian": "Research the history of the topic in one sentence.",
    "futurist": "Research the future of the topic in one sentence.",
    "writer": "Merge {history_notes} and {future_notes} into one sentence.",
}
_ANSWERS: Final = {"historian": HISTORY, "futurist": FUTURE, "writer": MERGED}
WRITTEN: list[str] = []
"""One entry per answer the writer wrote (tests check that a stopped turn never got to it)."""


def _says(text: str) -> Planner:
    def planner(contents: Sequence[types.Content]) -> Reply:
        if text == MERGED:
            WRITTEN.append(text)
        return Reply(text=text)

    return planner


def build_root_agent(delay: float = 0.004, *, model: BaseLlm | None = None) -> SequentialAgent:
    """The pipeline on scripted models (``delay`` seconds per word; the futurist a little
    slower, so the two interleave), or every agent on ``model``."""

    def llm(name: str, pace: float) -> BaseLlm:
        if model is not None:
            return model
        return ScriptedModel(planner=_says(_ANSWERS[name]), delay=pace)

    historian = LlmAgent(
        name="historian",
        model=llm("historian", delay),
        instruction=_INSTRUCTIONS["historian"],
        output_key="history_notes",
    )
    futurist = LlmAgent(
        name="futurist",
        model=llm("futurist", delay * 1.3),
        instruction=_INSTRUCTIONS["futurist"],
        output_key="future_notes",
    )
    writer = LlmAgent(
        name="writer", model=llm("writer", delay), instruction=_INSTRUCTIONS["writer"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ADK 2 prefers Workflows
        research = ParallelAgent(name="research", sub_agents=[historian, futurist])
        return SequentialAgent(name="pipeline", sub_agents=[research, writer])


def _agent_of(request: Request) -> str:
    for name, instruction in _INSTRUCTIONS.items():
        if instruction.split("{", 1)[0] in request.system_instruction:
            return name
    return "writer"


GEMINI_SCRIPT: Final = Script(fallback=lambda request: EmulatedReply(_ANSWERS[_agent_of(request)]))
"""The pipeline's answers on the Gemini API emulator: ``GeminiEmulator(GEMINI_SCRIPT)``."""

root_agent = build_root_agent()
