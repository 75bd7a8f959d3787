"""The demo ``LlmAgent``."""

from __future__ import annotations

import re

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.genai import types

from ._model import DemoModel
from ._tools import frontend_tools, server_tools

INSTRUCTION = (
    "You are a friendly assistant in a chat demo. Use get_weather for weather questions, "
    "process_payment to send money (the user approves every payment), get_location for the "
    "user's location and change_bgm to change the background music. Keep answers short."
)


def build_demo_agent(*, model: str | BaseLlm | None = None, token_delay: float = 0.0) -> LlmAgent:
    """Build the demo agent.

    Args:
        model: None for the offline :class:`DemoModel`; a ``BaseLlm`` instance; or a
            model name. Names matching ``adk-asgi-demo*`` give a ``DemoModel``; any
            other name (e.g. ``"gemini-2.5-flash"``) is resolved by ADK and calls
            the real model, which needs credentials and network.
        token_delay: Seconds per streamed token of the ``DemoModel`` built here
            (ignored when ``model`` is a ``BaseLlm`` instance or a real model name).

    On any other model the agent asks for the model's thoughts (``include_thoughts``), so
    "think about ..." shows a reasoning part as it does with the ``DemoModel``.
    """
    llm: str | BaseLlm
    if model is None:
        llm = DemoModel(token_delay=token_delay)
    elif isinstance(model, str) and any(
        re.fullmatch(pattern, model) for pattern in DemoModel.supported_models()
    ):
        llm = DemoModel(model=model, token_delay=token_delay)
    else:
        llm = model
    config = None
    if not isinstance(llm, DemoModel):
        # Gemini sends thought parts only when asked to.
        config = types.GenerateContentConfig(
            thinking_config=types.ThinkingConfig(include_thoughts=True)
        )
    return LlmAgent(
        name="assistant",
        model=llm,
        instruction=INSTRUCTION,
        tools=[*server_tools(), *frontend_tools()],
        generate_content_config=config,
    )
