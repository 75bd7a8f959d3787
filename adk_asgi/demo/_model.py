"""``DemoModel``: a scripted, offline ``BaseLlm`` that streams like Gemini."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator

from google.adk.models import BaseLlm, LlmCapabilities, LlmRequest, LlmResponse
from google.genai import types
from pydantic import Field

from ._live import DemoLiveConnection
from ._rules import ERROR_CODE, MODEL_NAME, DemoModelError, plan_reply, usage_for


class DemoModel(BaseLlm):
    """Deterministic rule-based model; needs no network and no API key.

    Pass an instance as ``LlmAgent(model=DemoModel())``. The rules are described
    in the package documentation (``adk_asgi.demo``).
    """

    model: str = MODEL_NAME
    token_delay: float = Field(default=0.0, ge=0.0)
    """Seconds to wait before each streamed token (0 still yields to the loop)."""
    voice_transcript: str = "What's the weather in Tokyo?"
    """What the live connection "hears" in any audio turn."""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [rf"{MODEL_NAME}(?:-.*)?"]

    @property
    def capabilities(self) -> LlmCapabilities:
        # Declared so ADK never falls back to its deprecated name-based guess.
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        reply = plan_reply(llm_request.contents)
        if reply.error is not None:
            yield LlmResponse(
                error_code=ERROR_CODE,
                error_message=reply.error,
                usage_metadata=usage_for(llm_request.contents, reply),
                model_version=self.model,
            )
            return
        text_part = types.Part(text=reply.text) if reply.text else None
        call_parts = [types.Part(function_call=call) for call in reply.calls]
        if stream:
            streamed = 0
            chunks = [(t, True) for t in reply.thought_tokens]
            chunks += [(t, False) for t in reply.text_tokens]
            for token, thought in chunks:
                if reply.raise_after is not None and streamed >= reply.raise_after:
                    break
                # Always suspend: ADK queues partial events without waiting for
                # the consumer, so a model that never awaits arrives in one burst.
                await asyncio.sleep(self.token_delay)
                part = types.Part(text=token, thought=True) if thought else types.Part(text=token)
                yield LlmResponse(
                    content=types.Content(role="model", parts=[part]),
                    partial=True,
                    model_version=self.model,
                )
                streamed += 1
            if reply.raise_after is None and call_parts:
                # Gemini also surfaces the calls in a partial chunk. Sharing the
                # Part objects with the aggregate keeps the ids ADK assigns equal.
                yield LlmResponse(
                    content=types.Content(role="model", parts=list(call_parts)),
                    partial=True,
                    model_version=self.model,
                )
        if reply.raise_after is not None:
            raise DemoModelError('The demo model raised on purpose ("please raise").')
        parts: list[types.Part] = []
        if reply.thought:
            parts.append(types.Part(text=reply.thought, thought=True))
        if text_part is not None:
            parts.append(text_part)
        parts += call_parts
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            partial=False,
            finish_reason=types.FinishReason.STOP,
            usage_metadata=usage_for(llm_request.contents, reply),
            model_version=self.model,
        )

    @contextlib.asynccontextmanager
    async def connect(self, llm_request: LlmRequest) -> AsyncIterator[DemoLiveConnection]:
        connection = DemoLiveConnection(
            llm_request,
            model_version=self.model,
            token_delay=self.token_delay,
            voice_transcript=self.voice_transcript,
        )
        try:
            yield connection
        finally:
            await connection.close()
