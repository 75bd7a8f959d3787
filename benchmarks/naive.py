"""The naive AI SDK bridge: the floor every feature of adk-asgi is measured against.

The minimal correct bridge, written as plainly as a newcomer would: one Starlette
route, ``Runner.run_async`` on a plain ``Runner`` (in-memory sessions, SSE streaming
mode), ``json.dumps`` of each UI chunk, a ``StreamingResponse``. No resume, no locks,
no pings, no error handling beyond what Starlette does, no tools in the stream (the
model's text only). ``python -m benchmarks.serve adk-naive`` serves it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

from google.adk.agents import RunConfig
from google.adk.agents.run_config import StreamingMode
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from adk_asgi.demo import build_demo_agent

from .emulator import bench_model

APP_NAME = "naive"
USER = "anonymous"
HEADERS = {"x-vercel-ai-ui-message-stream": "v1", "cache-control": "no-cache"}


def build_naive_app(token_delay: float = 0.0) -> Starlette:
    runner = Runner(
        agent=build_demo_agent(model=bench_model(), token_delay=token_delay),
        app_name=APP_NAME,
        session_service=InMemorySessionService(),
    )
    config = RunConfig(streaming_mode=StreamingMode.SSE)

    async def chat(request: Request) -> StreamingResponse:
        body = await request.json()
        chat_id = body["id"]
        text = "".join(
            p.get("text", "") for p in body["messages"][-1]["parts"] if p.get("type") == "text"
        )
        sessions = runner.session_service
        if await sessions.get_session(app_name=APP_NAME, user_id=USER, session_id=chat_id) is None:
            await sessions.create_session(app_name=APP_NAME, user_id=USER, session_id=chat_id)
        message = types.Content(role="user", parts=[types.Part(text=text)])
        return StreamingResponse(
            stream(chat_id, message), media_type="text/event-stream", headers=HEADERS
        )

    async def stream(chat_id: str, message: types.Content) -> AsyncIterator[str]:
        def sse(chunk: dict[str, str]) -> str:
            return f"data: {json.dumps(chunk)}\n\n"

        yield sse({"type": "start", "messageId": f"msg-{uuid.uuid4().hex}"})
        yield sse({"type": "start-step"})
        text_open = False
        async for event in runner.run_async(
            user_id=USER, session_id=chat_id, new_message=message, run_config=config
        ):
            if not event.partial or event.content is None:
                continue  # the final event repeats the streamed text
            for part in event.content.parts or ():
                if part.text and not part.thought:
                    if not text_open:
                        text_open = True
                        yield sse({"type": "text-start", "id": "t0"})
                    yield sse({"type": "text-delta", "id": "t0", "delta": part.text})
        if text_open:
            yield sse({"type": "text-end", "id": "t0"})
        yield sse({"type": "finish-step"})
        yield sse({"type": "finish"})
        yield "data: [DONE]\n\n"

    return Starlette(routes=[Route("/api/chat", chat, methods=["POST"])])
