"""Slow clients on a real uvicorn, over SSE and WebSocket: a raw socket that stops reading
is dropped ``send_timeout`` after it last took data, its run aborted and its connection
reset, and what the server holds for it meanwhile is bounded by ``Limits.max_queued_bytes``
(``transport/outbox.py``), not by the kernel's buffers or the model's speed."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import struct
import time
from typing import Any, Literal

import httpx
import pytest
import uvloop

from adk_asgi import AdkApp, Limits, StreamingOptions, SurfaceOptions
from adk_asgi.cli.server import WS_PROTOCOL
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, chat_body, user_message

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
    sock.sendall(
        b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    return sock


def _websocket(port: int, rcvbuf: int | None, text: str) -> socket.socket:
    """A hand-made WebSocket client: the handshake, one protocol-A message, then nothing
    read at all (the `websockets` client would read into its own buffers)."""
    sock = _connect(port, rcvbuf)
    key = base64.b64encode(os.urandom(16))
    sock.sendall(
        b"GET / HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
        b"sec-websocket-version: 13\r\nsec-websocket-key: " + key + b"\r\n\r\n"
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    payload = json.dumps(
        {
            "type": "message",
            "version": "1.0",
            "data": {"messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]},
        }
    ).encode()
    mask = os.urandom(4)
    assert len(payload) < 1 << 16
    sock.sendall(
        bytes([0x81, 0x80 | 126])
        + struct.pack("!H", len(payload))
        + mask
        + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    )
    return sock


def _look(
    server: LoopbackServer, app: AdkApp, transport: Transport, seen: dict[str, float]
) -> bool:
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


def _stall(
    transport: Transport,
    token_delay: float,
    rcvbuf: int | None,
    max_queued: int,
    loop: Loop = "uvloop",
) -> dict[str, Any]:
    """Start a long turn, read nothing; how it ends."""
    app = AdkApp(
        build_demo_agent(token_delay=token_delay),
        warm_up=False,
        streaming=StreamingOptions(send_timeout=SEND_TIMEOUT),
        limits=Limits(max_queued_bytes=max_queued),
    )
    result: dict[str, Any] = {"transport": transport, "token_delay": token_delay, "loop": loop}
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


@pytest.mark.parametrize(
    ("transport", "loop"),
    [("sse", "uvloop"), ("ws", "uvloop"), ("sse", "asyncio"), ("ws", "asyncio")],
)
def test_a_client_that_stops_reading_at_full_speed(transport: Transport, loop: Loop) -> None:
    """The model as fast as it goes, a default socket: the server holds at most
    ``max_queued_bytes`` (plus one write) for the client, then drops it."""
    max_queued = 256 * 1024
    result = _stall(transport, 0.0, None, max_queued, loop)
    assert result["end"] == "reset", result
    assert result["dropped_after"] < 25, result
    assert result["peak"] <= max_queued + 16 * 1024, result
    assert result["unread"] < 8 * 1024 * 1024, result


# -- a client whose kernel keeps accepting: the turn's ceilings (issue 24, item 1) ----------


def _counting_app(**options: Any) -> tuple[AdkApp, list[float]]:
    """The demo agent at 50 tokens/s; the loop time of every ADK event the run yields (the
    model's output reaching the bridge), to see when the model stopped."""
    events: list[float] = []

    def count(_event: Any, _parts: Any) -> None:
        events.append(time.monotonic())

    app = AdkApp(
        build_demo_agent(token_delay=options.pop("token_delay", 0.02)),
        warm_up=False,
        surface=SurfaceOptions(on_event=count),
        **options,
    )
    return app, events


def _read_all(sock: socket.socket, within: float = 10.0) -> bytes:
    sock.settimeout(within)
    data = b""
    while chunk := sock.recv(1 << 20):
        data += chunk
    return data


def test_a_client_that_never_reads_but_whose_kernel_accepts_is_stopped_at_the_ceiling() -> None:
    """Default socket options (the client's kernel autotunes its receive buffer, and Linux
    grows one that is never read), 50 tokens/s: the kernel takes every byte, so the stall
    rule cannot fire; ``Limits.max_turn_seconds`` stops the turn and the model (main: the
    turn ran its 5,000 tokens)."""
    ceiling = 2.0
    app, events = _counting_app(
        streaming=StreamingOptions(send_timeout=SEND_TIMEOUT),
        limits=Limits(max_turn_seconds=ceiling),
    )
    with UvloopServer(app) as server:
        # Before the request: the server's turn (and its ceiling) starts after this.
        started = time.monotonic()
        sock = _post(server.port, None, "bench 5000")
        try:
            seen: dict[str, float] = {}
            while _look(server, app, "sse", seen) and time.monotonic() - started < 20:
                time.sleep(0.02)
            ended = time.monotonic() - started
            assert not app.chat.turns, "the turn still runs"
            # The model stopped: no event reached the bridge after the turn ended.
            last_event = events[-1] - started
            time.sleep(0.5)
            assert events[-1] - started == last_event
            body = _read_all(sock)
        finally:
            sock.close()
    print(
        f"ceiling {ceiling} s: turn ended after {ended:.2f} s, last model event at "
        f"{last_event:.2f} s, {len(events)} events, stalled at most "
        f"{seen.get('stalled', 0):.2f} s, {len(body)} bytes taken by the client"
    )
    assert ended >= ceiling, ended
    # The abort lands when ADK next yields: at most the event in the making when the
    # ceiling came, then the turn ends at once. (Under heavy load the model's events come
    # seconds apart; the bound is counted in events, not in seconds, for that reason.)
    # The turn started between `started` and its first model event: events from the first
    # one's time + the ceiling on are surely past the server's ceiling.
    after = [t - events[0] for t in events if t - events[0] >= ceiling]
    assert len(after) <= 2, after
    assert ended <= (after[0] if after else ceiling) + 0.5, (ended, after)
    assert seen.get("stalled", 0) < SEND_TIMEOUT  # the kernel kept taking: never a stall
    assert len(events) >= 2  # it streamed until then
    # What the client's kernel took: the tokens, then the ceiling's error and [DONE].
    assert (
        b'"errorText":"The answer took longer than the server allows and was stopped."' in body
    ), body[-400:]
    assert body.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n"), body[-200:]  # chunked


def test_the_bytes_ceiling_stops_a_turn_at_full_speed() -> None:
    """``Limits.max_turn_bytes``: the turn stops once its stream passed the ceiling; the
    client gets what came before, then the ceiling's ``error`` and ``[DONE]``."""
    ceiling = 96 * 1024
    app, _events = _counting_app(token_delay=0.0, limits=Limits(max_turn_bytes=ceiling))
    with UvloopServer(app) as server:
        sock = _post(server.port, None, "bench 5000")
        try:
            body = _read_all(sock, within=20)
        finally:
            sock.close()
    assert b"grew larger than the server allows and was stopped." in body, body[-400:]
    assert body.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n"), body[-200:]  # chunked
    assert ceiling < len(body) < ceiling + 16 * 1024, len(body)


# -- the drop time at its bound (issue 24, item 2) ---------------------------------------


def _client_state(sock: socket.socket) -> tuple[int, int]:
    """(TCP state, bytes received and not read) of the client's socket."""
    import fcntl
    import termios

    state = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]
    unread = struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0" * 4))[0]
    return state, unread


@pytest.mark.parametrize("transport", ["sse", "ws"])
def test_the_drop_comes_send_timeout_after_the_client_last_took_data(transport: Transport) -> None:
    """A 4 KiB receive window that fills at 50 tokens/s: the client's kernel takes its
    last bytes, then the connection is reset at least ``send_timeout`` and at most
    ``send_timeout + PROGRESS_TICK`` later (plus the loop's latency), as the docs say.
    Main looked every quarter of the timeout and counted from its look, with a strict
    ``>``: 2.5-3.0 s here."""
    from adk_asgi.transport.outbox import PROGRESS_TICK

    app = AdkApp(
        build_demo_agent(token_delay=0.02),
        warm_up=False,
        streaming=StreamingOptions(send_timeout=SEND_TIMEOUT),
    )
    with UvloopServer(app) as server:
        sock = (_post if transport == "sse" else _websocket)(server.port, 4096, "bench 5000")
        try:
            last_take, unread, state = time.monotonic(), 0, 1
            deadline = last_take + 30
            while state == 1 and time.monotonic() < deadline:  # TCP_ESTABLISHED
                state, now_unread = _client_state(sock)
                if now_unread > unread:
                    unread, last_take = now_unread, time.monotonic()
                time.sleep(0.002)
            reset_after = time.monotonic() - last_take
        finally:
            sock.close()
    print(
        f"{transport}: reset {reset_after:.3f} s after the client's kernel last took "
        f"data ({unread} bytes unread)"
    )
    assert state != 1, "never reset"
    assert SEND_TIMEOUT - 0.01 <= reset_after <= SEND_TIMEOUT + PROGRESS_TICK + 0.15, reset_after


def test_a_websocket_client_that_never_reads_is_closed_by_keepalive() -> None:
    """The WebSocket side of a client whose kernel keeps accepting: uvicorn's keepalive
    ping needs a pong from the client's WebSocket layer, which a program that never reads
    does not run; the connection and its run end one ping interval and one timeout later
    (0.5 s + 0.5 s here; ``adk-asgi serve`` keeps uvicorn's 20 s + 20 s)."""
    app, events = _counting_app()

    class Pinging(UvloopServer):
        def __init__(self, app: Any) -> None:
            LoopbackServer.__init__(
                self, app, ws=WS_PROTOCOL, ws_ping_interval=0.5, ws_ping_timeout=0.5
            )

    with Pinging(app) as server:
        sock = _websocket(server.port, None, "bench 5000")
        try:
            started = time.monotonic()
            seen: dict[str, float] = {}
            while _look(server, app, "ws", seen) and time.monotonic() - started < 20:
                time.sleep(0.02)
            ended = time.monotonic() - started
            assert not app.live.connections, "the connection is still served"
            last_event = events[-1]
            time.sleep(0.5)
            assert events[-1] == last_event  # the model stopped with it
        finally:
            sock.close()
    print(f"keepalive 0.5 + 0.5 s: connection ended after {ended:.2f} s")
    assert ended < 0.5 + 0.5 + 1.0, ended


def test_the_kernel_hides_a_client_that_never_reads() -> None:
    """Why the turn ceilings exist (docs/reference/limits.md): at 50 writes/s, a client that
    never reads and one that reads look the same from the server's socket — every byte
    acknowledged, nothing unsent, the same advertised window — and neither
    ``TCP_WINDOW_CLAMP`` nor a small ``SO_SNDBUF`` on the server's socket changes that."""
    import threading

    from adk_asgi.transport.outbox import NOTSENT_LOWAT, kernel_progress

    frame = b'data: {"type":"text-delta","id":"t","delta":"word "}\n\n'
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    pairs: dict[str, tuple[socket.socket, socket.socket]] = {}
    for name in ("reads", "never reads", "never reads, clamped", "never reads, small sndbuf"):
        client = socket.create_connection(("127.0.0.1", port))
        server, _ = listener.accept()
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NOTSENT_LOWAT, NOTSENT_LOWAT)
        if name.endswith("clamped"):
            server.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, 16 * 1024)
        if name.endswith("sndbuf"):
            server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16 * 1024)
        server.setblocking(False)
        pairs[name] = (client, server)
    reader_client = pairs["reads"][0]
    stop = threading.Event()

    def read() -> None:
        reader_client.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                reader_client.recv(65536)

    thread = threading.Thread(target=read)
    thread.start()
    written = dict.fromkeys(pairs, 0)
    try:
        deadline, due = time.monotonic() + 5, time.monotonic()
        while time.monotonic() < deadline:  # 5 s at 50 writes/s
            for name, (_, server) in pairs.items():
                written[name] += server.send(frame)
            due += 0.02
            time.sleep(max(0.0, due - time.monotonic()))
        time.sleep(0.2)  # the last ACKs
        seen = {}
        for name, (_, server) in pairs.items():
            progress = kernel_progress(server)
            assert progress is not None
            window = struct.unpack_from(
                "I", server.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256), 228
            )[0]  # tcpi_snd_wnd
            seen[name] = (progress[0], progress[1], window)
    finally:
        stop.set()
        thread.join()
        for client, server in pairs.values():
            client.close()
            server.close()
        listener.close()
    print("server's view after 5 s:", seen, "written:", written)
    for name, (acked, holding, window) in seen.items():
        assert acked == written[name], (name, acked, written[name])  # all acknowledged
        assert not holding, name  # nothing unacknowledged or unsent
        assert window == seen["reads"][2], (name, window)  # the same advertised window


def test_a_stuck_clients_turn_is_stopped_for_its_followers_and_in_the_history() -> None:
    """Issue 28's leftover: a client dropped as stuck stops its turn (the run is aborted,
    ADK seals it): a follower of the turn (``GET {chatId}/stream``) gets the stream and then
    ``abort`` and ``[DONE]``, as for a stop, never an end without a final chunk; a later
    resume answers 204 (nothing is running), and the history shows the turn sealed as
    stopped (no error, no ``data-interrupted``): resume and history agree."""
    app = AdkApp(
        build_demo_agent(token_delay=0.0),
        warm_up=False,
        streaming=StreamingOptions(send_timeout=SEND_TIMEOUT),
        limits=Limits(max_queued_bytes=256 * 1024),
    )
    followed: list[bytes] = []
    with UvloopServer(app) as server:
        sock = _post(server.port, None, "bench 100000")
        try:
            with httpx.Client(base_url=server.url, timeout=30) as client:
                with client.stream("GET", "/stall/stream") as response:
                    assert response.status_code == 200
                    followed.extend(response.iter_bytes())
                assert client.get("/stall/stream").status_code == 204
                history = client.get("/stall").json()["messages"]
        finally:
            sock.close()
    frames = [f for f in b"".join(followed).split(b"\n\n") if f.startswith(b"data: ")]
    assert frames[-2:] == [b'data: {"type":"abort"}', b"data: [DONE]"], frames[-3:]
    assert b'"type":"error"' not in b"".join(frames)
    last = history[-1]
    assert last["role"] == "assistant"
    assert not [p for p in last["parts"] if p["type"] in ("data-interrupted", "error")]
