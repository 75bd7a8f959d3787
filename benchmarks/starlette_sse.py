"""The sse-starlette variant of the SSE channel (issue 16 item 3), for the benchmark row
``adk-asgi-sse-starlette``: the same ``AdkMiddleware`` whose turns write through
sse-starlette's ``EventSourceResponse`` instead of ``adk_asgi/http/sse.py``.

The best sse-starlette channel we could build, so the comparison is fair to it:

- the turn *is* the response's body iterator (an async generator yielding one blob of
  frames per ADK event), so no queue sits between the producer and the socket;
- ``AdkEventSource`` overrides one method, the per-send path: without a ``send_timeout``
  it sends directly instead of opening an ``anyio.move_on_after`` scope per frame (the
  library opens one even for ``None``); ``BENCH_SSE_SEND_TIMEOUT=S`` keeps the library's
  own per-send timeout (its stuck-client detection) to price it;
- pings, the disconnect listener, HEAD and the shutdown watcher are the library's.

It serves plain turns only (a new user message: start, the model's events, finish):
what the sweep streams. Approvals, resume and the stuck-client watchdog are not wired.

``python -m benchmarks.starlette_sse`` prices the per-frame path alone (µs per frame,
a no-op ASGI ``send``, uvloop): the own ``SSEChannel.write``, the same fed by an async
generator, ``AdkEventSource``, and ``EventSourceResponse`` with its per-send timeout.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from sse_starlette.sse import EventSourceResponse

from adk_asgi.chunks import DONE_FRAME, UIChunk, sse_frame
from adk_asgi.http import endpoint
from adk_asgi.http.turn.sse import SSEChannel
from adk_asgi.http.turn.stream import TurnStream
from adk_asgi.observability.failures import serving
from adk_asgi.observability.metrics import METRICS
from adk_asgi.stores import StreamRecorder
from adk_asgi.transport.asgi import Receive, Send

_HEADERS = {"cache-control": "no-cache", "x-vercel-ai-ui-message-stream": "v1"}


class AdkEventSource(EventSourceResponse):
    """``EventSourceResponse`` without a cancel scope per send when no timeout is set."""

    async def _send_with_timeout(self, send: Any, message: Any) -> None:
        if self.send_timeout is None:
            await send(message)
        else:
            await super()._send_with_timeout(send, message)


class SseStarletteTurn(TurnStream):
    """``TurnStream`` whose frames go out through ``AdkEventSource``."""

    async def run(self, send: Send, receive: Receive, recorder: StreamRecorder) -> None:
        self._recorder = recorder
        recorder.on_stop(lambda: self.stop("stopped"))
        timeout = os.environ.get("BENCH_SSE_SEND_TIMEOUT")
        response = AdkEventSource(
            self._frames(),
            headers=_HEADERS,
            ping=self.options.ping_interval or 0,
            sep="\n",
            send_timeout=float(timeout) if timeout else None,
            client_close_handler_callable=self._closed,
        )
        METRICS.turn_started("sse")
        try:
            await response({"type": "http", "method": "POST"}, receive, send)
        finally:
            translator = self._translator.message
            METRICS.turn_ended(
                "sse",
                self.outcome,
                0.0,
                tokens=translator.output_tokens,
                approvals=translator.approvals_requested,
            )
            await recorder.end(resumable=False)

    async def _closed(self, _message: Any) -> None:
        self.stop("client")

    def _blob(self, chunks: list[UIChunk], done: bool = False) -> bytes:
        blob = (
            sse_frame(chunks[0]) if len(chunks) == 1 else b"".join([sse_frame(c) for c in chunks])
        )
        if done:
            blob += DONE_FRAME
        chunks.clear()
        assert self._recorder is not None
        self._recorder.append(blob)
        return blob

    async def _frames(self) -> AsyncIterator[bytes]:
        plan, translator, runtime = self.plan, self._translator, self.runtime
        out: list[UIChunk] = translator.message.start()
        yield self._blob(out)
        run = runtime.runner.run_async(
            user_id=self.user_id,
            session_id=self.chat_id,
            new_message=plan.new_message,
            state_delta=plan.state_delta or None,
            run_config=runtime.run_config_for(plan.run_metadata()),
            abort_signal=self._abort,
        )
        finished = False
        try:
            with serving():
                async for event in run:
                    out.extend(translator.translate(event))
                    if out:
                        if not self._answered:
                            self._first_chunk()
                        yield self._blob(out)
            finished = True
        finally:
            if not finished:
                self._abort.set()
            await run.aclose()
        out.extend(translator.message.finish())
        self.outcome = "completed"
        yield self._blob(out, done=True)


def install() -> None:
    """Make the chat endpoint build ``SseStarletteTurn`` for every turn."""
    endpoint.TurnStream = SseStarletteTurn  # type: ignore[misc]


# -- the per-frame microbenchmark ----------------------------------------------------

_FRAME = b'data: {"type":"text-delta","id":"msg-a9a633038bd8494caff3-t1","delta":"w1 "}\n\n'


async def _no_send(_message: Any) -> None:
    pass


async def _no_receive() -> Any:
    await asyncio.Event().wait()


async def _frames_of(n: int) -> AsyncIterator[bytes]:
    for _ in range(n):
        yield _FRAME


async def _own(n: int, generator: bool) -> float:
    channel = SSEChannel(_no_send, _no_receive, ping_interval=15, send_timeout=60)
    await channel.open()
    started = time.perf_counter()
    if generator:
        async for frame in _frames_of(n):
            await channel.write(frame)
    else:
        for _ in range(n):
            await channel.write(_FRAME)
    elapsed = time.perf_counter() - started
    await channel.close()
    return elapsed


async def _library(n: int, send_timeout: float | None) -> float:
    response = AdkEventSource(_frames_of(n), ping=15, sep="\n", send_timeout=send_timeout)
    started = time.perf_counter()
    await response._stream_response(_no_send)
    return time.perf_counter() - started


async def per_frame_us(n: int = 20_000, repeat: int = 7) -> dict[str, float]:
    """Median µs per frame of each way to write SSE frames."""
    ways: dict[str, Callable[[], Awaitable[float]]] = {
        "own SSEChannel.write": lambda: _own(n, False),
        "own SSEChannel.write, fed by an async generator": lambda: _own(n, True),
        "AdkEventSource (no per-send timeout)": lambda: _library(n, None),
        "EventSourceResponse, send_timeout=60": lambda: _library(n, 60.0),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(repeat):
        for name, way in ways.items():
            times[name].append(await way() / n * 1e6)
    return {name: statistics.median(t) for name, t in times.items()}


if __name__ == "__main__":
    import uvloop

    for name, us in uvloop.run(per_frame_us()).items():
        print(f"{us:6.2f} µs/frame  {name}")
