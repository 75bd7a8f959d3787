"""Outbox: what one connection (an SSE response or a WebSocket) has queued for its client,
bounded, and whether the client still takes it — the slow-client rule, in one place.

A client that stops reading is only visible through buffers filling up, and ADK queues
the model's events without backpressure, so blocking on a full socket would let the run's
events pile up (~3 KB each) for as long as the send waits. Here:

- **Sends go straight to the server** while the connection keeps up (the common case:
  one ``await send`` per write, nothing else on the hot path).
- **When the server's write buffer is full** (uvicorn: its asyncio transport over its low
  water mark), writes queue here instead, as the bytes they are, and one flusher task
  sends them in order; the producer keeps reading ADK's events, so they do not pile up.
- **Bounded**: over ``max_bytes`` held (queued here plus the server's write buffer) the
  client is *overflowed* (too slow for the stream); with no progress for ``send_timeout``
  it is *stalled*. Progress is a send that completed, or the server's buffer getting
  smaller (the kernel took bytes, so the client's TCP window moved).
- **Dropped for real**: ``abort()`` resets the connection (the ASGI ``send`` cannot: a
  graceful close would wait forever behind the unread bytes).

What the ASGI server shows: ``transport_of(send)`` finds uvicorn's transport behind its
``send`` (HTTP h11/httptools and both WebSocket protocols). When the app is wrapped by
middleware that replaces ``send`` (e.g. a Starlette app's stack), there is no transport:
every send goes straight out, a stalled client is one whose send has waited
``send_timeout``, and it cannot be reset (the server closes it when it can).

``tune()`` sets ``TCP_NOTSENT_LOWAT`` on the connection's socket (Linux): the kernel then
keeps at most that many bytes it has not sent yet, instead of growing its send buffer to
megabytes, so a client that stops reading is seen once its own receive window is full.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections import deque
from typing import Any, Final, cast

from .asgi import Message, Send

__all__ = ("NOTSENT_LOWAT", "Outbox", "transport_of")

NOTSENT_LOWAT: Final = 16 * 1024
_TCP_NOTSENT_LOWAT: Final[int | None] = getattr(socket, "TCP_NOTSENT_LOWAT", None)
_TRANSPORT_METHODS: Final = ("get_write_buffer_size", "get_write_buffer_limits",
                             "get_extra_info", "abort")


def transport_of(send: Send) -> asyncio.WriteTransport | None:
    """The transport behind an ASGI server's ``send`` (uvicorn's protocols keep it on the
    object whose bound method ``send`` is), or None. Checked by what it does, not its
    class: uvloop's transports (uvicorn's default loop) do not derive from asyncio's."""
    owner = getattr(send, "__self__", None)
    transport = getattr(owner, "transport", None)
    if all(callable(getattr(transport, name, None)) for name in _TRANSPORT_METHODS):
        return cast("asyncio.WriteTransport", transport)
    return None


class Outbox:
    """One connection's sends: straight out, or queued (bounded) behind a full buffer."""

    __slots__ = ("_flusher", "_loop", "_max", "_queue", "_send", "_taken", "_transport",
                 "_written", "error", "last_progress", "overflowed", "peak", "queued",
                 "sending_since")

    def __init__(self, send: Send, *, max_bytes: int) -> None:
        self._send = send
        self._transport = transport_of(send)
        self._max = max_bytes
        self._loop = asyncio.get_running_loop()
        self._queue: deque[Message] = deque()
        self._flusher: asyncio.Task[None] | None = None
        self._written = 0  # payload bytes handed to the server
        self._taken = 0  # the most of them the kernel had taken at a look
        self.queued = 0  # bytes waiting here
        self.peak = 0  # the most held at once (here and in the server's buffer)
        self.sending_since = 0.0  # loop time a send began, 0 when none is in flight
        self.last_progress = self._loop.time()
        self.overflowed = False
        self.error: BaseException | None = None  # a queued send failed (the client is gone)

    @property
    def transport(self) -> asyncio.WriteTransport | None:
        return self._transport

    def tune(self) -> None:
        """Keep the kernel's unsent bytes small (see the module docstring)."""
        transport = self._transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        if sock is None or _TCP_NOTSENT_LOWAT is None or sock.family not in (
                socket.AF_INET, socket.AF_INET6):
            return
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, _TCP_NOTSENT_LOWAT, NOTSENT_LOWAT)

    def _backed_up(self) -> bool:
        # The flusher may hold a message it popped but has not written yet: wait behind it.
        if self._flusher is not None:
            return True
        transport = self._transport
        if transport is None:
            return False
        low, _high = transport.get_write_buffer_limits()
        return transport.get_write_buffer_size() > low

    def held(self) -> int:
        """Bytes the server holds for the client: queued here and in its write buffer."""
        transport = self._transport
        return self.queued + (transport.get_write_buffer_size() if transport else 0)

    async def send(self, message: Message) -> None:
        """Send ``message`` now, or queue it behind what waits. Raises what a queued send
        raised earlier (the client is gone)."""
        if self.error is not None:
            raise self.error
        if not self._backed_up():
            await self._now(message)
        else:
            self._queue.append(message)
            self.queued += _size(message)
            if self._flusher is None:
                self._flusher = asyncio.create_task(self._flush(), name="adk-asgi-outbox")
        # Counting the server's buffer too bounds servers that never block a send
        # (uvicorn's wsproto WebSockets): their buffer grows instead of this queue.
        held = self.held()
        self.peak = max(self.peak, held)
        if held > self._max:
            self.overflowed = True

    async def _now(self, message: Message) -> None:
        self.sending_since = self._loop.time()
        try:
            await self._send(message)
        finally:
            self.sending_since = 0.0
        if self._transport is None:
            self.last_progress = self._loop.time()  # the best sign there is without it
        else:
            self._written += _size(message)

    async def _flush(self) -> None:
        queue = self._queue
        try:
            while queue:
                message = queue.popleft()
                # Adjacent SSE writes go out as one.
                while (queue and message["type"] == "http.response.body"
                       and message.get("more_body") and queue[0]["type"] == message["type"]):
                    following = queue.popleft()
                    message = {**following, "body": message["body"] + following["body"]}
                self.queued -= _size(message)
                await self._now(message)
        except Exception as exc:  # the server reports a gone client this way
            self.error = exc
            queue.clear()
            self.queued = 0
        finally:
            self._flusher = None

    async def flushed(self) -> None:
        """Wait until everything queued went to the server (or the flusher was stopped)."""
        while self._flusher is not None:
            await asyncio.wait({self._flusher})

    def stalled_for(self) -> float:
        """Seconds the client has taken nothing while something waits for it (0: nothing
        waits, or it took something just now). With the transport, taking is the kernel
        taking bytes from the server's buffer (the client's TCP window moved); the
        buffer's framing bytes only ever make that count smaller, never a false move."""
        now = self._loop.time()
        transport = self._transport
        buffered = 0
        if transport is not None:
            buffered = transport.get_write_buffer_size()
            taken = self._written - buffered
            if taken > self._taken:
                self._taken = taken
                self.last_progress = now
        if not (self._queue or self.sending_since or buffered):
            self.last_progress = now
            return 0.0
        return now - self.last_progress

    def abort(self) -> bool:
        """Reset the connection (its buffers are dropped); False when the server does not
        let us."""
        self._queue.clear()
        self.queued = 0
        if self._flusher is not None:
            self._flusher.cancel()
        transport = self._transport
        if transport is None:
            return False
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # A reset, not a close: a close would leave the unread bytes queued in the
            # kernel, sending them (and a FIN) for as long as the client lets it.
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
        return True

    async def close(self) -> None:
        """Stop the flusher (the connection is over)."""
        flusher = self._flusher
        if flusher is not None:
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)


def _size(message: Message) -> int:
    body: Any = message.get("body") or message.get("bytes") or message.get("text") or b""
    return len(body)
