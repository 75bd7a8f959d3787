"""The emulator's Live API takes camera and screen frames as the service documents them
(``adk_asgi/testing/gemini/images.py``): PNG, JPEG, WebP, HEIC and HEIF images of at most
7 MB, as ``video`` or as ``mediaChunks`` (what google-genai sends for ADK's blobs on Gemini
2.x models); anything else closes the connection with 1007. Accepted frames are journaled
with their mime type and size, and never start a turn. google-genai's own client throughout.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import pytest
from google.genai import errors, types
from google.genai.live import AsyncSession

from adk_asgi.testing.gemini import GeminiEmulator

from .helpers import LIVE_MODEL

IMAGES: Final = Path(__file__).resolve().parent.parent / "fixtures" / "images"
JPEG: Final = (IMAGES / "frame.jpg").read_bytes()
PNG: Final = (IMAGES / "frame.png").read_bytes()
WEBP: Final = b"RIFF" + (8).to_bytes(4, "little") + b"WEBPVP8 "  # a WebP header's start
HEIC: Final = (24).to_bytes(4, "big") + b"ftypheic" + bytes(12)
TEXT = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
INVALID = "Request contains an invalid argument."


@contextlib.asynccontextmanager
async def live(emulator: GeminiEmulator) -> AsyncIterator[AsyncSession]:
    client = emulator.client(api_version="v1alpha")
    async with client.aio.live.connect(model=LIVE_MODEL, config=TEXT) as session:
        yield session


async def turn(session: AsyncSession) -> list[types.LiveServerMessage]:
    async def read() -> list[types.LiveServerMessage]:
        return [message async for message in session.receive()]

    return await asyncio.wait_for(read(), 10)


def _images(emulator: GeminiEmulator, connection: int) -> list[dict[str, Any]]:
    found = []
    for record in emulator.journal.records("realtimeInput"):
        if record.connection != connection:
            continue
        for blob in [*(record.data.get("mediaChunks") or []), record.data.get("video")]:
            if blob:
                found.append(blob)
    return found


async def test_image_frames_are_taken_and_journaled(emulator: GeminiEmulator) -> None:
    async with live(emulator) as session:
        await session.send_realtime_input(video=types.Blob(mime_type="image/jpeg", data=JPEG))
        await session.send_realtime_input(media=types.Blob(mime_type="image/png", data=PNG))
        for mime, data in (("image/webp", WEBP), ("image/heic", HEIC)):
            await session.send_realtime_input(video=types.Blob(mime_type=mime, data=data))
        # frames never start a turn: the next turn is the question's
        await session.send_client_content(
            turns=types.Content(role="user", parts=[types.Part(text="hello with frames")])
        )
        answer = await turn(session)
    connection = emulator.journal.records("setup")[-1].connection
    assert connection is not None
    images = _images(emulator, connection)
    assert [b.get("mimeType", b.get("mime_type")) for b in images] == [
        "image/jpeg",
        "image/png",
        "image/webp",
        "image/heic",
    ]
    assert images[0]["data"] == f"<{len(base64.b64encode(JPEG))} base64 chars>"
    assert "hello with frames" in "".join(m.text or "" for m in answer if m.server_content)
    assert not [r for r in emulator.journal.records("close") if r.connection == connection]


@pytest.mark.parametrize(
    ("mime_type", "data", "detail"),
    [
        ("image/gif", b"GIF89a" + bytes(10), "Unsupported image input image/gif"),
        ("image/bmp", b"BM" + bytes(10), "Unsupported image input image/bmp"),
        ("image/jpeg", PNG, "not image/jpeg"),
        ("image/png", b"", "not image/png"),
        ("image/jpeg", b"\xff\xd8\xff\xe0" + bytes(7_000_000 - 3), "limited to 7000000 bytes"),
    ],
)
async def test_other_images_are_refused(
    emulator: GeminiEmulator, mime_type: str, data: bytes, detail: str
) -> None:
    async with live(emulator) as session:
        await session.send_realtime_input(video=types.Blob(mime_type=mime_type, data=data))
        with pytest.raises(errors.APIError) as caught:
            await turn(session)
    assert (caught.value.code, caught.value.details) == (1007, INVALID)
    assert detail in emulator.journal.records("close")[-1].data["detail"]
