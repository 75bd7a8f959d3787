"""The in-process ceiling: ``Runner.run_async`` consumed with no transport.

Built like adk-asgi builds its runner (resumable ``App``, in-memory sessions,
``StreamingMode.SSE``, one new session per turn). Run as a subprocess by the suite
(``python -m benchmarks.ceiling --tokens 200 ...``); prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
import uuid
import warnings
from typing import Any

from google.adk.agents import RunConfig
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


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    runner = build_runner()
    for _ in range(3):  # pay ADK's lazy imports
        await one_turn(runner, "bench 20")
    prompt = f"bench {args.tokens}"
    runs = []
    for _ in range(args.runs):
        turn = await one_turn(runner, prompt)
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
            frames += len((await one_turn(runner, prompt))["stamps"])
        batches.append({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                        "frames": frames, "streams": args.batch})
    return {"runs": runs, "batches": batches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ceiling")
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--batch", type=int, default=20)
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
