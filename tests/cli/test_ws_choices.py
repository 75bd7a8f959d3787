"""Every ``adk-asgi serve --ws`` choice on a real CLI process (issue 24, items 7 and 8): a
live chat turn works, and bad frames — invalid UTF-8 (three in one connection) and six
protocol violations — are closed with the right code (1007, 1002) while the log gets
nothing for them beyond uvicorn's access lines for the connection (main: sans-I/O logged
an ERROR with a traceback per invalid frame; wsproto closed without a close frame, 1006;
``--ws wsproto`` without the package crashed at start). A choice whose package is missing
is one line at start-up."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from websockets.asyncio.client import connect

from adk_asgi.cli.server import WS_CHOICES, ws_missing

from support import ROOT, Serve


def _frame(
    opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, mask: bool = True
) -> bytes:
    head = bytes([(0x80 if fin else 0) | rsv | opcode])
    length = len(payload)
    head += (
        bytes([(0x80 if mask else 0) | length])
        if length < 126
        else bytes([(0x80 if mask else 0) | 126]) + struct.pack("!H", length)
    )
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


# What a client sends, and the close code it must get back.
BAD_FRAMES = {
    "three invalid UTF-8 text frames": (
        [_frame(1, b"\xff\xfe"), _frame(1, b"\xc3\x28"), _frame(1, b"\xed\xa0\x80")],
        1007,
    ),
    "an unmasked frame": ([_frame(1, b"hi", mask=False)], 1002),
    "reserved bits": ([_frame(1, b"hi", rsv=0x40)], 1002),
    "a reserved opcode": ([_frame(3, b"hi")], 1002),
    "a ping over 125 bytes": ([_frame(9, b"x" * 200)], 1002),
    "a fragmented ping": ([_frame(9, b"x", fin=False)], 1002),
    "a stray continuation": ([_frame(0, b"hi")], 1002),
}


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Serve]]:
    """One CLI process per choice, started together (their start-ups overlap)."""
    missing = {choice: ws_missing(choice) for choice in WS_CHOICES}
    assert not any(missing.values()), (
        f"{missing}: the test extra brings every --ws package (pip install -e '.[test]')"
    )
    started = {
        choice: Serve("--ws", choice, token_delay=0, log_level="info") for choice in WS_CHOICES
    }
    try:
        for served in started.values():
            served.wait_ready()
        yield started
    finally:
        for served in started.values():
            served.stop()


def _open(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16))
    sock.sendall(
        b"GET /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\nupgrade: websocket\r\n"
        b"connection: Upgrade\r\nsec-websocket-version: 13\r\n"
        b"sec-websocket-key: " + key + b"\r\n\r\n"
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def _close_code(sock: socket.socket) -> int | None:
    """The code of the server's close frame (None: the socket closed without one)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    at = data.find(b"\x88")
    if at < 0 or len(data) < at + 4:
        return None
    return int(struct.unpack("!H", data[at + 2 : at + 4])[0])


async def _chat(url: str) -> list[str]:
    async with connect(url.replace("http://", "ws://")) as ws:
        await ws.send(
            json.dumps(
                {
                    "type": "message",
                    "version": "1.0",
                    "data": {
                        "messages": [
                            {"role": "user", "content": [{"type": "text", "text": "hello"}]}
                        ]
                    },
                }
            )
        )
        frames: list[str] = []
        while not frames or frames[-1] != "data: [DONE]\n\n":
            frame = await asyncio.wait_for(ws.recv(), 20)
            assert isinstance(frame, str)
            frames.append(frame)
        return frames


@pytest.mark.parametrize("ws", list(WS_CHOICES))
def test_every_ws_choice_serves_and_closes_bad_frames_quietly(
    servers: dict[str, Serve], ws: str
) -> None:
    served = servers[ws]
    frames = asyncio.run(_chat(served.url))
    assert '"type":"finish"' in frames[-2], frames[-3:]
    httpx.get(f"{served.url}/healthz?from", timeout=5)
    codes = {}
    for name, (sent, _) in BAD_FRAMES.items():
        sock = _open(served.port)
        try:
            sock.sendall(b"".join(sent))
            codes[name] = _close_code(sock)
        finally:
            sock.close()
    time.sleep(0.3)  # what the server logs for them, it logs by now
    httpx.get(f"{served.url}/healthz?to", timeout=5)
    assert codes == {name: code for name, (_, code) in BAD_FRAMES.items()}, codes
    lines = served.output().splitlines()
    start = next(i for i, line in enumerate(lines) if "/healthz?from" in line)
    end = next(i for i, line in enumerate(lines) if "/healthz?to" in line)
    window = lines[start + 1 : end]
    # uvicorn's access lines for each connection, and nothing else: no traceback, no
    # line per frame.
    access = ('"WebSocket /api/chat" [accepted]', "connection open", "connection closed")
    assert all(any(a in line for a in access) for line in window), window
    assert sum("[accepted]" in line for line in window) == len(BAD_FRAMES), window
    assert not any("Traceback" in line or "UTF-8" in line for line in lines), lines


def test_a_ws_choice_whose_package_is_missing_is_one_line_at_start() -> None:
    code = (
        "import sys; sys.modules['wsproto'] = None\n"
        "from adk_asgi.cli.main import main\n"
        "raise SystemExit(main(['serve', '--ws', 'wsproto', '--port', '1']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "adk-asgi: --ws wsproto needs the wsproto package, which is not installed: "
        "pip install 'adk-asgi[wsproto]'"
    ], done.stderr
