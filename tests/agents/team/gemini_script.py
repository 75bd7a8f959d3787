"""The Gemini API emulator's script for the team app: each agent answers as its scripted
model does (the planners of ``agent.py``), so the team runs on ADK's real ``Gemini``.

The emulator sees one request at a time, not which agent sent it; a request names its
agent by the tools it declares (``billing`` declares ``refund``, ``travel`` declares
``book_trip``, the ``concierge`` declares ``recall``, the ``researcher`` none). One rule per
agent for its text turns and one for the turn after its function results
(`Rule.tool_result`): both ask that agent's planner, and the planner's reply (text,
thoughts, calls such as ``transfer_to_agent``, an API error, a failure mid-stream) becomes
the emulator's `Reply`.

    with GeminiEmulator(TEAM_SCRIPT) as emulator:
        app = build_app(model=emulator.gemini("gemini-2.5-flash"))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from google.genai import types

from adk_asgi.testing.gemini import Reply, Request, Rule, Script

from . import agent, scripted

__all__ = ("TEAM_SCRIPT", "agent_of")

Planner = Callable[[Sequence[types.Content]], scripted.Reply | None]

_PLANNERS: Final[dict[str, Planner]] = {
    "billing": agent.billing,
    "travel": agent.travel,
    "concierge": agent.concierge,
    "researcher": agent.researcher,
}
_NAMED_BY: Final = (("refund", "billing"), ("book_trip", "travel"), ("recall", "concierge"))


def agent_of(request: Request) -> str:
    """Which team agent asks, by the tools it declares."""
    for tool, name in _NAMED_BY:
        if tool in request.function_names:
            return name
    return "researcher"


def _emulated(reply: scripted.Reply) -> Reply:
    """The scripted model's reply as the emulator's."""
    if reply.error is not None:
        code = 429 if reply.error[0] == "RESOURCE_EXHAUSTED" else 500
        return Reply.fail(code, reply.error[1])
    if reply.raise_after is not None:
        return Reply(
            text=reply.text,
            fail_after=reply.raise_after,
            error=Reply.fail(500, reply.raise_text).error,
        )
    return Reply(text=reply.text, thought=reply.thought, calls=tuple(reply.function_calls()))


def _answer_as(name: str) -> Callable[[Request], Reply]:
    planner = _PLANNERS[name]

    def answer(request: Request) -> Reply:
        return _emulated(planner(request.contents) or scripted.Reply())

    return answer


def _is(name: str) -> Callable[[Request], bool]:
    return lambda request: agent_of(request) == name


TEAM_SCRIPT: Final = Script(
    *(
        rule
        for name in _PLANNERS
        for rule in (
            Rule(_is(name), _answer_as(name)),
            Rule.tool_result(_is(name), _answer_as(name)),
        )
    ),
    fallback=Reply("The team script has no answer."),
)
"""The team's replies: ``GeminiEmulator(TEAM_SCRIPT)``."""
