"""Downloads bounded: 20 clients that ask for a 50 MB artifact and never read hold the
server's memory within the documented bound (docs/reference/limits.md, "Downloads") and are
dropped at the send timeout, like a chat stream's (before: the artifact was loaded whole per
download and never dropped, 20 of them held over 1 GB). A range reads only what it sends.

A real uvicorn on loopback, ADK's file artifact service, raw sockets with a small receive
buffer that never read."""

from __future__ import annotations

import asyncio
import gc
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from google.genai import types

from adk_asgi import AdkApp, StreamingOptions
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer

SIZE = 50 * 1024 * 1024
CLIENTS = 20
SEND_TIMEOUT = 2.0
BOUND_PER_DOWNLOAD = 2 * 1024 * 1024
"""What the limits page promises one download holds at most (one 256 KiB slice, the
1 MiB queue bound, the server's write buffer), with slack for the test's own sampling."""


def _rss() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AdkApp, int]]:
    root = tmp_path_factory.mktemp("downloads")
    app = AdkApp(
        build_demo_agent(),
        artifact_service=f"file://{root}",
        streaming=StreamingOptions(send_timeout=SEND_TIMEOUT),
        warm_up=False,
    )
    with LoopbackServer(app) as server:
        service = app.runtime.artifacts.service
        assert service is not None
        data = bytes(range(256)) * (SIZE // 256)
        future = asyncio.run_coroutine_threadsafe(
            service.save_artifact(
                app_name=app.runtime.app_name,
                user_id="anonymous",
                session_id="big",
                filename="big.bin",
                artifact=types.Part.from_bytes(data=data, mime_type="application/octet-stream"),
            ),
            server.loop,  # type: ignore[arg-type]
        )
        assert future.result(60) == 0
        del data
        gc.collect()
        yield app, server.port


def _stalled(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(b"GET /big/artifacts/big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
    return sock


def _drain(sock: socket.socket) -> tuple[int, str]:
    """Read what is left: how many bytes, and how the connection ended."""
    sock.settimeout(5)
    got = 0
    try:
        while True:
            data = sock.recv(1 << 20)
            if not data:
                return got, "closed"
            got += len(data)
    except ConnectionResetError:
        return got, "reset"
    except TimeoutError:
        return got, "open"


def test_stalled_downloads_are_bounded_and_dropped(served: tuple[AdkApp, int]) -> None:
    _, port = served
    gc.collect()
    before = _rss()
    peak = before
    sampling = True

    def sample() -> None:
        nonlocal peak
        while sampling:
            peak = max(peak, _rss())
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.monotonic()
    socks = [_stalled(port) for _ in range(CLIENTS)]
    try:
        time.sleep(SEND_TIMEOUT + 1.0)  # the stall rule's deadline, and its 0.25 s look
        sampling = False
        sampler.join()
        ends = [_drain(s) for s in socks]
    finally:
        for s in socks:
            s.close()
    assert peak - before < CLIENTS * BOUND_PER_DOWNLOAD, (before, peak)
    assert all(how == "reset" for _, how in ends), ends
    assert all(got < SIZE // 10 for got, _ in ends), ends
    assert time.monotonic() - started < SEND_TIMEOUT + 10


def test_a_range_reads_only_what_it_sends(served: tuple[AdkApp, int]) -> None:
    _, port = served
    url = f"http://127.0.0.1:{port}/big/artifacts/big.bin"
    with httpx.Client(timeout=30) as client:
        part = client.get(url, headers={"range": "bytes=1000-1999"})
        assert part.status_code == 206 and part.content == (bytes(range(256)) * 8)[232:1232]
        assert part.headers["content-range"] == f"bytes 1000-1999/{SIZE}"
        whole = client.get(url)
        assert whole.status_code == 200 and len(whole.content) == SIZE
