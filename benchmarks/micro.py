"""Microbenchmarks: chunk encoding, request parsing and the live path (in-process,
``timeit``).

Encoding: adk-asgi's msgspec ``sse_frame`` vs stdlib ``json.dumps`` of the equivalent
dict vs a pydantic ``BaseModel.model_dump_json`` (both framed the same way), on three
typical chunks. Parsing: a 50-message history with tool parts, ``decode_chat_request``
vs ``json.loads`` + pydantic validation of equivalent models. Live: translating one
partial text event (``EventTranslator`` vs ``LiveTranslator``), building the WebSocket
text frame of a text-delta (protocol A, protocol B), and the per-frame send wrapper of
the live endpoint (a bare ``await send``, behind an ``asyncio.Lock``, with
``asyncio.wait_for``, with ``asyncio.timeout``) on a send that does not block, as
uvicorn's does while its write buffer has room. Instrumentation: what one turn's span
and metrics cost with no OpenTelemetry SDK configured (the default: the API's no-op
providers), per turn and spread over a 500-token answer. Each number is the median of
``repeat`` timings of ``number`` calls, in ns per call.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import threading
import time
import timeit
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from google.adk.events import Event
from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from adk_asgi.chunks import (
    Finish,
    TextDelta,
    ToolInputAvailable,
    UIChunk,
    encode_chunk,
    sse_frame,
)
from adk_asgi.live.protocol.commands import Listener
from adk_asgi.live.protocol.protocol_b import ProtocolB
from adk_asgi.translate.live import LiveTranslator
from adk_asgi.translate.translator import EventTranslator
from adk_asgi.wire.request import decode_chat_request

MSG_ID = "msg-a5eb01bd7dbb44ae882c"

CHUNKS: dict[str, UIChunk] = {
    "text-delta": TextDelta(id=f"{MSG_ID}-t1", delta="w17 "),
    "tool-input-available": ToolInputAvailable(
        tool_call_id="adk-6f1e3c2a-9b7d-4d0e-8f7a-1c2b3d4e5f60",
        tool_name="get_weather",
        input={"city": "Tokyo"},
    ),
    "finish+metadata": Finish(
        finish_reason="stop",
        message_metadata={
            "usage": {"inputTokens": 152, "outputTokens": 200, "totalTokens": 352},
            "model": "adk-asgi-demo",
        },
    ),
}


class _PModel(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class PTextDelta(_PModel):
    type: Literal["text-delta"] = "text-delta"
    id: str
    delta: str
    provider_metadata: dict[str, dict[str, Any]] | None = Field(
        default=None, alias="providerMetadata"
    )


class PToolInputAvailable(_PModel):
    type: Literal["tool-input-available"] = "tool-input-available"
    tool_call_id: str = Field(alias="toolCallId")
    tool_name: str = Field(alias="toolName")
    input: Any
    provider_executed: bool | None = Field(default=None, alias="providerExecuted")
    provider_metadata: dict[str, dict[str, Any]] | None = Field(
        default=None, alias="providerMetadata"
    )
    dynamic: bool | None = None


class PFinish(_PModel):
    type: Literal["finish"] = "finish"
    finish_reason: str | None = Field(default=None, alias="finishReason")
    message_metadata: Any | None = Field(default=None, alias="messageMetadata")


def _pydantic_chunks() -> dict[str, BaseModel]:
    return {
        "text-delta": PTextDelta(id=f"{MSG_ID}-t1", delta="w17 "),
        "tool-input-available": PToolInputAvailable(
            toolCallId="adk-6f1e3c2a-9b7d-4d0e-8f7a-1c2b3d4e5f60",
            toolName="get_weather",
            input={"city": "Tokyo"},
        ),
        "finish+metadata": PFinish(
            finishReason="stop",
            messageMetadata={
                "usage": {"inputTokens": 152, "outputTokens": 200, "totalTokens": 352},
                "model": "adk-asgi-demo",
            },
        ),
    }


def _dict_chunks() -> dict[str, dict[str, Any]]:
    return {
        "text-delta": {"type": "text-delta", "id": f"{MSG_ID}-t1", "delta": "w17 "},
        "tool-input-available": {
            "type": "tool-input-available",
            "toolCallId": "adk-6f1e3c2a-9b7d-4d0e-8f7a-1c2b3d4e5f60",
            "toolName": "get_weather",
            "input": {"city": "Tokyo"},
        },
        "finish+metadata": {
            "type": "finish",
            "finishReason": "stop",
            "messageMetadata": {
                "usage": {"inputTokens": 152, "outputTokens": 200, "totalTokens": 352},
                "model": "adk-asgi-demo",
            },
        },
    }


_compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _time_ns(fn: Callable[[], object], number: int, repeat: int) -> float:
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e9


def bench_encoding(quick: bool) -> dict[str, dict[str, Any]]:
    number, repeat = (20_000, 5) if quick else (200_000, 7)
    pyd = _pydantic_chunks()
    dicts = _dict_chunks()
    out: dict[str, dict[str, Any]] = {}
    for name, chunk in CHUNKS.items():
        p, d = pyd[name], dicts[name]
        frame = sse_frame(chunk)
        # Equivalence check: same JSON document for the three encoders.
        json_frame = b"data: " + json.dumps(d, separators=(",", ":")).encode() + b"\n\n"
        pyd_frame = b"data: " + p.model_dump_json(exclude_none=True).encode() + b"\n\n"
        assert json.loads(frame[6:]) == json.loads(json_frame[6:]) == json.loads(pyd_frame[6:])
        out[name] = {
            "bytes": len(frame),
            "msgspec sse_frame": _time_ns(lambda c=chunk: sse_frame(c), number, repeat),  # type: ignore[misc]
            "json.dumps(dict)": _time_ns(
                lambda d=d: (
                    b"data: "
                    + _compact_json(d).encode()  # type: ignore[misc]
                    + b"\n\n"
                ),
                number,
                repeat,
            ),
            "pydantic model_dump_json": _time_ns(
                lambda p=p: (
                    b"data: "
                    + p.model_dump_json(exclude_none=True).encode()  # type: ignore[misc]
                    + b"\n\n"
                ),
                number,
                repeat,
            ),
        }
    return out


# -- request parsing -------------------------------------------------------------


class PApproval(_PModel):
    id: str
    approved: bool | None = None
    reason: str | None = None


class PUIPart(_PModel):
    type: str
    text: str | None = None
    state: str | None = None
    id: str | None = None
    media_type: str | None = Field(default=None, alias="mediaType")
    url: str | None = None
    filename: str | None = None
    tool_call_id: str | None = Field(default=None, alias="toolCallId")
    tool_name: str | None = Field(default=None, alias="toolName")
    input: Any = None
    output: Any = None
    error_text: str | None = Field(default=None, alias="errorText")
    approval: PApproval | None = None
    data: Any = None
    provider_executed: bool | None = Field(default=None, alias="providerExecuted")


class PUIMessage(_PModel):
    role: Literal["system", "user", "assistant"]
    parts: list[PUIPart]
    id: str = ""
    metadata: Any = None


class PChatRequest(_PModel):
    id: str
    messages: list[PUIMessage] | None = None
    message: PUIMessage | None = None
    trigger: Literal["submit-message", "regenerate-message"] = "submit-message"
    message_id: str | None = Field(default=None, alias="messageId")


def history_body(messages: int = 50) -> bytes:
    """A 50-message chat: user questions and assistant turns with a tool call each."""
    out: list[dict[str, Any]] = []
    for i in range(messages):
        if i % 2 == 0:
            out.append(
                {
                    "id": f"u{i}",
                    "role": "user",
                    "parts": [{"type": "text", "text": f"What's the weather in city {i}?"}],
                }
            )
        else:
            out.append(
                {
                    "id": f"a{i}",
                    "role": "assistant",
                    "metadata": {
                        "usage": {
                            "inputTokens": 10 * i,
                            "outputTokens": 12,
                            "totalTokens": 10 * i + 12,
                        }
                    },
                    "parts": [
                        {"type": "step-start"},
                        {"type": "text", "text": "Let me check the weather.", "state": "done"},
                        {
                            "type": "tool-get_weather",
                            "toolCallId": f"adk-call-{i}",
                            "state": "output-available",
                            "input": {"city": f"City {i}"},
                            "output": {"city": f"City {i}", "condition": "sunny", "temp_c": 22},
                            "providerExecuted": True,
                        },
                        {"type": "step-start"},
                        {
                            "type": "text",
                            "text": f"The weather in City {i} is sunny, 22°C.",
                            "state": "done",
                        },
                    ],
                }
            )
    return json.dumps({"id": "chat-bench", "messages": out, "trigger": "submit-message"}).encode()


def bench_parsing(quick: bool) -> dict[str, Any]:
    number, repeat = (300, 5) if quick else (3_000, 7)
    body = history_body()
    adapter = TypeAdapter(PChatRequest)
    parsed = adapter.validate_python(json.loads(body))
    assert len(parsed.messages or []) == 50 == len(decode_chat_request(body).history)
    return {
        "bytes": len(body),
        "adk_asgi decode_chat_request (msgspec)": _time_ns(
            lambda: decode_chat_request(body), number, repeat
        ),
        "json.loads + pydantic validate_python": _time_ns(
            lambda: adapter.validate_python(json.loads(body)), number, repeat
        ),
        "pydantic validate_json": _time_ns(lambda: adapter.validate_json(body), number, repeat),
    }


# -- the live path ------------------------------------------------------------


def _partial_text_event() -> Event:
    return Event(
        author="assistant",
        invocation_id="e-1",
        partial=True,
        content=types.Content(role="model", parts=[types.Part(text="w17 ")]),
    )


def bench_live_translate(quick: bool) -> dict[str, float]:
    number, repeat = (5_000, 5) if quick else (50_000, 7)
    event = _partial_text_event()
    sse, live = EventTranslator(MSG_ID), LiveTranslator(MSG_ID)
    sse.translate(event)  # open the step and the text block first
    live.translate(event)
    return {
        "EventTranslator.translate (SSE)": _time_ns(lambda: sse.translate(event), number, repeat),
        "LiveTranslator.translate (live)": _time_ns(lambda: live.translate(event), number, repeat),
    }


def bench_live_frames(quick: bool) -> dict[str, float]:
    number, repeat = (20_000, 5) if quick else (200_000, 7)
    chunk = CHUNKS["text-delta"]
    listener = Listener("req-1")
    # As _live._Connection._emit does: encode once, then frame for the protocol.
    return {
        "protocol A: data: frame from encode_chunk": _time_ns(
            lambda: (b"data: " + encode_chunk(chunk) + b"\n\n").decode(), number, repeat
        ),
        "protocol B: ProtocolB.chunks([encode_chunk(chunk)], [listener])": _time_ns(
            lambda: ProtocolB.chunks([encode_chunk(chunk)], [listener]), number, repeat
        ),
    }


class _Sink:
    """An ASGI ``send`` that completes without suspending (write buffer has room)."""

    def __init__(self) -> None:
        self.writable = asyncio.Event()
        self.writable.set()
        self.count = 0

    async def send(self, message: dict[str, Any]) -> None:
        await self.writable.wait()
        self.count += 1


async def _send_wrappers(number: int, repeat: int) -> dict[str, float]:
    sink, lock = _Sink(), asyncio.Lock()
    message = {"type": "websocket.send", "text": "data: {}\n\n"}

    async def bare() -> None:
        await sink.send(message)

    async def locked() -> None:
        async with lock:
            await sink.send(message)

    async def wait_for() -> None:  # what _Connection._send_text does per frame
        async with lock:
            await asyncio.wait_for(sink.send(message), 60.0)

    async def timeout() -> None:
        async with lock, asyncio.timeout(60.0):
            await sink.send(message)

    out: dict[str, float] = {}
    cases: dict[str, Callable[[], Awaitable[None]]] = {
        "await send": bare,
        "Lock + await send": locked,
        "Lock + asyncio.wait_for(send)": wait_for,
        "Lock + asyncio.timeout + await send": timeout,
    }
    for name, case in cases.items():
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                await case()
            times.append(time.perf_counter() - start)
        out[name] = statistics.median(times) / number * 1e9
    return out


def bench_send_wrappers(quick: bool) -> dict[str, float]:
    """On a fresh event loop (uvloop when installed, like the servers) in a thread, so
    this also works when called from a running loop."""
    number, repeat = (5_000, 5) if quick else (50_000, 7)
    result: dict[str, float] = {}

    def target() -> None:
        loop: asyncio.AbstractEventLoop
        try:
            import uvloop
        except ImportError:
            loop = asyncio.new_event_loop()
        else:
            loop = uvloop.new_event_loop()
        try:
            result.update(loop.run_until_complete(_send_wrappers(number, repeat)))
        finally:
            loop.close()

    thread = threading.Thread(target=target, name="micro-send-wrappers")
    thread.start()
    thread.join(300)
    return result


def bench_instrumentation(quick: bool, tokens: int = 500) -> dict[str, float]:
    """One turn's span (started, made current, ended) and its metric calls, as
    ``http/endpoint.py`` and ``http/turn/stream.py`` make them, on whatever providers are
    configured (none in a benchmark run: the no-op default)."""
    from adk_asgi.observability.metrics import METRICS
    from adk_asgi.observability.tracing import TURN, current, end_span, start_span

    number, repeat = (20_000, 5) if quick else (200_000, 7)

    def span() -> None:
        turn = start_span(TURN, "sse", "chat-1", "user-1")
        with current(turn):
            pass
        end_span(turn, "completed")

    def metrics() -> None:
        METRICS.turn_started("sse")
        METRICS.first_token("sse", 0.12)
        METRICS.turn_ended("sse", "completed", 1.5, tokens=tokens)

    per_turn = {
        "turn span": _time_ns(span, number, repeat),
        "turn metrics": _time_ns(metrics, number, repeat),
    }
    total = sum(per_turn.values())
    return {**per_turn, "per turn": total, f"per token ({tokens}-token turn)": total / tokens}


def run(quick: bool) -> dict[str, Any]:
    return {
        "encoding": bench_encoding(quick),
        "parsing": bench_parsing(quick),
        "live": {
            "translate": bench_live_translate(quick),
            "frames": bench_live_frames(quick),
            "send": bench_send_wrappers(quick),
        },
        "instrumentation": bench_instrumentation(quick),
    }


if __name__ == "__main__":
    print(json.dumps(run(quick=True), indent=1))
