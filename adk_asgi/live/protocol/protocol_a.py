"""Protocol A: the original design's envelope, for any WebSocket client (and audio).

In: JSON text frames ``{"type", "version": "1.0", ...}`` with the fields flat at the top
level or nested under ``data``: ``message``, ``tool_result``, ``audio_chunk``,
``audio_control``, ``interrupt``, ``ping``; a binary frame is raw PCM16 mono 16 kHz
microphone audio. A ``version`` whose major number is not 1 is refused.

Out: each UI chunk as an SSE-formatted text frame (``data: {json}\\n\\n``), ``data:
[DONE]\\n\\n`` after each turn, ``pong`` frames.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, Final, Literal

import msgspec

from ...wire.chunks import DONE_FRAME, Error, sse_frame
from ...wire.errors import RequestError
from .commands import (
    Audio,
    AudioControl,
    Command,
    Image,
    Interrupt,
    Listener,
    Messages,
    Ping,
    ToolResult,
    bad_frame,
    ui_messages,
)
from .media import IMAGE_TYPES, InputRefused, refused

__all__ = ("VERSION", "ProtocolA")

VERSION: Final = "1.0"
_DONE: Final = DONE_FRAME.decode()


class Pong(msgspec.Struct, tag_field="type", tag="pong", omit_defaults=True):
    version: str
    timestamp: Any = None


class InputError(msgspec.Struct, tag_field="type", tag="error"):
    """A refused audio or image frame: a control frame, not a chunk (no turn ends)."""

    version: str
    code: str
    message: str


_encode: Final = msgspec.json.Encoder().encode


class ProtocolA:
    """Decodes protocol-A frames and encodes what the server sends back."""

    name: Literal["A"] = "A"
    suspends = False

    @staticmethod
    def decode(frame: dict[str, Any]) -> Command:
        _check_version(frame.get("version"))
        kind = frame["type"]
        data = _payload(frame)
        if kind == "message":
            chat_id = data.get("id") or data.get("chatId")
            return Messages(
                ui_messages(data.get("messages")), chat_id if isinstance(chat_id, str) else None
            )
        if kind == "tool_result":
            call_id = data.get("toolCallId")
            if not isinstance(call_id, str) or not call_id:
                raise bad_frame("`tool_result` needs a `toolCallId`.")
            return ToolResult(call_id, data.get("result"))
        if kind == "audio_chunk":
            return _audio(data)
        if kind == "image_frame":
            return _image(data)
        if kind == "audio_control":
            action = data.get("action")
            if action not in ("start", "stop"):
                raise bad_frame('`audio_control` needs `action` "start" or "stop".')
            return AudioControl(action)
        if kind == "interrupt":
            return Interrupt()
        if kind == "ping":
            return Ping(data.get("timestamp"))
        raise bad_frame(f"Unknown frame type {kind!r}.")

    # -- out ----------------------------------------------------------------------

    @staticmethod
    def chunks(encoded: Sequence[bytes], listeners: Sequence[Listener]) -> list[str]:
        return [f"data: {data.decode()}\n\n" for data in encoded]

    @staticmethod
    def turn_end(listeners: Sequence[Listener]) -> list[str]:
        return [_DONE]

    @staticmethod
    def suspended(listeners: Sequence[Listener]) -> list[str]:
        return []  # the page's transport ends its request itself (see the docs)

    @staticmethod
    def error(text: str, request_id: str | None = None) -> str:
        # An `error` chunk outside the turn flow: the turn, if any, goes on.
        return sse_frame(Error(error_text=text)).decode()

    @staticmethod
    def pong(timestamp: Any) -> str:
        return _encode(Pong(VERSION, timestamp)).decode()

    @staticmethod
    def input_error(error: InputRefused) -> str:
        return _encode(InputError(VERSION, error.code, error.message)).decode()


def _check_version(version: Any) -> None:
    if version is None:
        return
    major = str(version).split(".", 1)[0]
    if major != VERSION.split(".", 1)[0]:
        raise RequestError(
            400,
            "unsupported_version",
            f"Protocol version {version!r} is not supported; this server speaks {VERSION}.",
        )


def _payload(frame: dict[str, Any]) -> dict[str, Any]:
    data = frame.get("data")
    if isinstance(data, dict):
        merged = {k: v for k, v in frame.items() if k != "data"}
        merged.update(data)
        return merged
    return frame


def _audio(data: dict[str, Any]) -> Audio:
    encoded = data.get("chunk", data.get("audio", data.get("content")))
    if not isinstance(encoded, str):
        raise refused("invalid_frame", "`audio_chunk` needs base64 PCM in `chunk`.")
    pcm = _base64(encoded, "audio_chunk")
    rate = data.get("sampleRate", 16_000)
    if isinstance(rate, bool) or not isinstance(rate, int) or not 8_000 <= rate <= 192_000:
        # The Live API resamples PCM of any rate; it must still be a sample rate.
        raise refused("invalid_frame", "`sampleRate` is the PCM's rate in Hz (16000).")
    return Audio(pcm, f"audio/pcm;rate={rate}")


def _image(data: dict[str, Any]) -> Image:
    mime_type, encoded = data.get("mimeType"), data.get("chunk")
    if not isinstance(mime_type, str) or not isinstance(encoded, str):
        raise refused(
            "invalid_frame",
            f"`image_frame` needs `mimeType` ({' or '.join(IMAGE_TYPES)}) and "
            "the base64 image in `chunk`.",
        )
    return Image(_base64(encoded, "image_frame"), mime_type.lower())


def _base64(encoded: str, kind: str) -> bytes:
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise refused("invalid_frame", f"`{kind}` is not valid base64.") from None
