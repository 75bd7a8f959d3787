"""The in-process ceilings: ``Runner.run_async`` (and ``Runner.run_live``) consumed with
no transport.

Built like adk-asgi builds its runner (resumable ``App``, in-memory sessions,
``StreamingMode.SSE``, one new session per turn). The live ceiling is one
``run_live`` per turn on a fresh session and ``LiveRequestQueue`` (TEXT modality, the
run config adk-asgi's live endpoint derives), ended after the turn's
``turn_complete`` event — what one adk-asgi live connection doing one turn costs ADK.
The suite imports these functions; ``python -m benchmarks.ceiling --tokens 200 ...``
runs them alone and prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
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


def build_runner() -> Runner:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = App(name="adk_asgi", root_agent=build_demo_agent(token_delay=0.0),
                  resumability_config=ResumabilityConfig(is_resumable=True))
    return Runner(app=app, session_service=InMemorySessionService(), app_name="adk_asgi")


async def one_turn(runner: Runner, prompt: str) -> dict[str, Any]:
    config = RunConfig(streaming_mode=StreamingMode.SSE,
                       custom_metadata={"adk_asgi": {"messageId": "m"}})
    start = time.perf_counter()
    session_id = uuid.uuid4().hex
    service = runner.session_service
    await service.get_session(app_name="adk_asgi", user_id="anonymous", session_id=session_id)
    await service.create_session(app_name="adk_asgi", user_id="anonymous",
                                 session_id=session_id)
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    stamps: list[float] = []
    async for _event in runner.run_async(user_id="anonymous", session_id=session_id,
                                         new_message=message, run_config=config):
        stamps.append(time.perf_counter())
    return {"start": start, "stamps": stamps, "end": time.perf_counter()}


async def one_live_turn(runner: Runner, prompt: str) -> dict[str, Any]:
    config = RunConfig(streaming_mode=StreamingMode.SSE,
                       response_modalities=[types.Modality.TEXT],
                       custom_metadata={"adk_asgi": {"live": True}})
    start = time.perf_counter()
    session_id = uuid.uuid4().hex
    service = runner.session_service
    await service.get_session(app_name="adk_asgi", user_id="anonymous", session_id=session_id)
    await service.create_session(app_name="adk_asgi", user_id="anonymous",
                                 session_id=session_id)
    queue = LiveRequestQueue()
    queue.send_content(types.Content(role="user", parts=[types.Part(text=prompt)]))
    stamps: list[float] = []
    complete = False
    try:
        async with asyncio.timeout(60):
            run = runner.run_live(user_id="anonymous", session_id=session_id,
                                  live_request_queue=queue, run_config=config)
            async with contextlib.aclosing(run) as events:
                async for event in events:
                    stamps.append(time.perf_counter())
                    if event.turn_complete:
                        complete = True
                        break
    finally:
        queue.close()
    return {"start": start, "stamps": stamps, "end": time.perf_counter(),
            "complete": complete}


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    runner = build_runner()
    one_turn_ = one_live_turn if args.live else one_turn
    for _ in range(3):  # pay ADK's lazy imports
        await one_turn_(runner, "bench 20")
    prompt = f"bench {args.tokens}"
    runs = []
    for _ in range(args.runs):
        turn = await one_turn_(runner, prompt)
        stamps = turn["stamps"]
        gaps = [b - a for a, b in itertools.pairwise(stamps)]
        runs.append({"duration": turn["end"] - turn["start"],
                     "ttfc": stamps[0] - turn["start"] if stamps else None,
                     "frames": len(stamps), "gaps": gaps})
    batches = []
    for _ in range(args.batches):
        cpu = time.process_time()
        wall = time.perf_counter()
        frames = 0
        for _ in range(args.batch):
            frames += len((await one_turn_(runner, prompt))["stamps"])
        batches.append({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                        "frames": frames, "streams": args.batch})
    return {"runs": runs, "batches": batches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ceiling")
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--live", action="store_true", help="Runner.run_live turns")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
