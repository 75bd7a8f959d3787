"""Fixtures for the Gemini emulator's tests: emulators on loopback and raw clients."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import websockets

from adk_asgi.testing.gemini import GeminiEmulator

from .helpers import WS_PATH, RawLive


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
