"""An ADK 2 ``Workflow`` that fans out to two LLM nodes and joins them.

    START -> (pros, cons) -> join (JoinNode) -> verdict

``pros`` and ``cons`` are ``LlmAgent`` nodes that stream at the same time (word by word,
the second a little slower); the ``JoinNode`` outputs both answers as a dict
(``{"pros": ..., "cons": ...}``); ``verdict``, a function node, weighs them into a string.
``GEMINI_SCRIPT`` answers the same on ADK's real ``Gemini`` against the Gemini API
emulator (each node named by its instruction).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.workflow import JoinNode, Workflow
from google.genai import types

from adk_asgi.testing.gemini import Reply as EmulatedReply
from adk_asgi.testing.gemini import Request, Script

from ..team.scripted import Planner, Reply, ScriptedModel

__all__ = ("CONS", "GEMINI_SCRIPT", "PROS", "build_workflow", "root_agent", "verdict")

PROS: Final = "Trains are quiet, punctual and let you read all the way."
CONS: Final = "Tickets cost more and the last train leaves far too early."
_INSTRUCTIONS: Final = {
    "pros": "List the advantages in one sentence.",
    "cons": "List the drawbacks in one sentence.",
}
_ANSWERS: Final = {"pros": PROS, "cons": CONS}


def verdict(node_input: dict[str, Any]) -> str:
    """Weigh the two answers (the JoinNode's output: one entry per branch)."""
    pros, cons = len(str(node_input["pros"]).split()), len(str(node_input["cons"]).split())
    return f"Verdict: {pros} words for, {cons} against. Take the train."


def _says(text: str) -> Planner:
    def planner(contents: Sequence[types.Content]) -> Reply:
        return Reply(text=text)

    return planner


def build_workflow(delay: float = 0.004, *, model: BaseLlm | None = None) -> Workflow:
    def llm(name: str, pace: float) -> BaseLlm:
        return (
            model if model is not None else ScriptedModel(planner=_says(_ANSWERS[name]), delay=pace)
        )

    pros = LlmAgent(name="pros", model=llm("pros", delay), instruction=_INSTRUCTIONS["pros"])
    cons = LlmAgent(name="cons", model=llm("cons", delay * 1.3), instruction=_INSTRUCTIONS["cons"])
    return Workflow(name="fanout", edges=[("START", (pros, cons), JoinNode(name="join"), verdict)])


def _node_of(request: Request) -> str:
    return next(
        (name for name, text in _INSTRUCTIONS.items() if text in request.system_instruction), "pros"
    )


GEMINI_SCRIPT: Final = Script(fallback=lambda request: EmulatedReply(_ANSWERS[_node_of(request)]))
"""The two nodes' answers on the Gemini API emulator: ``GeminiEmulator(GEMINI_SCRIPT)``."""

root_agent = build_workflow()
