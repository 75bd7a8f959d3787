"""Pay ADK's lazy imports at start-up: the first ``run_async`` in a process costs
~300 ms of imports inside the flow. A throwaway in-memory runner with a one-word
model runs one turn, so the user's model (maybe a paid one) is never called."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent, RunConfig
from google.adk.agents.run_config import StreamingMode
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

__all__ = ("warm_up",)


class _WarmupLlm(BaseLlm):
    model: str = "adk-asgi-warmup"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        content = types.Content(role="model", parts=[types.Part(text="ok")])
        if stream:
            yield LlmResponse(content=content, partial=True)
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1, candidates_token_count=1, total_token_count=2
        )
        yield LlmResponse(
            content=content,
            partial=False,
            usage_metadata=usage,
            finish_reason=types.FinishReason.STOP,
        )


async def warm_up() -> None:
    runner = Runner(
        agent=LlmAgent(name="warmup", model=_WarmupLlm()),
        app_name="adk_asgi_warmup",
        session_service=InMemorySessionService(),
        auto_create_session=True,
    )
    try:
        async for _ in runner.run_async(
            user_id="warmup",
            session_id="warmup",
            new_message=types.Content(role="user", parts=[types.Part(text="hi")]),
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        ):
            pass
    finally:
        await runner.close()
