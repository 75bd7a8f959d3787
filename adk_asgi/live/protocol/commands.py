"""The command set both live protocols decode into, and what they share: JSON frame parsing
and protocol detection (``protocol_a.py`` and ``protocol_b.py`` do the rest).

The connection's first frame picks the protocol: B when it is a transport frame (``send``,
``resume`` or ``abort`` with a ``requestId``), A otherwise (including a first binary audio
frame).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

import msgspec

from ...wire.depth import MAX_JSON_DEPTH, too_deep
from ...wire.errors import RequestError
from ...wire.request import UIMessage

__all__ = (
    "Abort",
    "Audio",
    "AudioControl",
    "Codec",
    "Command",
    "Image",
    "Interrupt",
    "Listener",
    "Messages",
    "Ping",
    "Resume",
    "ToolResult",
    "bad_frame",
    "detect",
    "parse_json",
    "ui_messages",
)

_B_TYPES: Final = frozenset({"send", "resume", "abort"})
_json: Final = msgspec.json.Decoder()
_FRAME_LEVELS: Final = 6


@dataclass(frozen=True, slots=True)
class Messages:
    """A user message starts a turn; an assistant message carries answers (protocol A
    ``message``, protocol B ``send``). ``request_id``: protocol B's request."""

    messages: list[UIMessage]
    chat_id: str | None = None
    request_id: str | None = None
    body: Any = None  # protocol B's `body` (the transport's extra fields)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """Protocol A's answer to one waiting call (an approval or a browser tool's result)."""

    tool_call_id: str
    result: Any


@dataclass(frozen=True, slots=True)
class Audio:
    pcm: bytes
    mime_type: str = "audio/pcm;rate=16000"


@dataclass(frozen=True, slots=True)
class Image:
    """A camera or screen frame for the model (protocol A ``image_frame``)."""

    data: bytes
    mime_type: str


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
class Resume:
    request_id: str
    chat_id: str


@dataclass(frozen=True, slots=True)
class Abort:
    request_id: str


Command = Messages | ToolResult | Audio | Image | AudioControl | Interrupt | Ping | Resume | Abort


@dataclass(slots=True)
class Listener:
    """A protocol-B request that receives a turn's chunks (``sequence`` counts per request)."""

    request_id: str
    sequence: int = 0


class Codec(Protocol):
    """A live protocol: its frames in, and the frames the server sends."""

    @property
    def name(self) -> Literal["A", "B"]: ...

    @property
    def suspends(self) -> bool:
        """Requests end while calls wait for the page (protocol B)."""

    def decode(self, frame: dict[str, Any]) -> Command: ...

    def chunks(self, encoded: Sequence[bytes], listeners: Sequence[Listener]) -> list[str]:
        """Frames for UI chunks (each encoded once, as JSON)."""

    def turn_end(self, listeners: Sequence[Listener]) -> list[str]:
        """Frames after a turn's last chunk."""

    def suspended(self, listeners: Sequence[Listener]) -> list[str]:
        """Frames when a request's part of a turn ends while calls wait for the page."""

    def error(self, text: str, request_id: str | None = None) -> str:
        """An error outside the turn flow (a refused frame)."""


def bad_frame(message: str) -> RequestError:
    return RequestError(400, "invalid_frame", message)


def parse_json(text: str | bytes) -> dict[str, Any]:
    try:
        value = _json.decode(text)
    except (msgspec.DecodeError, UnicodeError):  # bad UTF-8 is a UnicodeError in msgspec
        raise bad_frame("A text frame must be a JSON object.") from None
    except RecursionError:  # deeper than msgspec's nesting limit (~1000 levels)
        raise bad_frame("A frame is nested too deeply.") from None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise bad_frame("A frame is a JSON object with a string `type`.")
    # A frame's own levels (frame, messages, message, parts, part) above its values'.
    if too_deep(value, MAX_JSON_DEPTH + _FRAME_LEVELS):
        raise bad_frame("A frame is nested too deeply.")
    return value


def detect(frame: dict[str, Any] | None) -> Literal["A", "B"]:
    if frame is not None and frame["type"] in _B_TYPES and isinstance(frame.get("requestId"), str):
        return "B"
    return "A"


def ui_messages(raw: Any) -> list[UIMessage]:
    """The ``messages`` of a frame, validated as the HTTP request's are."""
    if not isinstance(raw, list) or not raw:
        raise RequestError(422, "no_messages", "The frame carries no messages.")
    try:
        return msgspec.convert(raw, list[UIMessage], strict=False)
    except msgspec.ValidationError as exc:
        raise RequestError(422, "invalid_request", f"Invalid message: {exc}") from None
