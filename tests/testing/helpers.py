"""Helpers of the Gemini emulator's tests: models, the demo's tools, audio and a raw Live API
client (their fixtures: conftest.py)."""

from __future__ import annotations

import contextlib
import json
import math
import struct
from typing import Any

from google.genai import types
from websockets.asyncio.client import ClientConnection

LIVE_MODEL = "gemini-live-2.5-flash-preview"
TEXT_MODEL = "gemini-2.5-flash"


def _declare(name: str, **parameters: str) -> types.FunctionDeclaration:
    schema = {
        "type": "object",
        "required": list(parameters),
        "properties": {key: {"type": kind} for key, kind in parameters.items()},
    }
    return types.FunctionDeclaration(name=name, parameters_json_schema=schema)


DEMO_TOOLS = [
    types.Tool(
        function_declarations=[
            _declare("get_weather", location="string"),
            _declare("process_payment", amount="number", recipient="string", currency="string"),
            _declare("get_location"),
            _declare("change_bgm", track="integer"),
        ]
    )
]
"""The demo agent's tools, as a request declares them: the default script's demo phrases
that call a function (weather, payments, location, music) apply only when it is declared."""

WS_PATH = "/ws/google.ai.generativelanguage.{version}.GenerativeService.BidiGenerateContent"


def tone(seconds: float, *, amplitude: int = 8000, rate: int = 16_000) -> bytes:
    """``seconds`` of a 440 Hz tone: 16-bit little-endian mono PCM (speech to the VAD)."""
    count = int(seconds * rate)
    return struct.pack(
        f"<{count}h",
        *(round(amplitude * math.sin(2 * math.pi * 440 * i / rate)) for i in range(count)),
    )


def silence(seconds: float, *, rate: int = 16_000) -> bytes:
    return bytes(2 * int(seconds * rate))


class RawLive:
    """A raw Live API WebSocket client: for frames google-genai would never send."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    async def send(self, message: dict[str, Any]) -> None:
        """Send a message; a connection the server already closed is read by closed()."""
        from websockets.exceptions import ConnectionClosed

        with contextlib.suppress(ConnectionClosed):
            await self.connection.send(json.dumps(message))

    async def recv(self, within: float = 10) -> dict[str, Any]:
        import asyncio

        raw = await asyncio.wait_for(self.connection.recv(), within)
        message: dict[str, Any] = json.loads(raw)
        return message

    async def setup(self, model: str = LIVE_MODEL, **fields: Any) -> dict[str, Any]:
        await self.send({"setup": {"model": f"models/{model}", **fields}})
        return await self.recv()

    async def closed(self, within: float = 10) -> tuple[int | None, str]:
        """Read until the server closes; the close code and reason."""
        import asyncio

        from websockets.exceptions import ConnectionClosed

        try:
            while True:
                await asyncio.wait_for(self.connection.recv(), within)
        except ConnectionClosed as closed:
            received = closed.rcvd
            return (received.code, received.reason) if received else (None, "")
