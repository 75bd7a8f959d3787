"""Client frames of the two live protocols, decoded into one small command set.

Protocol A (the seeds' envelope) — JSON text frames ``{"type", "version": "1.0",
...}`` with the fields flat at the top level or nested under ``data``:
``message``, ``tool_result``, ``audio_chunk``, ``audio_control``, ``interrupt``,
``ping``; a binary frame is raw PCM16 mono 16 kHz microphone audio.

Protocol B (AI SDK v7 ``WebSocketChatTransport``) — ``send``, ``resume``,
``abort``, each with a ``requestId``.

The connection's first frame picks the protocol (``detect``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Final, Literal

import msgspec

from ._errors import RequestError
from ._request import UIMessage

__all__ = (
    "AudioChunk",
    "AudioControl",
    "ClientFrame",
    "Interrupt",
    "MessageFrame",
    "Ping",
    "Protocol",
    "SendAbort",
    "SendResume",
    "SendSend",
    "ToolResult",
    "decode_a",
    "decode_b",
    "detect",
)

Protocol = Literal["A", "B"]
PROTOCOL_VERSION: Final = "1.0"
_B_TYPES: Final = frozenset({"send", "resume", "abort"})
_json: Final = msgspec.json.Decoder()


@dataclass(frozen=True, slots=True)
class MessageFrame:
    messages: list[UIMessage]
    chat_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    tool_call_id: str
    result: Any


@dataclass(frozen=True, slots=True)
class AudioChunk:
    pcm: bytes
    mime_type: str = "audio/pcm;rate=16000"


@dataclass(frozen=True, slots=True)
class AudioControl:
    action: Literal["start", "stop"]


@dataclass(frozen=True, slots=True)
class Interrupt:
    pass


@dataclass(frozen=True, slots=True)
class Ping:
    timestamp: Any = None


@dataclass(frozen=True, slots=True)
class SendSend:
    request_id: str
    chat_id: str
    messages: list[UIMessage]
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class SendResume:
    request_id: str
    chat_id: str


@dataclass(frozen=True, slots=True)
class SendAbort:
    request_id: str


ClientFrame = (MessageFrame | ToolResult | AudioChunk | AudioControl | Interrupt | Ping
               | SendSend | SendResume | SendAbort)


def _bad(message: str) -> RequestError:
    return RequestError(400, "invalid_frame", message)


def parse_json(text: str | bytes) -> dict[str, Any]:
    try:
        value = _json.decode(text)
    except (msgspec.DecodeError, UnicodeError):  # bad UTF-8 is a UnicodeError in msgspec
        raise _bad("A text frame must be a JSON object.") from None
    except RecursionError:  # deeper than msgspec's nesting limit (~1000 levels)
        raise _bad("A frame is nested too deeply.") from None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise _bad("A frame is a JSON object with a string `type`.")
    return value


def detect(frame: dict[str, Any] | None) -> Protocol:
    """B when the first frame is a transport frame (``send``/``resume``/``abort`` with a
    ``requestId``); A otherwise (including a first binary audio frame)."""
    if frame is not None and frame["type"] in _B_TYPES and isinstance(frame.get("requestId"), str):
        return "B"
    return "A"


def _payload(frame: dict[str, Any]) -> dict[str, Any]:
    data = frame.get("data")
    if isinstance(data, dict):
        merged = {k: v for k, v in frame.items() if k != "data"}
        merged.update(data)
        return merged
    return frame


def _ui_messages(raw: Any) -> list[UIMessage]:
    if not isinstance(raw, list) or not raw:
        raise RequestError(422, "no_messages", "The frame carries no messages.")
    out: list[UIMessage] = []
    for item in raw:
        if not isinstance(item, dict):
            raise _bad("Every message is an object.")
        item = dict(item)
        if "parts" not in item:
            # The seeds' shape: `content` is a string or a list of parts.
            content = item.pop("content", [])
            item["parts"] = [{"type": "text", "text": content}] if isinstance(content, str) \
                else content
        else:
            item.pop("content", None)
        try:
            out.append(msgspec.convert(item, UIMessage, strict=False))
        except msgspec.ValidationError as exc:
            raise RequestError(422, "invalid_request", f"Invalid message: {exc}") from None
    return out


def decode_a(frame: dict[str, Any]) -> ClientFrame:
    kind = frame["type"]
    data = _payload(frame)
    if kind == "message":
        chat_id = data.get("id") or data.get("chatId")
        return MessageFrame(_ui_messages(data.get("messages")),
                            chat_id if isinstance(chat_id, str) else None)
    if kind == "tool_result":
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str) or not call_id:
            raise _bad("`tool_result` needs a `toolCallId`.")
        return ToolResult(call_id, data.get("result"))
    if kind == "audio_chunk":
        encoded = data.get("chunk", data.get("audio", data.get("content")))
        if not isinstance(encoded, str):
            raise _bad("`audio_chunk` needs base64 PCM in `chunk`.")
        try:
            pcm = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise _bad("`audio_chunk` is not valid base64.") from None
        rate = data.get("sampleRate", 16_000)
        return AudioChunk(pcm, f"audio/pcm;rate={int(rate) if isinstance(rate, int) else 16000}")
    if kind == "audio_control":
        action = data.get("action")
        if action not in ("start", "stop"):
            raise _bad("`audio_control` needs `action` \"start\" or \"stop\".")
        return AudioControl(action)
    if kind == "interrupt":
        return Interrupt()
    if kind == "ping":
        return Ping(data.get("timestamp"))
    raise _bad(f"Unknown frame type {kind!r}.")


def decode_b(frame: dict[str, Any]) -> ClientFrame:
    kind = frame["type"]
    request_id = frame.get("requestId")
    if not isinstance(request_id, str) or not request_id:
        raise _bad("Every frame needs a `requestId`.")
    if kind == "abort":
        return SendAbort(request_id)
    chat_id = frame.get("id")
    if not isinstance(chat_id, str) or not chat_id:
        raise _bad("`send` and `resume` need the chat `id`.")
    if kind == "resume":
        return SendResume(request_id, chat_id)
    if kind == "send":
        message_id = frame.get("messageId")
        return SendSend(request_id, chat_id, _ui_messages(frame.get("messages")),
                        message_id if isinstance(message_id, str) else None)
    raise _bad(f"Unknown frame type {kind!r}.")
