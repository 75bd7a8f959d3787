"""Instructions per token, counted: each row's own work in one process, without sockets,
under valgrind's cachegrind.

CPU time on the 2-core VM swings ±10–20 % between repetitions of the same code, so a
hot-path change of a few per cent cannot be shown with the CPU-time rows
(``python -m benchmarks``). An instruction count of the same code repeats within about 2 %
(what differs is timing-dependent work: timers, the order tasks run in): the measure to
read before and after such a change.

``python -m benchmarks.instructions [--rows ROW ...]`` runs each row in a worker process of
its own under ``valgrind --tool=cachegrind --cache-sim=no``, twice: one batch of
``--connections`` concurrent turns of "bench ``--tokens``" after the warm-up, then
``1 + --extra`` batches. The difference of the two counts is the extra batches' turns alone
(start-up, imports and warm-up cancel out): instructions per token = difference ÷ (extra
× connections × tokens). It needs valgrind (``apt-get install valgrind``); a run of the
default six rows takes about 15 minutes.

What it counts is user space of the one process: the ASGI app driven through its callable
(a queue for the client's frames, a list for what it sends), ADK, the scripted model. What
it leaves out: the kernel (no sockets: a server writes each frame, the same for every
bridge), uvicorn's protocol code, and the collector's timing (every row runs with the
CLI's GC settings, ``gc.freeze()`` and thresholds 20000, 50, 50, after the warm-up; the
CPU-time rows measure the collector).

The rows:

* ``adk-asgi-live`` / ``adk-naive-live`` / ``ceiling-live``: ``AdkApp``'s WebSocket
  endpoint (protocol A), the naive live bridge (``benchmarks/naive.py``), and
  ``Runner.run_live`` on the resumable ``App`` (``benchmarks/ceiling.py``); one connection
  or ``run_live`` per turn;
* ``adk-asgi`` / ``adk-naive`` / ``ceiling-plain``: ``AdkApp``'s ``POST`` (SSE), the naive
  bridge, and ``Runner.run_async`` on a plain ``Runner``.

``--worker ROW[,ROW...]`` is what valgrind runs (and what the tests run without it): it
checks that every turn streamed all of its tokens, so a count never stands for a turn that
failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

LIVE_ROWS = ("adk-asgi-live", "adk-naive-live", "ceiling-live")
SSE_ROWS = ("adk-asgi", "adk-naive", "ceiling-plain")
ROWS = (*LIVE_ROWS, *SSE_ROWS)
CEILING_OF = {
    **dict.fromkeys(LIVE_ROWS, "ceiling-live"),
    **dict.fromkeys(SSE_ROWS, "ceiling-plain"),
}
NAIVE_OF = {**dict.fromkeys(LIVE_ROWS, "adk-naive-live"), **dict.fromkeys(SSE_ROWS, "adk-naive")}
WARM_UP_TURNS = 4

Turn = Callable[[int], Awaitable[int]]
"""One turn of a row (its number, unique in the process); the tokens it streamed."""


# -- the turns, in process -------------------------------------------------------------


def _message(tokens: int) -> dict[str, Any]:
    return {"id": "u1", "role": "user", "parts": [{"type": "text", "text": f"bench {tokens}"}]}


def _scope(kind: str, path: str, query: str = "") -> dict[str, Any]:
    return {
        "type": kind,
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "scheme": "ws" if kind == "websocket" else "http",
        "method": "POST",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "subprotocols": [],
    }


def _deltas(payload: bytes | str) -> int:
    text = payload.decode() if isinstance(payload, bytes) else payload
    # Both spellings: msgspec writes compact JSON, json.dumps puts a space after ':'.
    return text.count('"type":"text-delta"') + text.count('"type": "text-delta"')


def live_turn(app: Any, path: str, tokens: int) -> Turn:
    """One WebSocket connection with one message; it closes after the turn's ``finish``."""

    async def turn(number: int) -> int:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        inbox.put_nowait({"type": "websocket.connect"})
        streamed = 0
        frame = {"type": "message", "version": "1.0", "messages": [_message(tokens)]}

        async def send(message: dict[str, Any]) -> None:
            nonlocal streamed
            if message["type"] == "websocket.accept":
                inbox.put_nowait({"type": "websocket.receive", "text": json.dumps(frame)})
            elif message["type"] == "websocket.send":
                text = message.get("text") or ""
                streamed += _deltas(text)
                if '"finish"' in text and "finish-step" not in text:
                    inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})

        scope = _scope("websocket", path, f"chatId=i{number}-{uuid.uuid4().hex[:8]}")
        await app(scope, inbox.get, send)
        return streamed

    return turn


def sse_turn(app: Any, path: str, tokens: int) -> Turn:
    """One ``POST`` of a new chat's first message, read to its end."""

    async def turn(number: int) -> int:
        body = {"id": f"i{number}-{uuid.uuid4().hex[:8]}", "messages": [_message(tokens)]}
        sent = False
        streamed = 0

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": json.dumps(body).encode()}
            await asyncio.Event().wait()  # the client stays until the response ends
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            nonlocal streamed
            if message["type"] == "http.response.body":
                streamed += _deltas(message.get("body", b""))

        await app(_scope("http", path), receive, send)
        return streamed

    return turn


def build_turn(row: str, tokens: int) -> tuple[Turn, Callable[[], Any] | None]:
    """The row's turn, and the app whose lifespan the worker enters (None: no app)."""
    from adk_asgi import AdkApp
    from adk_asgi.demo import build_demo_agent

    from .ceiling import build_runner, one_live_turn, one_turn
    from .naive import build_naive_app, build_naive_live_app

    prompt = f"bench {tokens}"
    if row in ("adk-asgi", "adk-asgi-live"):
        app = AdkApp(build_demo_agent(token_delay=0), warm_up=False)
        make = live_turn if row == "adk-asgi-live" else sse_turn
        return make(app, "/", tokens), app.lifespan
    if row == "adk-naive-live":
        return live_turn(build_naive_live_app(0.0), "/api/chat", tokens), None
    if row == "adk-naive":
        return sse_turn(build_naive_app(0.0), "/api/chat", tokens), None
    if row in ("ceiling-live", "ceiling-plain"):
        live = row == "ceiling-live"
        runner = build_runner("resumable" if live else "plain")

        async def turn(number: int) -> int:
            done = await (one_live_turn(runner, prompt) if live else one_turn(runner, prompt))
            return int(done["tokens"])

        return turn, None
    raise SystemExit(f"unknown row {row!r} (one of {', '.join(ROWS)})")


async def run_worker(row: str, connections: int, tokens: int, batches: int) -> int:
    """Warm-up turns, the CLI's GC settings, then ``batches`` batches of ``connections``
    concurrent turns; every turn must stream ``tokens`` tokens. Returns the turns run."""
    turn, lifespan = build_turn(row, tokens)
    async with lifespan() if lifespan is not None else contextlib.nullcontext():
        number = 0

        async def batch(size: int) -> None:
            nonlocal number
            numbers = range(number, number + size)
            number += size
            streamed = await asyncio.gather(*(turn(n) for n in numbers))
            short = [got for got in streamed if got != tokens]
            if short:
                raise SystemExit(f"{row}: {len(short)} turns streamed {short[:3]} of {tokens}")

        await batch(WARM_UP_TURNS)
        gc.collect()
        gc.freeze()
        gc.set_threshold(20000, 50, 50)
        for _ in range(batches):
            await batch(connections)
    return number


# -- the counts, under valgrind --------------------------------------------------------

_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions_of(valgrind_output: str) -> int:
    """The total of cachegrind's summary line (``==PID== I   refs:      8,737,930,083``)."""
    match = _REFS.search(valgrind_output)
    if match is None:
        raise ValueError("no 'I refs' line in valgrind's output")
    return int(match.group(1).replace(",", ""))


@dataclasses.dataclass(frozen=True)
class Count:
    row: str
    short: int  # instructions of the run with one batch
    long: int  # with 1 + extra batches
    tokens: int  # the tokens of the extra batches

    @property
    def per_token(self) -> float:
        return (self.long - self.short) / self.tokens


def count(row: str, connections: int, tokens: int, batches: int) -> int:
    """One worker run under cachegrind: its instruction count."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONMALLOC": "malloc"}
    with tempfile.TemporaryDirectory(prefix="bench-cg-") as tmp:
        command = [
            valgrind,
            "--tool=cachegrind",
            "--cache-sim=no",
            f"--cachegrind-out-file={Path(tmp) / 'out'}",
            sys.executable,
            "-m",
            "benchmarks.instructions",
            "--worker",
            row,
            "--connections",
            str(connections),
            "--tokens",
            str(tokens),
            "--batches",
            str(batches),
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{row}: the worker failed under valgrind:\n{done.stderr[-2000:]}")
    return instructions_of(done.stderr)


def report(counts: list[Count]) -> str:
    """A markdown table: instructions per token, and the ratios to the row's ceiling and
    naive bridge when they were counted too."""
    by_row = {c.row: c.per_token for c in counts}
    lines = [
        "| row | instructions per token | ÷ its ceiling | ÷ its naive bridge |",
        "|---|---:|---:|---:|",
    ]
    for c in counts:
        ceiling, naive = by_row.get(CEILING_OF[c.row]), by_row.get(NAIVE_OF[c.row])
        lines.append(
            f"| {c.row} | {c.per_token / 1000:,.1f} k "
            f"| {f'{c.per_token / ceiling:.3f}×' if ceiling else '–'} "
            f"| {f'{c.per_token / naive:.3f}×' if naive else '–'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.instructions",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS)
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--extra", type=int, default=3, help="batches in the longer run")
    parser.add_argument("--out", type=Path, help="also write the counts as JSON here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--batches", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        import uvloop  # the loop adk-asgi serve runs on

        for row in args.worker.split(","):
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                turns = runner.run(run_worker(row, args.connections, args.tokens, args.batches))
            print(f"{row}: {turns} turns of {args.tokens} tokens", flush=True)
        return 0
    counts = []
    for row in args.rows:
        short = count(row, args.connections, args.tokens, 1)
        long = count(row, args.connections, args.tokens, 1 + args.extra)
        counts.append(Count(row, short, long, args.extra * args.connections * args.tokens))
        print(f"{row}: {counts[-1].per_token / 1000:,.1f} k instructions per token", flush=True)
    print(report(counts))
    if args.out is not None:
        args.out.write_text(
            json.dumps(
                [{**dataclasses.asdict(c), "per_token": c.per_token} for c in counts], indent=2
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
