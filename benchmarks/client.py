"""Load-generating clients: a raw asyncio HTTP/1.1 SSE reader, an httpx one, and a
WebSocket client (the ``websockets`` package's asyncio client).

Every SSE stream is one request on its own connection. The reader de-chunks the body,
splits SSE frames on the blank line and time-stamps each read, so a stream yields:
frame count, token frames (the contender's text-delta event), time to first frame,
the gaps between frames, and whether it ended complete (terminal marker seen, or a
clean end of a body that carried all the tokens, per contender).

Every WebSocket stream is one connection doing one turn: connect (handshake), send the
user message as one text frame, time-stamp every text frame received until the
contender's end-of-turn marker, close. One text frame is one chunk/event for both
WebSocket contenders.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import WebSocketException


@dataclass(frozen=True, slots=True)
class Contender:
    name: str
    path: str
    body: Callable[[str], dict[str, Any]]
    token_marker: bytes
    done_marker: bytes | None  # None: a clean end of the body is the end
    extra_headers: tuple[tuple[str, str], ...] = ()


def _adk_asgi_body(prompt: str) -> dict[str, Any]:
    return {
        "id": f"chat-{uuid.uuid4().hex}",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": prompt}]}],
    }


def _api_server_body(prompt: str) -> dict[str, Any]:
    return {
        "appName": "bench_agent",
        "userId": "bench",
        "sessionId": uuid.uuid4().hex,
        "newMessage": {"role": "user", "parts": [{"text": prompt}]},
        "streaming": True,
    }


def _ag_ui_body(prompt: str) -> dict[str, Any]:
    return {
        "threadId": uuid.uuid4().hex,
        "runId": uuid.uuid4().hex,
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": prompt}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def _adk_asgi_ws_url(session_id: str) -> str:
    return f"/api/chat?chatId={session_id}"


def _adk_asgi_ws_frame(prompt: str, session_id: str) -> dict[str, Any]:
    # Protocol A (the seeds' envelope); the chat id comes from the URL.
    return {
        "type": "message",
        "version": "1.0",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": prompt}]}],
    }


def _adk_asgi_ws_b_url(session_id: str) -> str:
    return "/api/chat"


def _adk_asgi_ws_b_frame(prompt: str, session_id: str) -> dict[str, Any]:
    # Protocol B (AI SDK v7 WebSocketChatTransport): a `send` with the chat id.
    return {
        "type": "send",
        "requestId": "r1",
        "id": session_id,
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": prompt}]}],
    }


def _run_live_url(session_id: str) -> str:
    return f"/run_live?app_name=bench_agent&user_id=bench&session_id={session_id}&modalities=TEXT"


def _run_live_frame(prompt: str, session_id: str) -> dict[str, Any]:
    return {"content": {"role": "user", "parts": [{"text": prompt}]}}


@dataclass(frozen=True, slots=True)
class WsContender:
    """A WebSocket contender: one connection per stream, one turn per connection."""

    name: str
    url: Callable[[str], str]  # session id -> path and query
    frame: Callable[[str, str], dict[str, Any]]  # (prompt, session id) -> first frame
    token_marker: str
    done_marker: str
    # End markers that end a tool-call reply (ADK's /run_live sends `turnComplete`
    # after the call and again after the answer; adk-asgi one `[DONE]` per message).
    tool_turns: int = 1
    # REST path that creates the session before the socket opens (outside the timed
    # part); None: the server creates it itself.
    session_path: Callable[[str], str] | None = None


# The client protocol of each row (``benchmarks.rows`` says which row uses which).
CONTENDERS: dict[str, Contender | WsContender] = {
    "adk-asgi": Contender(
        "adk-asgi", "/api/chat", _adk_asgi_body, b'"type":"text-delta"', b"data: [DONE]"
    ),
    # The naive bridge speaks the same protocol, with json.dumps' ", " separators.
    "adk-naive": Contender(
        "adk-naive", "/api/chat", _adk_asgi_body, b'"type": "text-delta"', b"data: [DONE]"
    ),
    "adk-api-server": Contender(
        "adk-api-server", "/run_sse", _api_server_body, b'"partial":true', None
    ),
    "ag-ui-adk": Contender(
        "ag-ui-adk",
        "/agui",
        _ag_ui_body,
        b'"type":"TEXT_MESSAGE_CONTENT"',
        b'"type":"RUN_FINISHED"',
        (("accept", "text/event-stream"),),
    ),
    "adk-asgi-live": WsContender(
        "adk-asgi-live", _adk_asgi_ws_url, _adk_asgi_ws_frame, '"type":"text-delta"', "data: [DONE]"
    ),
    # Protocol B (ai 7's WebSocketChatTransport) frames on the same endpoint.
    "adk-asgi-live-b": WsContender(
        "adk-asgi-live-b",
        _adk_asgi_ws_b_url,
        _adk_asgi_ws_b_frame,
        '"type":"text-delta"',
        '{"type":"end"',
    ),
    # The naive live bridge: protocol A frames with json.dumps' ", " separators.
    "adk-naive-live": WsContender(
        "adk-naive-live",
        _adk_asgi_ws_url,
        _adk_asgi_ws_frame,
        '"type": "text-delta"',
        "data: [DONE]",
    ),
    "adk-api-server-live": WsContender(
        "adk-api-server-live",
        _run_live_url,
        _run_live_frame,
        '"partial":true',
        '"turnComplete":true',
        tool_turns=2,
        session_path=lambda sid: f"/apps/bench_agent/users/bench/sessions/{sid}",
    ),
}


@dataclass(slots=True)
class StreamResult:
    status: int = 0
    frames: int = 0
    token_frames: int = 0
    done: bool = False
    clean_end: bool = False
    error: str | None = None
    t_start: float = 0.0
    t_head: float | None = None  # SSE: the response's status line and headers arrived
    t_first: float | None = None
    t_first_token: float | None = None
    t_end: float = 0.0
    t_open: float | None = None  # WebSocket: handshake done, user frame about to go out
    stamps: list[float] = field(default_factory=list)
    chunk: int = 1  # tokens per text frame (the emulator's chunking; 1: a frame per token)

    @property
    def duration(self) -> float:
        return self.t_end - self.t_start

    @property
    def t_zero(self) -> float:
        """Where the first-chunk clocks start: the request's first byte (SSE), the user
        frame (WebSocket; the handshake is `connect`)."""
        return self.t_start if self.t_open is None else self.t_open

    @property
    def ttfc(self) -> float | None:
        return None if self.t_first is None else self.t_first - self.t_zero

    @property
    def ttfb(self) -> float | None:
        """Time to the response's headers (SSE; None elsewhere)."""
        return None if self.t_head is None else self.t_head - self.t_zero

    @property
    def ttft(self) -> float | None:
        return None if self.t_first_token is None else self.t_first_token - self.t_zero

    @property
    def connect(self) -> float | None:
        return None if self.t_open is None else self.t_open - self.t_start

    def complete(self, tokens: int) -> bool:
        return (
            self.status in (101, 200)
            and self.error is None
            and self.token_frames == -(-tokens // self.chunk)
            and (self.done or self.clean_end)
        )

    def received(self, tokens: int) -> int:
        """Tokens received of a "bench ``tokens``" reply (whole chunks count in full, the
        last one may be shorter)."""
        return min(tokens, self.token_frames * self.chunk)


class _SSECounter:
    """Splits a byte stream into SSE frames and counts them."""

    __slots__ = ("buf", "contender", "keep_stamps", "result")

    def __init__(self, contender: Contender, result: StreamResult, keep_stamps: bool) -> None:
        self.contender = contender
        self.result = result
        self.keep_stamps = keep_stamps
        self.buf = b""

    def feed(self, data: bytes, now: float) -> None:
        buf = self.buf + data
        *frames, self.buf = buf.split(b"\n\n")
        if not frames:
            return
        result = self.result
        marker = self.contender.token_marker
        done_marker = self.contender.done_marker
        for frame in frames:
            if not frame.startswith(b"data:"):
                continue  # comments (pings)
            result.frames += 1
            if marker in frame:
                result.token_frames += 1
                if result.t_first_token is None:
                    result.t_first_token = now
            elif done_marker is not None and done_marker in frame:
                result.done = True
            elif frame.startswith(b'data: {"error"'):
                result.error = frame[:200].decode(errors="replace")
        if result.t_first is None:
            result.t_first = now
        if self.keep_stamps:
            result.stamps.extend([now] * len(frames))


async def raw_stream(
    host: str,
    port: int,
    contender: Contender,
    prompt: str,
    *,
    keep_stamps: bool = False,
    limit_s: float = 120.0,
    opened: asyncio.Event | None = None,
    hold: asyncio.Event | None = None,
) -> StreamResult:
    """One streamed request over a raw asyncio connection (HTTP/1.1, chunked body).

    ``opened`` is set once the response headers arrived; with ``hold`` the stream
    then waits for that event and closes (idle-memory measurement)."""
    result = StreamResult()
    body = json.dumps(contender.body(prompt)).encode()
    head = [
        f"POST {contender.path} HTTP/1.1",
        f"host: {host}:{port}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
    ]
    head += [f"{k}: {v}" for k, v in contender.extra_headers]
    request = ("\r\n".join(head) + "\r\n\r\n").encode() + body
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(limit_s):
            result.t_start = time.perf_counter()
            reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
            writer.write(request)
            header_block = await reader.readuntil(b"\r\n\r\n")
            result.t_head = time.perf_counter()
            status_line, *header_lines = header_block.decode("latin-1").split("\r\n")
            result.status = int(status_line.split()[1])
            headers = {}
            for line in header_lines:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            if opened is not None:
                opened.set()
            if hold is not None:
                await hold.wait()
                result.t_end = time.perf_counter()
                return result
            counter = _SSECounter(contender, result, keep_stamps)
            if headers.get("transfer-encoding", "").lower() == "chunked":
                await _read_chunked(reader, counter)
            else:
                while data := await reader.read(65536):
                    counter.feed(data, time.perf_counter())
                result.clean_end = True
            result.t_end = time.perf_counter()
    except TimeoutError:
        result.error = "timeout"
        result.t_end = time.perf_counter()
    except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        result.t_end = time.perf_counter()
    finally:
        if writer is not None:
            writer.close()
    return result


async def _read_chunked(reader: asyncio.StreamReader, counter: _SSECounter) -> None:
    buf = b""
    while True:
        data = await reader.read(65536)
        if not data:
            raise asyncio.IncompleteReadError(buf, None)
        now = time.perf_counter()
        buf += data
        out: list[bytes] = []
        while True:
            eol = buf.find(b"\r\n")
            if eol < 0:
                break
            size = int(buf[:eol].split(b";", 1)[0], 16)
            if size == 0:
                if out:
                    counter.feed(b"".join(out), now)
                counter.result.clean_end = True
                return
            end = eol + 2 + size
            if len(buf) < end + 2:
                break
            out.append(buf[eol + 2 : end])
            buf = buf[end + 2 :]
        if out:
            counter.feed(b"".join(out), now)


async def httpx_stream(
    client: httpx.AsyncClient,
    base: str,
    contender: Contender,
    prompt: str,
    *,
    keep_stamps: bool = False,
    limit_s: float = 120.0,
) -> StreamResult:
    """The same measurement through ``httpx.AsyncClient`` (for comparison)."""
    result = StreamResult()
    try:
        async with asyncio.timeout(limit_s):
            result.t_start = time.perf_counter()
            async with client.stream(
                "POST",
                base + contender.path,
                json=contender.body(prompt),
                headers=dict(contender.extra_headers),
            ) as response:
                result.status = response.status_code
                result.t_head = time.perf_counter()
                counter = _SSECounter(contender, result, keep_stamps)
                async for data in response.aiter_raw():
                    counter.feed(data, time.perf_counter())
                result.clean_end = True
            result.t_end = time.perf_counter()
    except TimeoutError:
        result.error = "timeout"
        result.t_end = time.perf_counter()
    except httpx.HTTPError as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        result.t_end = time.perf_counter()
    return result


class WsPhases:
    """Events that pause a WebSocket stream between its phases (idle-memory runs):
    ``connected`` is set by the stream after the handshake, then it waits for ``go``
    before sending its turn; ``turned`` is set after the turn, then it waits for
    ``release`` before closing."""

    __slots__ = ("connected", "go", "release", "turned")

    def __init__(self, go: asyncio.Event, release: asyncio.Event) -> None:
        self.connected = asyncio.Event()
        self.turned = asyncio.Event()
        self.go = go
        self.release = release


async def connect_ws(host: str, port: int, path: str, compression: str | None) -> ClientConnection:
    """The benchmark's WebSocket client: no size limit, proxy, pings or open timeout (the
    caller's limit bounds it), ``compression`` offered as a browser would."""
    return await ws_connect(
        f"ws://{host}:{port}{path}",
        compression=compression,
        max_size=None,
        proxy=None,
        ping_interval=None,
        open_timeout=None,
        close_timeout=5,
    )


async def ws_stream(
    host: str,
    port: int,
    contender: WsContender,
    prompt: str,
    *,
    session_id: str,
    keep_stamps: bool = False,
    limit_s: float = 120.0,
    turns: int = 1,
    compression: str | None = "deflate",
    phases: WsPhases | None = None,
) -> StreamResult:
    """One connection doing one turn: handshake, the user frame, frames to the end
    marker (``turns`` of them), close. ``compression="deflate"`` offers
    permessage-deflate like browsers do; no Origin header (not a browser)."""
    result = StreamResult()
    frame = json.dumps(contender.frame(prompt, session_id))
    marker, done_marker = contender.token_marker, contender.done_marker
    stamps = result.stamps
    ws = None
    try:
        async with asyncio.timeout(limit_s):
            result.t_start = time.perf_counter()
            ws = await connect_ws(host, port, contender.url(session_id), compression)
            result.status = 101
            if phases is not None:
                phases.connected.set()
                await phases.go.wait()
            result.t_open = time.perf_counter()
            await ws.send(frame)
            ends = 0
            async for message in ws:
                now = time.perf_counter()
                if not isinstance(message, str):
                    continue
                result.frames += 1
                if result.t_first is None:
                    result.t_first = now
                if keep_stamps:
                    stamps.append(now)
                if marker in message:
                    result.token_frames += 1
                    if result.t_first_token is None:
                        result.t_first_token = now
                elif done_marker in message:
                    ends += 1
                    if ends >= turns:
                        result.done = True
                        break
                elif message.startswith('data: {"type":"error"'):
                    result.error = message[:200]
            result.t_end = time.perf_counter()
            if not result.done and result.error is None:
                result.error = f"closed before the end of the turn ({ws.close_code})"
            if phases is not None:
                phases.turned.set()
                await phases.release.wait()
    except TimeoutError:
        result.error = "timeout"
        result.t_end = time.perf_counter()
    except (OSError, WebSocketException) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        result.t_end = time.perf_counter()
    finally:
        if ws is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5):
                    await ws.close()
    return result
