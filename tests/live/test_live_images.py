"""Live images with the offline demo agent (its scripted live model), over a real uvicorn:
frames sent as ``image_frame`` reach the model, which says what it has seen; frames are
context, never a turn. The same on ADK's real ``Gemini`` against the emulator, with the
limits and refusals: tests/gemini/test_gemini_live_images.py."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from typing import Final

import pytest
from google.adk.models import LlmRequest
from google.genai import types

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent
from adk_asgi.demo._live import DemoLiveConnection
from adk_asgi.demo._rules import plan_reply

from support import FIXTURES, LoopbackServer
from support.ws_client import DONE, LiveClient, kinds, text, ws_url

IMAGES: Final = FIXTURES / "images"
JPEG: Final = (IMAGES / "frame.jpg").read_bytes()
PNG: Final = (IMAGES / "frame.png").read_bytes()


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(AdkApp(build_demo_agent(), warm_up=False)) as running:
        yield running


async def test_the_demo_model_sees_the_frames(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url, "chatId=demo-frames"))
    try:
        await client.say("What do you see?")
        nothing = await client.turn()
        for image, mime in ((JPEG, "image/jpeg"), (PNG, "image/png")):
            await client.send("image_frame", mimeType=mime, chunk=base64.b64encode(image).decode())
        await client.send("ping", timestamp="frames")
        pong = json.loads(await client.ws.recv())  # no chunk: frames start no turn
        await client.say("what can you see now?")
        seen = await client.turn()
    finally:
        await client.close()
    assert text(nothing) == "I see nothing yet: turn on the camera or share your screen."
    assert pong == {"type": "pong", "version": "1.0", "timestamp": "frames"}
    assert kinds(seen)[-2:] == ["finish", DONE]
    assert text(seen) == f"I can see 2 image(s) so far; the newest is image/png, {len(PNG)} bytes."


def test_only_the_newest_frame_keeps_its_bytes() -> None:
    """A long camera session at 1 frame a second does not pile every frame up."""
    config = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
    connection = DemoLiveConnection(LlmRequest(live_connect_config=config), model_version="demo")

    async def send() -> None:
        for data in (JPEG, PNG, JPEG):
            mime = "image/png" if data is PNG else "image/jpeg"
            await connection.send_realtime(types.Blob(mime_type=mime, data=data))

    asyncio.run(send())
    frames = [c.parts[0].inline_data for c in connection.history if c.parts]
    assert [(f.mime_type, len(f.data or b"")) for f in frames if f] == [
        ("image/jpeg", 0),
        ("image/png", 0),
        ("image/jpeg", len(JPEG)),
    ]


def test_frames_are_context_and_attachments_are_seen_too() -> None:
    frame = types.Content(
        role="user", parts=[types.Part.from_bytes(data=JPEG, mime_type="image/jpeg")]
    )
    question = types.Content(role="user", parts=[types.Part(text="What do you see?")])
    # a frame that came after the question does not hide it
    assert plan_reply([question, frame]).text.startswith("I can see 1 image(s) so far")
    # a picture attached to a message (SSE) is seen as well
    attached = types.Content(
        role="user",
        parts=[
            types.Part(text="何が見えますか？"),
            types.Part.from_bytes(data=PNG, mime_type="image/png"),
        ],
    )
    assert plan_reply([attached]).text == (
        f"画像を1枚受け取りました。最新はimage/png（{len(PNG)}バイト）です。"
    )
    # frames alone are no question: the greeting
    assert plan_reply([frame]).text.startswith("Hello! I am the offline adk-asgi demo model.")
