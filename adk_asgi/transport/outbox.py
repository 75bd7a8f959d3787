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
- **Bounded**: over ``max_bytes`` held (queued here plus the server's write buffer) *beyond
  the largest message among them* the client is *overflowed* (too slow for the stream).
  One message is never the client's fault: a 5 MiB tool result sits in the buffers whole
  while a client reading at any speed takes it, and only what piles up behind it counts
  (the largest message is remembered until the backlog is back under ``max_bytes``). So
  what one client costs is at most ``max_bytes`` plus one message, which the run held in
  memory anyway; a client that takes nothing is the stall rule's.
- **Stalled**: data has waited for the client ``send_timeout`` without the client taking
  any. "Taking" is the client's kernel acknowledging bytes (Linux: ``TCP_INFO``'s
  ``tcpi_bytes_acked``; elsewhere the server's write buffer getting smaller); "waiting"
  is bytes queued here, in the server's buffer or in the kernel unacknowledged. A timer
  callback (no task) looks every ``PROGRESS_TICK`` seconds while anything waits, and
  exactly at the deadline, so the client is dropped at least ``send_timeout``
  and at most ``send_timeout + PROGRESS_TICK`` after the later of its last take and the
  moment data started to wait; a connection with nothing to send costs no timer.
- **Dropped for real**: ``abort()`` resets the connection (the ASGI ``send`` cannot: a
  graceful close would wait forever behind the unread bytes).

What no server can see: a client whose *application* stops reading while its kernel keeps
accepting bytes. Linux grows a receive buffer that is not read (measured on 6.18 with a
client that never reads, 50 tokens/s: 128 KiB -> 500 KiB in two minutes, its advertised
window a constant 64 KiB, ``TCP_INFO`` and ``SIOCOUTQ`` the same as for a client that
reads), up to ``net.ipv4.tcp_rmem``'s maximum; only then does the stall show here. That
cost is bounded per turn instead (``Limits.max_turn_seconds``, ``Limits.max_turn_bytes``).

What the ASGI server shows: ``transport_of(send)`` finds uvicorn's transport behind its
``send`` (HTTP h11/httptools and every WebSocket protocol). When the app is wrapped by
middleware that replaces ``send`` (e.g. a Starlette app's stack), there is no transport:
every send goes straight out, a stalled client is one whose send has waited
``send_timeout``, and it cannot be reset (the server closes it when it can).

``tune()`` sets ``TCP_NOTSENT_LOWAT`` on the connection's socket (Linux): the kernel then
keeps at most that many bytes it has not sent yet, instead of growing its send buffer to
megabytes, so the server's own memory per stalled client stays small.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections import deque
from collections.abc import Callable
from typing import Any, Final, cast

from .asgi import Message, Send

__all__ = ("NOTSENT_LOWAT", "PROGRESS_TICK", "Outbox", "kernel_progress", "transport_of")

NOTSENT_LOWAT: Final = 16 * 1024
PROGRESS_TICK: Final = 0.25
"""Seconds between two looks at a client's progress while data waits for it: the
precision of the stall rule (the drop comes at most this late)."""
_TCP_NOTSENT_LOWAT: Final[int | None] = getattr(socket, "TCP_NOTSENT_LOWAT", None)
_TCP_INFO: Final[int | None] = getattr(socket, "TCP_INFO", None)
# struct tcp_info (linux/tcp.h): tcpi_unacked (segments) at 24, tcpi_bytes_acked at 120,
# tcpi_notsent_bytes at 144 (Linux 4.6+).
_TCP_INFO_SIZE: Final = 148
_TRANSPORT_METHODS: Final = (
    "get_write_buffer_size",
    "get_write_buffer_limits",
    "get_extra_info",
    "abort",
)


def transport_of(send: Send) -> asyncio.WriteTransport | None:
    """The transport behind an ASGI server's ``send`` (uvicorn's protocols keep it on the
    object whose bound method ``send`` is), or None. Checked by what it does, not its
    class: uvloop's transports (uvicorn's default loop) do not derive from asyncio's."""
    owner = getattr(send, "__self__", None)
    transport = getattr(owner, "transport", None)
    if all(callable(getattr(transport, name, None)) for name in _TRANSPORT_METHODS):
        return cast("asyncio.WriteTransport", transport)
    return None


def kernel_progress(sock: Any) -> tuple[int, bool] | None:
    """``(bytes the peer acknowledged, whether the kernel still holds bytes for it)`` from
    ``TCP_INFO``, or None where the platform or the socket does not tell."""
    if sock is None or _TCP_INFO is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 256)
    except (OSError, ValueError):  # closed (uvloop's socket raises ValueError then)
        return None
    if len(info) < _TCP_INFO_SIZE:
        return None
    (unacked,) = struct.unpack_from("I", info, 24)
    (acked,) = struct.unpack_from("Q", info, 120)
    (notsent,) = struct.unpack_from("I", info, 144)
    return acked, bool(unacked or notsent)


class Outbox:
    """One connection's sends: straight out, or queued (bounded) behind a full buffer;
    the stall watch (``watch``) that drops a client that takes nothing."""

    __slots__ = (
        "_acked",
        "_flusher",
        "_idle",
        "_largest",
        "_loop",
        "_max",
        "_on_stall",
        "_queue",
        "_send",
        "_sock",
        "_taken",
        "_timeout",
        "_timer",
        "_transport",
        "_written",
        "error",
        "last_progress",
        "overflowed",
        "peak",
        "queued",
        "sending_since",
    )

    def __init__(self, send: Send, *, max_bytes: int) -> None:
        self._send = send
        self._transport = transport_of(send)
        self._max = max_bytes
        self._loop = asyncio.get_running_loop()
        self._queue: deque[Message] = deque()
        self._flusher: asyncio.Task[None] | None = None
        self._written = 0  # payload bytes handed to the server
        self._taken = 0  # the most of them the server's buffer had passed on at a look
        self._sock: Any = None  # the socket, when TCP_INFO tells about it
        self._acked = 0  # bytes the peer acknowledged at the last look (TCP_INFO)
        self._timeout: float | None = None
        self._on_stall: Callable[[], None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._idle = True  # nothing waited for the client at the last look
        self._largest = 0  # the largest message sent since the backlog was last <= max
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
        sock = self._socket()
        if sock is None or _TCP_NOTSENT_LOWAT is None:
            return
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, _TCP_NOTSENT_LOWAT, NOTSENT_LOWAT)

    def _socket(self) -> Any:
        transport = self._transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
            return None
        return sock

    def watch(self, timeout: float | None, on_stall: Callable[[], None]) -> None:
        """Call ``on_stall`` (once) when data has waited ``timeout`` seconds without the
        client taking any; None: never."""
        if not timeout:
            return
        self._timeout = timeout
        self._on_stall = on_stall
        sock = self._socket()
        progress = kernel_progress(sock)
        if progress is not None:
            self._sock = sock
            self._acked = progress[0]

    def held(self) -> int:
        """Bytes the server holds for the client: queued here and in its write buffer."""
        transport = self._transport
        return self.queued + (transport.get_write_buffer_size() if transport else 0)

    async def send(self, message: Message) -> None:
        """Send ``message`` now, or queue it behind what waits. Raises what a queued send
        raised earlier (the client is gone)."""
        if self.error is not None:
            raise self.error
        if self._idle:
            self._begin_waiting()
        size = _size(message)
        # A frame per token: the server's buffer is read once before the send, once after.
        transport = self._transport
        buffered = transport.get_write_buffer_size() if transport is not None else 0
        if self.queued + buffered <= self._max:
            self._largest = size  # the backlog drained: earlier messages were taken
        elif size > self._largest:
            self._largest = size
        # The flusher may hold a message it popped but has not written yet: wait behind it.
        if self._flusher is None and (
            transport is None or buffered <= transport.get_write_buffer_limits()[0]
        ):
            self.sending_since = self._loop.time()
            try:
                await self._send(message)
            finally:
                self.sending_since = 0.0
            if transport is not None:
                self._written += size
            else:  # the best sign of progress there is without it
                self.last_progress = self._loop.time()
        else:
            self._queue.append(message)
            self.queued += size
            if self._flusher is None:
                self._flusher = asyncio.create_task(self._flush(), name="adk-asgi-outbox")
        # Counting the server's buffer too bounds servers that never block a send
        # (uvicorn's wsproto WebSockets): their buffer grows instead of this queue.
        held = self.queued + (transport.get_write_buffer_size() if transport is not None else 0)
        self.peak = max(self.peak, held)
        if held > self._max + self._largest:
            self.overflowed = True

    def _begin_waiting(self) -> None:
        """The first send after a look found nothing waiting: the stall clock starts now,
        and the watch looks again within ``PROGRESS_TICK``."""
        self._idle = False
        self.last_progress = now = self._loop.time()
        if self._timer is None and self._on_stall is not None:
            self._timer = self._loop.call_at(now + PROGRESS_TICK, self._look)

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
                while (
                    queue
                    and message["type"] == "http.response.body"
                    and message.get("more_body")
                    and queue[0]["type"] == message["type"]
                ):
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
        """Seconds data has waited for the client without it taking any (0: nothing waits).
        Updates what the client took; the watch calls it, tests may too."""
        now = self._loop.time()
        transport = self._transport
        buffered = transport.get_write_buffer_size() if transport is not None else 0
        in_kernel = False
        if self._sock is not None:
            progress = kernel_progress(self._sock)
            acked, in_kernel = progress if progress is not None else (self._acked, False)
            if acked > self._acked:
                self._acked = acked
                self.last_progress = now
        elif transport is not None:
            # The server's buffer getting smaller: its framing bytes only ever make this
            # count smaller, never a false move.
            taken = self._written - buffered
            if taken > self._taken:
                self._taken = taken
                self.last_progress = now
        if not (self._queue or self.sending_since or buffered or in_kernel):
            self.last_progress = now
            self._idle = True
            return 0.0
        self._idle = False
        return now - self.last_progress

    def _look(self) -> None:
        self._timer = None
        timeout, on_stall = self._timeout, self._on_stall
        if timeout is None or on_stall is None:
            return
        stalled = self.stalled_for()
        if stalled >= timeout:
            self._on_stall = None
            on_stall()
            return
        if self._idle:
            return  # nothing waits: the next send starts the clock and the watch again
        due = min(self._loop.time() + PROGRESS_TICK, self.last_progress + timeout)
        self._timer = self._loop.call_at(due, self._look)

    def abort(self) -> bool:
        """Reset the connection (its buffers are dropped); False when the server does not
        let us."""
        self._stop_watch()
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

    def _stop_watch(self) -> None:
        self._on_stall = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def close(self) -> None:
        """Stop the flusher and the watch (the connection is over)."""
        self._stop_watch()
        flusher = self._flusher
        if flusher is not None:
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)


def _size(message: Message) -> int:
    body: Any = message.get("body") or message.get("bytes") or message.get("text") or b""
    return len(body)
