"""``preload_memory`` in live runs.

ADK runs its tools' request processing once per live run, when the model connection opens
and before any message has come: ADK's ``PreloadMemoryTool`` then has no user message to
search memory with, and preloads nothing. So for live runs adk-asgi runs the agent's own
``PreloadMemoryTool`` for each user message (ADK's memory search, ADK's wording) and sends
what the tool put into the request just before the message, as a *partial* content: the
model reads it in the same turn (the Live API's ``turnComplete: false``), and the session
does not keep it, as ``run_async`` keeps no preloaded memory either.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.tools import ToolContext
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.genai import types

from ...adk.sessions import failure

__all__ = ("LivePreload",)

logger = logging.getLogger("adk_asgi")


class LivePreload:
    """What an app's ``preload_memory`` tool adds to each live user message."""

    __slots__ = ("_runner", "_tool")

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._tool = _preload_tool(runner.agent) if runner.memory_service is not None else None

    @property
    def active(self) -> bool:
        """An agent of the app has ``preload_memory`` (and there is a memory service)."""
        return self._tool is not None

    async def contents(
        self, user_id: str, chat_id: str, message: types.Content
    ) -> list[types.Content]:
        """The contents to send before ``message`` (none when memory finds nothing)."""
        tool, runner = self._tool, self._runner
        if tool is None:
            return []
        # The tool reads the user's message and the memory service from its context, and
        # the user from the session: a context for this message, nothing else.
        context = InvocationContext(
            session_service=runner.session_service,
            memory_service=runner.memory_service,
            invocation_id=f"e-preload-{uuid.uuid4().hex[:12]}",
            agent=runner.agent,
            session=Session(id=chat_id, app_name=runner.app_name, user_id=user_id),
            user_content=message,
        )
        request = LlmRequest()
        try:
            await tool.process_llm_request(tool_context=ToolContext(context), llm_request=request)
        except Exception as exc:  # the message goes on without memory, as in ADK's tool
            logger.warning("preload_memory failed for chat %r: %s", chat_id, failure(exc))
            return []
        return list(request.contents)


def _preload_tool(root: object) -> PreloadMemoryTool | None:
    for agent in _agents(root):
        for tool in agent.tools:
            if isinstance(tool, PreloadMemoryTool):
                return tool
    return None


def _agents(root: object) -> Iterator[LlmAgent]:
    if isinstance(root, LlmAgent):
        yield root
    if isinstance(root, BaseAgent):
        for sub in root.sub_agents:
            yield from _agents(sub)
