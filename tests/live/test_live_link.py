"""The run's model link at a reconnect (``adk_asgi/live/run/link.py``), without a model: a
request ADK's sender took and had not sent when it was cancelled goes to the next
connection, first; one the old connection had is not sent twice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from google.adk.agents.live_request_queue import LiveRequest
from google.adk.models import LlmResponse
from google.adk.models.base_llm_connection import BaseLlmConnection
from google.genai import types

from adk_asgi.live.run.input import LiveInput
from adk_asgi.live.run.link import Link, LinkedConnection


class Model(BaseLlmConnection):
    """A model connection that keeps what it was sent."""

    def __init__(self) -> None:
        self.sent: list[object] = []

    async def send_history(self, history: list[types.Content]) -> None:
        self.sent.extend(history)

    async def send_content(self, content: types.Content) -> None:
        self.sent.append(content)

    async def _send_content(self, content: types.Content, partial: bool = False) -> None:
        self.sent.append(content)

    async def send_realtime(self, blob: types.Blob) -> None:
        self.sent.append(blob)

    async def receive(self) -> AsyncGenerator[LlmResponse, None]:
        await asyncio.Event().wait()
        yield LlmResponse()

    async def close(self) -> None:
        pass


async def send_to_model(input: LiveInput, connection: BaseLlmConnection) -> None:
    """ADK's sender, in short (``google.adk.live._live_llm_flow.send_to_model``): it takes a
    request, yields to the loop, then sends it."""
    while True:
        request: LiveRequest = await input.queue.get()
        await asyncio.sleep(0)
        if request.activity_start:
            await connection.send_realtime(types.ActivityStart())  # type: ignore[arg-type]
        elif request.blob:
            await connection.send_realtime(request.blob)


async def first_connection() -> tuple[LiveInput, Link, Model, asyncio.Task[None]]:
    """A push-to-talk run's input, its link, its first model connection and ADK's sender
    reading the input for it."""
    input = LiveInput("user", manual_activity=True)
    link = Link(queue=input.queue)
    first = Model()
    await LinkedConnection(first, link).resume(None)
    sender = asyncio.create_task(send_to_model(input, LinkedConnection(first, link)))
    return input, link, first, sender


async def reconnect(input: LiveInput, link: Link, sender: asyncio.Task[None]) -> Model:
    """What ADK does on a goAway: cancel the sender, connect again with the handle."""
    sender.cancel()
    await asyncio.gather(sender, return_exceptions=True)
    model = Model()
    await LinkedConnection(model, link).resume("handle")
    return model


async def test_a_request_the_cancelled_sender_held_goes_to_the_next_connection() -> None:
    input, link, first, sender = await first_connection()
    await asyncio.sleep(0)  # the sender waits for the page's input
    input.microphone("start")
    input.realtime("audio/pcm;rate=16000", b"\0\0")
    await asyncio.sleep(0)  # it took the activity start, and yields before sending it
    second = await reconnect(input, link, sender)
    assert first.sent == []
    sender = asyncio.create_task(send_to_model(input, LinkedConnection(second, link)))
    for _ in range(10):
        await asyncio.sleep(0)
    sender.cancel()
    assert [type(s) for s in second.sent] == [types.ActivityStart, types.Blob]


async def test_what_the_old_connection_had_is_not_sent_again() -> None:
    input, link, first, sender = await first_connection()
    input.microphone("start")
    for _ in range(5):
        await asyncio.sleep(0)  # sent: the sender waits for the next request
    second = await reconnect(input, link, sender)
    sender = asyncio.create_task(send_to_model(input, LinkedConnection(second, link)))
    for _ in range(5):
        await asyncio.sleep(0)
    sender.cancel()
    assert [type(s) for s in first.sent] == [types.ActivityStart]
    assert second.sent == []
