"""SSEChannel: one ``text/event-stream`` response written straight to the ASGI server.

Deliberate choices (measured; do not "simplify" them away without the numbers):

- **No per-send timeout scope.** A stuck client (one that stops reading) is found
  by the outbox's watch, a timer callback that looks at how long data has waited
  for the client without it taking any (``transport/outbox.py``: the slow-client rule,
  shared with WebSockets), not by wrapping every send in a cancel scope: that scope
  cost ≈ 9 µs per frame in sse-starlette, a few % of the server's CPU per token.
- **Bounded**: writes go straight to the server while the client keeps up; behind
  a full buffer they queue in the ``Outbox`` (at most ``max_queued`` bytes), so
  ADK's events do not pile up while the client is slow.
- **One pinger task** sends the ``: ping`` comment while the model is silent
  (proxies drop idle streams; a ping also surfaces a dead socket). Pings never
  wait on a blocked socket longer than ``send_timeout``.
- **One listener task** waits for ``http.disconnect``: with ASGI spec 2.4 a
  streaming response that does not listen notices a gone client only when a
  send fails, which an idle stream never does.
- Frames are bytes from the caller (``data: {json}\\n\\n``); nothing is
  re-encoded here. No import-time patching of the server, no global state.

The owner reacts through ``on_gone(reason)``: ``"client"`` (disconnect) or
``"stuck"`` (no progress for ``send_timeout``, or more than ``max_queued`` bytes
waiting). For ``"stuck"`` the channel resets the connection when the server lets
it (``Outbox.abort``), else cancels the task that is blocked in the send (``write``
absorbs that cancellation), so the owner simply sees ``gone`` and stops producing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Final, Literal

from ...options import DEFAULT_MAX_QUEUED_BYTES, Settings
from ...transport.asgi import Receive, Send
from ...transport.outbox import Outbox

__all__ = ("SSE_HEADERS", "GoneReason", "SSEChannel", "sse_channel")

GoneReason = Literal["client", "stuck"]
SSE_HEADERS: Final = (
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-vercel-ai-ui-message-stream", b"v1"),
    (b"x-accel-buffering", b"no"),
)
logger = logging.getLogger("adk_asgi")
_PING: Final = b": ping\n\n"
_MIN_TICK: Final = 0.05


class SSEChannel:
    __slots__ = (
        "_last_write",
        "_listener",
        "_loop",
        "_max_queued",
        "_on_gone",
        "_outbox",
        "_ping_interval",
        "_receive",
        "_send",
        "_send_timeout",
        "_task",
        "_timer",
        "gone",
        "stuck",
    )

    def __init__(
        self,
        send: Send,
        receive: Receive,
        *,
        ping_interval: float | None,
        send_timeout: float | None,
        on_gone: Callable[[GoneReason], None] | None = None,
        max_queued: int = DEFAULT_MAX_QUEUED_BYTES,
    ) -> None:
        self._send = send
        self._receive = receive
        self._ping_interval = ping_interval or None
        self._send_timeout = send_timeout or None
        self._max_queued = max_queued
        self._on_gone = on_gone
        self._loop = asyncio.get_running_loop()
        self._task: asyncio.Task[object] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._timer: asyncio.Task[None] | None = None
        self._outbox: Outbox | None = None
        self._last_write = 0.0
        self.gone = False
        self.stuck = False

    async def open(
        self, status: int = 200, headers: Iterable[tuple[bytes, bytes]] = SSE_HEADERS
    ) -> None:
        self._task = asyncio.current_task()
        self._outbox = outbox = Outbox(self._send, max_bytes=self._max_queued)
        outbox.tune()
        await self._send(
            {"type": "http.response.start", "status": status, "headers": list(headers)}
        )
        self._last_write = self._loop.time()
        self._listener = asyncio.create_task(self._listen(), name="adk-asgi-sse-listener")
        outbox.watch(self._send_timeout, self._stalled)
        if self._ping_interval:
            self._timer = asyncio.create_task(self._tick(), name="adk-asgi-sse-pinger")

    def adopt(self) -> None:
        """The current task writes from now on (another one opened the response: a queued
        turn's notice), so the stuck-client rule cancels this one's blocked send."""
        self._task = asyncio.current_task()

    def on_gone(self, callback: Callable[[GoneReason], None]) -> None:
        """Who is told when the client leaves or is stuck (replacing whoever was)."""
        self._on_gone = callback

    async def write(self, blob: bytes) -> None:
        """Send one blob of frames; a no-op once the client is gone."""
        if self.gone:
            return
        outbox = self._outbox
        assert outbox is not None
        started = self._loop.time()
        try:
            await outbox.send({"type": "http.response.body", "body": blob, "more_body": True})
        except asyncio.CancelledError:
            task = self._task
            if self.stuck and task is not None and task.cancelling():
                task.uncancel()  # our own watchdog's cancellation: the client is gone
                return
            raise
        except Exception:  # a server that raises on a closed socket
            self._gone("client")
            return
        if outbox.overflowed:
            self._stuck(
                f"more than {self._max_queued} bytes waiting behind its largest chunk "
                "(Limits.max_queued_bytes)"
            )
            return
        self._last_write = started

    async def close(self) -> None:
        """End the response (if the client is still there) and stop the helper tasks."""
        outbox = self._outbox
        if outbox is not None and not self.gone:
            await outbox.flushed()  # the watchdog still runs: a stalled client is dropped
        tasks = [t for t in (self._listener, self._timer) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._listener = self._timer = None
        if not self.gone and outbox is not None and outbox.error is None:
            with contextlib.suppress(Exception):
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})
        if outbox is not None:
            await outbox.close()

    def _gone(self, reason: GoneReason) -> None:
        if self.gone:
            return
        self.gone = True
        if self._on_gone is not None:
            self._on_gone(reason)

    async def _listen(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self._gone("client")
                return

    async def _tick(self) -> None:
        ping, timeout = self._ping_interval, self._send_timeout
        outbox = self._outbox
        assert outbox is not None and ping is not None
        while not self.gone:
            # A ping every `ping` seconds of silence, not a fixed tick that can double the gap.
            await asyncio.sleep(max(_MIN_TICK, self._last_write + ping - self._loop.time()))
            busy = outbox.sending_since or outbox.queued
            if busy or self.gone or self._loop.time() - self._last_write < ping - _MIN_TICK:
                continue
            try:
                await asyncio.wait_for(
                    outbox.send({"type": "http.response.body", "body": _PING, "more_body": True}),
                    timeout,
                )
            except TimeoutError:
                self._stalled()
                return
            except Exception:
                self._gone("client")
                return
            self._last_write = self._loop.time()

    def _stalled(self) -> None:
        self._stuck(f"nothing taken for {self._send_timeout:g} s (send_timeout)")

    def _stuck(self, why: str) -> None:
        if not self.gone:
            logger.warning("SSE client stopped reading (%s); dropping the connection", why)
        self.stuck = True
        self._gone("stuck")
        outbox = self._outbox
        if outbox is not None and outbox.abort():
            return  # reset: a send blocked on it returns by itself
        task = self._task
        if task is not None and outbox is not None and outbox.sending_since:
            task.cancel()  # it is blocked in a send that will never complete


def sse_channel(
    send: Send,
    receive: Receive,
    settings: Settings,
    *,
    watched: bool = True,
    on_gone: Callable[[GoneReason], None] | None = None,
) -> SSEChannel:
    """A response as the settings want it; ``watched``: pinged and dropped when stuck (no
    client reads a detached turn)."""
    streaming = settings.streaming
    return SSEChannel(
        send,
        receive,
        ping_interval=streaming.ping_interval if watched else None,
        send_timeout=streaming.send_timeout if watched else None,
        on_gone=on_gone,
        max_queued=settings.limits.max_queued_bytes,
    )
