"""Slow clients on a real uvicorn, over SSE and WebSocket: a raw socket that stops reading
is dropped ``send_timeout`` after it last took data, its run aborted and its connection
reset, and what the server holds for it meanwhile is bounded by ``Limits.max_queued_bytes``
(``core/outbox.py``), not by the kernel's buffers or the model's speed."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
import time
from typing import Any, Literal

import pytest
import uvloop

from adk_asgi import AdkApp, Limits, StreamingOptions
from adk_asgi.cli.server import WS_PROTOCOL
from adk_asgi.demo import build_demo_agent

from conftest import LoopbackServer, chat_body, user_message

SEND_TIMEOUT = 2.0
Transport = Literal["sse", "ws"]
Loop = Literal["uvloop", "asyncio"]


class UvloopServer(LoopbackServer):
    """As ``adk-asgi serve`` runs: on uvloop (its transports are not asyncio's classes)
    and uvicorn's sans-I/O WebSockets (the plain server keeps uvicorn's default)."""

    def __init__(self, app: Any) -> None:
        super().__init__(app, ws=WS_PROTOCOL)

    def _run(self) -> None:
        self.loop = uvloop.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve())


def _connect(port: int, rcvbuf: int | None) -> socket.socket:
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", port))
    return sock


def _post(port: int, rcvbuf: int | None, text: str) -> socket.socket:
    body = json.dumps(chat_body("stall", user_message(text))).encode()
    sock = _connect(port, rcvbuf)
    sock.sendall(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                 b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    return sock


def _websocket(port: int, rcvbuf: int | None, text: str) -> socket.socket:
    """A hand-made WebSocket client: the handshake, one protocol-A message, then nothing
    read at all (the `websockets` client would read into its own buffers)."""
    sock = _connect(port, rcvbuf)
    key = base64.b64encode(os.urandom(16))
    sock.sendall(b"GET / HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
                 b"sec-websocket-version: 13\r\nsec-websocket-key: " + key + b"\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    payload = json.dumps({"type": "message", "version": "1.0", "data": {"messages": [
        {"role": "user", "content": [{"type": "text", "text": text}]}]}}).encode()
    mask = os.urandom(4)
    assert len(payload) < 1 << 16
    sock.sendall(bytes([0x81, 0x80 | 126]) + struct.pack("!H", len(payload)) + mask
                 + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
    return sock


def _look(server: LoopbackServer, app: AdkApp, transport: Transport,
          seen: dict[str, float]) -> bool:
    """Record what the connection's outbox holds; False once the turn is gone."""

    async def look() -> bool:
        if transport == "sse":
            channels = [t._channel for t in app.chat.turns]  # type: ignore[attr-defined]
            outboxes = [c._outbox for c in channels if c is not None]
        else:
            outboxes = [c.socket._outbox for c in app.live.connections]
        for outbox in outboxes:
            if outbox is not None:
                seen["peak"] = max(seen.get("peak", 0), outbox.peak, outbox.held())
                seen["stalled"] = max(seen.get("stalled", 0), outbox.stalled_for())
        return bool(app.chat.turns if transport == "sse" else app.live.connections)

    assert server.loop is not None
    return asyncio.run_coroutine_threadsafe(look(), server.loop).result(5)


def _stall(transport: Transport, token_delay: float, rcvbuf: int | None,
           max_queued: int, loop: Loop = "uvloop") -> dict[str, Any]:
    """Start a long turn, read nothing; how it ends."""
    app = AdkApp(build_demo_agent(token_delay=token_delay), warm_up=False,
                 streaming=StreamingOptions(send_timeout=SEND_TIMEOUT),
                 limits=Limits(max_queued_bytes=max_queued))
    result: dict[str, Any] = {"transport": transport, "token_delay": token_delay,
                              "loop": loop}
    with (UvloopServer if loop == "uvloop" else LoopbackServer)(app) as server:
        open_ = _post if transport == "sse" else _websocket
        sock = open_(server.port, rcvbuf, "bench 100000")
        try:
            stopped = time.monotonic()  # from here on it reads nothing
            seen: dict[str, float] = {}
            while _look(server, app, transport, seen) and time.monotonic() - stopped < 30:
                time.sleep(0.1)
            result["dropped_after"] = round(time.monotonic() - stopped, 2)
            result.update(seen)
            # The server reset the connection: what the kernel held for the client is
            # gone, and reading it out ends in a reset at once.
            sock.settimeout(5)
            received, deadline = 0, time.monotonic() + 5
            try:
                while chunk := sock.recv(1 << 20):
                    received += len(chunk)
                    if time.monotonic() > deadline:
                        raise TimeoutError
                result["end"] = "eof"
            except ConnectionResetError:
                result["end"] = "reset"
            except TimeoutError:
                result["end"] = "still open"
            result["unread"] = received
        finally:
            sock.close()
    print("slow client:", result)
    return result


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_a_client_that_stops_reading_at_50_tokens_a_second(transport: Transport) -> None:
    """A small receive window (4 KiB): the client's window and the kernel's 16 KiB of
    unsent bytes (TCP_NOTSENT_LOWAT) fill in seconds at ~4 KB/s, then the client is
    dropped ``send_timeout`` after it last took anything — not after megabytes of kernel
    buffers (main: the turn ran to its end)."""
    result = _stall(transport, 0.02, 4096, 1024 * 1024)
    assert result["end"] == "reset", result
    assert result["dropped_after"] < 25, result
    # Progress is what the kernel takes: never more than the timeout and a tick or two.
    assert result["stalled"] <= SEND_TIMEOUT + 2, result
    assert result["peak"] < 128 * 1024, result


@pytest.mark.parametrize(("transport", "loop"), [
    ("sse", "uvloop"), ("ws", "uvloop"), ("sse", "asyncio"), ("ws", "asyncio")])
def test_a_client_that_stops_reading_at_full_speed(transport: Transport, loop: Loop) -> None:
    """The model as fast as it goes, a default socket: the server holds at most
    ``max_queued_bytes`` (plus one write) for the client, then drops it."""
    max_queued = 256 * 1024
    result = _stall(transport, 0.0, None, max_queued, loop)
    assert result["end"] == "reset", result
    assert result["dropped_after"] < 25, result
    assert result["peak"] <= max_queued + 16 * 1024, result
    assert result["unread"] < 8 * 1024 * 1024, result
