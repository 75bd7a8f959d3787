"""Protocol B: the AI SDK v7 ``WebSocketChatTransport`` frames.

In: ``send`` (the chat's messages), ``resume``, ``abort``, each with a ``requestId``.
Out: ``start``, ``chunk`` (``{requestId, sequence, chunk}``; sequences count per request),
``end``, ``error``, ``no-active`` — typed frames, the chunk JSON embedded as it was encoded
once for every listener.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

import msgspec

from .commands import Abort, Command, Listener, Messages, Resume, bad_frame, ui_messages

__all__ = ("ProtocolB",)


class _Frame(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, kw_only=True):
    pass


class StartFrame(_Frame, tag="start"):
    request_id: str


class ChunkFrame(_Frame, tag="chunk"):
    request_id: str
    sequence: int
    chunk: msgspec.Raw


class EndFrame(_Frame, tag="end"):
    request_id: str


class ErrorFrame(_Frame, tag="error"):
    error_text: str
    request_id: str | None = None


class NoActiveFrame(_Frame, tag="no-active"):
    request_id: str


_encode: Final = msgspec.json.Encoder().encode
_PROTOCOL_A_INPUT: Final = frozenset({"audio_chunk", "audio_control", "image_frame"})


def _text(frame: _Frame) -> str:
    return _encode(frame).decode()


class ProtocolB:
    """Decodes protocol-B frames and encodes what the server sends back."""

    name: Literal["B"] = "B"
    suspends = True

    @staticmethod
    def decode(frame: dict[str, Any]) -> Command:
        kind = frame["type"]
        if kind in _PROTOCOL_A_INPUT:
            raise bad_frame(
                f"`{kind}` is a protocol A frame: ai@7's WebSocketChatTransport "
                "(protocol B) carries no realtime input; use protocol A "
                "(AdkLiveTransport) for audio and camera frames."
            )
        request_id = frame.get("requestId")
        if not isinstance(request_id, str) or not request_id:
            raise bad_frame("Every frame needs a `requestId`.")
        if kind == "abort":
            return Abort(request_id)
        chat_id = frame.get("id")
        if not isinstance(chat_id, str) or not chat_id:
            raise bad_frame("`send` and `resume` need the chat `id`.")
        if kind == "resume":
            return Resume(request_id, chat_id)
        if kind == "send":
            return Messages(
                ui_messages(frame.get("messages")), chat_id, request_id, frame.get("body")
            )
        raise bad_frame(f"Unknown frame type {kind!r}.")

    @staticmethod
    def request_id_of(text: str | bytes) -> str | None:
        """The ``requestId`` of a frame that failed to decode, to address the error."""
        try:
            value = msgspec.json.decode(text)
        except (msgspec.DecodeError, UnicodeError, RecursionError):
            return None
        candidate = value.get("requestId") if isinstance(value, dict) else None
        return candidate if isinstance(candidate, str) else None

    # -- out ----------------------------------------------------------------------

    @staticmethod
    def chunks(encoded: Sequence[bytes], listeners: Sequence[Listener]) -> list[str]:
        frames: list[str] = []
        for listener in listeners:
            for data in encoded:
                frames.append(
                    _text(
                        ChunkFrame(
                            request_id=listener.request_id,
                            sequence=listener.sequence,
                            chunk=msgspec.Raw(data),
                        )
                    )
                )
                listener.sequence += 1
        return frames

    @staticmethod
    def turn_end(listeners: Sequence[Listener]) -> list[str]:
        return [_text(EndFrame(request_id=listener.request_id)) for listener in listeners]

    suspended = turn_end

    @staticmethod
    def error(text: str, request_id: str | None = None) -> str:
        return _text(ErrorFrame(error_text=text, request_id=request_id))

    @staticmethod
    def start(request_id: str) -> str:
        return _text(StartFrame(request_id=request_id))

    @staticmethod
    def no_active(request_id: str) -> str:
        return _text(NoActiveFrame(request_id=request_id))
