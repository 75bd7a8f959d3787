"""LiveSocket: one accepted WebSocket — frames in (size and rate limits), text frames out
(one send at a time, through the bounded ``Outbox``), the close code, and the watchdog for
clients that stop reading and for idleness.

No timeout scope per frame (a task and a timer each on Python 3.11): the outbox's watch
drops a client that takes nothing (``transport/outbox.py``, the slow-client rule shared with
SSE), and the watchdog looks at when the client last sent anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final

from ...options import Limits
from ...transport.asgi import ClientGone, Receive, Send
from ...transport.outbox import Outbox

__all__ = (
    "CLOSE_ERROR",
    "CLOSE_GOING_AWAY",
    "CLOSE_NORMAL",
    "CLOSE_POLICY",
    "CLOSE_RESTART",
    "CLOSE_TOO_BIG",
    "CLOSE_TRY_AGAIN",
    "UNAVAILABLE_REASON",
    "LiveSocket",
)

logger = logging.getLogger("adk_asgi")

# Close codes (RFC 6455 + IANA registry).
CLOSE_NORMAL: Final = 1000
CLOSE_GOING_AWAY: Final = 1001  # idle timeout
CLOSE_POLICY: Final = 1008  # not authenticated, foreign origin, chat not found, rate
CLOSE_TOO_BIG: Final = 1009  # frame over Limits.max_frame_bytes
CLOSE_ERROR: Final = 1011  # the server failed
CLOSE_RESTART: Final = 1012  # the server is shutting down
CLOSE_TRY_AGAIN: Final = 1013  # a dependency is down: try again later
UNAVAILABLE_REASON: Final = "The chat service is temporarily unavailable. Please try again."


class LiveSocket:
    """The transport half of a live connection."""

    def __init__(
        self,
        receive: Receive,
        send: Send,
        limits: Limits,
        *,
        send_timeout: float | None,
        idle_timeout: float | None,
    ) -> None:
        self._receive = receive
        self._send = send
        self._limits = limits
        self._send_timeout = send_timeout or None
        self._idle_timeout = idle_timeout or None
        self._send_lock = asyncio.Lock()
        self._loop = asyncio.get_running_loop()
        self._outbox = Outbox(send, max_bytes=limits.max_queued_bytes)
        self._outbox.tune()
        self._stalled = asyncio.Event()
        self._outbox.watch(self._send_timeout, self._on_stall)
        self.last_activity = self._loop.time()
        self.closed = False
        self.close_code = CLOSE_NORMAL
        self.close_reason = ""
        # Token bucket for Limits.frames_per_second / frame_burst.
        self._tokens = float(limits.frame_burst)
        self._refilled = self.last_activity

    # -- in -------------------------------------------------------------------------

    async def receive(self) -> str | bytes:
        """The next data frame; ClientGone when the client left or broke a limit (the close
        code is set then)."""
        message = await self._receive()
        self.last_activity = self._loop.time()
        if message["type"] != "websocket.receive":
            raise ClientGone  # websocket.disconnect
        text: str | None = message.get("text")
        frame: str | bytes = text if text is not None else (message.get("bytes") or b"")
        self._admit(len(frame))
        return frame

    def _admit(self, size: int) -> None:
        limits = self._limits
        if size > limits.max_frame_bytes:
            raise self.close_with(
                CLOSE_TOO_BIG, f"Frames are limited to {limits.max_frame_bytes} bytes."
            )
        now = self._loop.time()
        self._tokens = min(
            float(limits.frame_burst),
            self._tokens + (now - self._refilled) * limits.frames_per_second,
        )
        self._refilled = now
        self._tokens -= 1
        if self._tokens < 0:
            raise self.close_with(CLOSE_POLICY, "Too many frames; slow down.")

    # -- out ------------------------------------------------------------------------

    async def send(self, frames: list[str]) -> None:
        """Send text frames in order; ClientGone when the socket is gone."""
        if self.closed:
            raise ClientGone
        outbox = self._outbox
        async with self._send_lock:
            for text in frames:
                try:
                    await outbox.send({"type": "websocket.send", "text": text})
                except Exception as exc:  # the ASGI server reports a closed socket this way
                    raise ClientGone from exc
                if outbox.overflowed:
                    self.drop(f"more than {self._limits.max_queued_bytes} bytes waiting")
                    raise ClientGone

    def close_with(self, code: int, reason: str) -> ClientGone:
        """End the connection with ``code`` (raise the result from the task that found out)."""
        self.close_code = code
        self.close_reason = reason
        return ClientGone()

    def drop(self, why: str) -> None:
        """A client that does not read: reset the connection (a close frame would wait
        behind the unread bytes)."""
        if not self.closed:
            logger.warning("Live client stopped reading (%s); dropping the connection", why)
        self.closed = True
        self._outbox.abort()

    async def close(self) -> None:
        self.closed = True
        await self._outbox.close()
        message: dict[str, Any] = {"type": "websocket.close", "code": self.close_code}
        if self.close_reason:
            message["reason"] = self.close_reason[:120]
        with contextlib.suppress(Exception):
            await self._send(message)

    # -- liveness -------------------------------------------------------------------

    def _on_stall(self) -> None:
        self.drop(f"nothing taken for {self._send_timeout:g} s")
        self._stalled.set()

    async def watchdog(self, idle_since: Callable[[], float | None]) -> None:
        """Returns when the client has taken nothing for ``send_timeout`` while frames
        wait for it (a half-open or stuck client, found by the outbox's watch: dropped)
        or the connection has been idle for ``idle_timeout``: nothing received, and
        ``idle_since()`` (loop time; None while busy) that long ago."""
        idle_timeout = self._idle_timeout
        stalled = asyncio.create_task(self._stalled.wait(), name="adk-asgi-live-stall")
        try:
            if not idle_timeout:
                await stalled
                return
            tick = max(0.05, idle_timeout / 4)
            while True:
                await asyncio.wait({stalled}, timeout=tick)
                if stalled.done():
                    return
                now = self._loop.time()
                idle = idle_since()
                if idle is not None and now - max(idle, self.last_activity) > idle_timeout:
                    logger.info("Closing an idle live connection")
                    self.close_with(CLOSE_GOING_AWAY, "Idle timeout.")
                    return
        finally:
            stalled.cancel()
