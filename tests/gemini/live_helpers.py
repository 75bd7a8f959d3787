"""Helpers of the real-model live tests: microphone audio, the ai@7 WebSocket driver, and
what the emulator's journal says a connection sent."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

from adk_asgi.testing.gemini import GeminiEmulator, Record

from support.aisdk_client import run_ws_chat

RATE = 16_000


def tone(seconds: float, amplitude: int = 8000) -> bytes:
    """A 440 Hz tone, 16-bit little-endian mono PCM at 16 kHz: speech to the emulator."""
    count = int(seconds * RATE)
    return struct.pack(
        f"<{count}h",
        *(round(amplitude * math.sin(2 * math.pi * 440 * i / RATE)) for i in range(count)),
    )


def silence(seconds: float) -> bytes:
    return bytes(2 * int(seconds * RATE))


def chunks_of(pcm: bytes, size: int = 3200) -> list[bytes]:
    """Microphone-sized frames (0.1 s each)."""
    return [pcm[i : i + size] for i in range(0, len(pcm), size)]


def drive_ws(
    url: str,
    steps: list[dict[str, Any]],
    *,
    chat_id: str,
    auto: str | None = None,
    timeout_ms: int = 30_000,
) -> dict[str, Any]:
    """ai@7's WebSocketChatTransport (tests/js/drive-ws.mjs, in the shared Node process)
    against ``url``."""
    result = run_ws_chat(
        url,
        steps,
        chat_id=chat_id,
        auto_send=auto,
        node_timeout_ms=timeout_ms,
        timeout=timeout_ms / 1000 + 30,
    )
    assert result["ok"], (result["problems"], result["chatErrors"])
    assert result["invalid"] == [] and result["nullPaths"] == []
    return result


def connections_of(emulator: GeminiEmulator, marker: str) -> set[int]:
    """The Live API connections whose client sent ``marker`` (in any message)."""
    return {
        r.connection
        for r in emulator.journal.records()
        if r.connection and marker in json.dumps(r.data)
    }


def sent_on(emulator: GeminiEmulator, connections: set[int], kind: str) -> list[Record]:
    return [r for r in emulator.journal.records(kind) if r.connection in connections]


def pick(message: dict[str, Any], *path: str) -> Any:
    """``message[a][b]...`` by camelCase names; google-genai sends some nested fields in
    snake_case (proto JSON takes both)."""
    value: Any = message
    for name in path:
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
        value = value[name] if name in value else value[snake]
    return value
