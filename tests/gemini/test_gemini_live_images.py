"""Live images on the real model stack: the demo agent on ADK's ``Gemini`` class against
the emulator (which checks image input as the Live API does), over protocol A.

Camera and screen frames (``image_frame``) reach the Live API as image blobs with their own
mime type; what is not raw PCM on the audio path (a JPEG, a PNG, a WebM or Ogg stream, sent
as a binary frame or an ``audio_chunk``) is refused with an ``error`` frame before it
reaches the model, and the connection goes on. The limits (size, rate) are the Live API's
documented ones, tested here with a lower rate so that a burst is over it at any load.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest

from adk_asgi import AdkApp, Limits, LiveOptions
from adk_asgi.demo import build_demo_agent
from adk_asgi.live.run.models import DEFAULT_GEMINI_LIVE_MODEL
from adk_asgi.testing.gemini import GeminiEmulator, Record

from .live_helpers import chunks_of, connections_of, pick, tone
from support import LoopbackServer
from support.ws_client import DONE, LiveClient, kinds, text, ws_url

IMAGES: Final = Path(__file__).resolve().parent.parent / "fixtures" / "images"
JPEG: Final = (IMAGES / "frame.jpg").read_bytes()  # 96x64, an even byte count (PCM-sized)
PNG: Final = (IMAGES / "frame.png").read_bytes()
WEBM: Final = bytes.fromhex("1a45dfa3") + bytes(60)  # an EBML header's start (MediaRecorder)
OGG: Final = b"OggS" + bytes(60)  # an Ogg page (Opus from MediaRecorder on Firefox)
RATE: Final = 0.2  # images per second on this module's server: a burst of 3 is over it


@pytest.fixture(scope="module")
def server(gemini_emulator: GeminiEmulator) -> Iterator[LoopbackServer]:
    agent = build_demo_agent(model=gemini_emulator.gemini("gemini-2.5-flash"))
    app = AdkApp(
        agent,
        live_options=LiveOptions(model=DEFAULT_GEMINI_LIVE_MODEL),
        limits=Limits(images_per_second=RATE),
        warm_up=False,
    )
    with LoopbackServer(app) as running:
        yield running


async def _control(client: LiveClient, wait: float = 10.0) -> dict[str, Any]:
    """The next frame, which must be a JSON control frame (``error``, ``pong``), not a chunk."""
    raw = await asyncio.wait_for(client.ws.recv(), wait)
    assert isinstance(raw, str) and not raw.startswith("data:"), f"a chunk came: {raw!r}"
    frame: dict[str, Any] = json.loads(raw)
    return frame


async def _refusal(client: LiveClient) -> dict[str, Any]:
    """The next frame: an ``error`` frame with its stable code."""
    frame = await _control(client)
    assert frame["type"] == "error" and frame["version"] == "1.0", frame
    assert set(frame) == {"type", "version", "code", "message"}, frame
    return frame


def _realtime(emulator: GeminiEmulator, marker: str) -> list[dict[str, Any]]:
    connections = connections_of(emulator, marker)
    return [
        r.data for r in emulator.journal.records("realtimeInput") if r.connection in connections
    ]


def _blobs(realtime: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every blob the Live API received in ``realtimeInput`` (google-genai sends ADK's
    blobs as ``mediaChunks``; Gemini 3 models get ``audio`` / ``video``)."""
    out: list[dict[str, Any]] = []
    for data in realtime:
        for name in ("mediaChunks", "media_chunks"):
            out.extend(data.get(name) or [])
        for name in ("audio", "video"):
            if name in data:
                out.append(data[name])
    return out


def _closes(emulator: GeminiEmulator, marker: str) -> list[Record]:
    connections = connections_of(emulator, marker)
    return [r for r in emulator.journal.records("close") if r.connection in connections]


async def test_image_frames_reach_the_model_as_image_blobs(
    server: LoopbackServer, gemini_emulator: GeminiEmulator
) -> None:
    client = await LiveClient.open(ws_url(server.url, "chatId=g-img-frames"))
    try:
        await client.say("hello before the camera")
        assert text(await client.turn()).startswith('You said: "hello before the camera"')
        await client.send(
            "image_frame", mimeType="image/jpeg", chunk=base64.b64encode(JPEG).decode()
        )
        await client.send(
            "image_frame", nested=False, mimeType="image/png", chunk=base64.b64encode(PNG).decode()
        )
        await client.send("ping", timestamp="after-frames")
        assert (await _control(client))["type"] == "pong"  # both frames were taken
        await client.say("What do you see?")
        seen = await client.turn()
        await client.say("hello after the camera")
        after = await client.turn()
    finally:
        await client.close()
    for chunks in (seen, after):
        assert "error" not in kinds(chunks) and kinds(chunks)[-2:] == ["finish", DONE]
    # the emulator's demo script answers from the images in the Live API session
    assert text(seen) == (
        f"I can see 2 image(s) so far; the newest is image/png, {len(PNG)} bytes."
    )
    assert text(after).startswith('You said: "hello after the camera"')
    blobs = _blobs(_realtime(gemini_emulator, "hello before the camera"))
    images = [
        (pick(b, "mimeType"), b["data"]) for b in blobs if pick(b, "mimeType").startswith("image/")
    ]
    # the model received both frames, each with its own mime type and every byte
    assert images == [
        ("image/jpeg", f"<{len(base64.b64encode(JPEG))} base64 chars>"),
        ("image/png", f"<{len(base64.b64encode(PNG))} base64 chars>"),
    ]
    assert not [b for b in blobs if pick(b, "mimeType").startswith("audio/")]
    assert _closes(gemini_emulator, "hello before the camera") == []  # the API took them


async def test_a_gemini_3_live_model_gets_the_frames_as_video(
    gemini_emulator: GeminiEmulator,
) -> None:
    """ADK sends a Gemini 3 Live model its image blobs as ``realtimeInput.video``."""
    agent = build_demo_agent(model=gemini_emulator.gemini("gemini-2.5-flash"))
    app = AdkApp(
        agent, live_options=LiveOptions(model="gemini-3.1-flash-live-preview"), warm_up=False
    )
    with LoopbackServer(app) as running:
        client = await LiveClient.open(ws_url(running.url, "chatId=g3-img-frames"))
        try:
            await client.say("hello gemini 3 camera")
            await client.turn()
            await client.send(
                "image_frame", mimeType="image/jpeg", chunk=base64.b64encode(JPEG).decode()
            )
            await client.say("What do you see?")
            seen = await client.turn()
        finally:
            await client.close()
    realtime = _realtime(gemini_emulator, "hello gemini 3 camera")
    videos = [pick(r["video"], "mimeType") for r in realtime if "video" in r]
    assert videos == ["image/jpeg"]
    assert text(seen) == (
        f"I can see 1 image(s) so far; the newest is image/jpeg, {len(JPEG)} bytes."
    )


async def test_bytes_that_are_not_pcm_on_the_audio_path_get_an_error_frame(
    server: LoopbackServer, gemini_emulator: GeminiEmulator
) -> None:
    """JPEG bytes as a binary frame or an ``audio_chunk`` never reach the model as
    ``audio/pcm;rate=16000``; neither do PNG, WebM or Ogg data, nor an odd byte count.
    Real PCM after them is heard and answered: the connection goes on."""
    client = await LiveClient.open(ws_url(server.url, "chatId=g-img-audio&modality=audio"))
    try:
        await client.say("hello before the wrong audio")
        await client.turn(wait=15)
        refusals = []
        await client.send("audio_control", action="start")
        for data in (JPEG, PNG, WEBM, OGG, b"\x01\x02\x03"):
            await client.audio(data, binary=True)
            refusals.append(await _refusal(client))
        await client.audio(JPEG)  # as an audio_chunk
        refusals.append(await _refusal(client))
        for chunk in chunks_of(tone(0.4)):
            await client.audio(chunk, binary=True)
        await client.send("audio_control", action="stop")
        heard = await client.turn(wait=15)
    finally:
        await client.close()
    assert {r["code"] for r in refusals} == {"not_pcm_audio"}
    assert "JPEG" in refusals[0]["message"] and "PNG" in refusals[1]["message"]
    assert "WebM" in refusals[2]["message"] and "Ogg" in refusals[3]["message"]
    assert "error" not in kinds(heard)
    assert text(heard).startswith("Let me check the weather in Tokyo.")
    blobs = _blobs(_realtime(gemini_emulator, "hello before the wrong audio"))
    pcm_sizes = {b["data"] for b in blobs}
    # only the tone's 0.1 s frames went out (3200 bytes each), nothing of the files
    assert pcm_sizes == {f"<{len(base64.b64encode(bytes(3200)))} base64 chars>"}
    assert _closes(gemini_emulator, "hello before the wrong audio") == []


async def test_refused_image_frames_keep_the_connection(
    server: LoopbackServer, gemini_emulator: GeminiEmulator
) -> None:
    """Each refusal is an ``error`` frame with a stable code; none reaches the model."""
    big = b"\xff\xd8\xff\xe0" + bytes(Limits().max_image_bytes - 3)  # one byte over
    client = await LiveClient.open(ws_url(server.url, "chatId=g-img-refused"))
    try:
        await client.say("hello before the refused frames")
        await client.turn()
        sent = [
            (
                {"mimeType": "image/gif", "chunk": base64.b64encode(b"GIF89a" + bytes(8)).decode()},
                "unsupported_image_type",
            ),
            (
                {"mimeType": "image/jpeg", "chunk": base64.b64encode(PNG).decode()},
                "unsupported_image_type",
            ),  # not what it says it is
            ({"mimeType": "image/png", "chunk": "not base64!"}, "invalid_frame"),
            ({"mimeType": "image/png"}, "invalid_frame"),
            (
                {"mimeType": "image/jpeg", "chunk": base64.b64encode(big).decode()},
                "image_too_large",
            ),
        ]
        codes = []
        for fields, _ in sent:
            await client.send("image_frame", **fields)
            codes.append((await _refusal(client))["code"])
        jpeg = base64.b64encode(JPEG).decode()
        for _ in range(3):  # a burst over the rate: the third is refused
            await client.send("image_frame", mimeType="image/jpeg", chunk=jpeg)
        await client.send("ping", timestamp="after-burst")
        burst = [await _control(client) for _ in range(2)]
        await client.say("hello after the refused frames")
        after = await client.turn()
    finally:
        await client.close()
    assert codes == [code for _, code in sent]
    assert [f["type"] for f in burst] == ["error", "pong"]
    assert burst[0]["code"] == "image_rate_exceeded"
    assert text(after).startswith('You said: "hello after the refused frames"')
    blobs = _blobs(_realtime(gemini_emulator, "hello before the refused frames"))
    assert [pick(b, "mimeType") for b in blobs] == ["image/jpeg", "image/jpeg"]
    assert _closes(gemini_emulator, "hello before the refused frames") == []


async def test_an_image_frame_on_protocol_b_is_refused_with_the_reason(
    server: LoopbackServer,
) -> None:
    """ai@7's WebSocketChatTransport has no frame for camera input: a connection that
    spoke protocol B first is told that image frames are protocol A's."""
    from websockets.asyncio.client import connect

    frames = [
        {
            "type": "image_frame",
            "version": "1.0",
            "data": {"mimeType": "image/jpeg", "chunk": base64.b64encode(JPEG).decode()},
        },
        {"type": "audio_chunk", "version": "1.0", "data": {"chunk": "AAAA"}},
        {"type": "audio_control", "version": "1.0", "data": {"action": "start"}},
    ]
    async with connect(ws_url(server.url)) as ws:
        await ws.send(json.dumps({"type": "abort", "requestId": "r0"}))  # picks protocol B
        replies = []
        for frame in frames:
            await ws.send(json.dumps(frame))
            replies.append(json.loads(await ws.recv()))
    for frame, reply in zip(frames, replies, strict=True):
        assert reply["type"] == "error", reply
        assert f"`{frame['type']}` is a protocol A frame" in reply["errorText"]


def test_the_fixture_jpeg_would_pass_as_pcm() -> None:
    """The JPEG of these tests has an even byte count: without the check, the Live API
    would take it as 16-bit PCM (an odd count it refuses by itself)."""
    assert len(JPEG) % 2 == 0 and JPEG[:3] == b"\xff\xd8\xff"
