"""The naive AI SDK bridge: the floor every feature of adk-asgi is measured against.

The minimal correct bridge, written as plainly as a newcomer would: one Starlette
route, ``Runner.run_async`` on a plain ``Runner`` (in-memory sessions, SSE streaming
mode), ``json.dumps`` of each UI chunk, a ``StreamingResponse``. No resume, no locks,
no pings, no error handling beyond what Starlette does, no tools in the stream (the
model's text only). ``python -m benchmarks.serve adk-naive`` serves it;
``build_naive_live_app`` is the same bridge over WebSocket (``adk-naive-live``).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

from google.adk.agents import RunConfig
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.agents.run_config import StreamingMode
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from adk_asgi.demo import build_demo_agent

from .emulator import bench_model

APP_NAME = "naive"
USER = "anonymous"
HEADERS = {"x-vercel-ai-ui-message-stream": "v1", "cache-control": "no-cache"}


def sse(chunk: dict[str, str]) -> str:
    """One UI chunk as an SSE event (also the text of a live protocol A frame)."""
    return f"data: {json.dumps(chunk)}\n\n"


def streamed_text(event: Event) -> list[str]:
    """The model's text a partial event streams (the final event repeats it: none)."""
    if not event.partial or event.content is None:
        return []
    return [p.text for p in event.content.parts or () if p.text and not p.thought]


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
        yield sse({"type": "start", "messageId": f"msg-{uuid.uuid4().hex}"})
        yield sse({"type": "start-step"})
        text_open = False
        async for event in runner.run_async(
            user_id=USER, session_id=chat_id, new_message=message, run_config=config
        ):
            for text in streamed_text(event):
                if not text_open:
                    text_open = True
                    yield sse({"type": "text-start", "id": "t0"})
                yield sse({"type": "text-delta", "id": "t0", "delta": text})
        if text_open:
            yield sse({"type": "text-end", "id": "t0"})
        yield sse({"type": "finish-step"})
        yield sse({"type": "finish"})
        yield "data: [DONE]\n\n"

    return Starlette(routes=[Route("/api/chat", chat, methods=["POST"])])


def build_naive_live_app(token_delay: float = 0.0) -> Starlette:
    """The naive bridge over WebSocket (live protocol A), the floor of the live rows: one
    Starlette route, one ``Runner.run_live`` per connection on a plain ``Runner`` (TEXT
    replies), the page's messages put into its ``LiveRequestQueue`` by a second task, each
    UI chunk ``json.dumps``-ed into a text frame ``data: {json}\\n\\n`` and ``data:
    [DONE]\\n\\n`` after each turn, as ADK's docs pair the two tasks. No resume, no locks,
    no limits, no error frames, the model's text only. ``python -m benchmarks.serve
    adk-naive-live`` serves it."""
    runner = Runner(
        agent=build_demo_agent(model=bench_model(), token_delay=token_delay),
        app_name=APP_NAME,
        session_service=InMemorySessionService(),
    )
    config = RunConfig(response_modalities=[types.Modality.TEXT])

    async def chat(socket: WebSocket) -> None:
        await socket.accept()
        chat_id = socket.query_params["chatId"]
        sessions = runner.session_service
        if await sessions.get_session(app_name=APP_NAME, user_id=USER, session_id=chat_id) is None:
            await sessions.create_session(app_name=APP_NAME, user_id=USER, session_id=chat_id)
        queue = LiveRequestQueue()

        async def upstream() -> None:
            while True:
                frame = await socket.receive_json()
                if frame.get("type") != "message":
                    continue  # pings, interrupts: not served by the naive bridge
                # The npm client puts the messages under `data`, the benchmark on top.
                messages = (frame.get("data") or frame)["messages"]
                text = "".join(
                    p.get("text", "") for p in messages[-1]["parts"] if p.get("type") == "text"
                )
                queue.send_content(types.Content(role="user", parts=[types.Part(text=text)]))

        async def downstream() -> None:
            async def send(chunk: dict[str, str]) -> None:
                await socket.send_text(sse(chunk))

            started = text_open = False
            async for event in runner.run_live(
                user_id=USER, session_id=chat_id, live_request_queue=queue, run_config=config
            ):
                if not started:
                    started = True
                    await send({"type": "start", "messageId": f"msg-{uuid.uuid4().hex}"})
                    await send({"type": "start-step"})
                for text in streamed_text(event):
                    if not text_open:
                        text_open = True
                        await send({"type": "text-start", "id": "t0"})
                    await send({"type": "text-delta", "id": "t0", "delta": text})
                if event.turn_complete and started:
                    if text_open:
                        await send({"type": "text-end", "id": "t0"})
                    await send({"type": "finish-step"})
                    await send({"type": "finish"})
                    await socket.send_text("data: [DONE]\n\n")
                    started = text_open = False

        tasks = {asyncio.create_task(upstream()), asyncio.create_task(downstream())}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            queue.close()

    return Starlette(routes=[WebSocketRoute("/api/chat", chat)])
