"""A Live API connection's WebSocket: client messages in (parsed and journaled), server
messages out (whole frames, in order), and closes with the service's codes."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from google.genai import types
from starlette.websockets import WebSocket, WebSocketDisconnect

from .. import wire
from ..errors import ApiError
from ..journal import Journal, Record

__all__ = ("Closed", "LiveSocket", "duration", "invalid")

_MESSAGE_FIELDS = ("setup", "client_content", "realtime_input", "tool_response", "context_update")
_CAMEL = {
    "client_content": "clientContent",
    "realtime_input": "realtimeInput",
    "tool_response": "toolResponse",
    "context_update": "contextUpdate",
}
_INVALID = "Request contains an invalid argument."


class Closed(Exception):
    """Raised inside a connection to close it with an API error. ``detail`` says more
    than the service's reason does; it goes to the journal, not on the wire."""

    def __init__(self, code: int, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.detail = detail or reason

    @classmethod
    def of(cls, error: ApiError) -> Closed:
        return cls(error.close_code, error.close_reason)


def invalid(detail: str = _INVALID) -> Closed:
    # A malformed or out-of-place client message: 1007 "Request contains an invalid
    # argument." (what the service is seen to send, vercel/ai#20695,
    # strands-agents/harness-sdk#1999); the service says no more, so neither does the
    # close frame (the journal keeps the detail).
    return Closed(1007, _INVALID, detail)


def duration(seconds: float) -> str:
    """A google.protobuf.Duration in JSON ("59.5s")."""
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return f"{text}s"


class LiveSocket:
    """One connection's WebSocket and its journal entries."""

    def __init__(self, websocket: WebSocket, number: int, journal: Journal) -> None:
        self.ws = websocket
        self.number = number
        self._journal = journal
        self._send_lock = asyncio.Lock()
        self.closed = False

    async def receive(self) -> tuple[str, Any]:
        """The next client message: its field (snake case) and body, journaled."""
        event = await self.ws.receive()
        if event["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(event.get("code", 1000))
        raw = event.get("text")
        if raw is None:
            raw = (event.get("bytes") or b"").decode("utf-8", errors="replace")
        try:
            message = json.loads(raw)
        except json.JSONDecodeError:
            raise invalid("Invalid JSON payload received.") from None
        if not isinstance(message, dict) or len(message) != 1:
            raise invalid(
                "A client message must set exactly one of setup, clientContent, "
                "realtimeInput, toolResponse."
            )
        name, body = next(iter(message.items()))
        kind = wire.snake(name)
        if kind not in _MESSAGE_FIELDS:
            raise invalid(
                f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.'
            )
        self._journal.add(Record("live", _CAMEL.get(kind, kind), _summary(body), self.number))
        return kind, body

    def disconnected(self, code: int) -> None:
        """The client closed the connection."""
        self._journal.add(Record("live", "disconnect", {"code": code}, self.number))

    async def close(self, closing: Closed) -> None:
        async with self._send_lock:
            if self.closed:
                return
            self.closed = True
            self._journal.add(
                Record(
                    "live",
                    "close",
                    {"code": closing.code, "reason": closing.reason, "detail": closing.detail},
                    self.number,
                )
            )
            with contextlib.suppress(Exception):
                await self.ws.close(closing.code, closing.reason)

    async def send(self, message: types.LiveServerMessage) -> None:
        # Shielded: a turn cancelled mid-send still sends whole frames, in order.
        await asyncio.shield(self._write(wire.encode(message)))

    async def _write(self, text: str) -> None:
        async with self._send_lock:
            if self.closed:
                return
            try:
                await self.ws.send_text(text)
            except Exception:
                self.closed = True


def _summary(body: Any) -> dict[str, Any]:
    """The message for the journal, with audio bytes replaced by their size."""
    if not isinstance(body, dict):
        return {"value": body}

    def shrink(value: Any) -> Any:
        if isinstance(value, dict):
            if "data" in value and isinstance(value["data"], str) and len(value["data"]) > 64:
                return {**value, "data": f"<{len(value['data'])} base64 chars>"}
            return {k: shrink(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shrink(v) for v in value]
        return value

    result: dict[str, Any] = shrink(body)
    return result
