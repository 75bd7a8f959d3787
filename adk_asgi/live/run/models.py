"""The models of live runs: ``LiveModel`` (the model an agent talks to on a live
connection, its connections linked by ``link.py``) and the live runner, a copy of the app's
runner whose agents use them.

Live runs need a model of their own: the Live API serves its own models
(``gemini-2.5-flash-native-audio-latest``, ...) and refuses text models, and the text
runs keep theirs. ``LiveOptions.model`` names it for every agent; without it each agent
keeps its own model. Either way the model is wrapped in a ``LiveModel``, so its connections
resume as one conversation.
"""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Final

from google.adk.agents import BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from google.adk.models import BaseLlm, Gemini, LlmCapabilities, LlmRequest, LlmResponse
from google.adk.models.base_llm_connection import BaseLlmConnection
from google.adk.models.registry import LLMRegistry
from google.adk.runners import Runner

from .link import CURRENT_LINK, Link, LinkedConnection

__all__ = (
    "DEFAULT_GEMINI_LIVE_MODEL",
    "LiveModel",
    "audio_only",
    "converses_live",
    "first_model_name",
    "live_runner",
)

DEFAULT_GEMINI_LIVE_MODEL: Final = "gemini-2.5-flash-native-audio-latest"
"""The Live API model ``adk-asgi serve`` uses when the demo runs on Gemini."""

# Native-audio and Gemini 3 Live models answer only with audio: "TEXT" as the response
# modality closes the connection with 1007 (googleapis/python-genai#1780,
# pydantic/pydantic-ai#7269).
_AUDIO_ONLY: Final = re.compile(r"native-audio|gemini-3", re.IGNORECASE)


def audio_only(model: str) -> bool:
    """Whether the Live model answers only with audio (text comes as its transcript)."""
    return bool(_AUDIO_ONLY.search(model))


class LiveModel(BaseLlm):
    """A model as live runs use it: ``inner`` connects (with this model's name), and
    its connections are linked (``link.py``). Text generation is the inner model's."""

    inner: BaseLlm

    @property
    def capabilities(self) -> LlmCapabilities:
        return self.inner.capabilities

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        async for response in self.inner.generate_content_async(llm_request, stream):
            yield response

    @contextlib.asynccontextmanager
    async def connect(self, llm_request: LlmRequest) -> AsyncIterator[BaseLlmConnection]:
        llm_request.model = self.model  # Gemini connects with the request's model name
        link = CURRENT_LINK.get() or Link()
        resumption = llm_request.live_connect_config.session_resumption
        link.resuming = resumption is not None
        async with self.inner.connect(llm_request) as connection:
            linked = LinkedConnection(connection, link)
            await linked.resume(resumption.handle if resumption is not None else None)
            yield linked


def live_runner(runner: Runner, model: str | BaseLlm | None) -> Runner:
    """``runner`` for live runs: the same services, plugins and app, with a copy of its
    agents whose models are ``LiveModel``s (``model`` for every agent, else their own)."""
    root = runner.agent
    if not isinstance(root, BaseAgent) or not converses_live(root):
        return runner  # served turn by turn (run.py), on the app's own models
    tree = root.clone()
    # Resolve every model before replacing any: an agent without a model of its own
    # inherits its parent's.
    models = [
        (agent, _live_model(agent, model)) for agent in _agents(tree) if isinstance(agent, LlmAgent)
    ]
    for agent, linked in models:
        agent.model = linked
    copied = copy.copy(runner)
    copied.agent = tree
    copied.app = runner.app.model_copy(update={"root_agent": tree})
    return copied


def converses_live(root: object) -> bool:
    """Whether ADK's ``run_live`` holds a conversation with ``root``: an agent does, but ADK
    runs a workflow (or another node that is not an agent) once per ``run_live``, without
    the user's message, and raises ``NotImplementedError`` for a ``ParallelAgent`` or a
    ``LoopAgent`` (also inside a ``SequentialAgent``). Those are served turn by turn
    instead (``run.py``)."""
    if isinstance(root, (ParallelAgent, LoopAgent)):
        return False
    if isinstance(root, SequentialAgent):
        return all(converses_live(sub) for sub in root.sub_agents)
    return isinstance(root, BaseAgent)


def first_model_name(agent: object) -> str:
    """The model name of the first LLM agent of the tree (the one that answers first)."""
    if not isinstance(agent, BaseAgent):
        return ""
    for each in _agents(agent):
        if isinstance(each, LlmAgent):
            model = each.model
            return model.model if isinstance(model, BaseLlm) else str(model)
    return ""


def _agents(agent: BaseAgent) -> Iterator[BaseAgent]:
    yield agent
    for sub in agent.sub_agents:
        yield from _agents(sub)


def _live_model(agent: LlmAgent, model: str | BaseLlm | None) -> LiveModel:
    own = agent.canonical_live_model
    if isinstance(model, BaseLlm):
        return LiveModel(model=model.model, inner=model)
    if model is None:
        return LiveModel(model=own.model, inner=own)
    # A name: a Gemini agent keeps its client (key, base URL) and connects with the
    # name; any other model is replaced by what the name resolves to.
    inner = own if isinstance(own, Gemini) else LLMRegistry.new_llm(model)
    return LiveModel(model=model, inner=inner)
