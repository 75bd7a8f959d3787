"""Fixtures for the Gemini emulator's tests: emulators on loopback and raw clients."""

from __future__ import annotations

import contextlib
import json
import math
import ssl
import struct
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import websockets
from google.genai import types
from websockets.asyncio.client import ClientConnection

from adk_asgi.testing.gemini import GeminiEmulator

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


@pytest.fixture(scope="module")
def emulator() -> Iterator[GeminiEmulator]:
    """An emulator with the default settings, shared by a module's tests."""
    with GeminiEmulator() as running:
        yield running


@pytest.fixture
def make_emulator() -> Iterator[Callable[..., GeminiEmulator]]:
    """Start emulators with custom knobs; all are stopped after the test."""
    started: list[GeminiEmulator] = []

    def make(*args: Any, **kwargs: Any) -> GeminiEmulator:
        running = GeminiEmulator(*args, **kwargs).start()
        started.append(running)
        return running

    yield make
    for running in started:
        running.stop()


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


@pytest.fixture
def raw_live() -> Callable[..., Any]:
    """``async with raw_live(emulator, headers=...) as live``: a raw Live API client."""
    import contextlib

    @contextlib.asynccontextmanager
    async def connect(
        emulator: GeminiEmulator,
        *,
        version: str = "v1beta",
        api_key: str | None = "test-key",
        path: str | None = None,
    ) -> AsyncIterator[RawLive]:
        url = emulator.base_url.replace("https://", "wss://") + (
            path or WS_PATH.format(version=version)
        )
        headers = {"x-goog-api-key": api_key} if api_key else {}
        context: ssl.SSLContext = emulator.ssl_context()
        async with websockets.connect(url, ssl=context, additional_headers=headers) as ws:
            yield RawLive(ws)

    return connect
