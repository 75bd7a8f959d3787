"""The SSE channel on a real uvicorn: a client that stops reading is dropped after the
send timeout, its ADK run is aborted and nothing is left behind."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import time
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LlmCapabilities, LlmRequest, LlmResponse
from google.genai import types

from adk_asgi import AdkApp, StreamingOptions

from support import LoopbackServer, chat_body, user_message

BIG = "x" * 65_536


class FloodModel(BaseLlm):
    """Streams 64 KiB text deltas, about a thousand a second, for five seconds."""

    model: str = "flood"
    produced: int = 0

    @property
    def capabilities(self) -> LlmCapabilities:
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        for _ in range(5_000):
            await asyncio.sleep(0.001)
            self.produced += 1
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=BIG)]), partial=True
            )
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text="end")]),
            partial=False,
            finish_reason=types.FinishReason.STOP,
        )


def _request(port: int, body: bytes) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # fill up quickly
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        b"POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    return sock


def test_a_client_that_stops_reading_is_dropped_and_its_run_aborted() -> None:
    model = FloodModel()
    app = AdkApp(
        LlmAgent(name="flood", model=model),
        warm_up=False,
        streaming=StreamingOptions(send_timeout=0.5),
    )
    with LoopbackServer(app) as server:
        baseline = {t.get_name() for t in server.tasks()}
        sock = _request(server.port, json.dumps(chat_body("stall", user_message("go"))).encode())
        try:
            first = sock.recv(4096)  # read one chunk, then stall
            assert first.startswith(b"HTTP/1.1 200")
            stalled_at = time.monotonic()
            stopped = False
            while time.monotonic() - stalled_at < 10:
                before = model.produced
                time.sleep(0.3)
                if model.produced == before and app.store.held_locks == 0:  # type: ignore[attr-defined]
                    stopped = True
                    break
            took = time.monotonic() - stalled_at
            assert stopped, "the run kept going for a client that stopped reading"
            # ADK queues partial events without backpressure, so what a stalled client
            # costs is what the model produces until the send timeout fires: bounded
            # by time, and here far below the 5000 deltas of a full run.
            assert took < 3.0, took
            assert model.produced < 3000, model.produced
            leftover = {t.get_name() for t in server.tasks()} - baseline
            assert not {n for n in leftover if n.startswith("adk-asgi")}, leftover
        finally:
            sock.close()


def test_pings_keep_a_silent_stream_alive_and_do_not_disturb_chunks() -> None:
    class SilentModel(BaseLlm):
        model: str = "silent"

        @property
        def capabilities(self) -> LlmCapabilities:
            return LlmCapabilities(output_schema_and_tools=True)

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            await asyncio.sleep(0.5)
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="hi")]),
                partial=False,
                finish_reason=types.FinishReason.STOP,
            )

    app = AdkApp(
        LlmAgent(name="silent", model=SilentModel()),
        warm_up=False,
        streaming=StreamingOptions(ping_interval=0.1),
    )
    with LoopbackServer(app) as server:
        sock = _request(server.port, json.dumps(chat_body("quiet", user_message("go"))).encode())
        data = b""
        sock.settimeout(5)
        while not data.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n") and len(data) < 100_000:
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
        sock.close()
        body = data.decode()
        assert body.count(": ping\n\n") >= 3
        assert '"text-delta","id"' in body and "data: [DONE]" in body


def test_pings_come_every_interval_of_silence() -> None:
    """A ping every ``ping_interval`` seconds of silence, measured on the wire (a fixed
    timer tick that just misses would double the gap)."""

    class QuietModel(BaseLlm):
        model: str = "quiet"

        @property
        def capabilities(self) -> LlmCapabilities:
            return LlmCapabilities(output_schema_and_tools=True)

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="a")]), partial=True
            )
            await asyncio.sleep(2.6)
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="a")]),
                partial=False,
                finish_reason=types.FinishReason.STOP,
            )

    app = AdkApp(
        LlmAgent(name="quiet", model=QuietModel()),
        warm_up=False,
        streaming=StreamingOptions(ping_interval=0.5),
    )
    with LoopbackServer(app) as server:
        sock = _request(server.port, json.dumps(chat_body("gaps", user_message("go"))).encode())
        sock.settimeout(5)
        arrivals: list[float] = []
        data = b""
        while b"data: [DONE]" not in data:
            piece = sock.recv(65536)
            if not piece:
                break
            if b": ping" in piece or (b'"text-delta"' in piece and not arrivals):
                arrivals.append(time.monotonic())  # the first delta, then every ping
            data += piece
        sock.close()
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(arrivals) >= 5, arrivals  # 2.6 s of silence, a ping every 0.5 s
    assert max(gaps) < 0.75, gaps  # a timer that just misses gives ~1.0 s
