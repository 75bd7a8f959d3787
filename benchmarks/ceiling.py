"""The in-process ceilings: ``Runner.run_async`` (and ``Runner.run_live``) consumed with
no transport, in a process of their own.

Two runners:

* ``resumable`` — built like adk-asgi builds its runner (resumable ``App``, in-memory
  sessions, ``get_session`` + ``create_session`` per turn) and run like adk-asgi runs it
  (the run config's ``custom_metadata`` tag, an ``abort_signal``);
* ``plain`` — ``Runner(agent=..., app_name=..., session_service=InMemorySessionService())``
  with ``RunConfig(streaming_mode=SSE)``: ADK run bare, the way its docs show it.

Both stream the demo agent in ``StreamingMode.SSE`` on a new session per turn.
``BENCH_CEILING_TAG`` and ``BENCH_CEILING_ABORT`` (``0``/``1``, set with the row knob
``env=...``) switch the tag and the abort signal on or off whatever the runner, so their
cost to ADK can be measured apart from resumability. The live
ceiling is one ``run_live`` per turn on a fresh session and ``LiveRequestQueue`` (TEXT
modality, the run config adk-asgi's live endpoint derives), ended after the turn's
``turn_complete`` event — what one adk-asgi live connection doing one turn costs ADK.

``python -m benchmarks.ceiling --worker`` is what the suite starts (through
``benchmarks.knobs``, which picks the loop and GC settings; Python's defaults unless
told): it warms up, prints ``{"ready": true}``, then answers one JSON command per stdin
line — ``{"turns": N, "concurrency": C, "prompt": "bench 500"}`` — with one JSON line of
per-turn timings. The suite reads the worker's CPU time with psutil, as for servers.
Without ``--worker`` it runs a few batches alone and prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
import uuid
import warnings
from typing import Any

from google.adk.agents import RunConfig
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.agents.run_config import StreamingMode
from google.adk.apps import App, ResumabilityConfig
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_asgi.demo import build_demo_agent

from .emulator import bench_model
from .knobs import loop_factory

APP_NAME = "adk_asgi"
USER = "anonymous"


def build_runner(kind: str = "resumable") -> Runner:
    if kind == "plain":
        return Runner(
            agent=build_demo_agent(model=bench_model(), token_delay=0.0),
            app_name=APP_NAME,
            session_service=InMemorySessionService(),
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ResumabilityConfig is experimental in ADK 2.x
        app = App(
            name=APP_NAME,
            root_agent=build_demo_agent(model=bench_model(), token_delay=0.0),
            resumability_config=ResumabilityConfig(is_resumable=True),
        )
    return Runner(app=app, session_service=InMemorySessionService(), app_name=APP_NAME)


def _is_token(event: Any) -> bool:
    content = event.content
    return bool(event.partial and content is not None and content.parts and content.parts[0].text)


async def _new_session(runner: Runner) -> str:
    session_id = uuid.uuid4().hex
    service = runner.session_service
    await service.get_session(app_name=APP_NAME, user_id=USER, session_id=session_id)
    await service.create_session(app_name=APP_NAME, user_id=USER, session_id=session_id)
    return session_id


async def one_turn(
    runner: Runner, prompt: str, tagged: bool = True, keep_stamps: bool = False, abort: bool = False
) -> dict[str, Any]:
    config = RunConfig(
        streaming_mode=StreamingMode.SSE,
        custom_metadata={"adk_asgi": {"messageId": "m"}} if tagged else None,
    )
    start = time.perf_counter()
    session_id = await _new_session(runner)
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    stamps: list[float] = []
    first = first_token = None
    frames = tokens = 0
    async for event in runner.run_async(
        user_id=USER,
        session_id=session_id,
        new_message=message,
        run_config=config,
        abort_signal=asyncio.Event() if abort else None,
    ):
        now = time.perf_counter()
        frames += 1
        first = first or now
        if _is_token(event):
            tokens += 1
            first_token = first_token or now
        if keep_stamps:
            stamps.append(now)
    return {
        "start": start,
        "first": first,
        "first_token": first_token,
        "end": time.perf_counter(),
        "frames": frames,
        "tokens": tokens,
        "done": True,
        "stamps": stamps,
    }


async def one_live_turn(
    runner: Runner, prompt: str, tagged: bool = True, keep_stamps: bool = False, abort: bool = False
) -> dict[str, Any]:
    config = RunConfig(
        streaming_mode=StreamingMode.SSE,
        response_modalities=[types.Modality.TEXT],
        custom_metadata={"adk_asgi": {"live": True}} if tagged else None,
    )
    start = time.perf_counter()
    session_id = await _new_session(runner)
    queue = LiveRequestQueue()
    queue.send_content(types.Content(role="user", parts=[types.Part(text=prompt)]))
    stamps: list[float] = []
    first = first_token = None
    frames = tokens = 0
    done = False
    try:
        run = runner.run_live(
            user_id=USER, session_id=session_id, live_request_queue=queue, run_config=config
        )
        async with contextlib.aclosing(run) as events:
            async for event in events:
                now = time.perf_counter()
                frames += 1
                first = first or now
                if _is_token(event):
                    tokens += 1
                    first_token = first_token or now
                if keep_stamps:
                    stamps.append(now)
                if event.turn_complete:
                    done = True
                    break
    finally:
        queue.close()
    return {
        "start": start,
        "first": first,
        "first_token": first_token,
        "end": time.perf_counter(),
        "frames": frames,
        "tokens": tokens,
        "done": done,
        "stamps": stamps,
    }


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value == "1"


class Worker:
    def __init__(self, kind: str, live: bool) -> None:
        self.runner = build_runner(kind)
        self.tagged = _flag("BENCH_CEILING_TAG", kind != "plain")
        self.abort = _flag("BENCH_CEILING_ABORT", kind != "plain") and not live
        self.live = live

    async def turn(self, prompt: str, keep_stamps: bool = False) -> dict[str, Any]:
        if self.live:
            return await one_live_turn(self.runner, prompt, self.tagged, keep_stamps)
        return await one_turn(self.runner, prompt, self.tagged, keep_stamps, self.abort)

    async def _guarded(self, prompt: str, limit: float, keep_stamps: bool) -> dict[str, Any]:
        start = time.perf_counter()
        try:
            async with asyncio.timeout(limit):
                return await self.turn(prompt, keep_stamps)
        except Exception as exc:  # reported per turn, like a failed stream
            return {
                "start": start,
                "end": time.perf_counter(),
                "frames": 0,
                "tokens": 0,
                "done": False,
                "error": f"{type(exc).__name__}: {exc}"[:200],
                "first": None,
                "first_token": None,
                "stamps": [],
            }

    async def command(self, cmd: dict[str, Any]) -> dict[str, Any]:
        n, concurrency = int(cmd["turns"]), int(cmd.get("concurrency", 1))
        prompt, limit = str(cmd["prompt"]), float(cmd.get("limit", 120.0))
        keep = bool(cmd.get("keep_stamps", False))
        start = time.perf_counter()
        turns: list[dict[str, Any]] = []
        for i in range(0, n, concurrency):
            batch = min(concurrency, n - i)
            turns += await asyncio.gather(
                *[self._guarded(prompt, limit, keep) for _ in range(batch)]
            )
        return {"wall": time.perf_counter() - start, "turns": turns}


def serve_worker(kind: str, live: bool) -> None:
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        worker = Worker(kind, live)
        for _ in range(3):  # pay ADK's lazy imports
            runner.run(worker.turn("bench 20"))
        print(
            json.dumps({"ready": True, "tagged": worker.tagged, "abort": worker.abort}), flush=True
        )
        for line in sys.stdin:
            if not line.strip():
                continue
            print(json.dumps(runner.run(worker.command(json.loads(line)))), flush=True)


async def standalone(args: argparse.Namespace) -> dict[str, Any]:
    worker = Worker(args.runner, args.live)
    for _ in range(3):
        await worker.turn("bench 20")
    batches = []
    for _ in range(args.batches):
        cpu = time.process_time()
        out = await worker.command(
            {"turns": args.batch, "concurrency": args.concurrency, "prompt": f"bench {args.tokens}"}
        )
        tokens = sum(t["tokens"] for t in out["turns"])
        batches.append(
            {
                "cpu_s": time.process_time() - cpu,
                "wall_s": out["wall"],
                "tokens": tokens,
                "cpu_us_per_token": (time.process_time() - cpu) / tokens * 1e6,
            }
        )
    return {"runner": args.runner, "live": args.live, "batches": batches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ceiling")
    parser.add_argument(
        "--worker", action="store_true", help="serve JSON commands on stdin (what the suite starts)"
    )
    parser.add_argument("--runner", choices=("resumable", "plain"), default="resumable")
    parser.add_argument("--live", action="store_true", help="Runner.run_live turns")
    parser.add_argument("--tokens", type=int, default=500)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args(argv)
    if args.worker:
        serve_worker(args.runner, args.live)
        return 0
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        print(json.dumps(runner.run(standalone(args))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
