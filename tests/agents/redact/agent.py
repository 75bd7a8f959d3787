"""A guardrail that rewrites only the complete response, the usual way: an
``after_model_callback`` (or a plugin's) that returns None for partials and edits the final
``LlmResponse``. The model streams ``SAID`` word by word; the callback stores ``REDACTED``.

    guarded (LlmAgent)        after_model_callback=redact (signed=True: sign, which appends)
    app (App)                 an unguarded agent with ``RedactPlugin``

Whatever the page showed live must be what a reload shows: never the redacted word
(tests/clients/test_rewritten_answers.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App
from google.adk.models import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from ..team.scripted import Reply, ScriptedModel, latest

__all__ = (
    "REDACTED",
    "SAID",
    "SECRET_WORD",
    "SIGNED",
    "app",
    "build_root_agent",
    "root_agent",
)

SECRET_WORD: Final = "swordfish"
SAID: Final = f"hello the password is {SECRET_WORD} ok"
REDACTED: Final = "hello the password is [REDACTED] ok"
SIGNED: Final = f"{SAID} (checked)"


def redact(callback_context: CallbackContext, llm_response: LlmResponse) -> LlmResponse | None:
    if llm_response.partial or llm_response.content is None:
        return None
    parts = [
        types.Part(text=p.text.replace(SECRET_WORD, "[REDACTED]")) if p.text else p
        for p in llm_response.content.parts or ()
    ]
    return llm_response.model_copy(update={"content": types.Content(role="model", parts=parts)})


def sign(callback_context: CallbackContext, llm_response: LlmResponse) -> LlmResponse | None:
    """A rewrite that only goes on: the final text is the streamed text and more."""
    if llm_response.partial or llm_response.content is None:
        return None
    parts = [types.Part(text=SIGNED) if p.text else p for p in llm_response.content.parts or ()]
    return llm_response.model_copy(update={"content": types.Content(role="model", parts=parts)})


class RedactPlugin(BasePlugin):
    def __init__(self) -> None:
        super().__init__(name="redact")

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        return redact(callback_context, llm_response)


def speaker(contents: Sequence[types.Content]) -> Reply | None:
    return Reply(text=SAID) if latest(contents) is not None else None


def build_root_agent(*, guarded: bool = True, signed: bool = False) -> LlmAgent:
    return LlmAgent(
        name="guarded" if guarded else "speaker",
        model=ScriptedModel(planner=speaker),
        instruction="Say it.",
        after_model_callback=sign if signed else redact if guarded else None,
    )


root_agent = build_root_agent()
app = App(name="redacting", root_agent=build_root_agent(guarded=False), plugins=[RedactPlugin()])
