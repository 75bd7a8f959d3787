"""The shapes where the model matters, on ADK's real ``google.adk.models.Gemini`` against the
Gemini API emulator: a ``ParallelAgent`` whose two branches stream from two concurrent
``streamGenerateContent`` calls, a workflow fanning out to two LLM nodes, and an agent with
``BuiltInCodeExecutor`` whose answers carry Gemini's ``executableCode`` and
``codeExecutionResult`` parts (tests/agents/{parallel,fanout,code}; the scripted-model runs
are tests/clients/test_agent_shapes.py).

Over SSE with the AI SDK's own Chat (ai 7, every chunk validated by its schema); the
parallel and workflow shapes also over protocol A (served turn by turn, on the same text
model: run_live cannot hold a conversation with them).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from agents.code import agent as code
from agents.fanout import agent as fanout
from agents.parallel import agent as parallel
from starlette.applications import Starlette

from adk_asgi import AdkApp, mount
from adk_asgi.testing.gemini import GeminiEmulator

from support import LoopbackServer
from support.aisdk_client import run_chat
from support.ws_client import LiveClient, assemble, ws_url

pytestmark = pytest.mark.node

MODEL = "gemini-2.5-flash"


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with (
        GeminiEmulator(parallel.GEMINI_SCRIPT, chunk_delay=0.01) as research,
        GeminiEmulator(fanout.GEMINI_SCRIPT, chunk_delay=0.01) as nodes,
        GeminiEmulator(code.GEMINI_SCRIPT, tokens_per_chunk=2) as calculator,
    ):
        site = Starlette()
        mount(
            site,
            "/parallel",
            AdkApp(agent=parallel.build_root_agent(model=research.gemini(MODEL)), warm_up=False),
        )
        mount(
            site,
            "/fanout",
            AdkApp(agent=fanout.build_workflow(model=nodes.gemini(MODEL)), warm_up=False),
        )
        mount(
            site,
            "/code",
            AdkApp(agent=code.build_root_agent(model=calculator.gemini(MODEL)), warm_up=False),
        )
        with LoopbackServer(site) as running:
            yield running


def texts(message: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [
        (p["text"], ((p.get("providerMetadata") or {}).get("adk") or {}).get("author"))
        for p in message["parts"]
        if p["type"] == "text"
    ]


def branches_then(message: dict[str, Any]) -> tuple[set[tuple[str, str | None]], list[Any]]:
    """The first two texts (two branches: which starts first is not defined), the rest."""
    said = texts(message)
    return set(said[:2]), said[2:]


def last_assistant(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return [m for m in messages if m["role"] == "assistant"][-1]


def interleaved(chunks: list[dict[str, Any]]) -> bool:
    ids = [c["id"] for c in chunks if c["type"] == "text-delta"]
    return any(a != b for a, b in itertools.pairwise(ids[: len(ids) // 2]))


def test_parallel_branches_on_gemini(server: LoopbackServer) -> None:
    report = run_chat(
        "ai7",
        f"{server.url}/parallel",
        [{"action": "send", "text": "Tell me about ships"}],
        chat_id="p",
        timeout=60,
    )
    assert report["ok"], report["problems"]
    message = last_assistant(report["messages"])
    assert branches_then(message) == (
        {(parallel.HISTORY, "historian"), (parallel.FUTURE, "futurist")},
        [(parallel.MERGED, None)],
    )
    assert message["metadata"]["adk"]["authors"] == {"0": "research", "1": "writer"}
    assert interleaved(report["requests"][0]["chunks"])


def test_fanout_on_gemini(server: LoopbackServer) -> None:
    report = run_chat(
        "ai7",
        f"{server.url}/fanout",
        [{"action": "send", "text": "Train or plane?"}],
        chat_id="f",
        timeout=60,
    )
    assert report["ok"], report["problems"]
    message = last_assistant(report["messages"])
    assert branches_then(message) == (
        {(fanout.PROS, "pros"), (fanout.CONS, "cons")},
        [(fanout.verdict({"pros": fanout.PROS, "cons": fanout.CONS}), None)],
    )
    [joined] = [p["data"] for p in message["parts"] if p["type"] == "data-node"]
    assert joined["output"] == {"pros": fanout.PROS, "cons": fanout.CONS}
    assert message["metadata"]["adk"]["authors"] == {"0": "fanout", "1": "join", "2": "verdict"}
    assert interleaved(report["requests"][0]["chunks"])


def test_code_execution_on_gemini(server: LoopbackServer) -> None:
    report = run_chat(
        "ai7",
        f"{server.url}/code",
        [{"action": "send", "text": "compute 2 + 2"}, {"action": "send", "text": "divide 1 by 0"}],
        chat_id="c",
        timeout=60,
    )
    assert report["ok"], report["problems"]
    summed, divided = [m for m in report["messages"] if m["role"] == "assistant"]
    kinds = [p["type"] for p in summed["parts"]]
    assert kinds == ["step-start", "text", "tool-code_execution", "text"]
    assert texts(summed) == [("Let me compute that. ", None), (code.SUM_TEXT, None)]
    run = summed["parts"][2]
    assert (run["state"], run["providerExecuted"], run["input"], run["output"]) == (
        "output-available",
        True,
        {"language": "PYTHON", "code": "print(2 + 2)"},
        {"outcome": "OUTCOME_OK", "output": "4\n"},
    )
    failed = divided["parts"][1]
    assert (failed["type"], failed["state"], failed["errorText"]) == (
        "tool-code_execution",
        "output-error",
        "ZeroDivisionError: division by zero",
    )
    assert texts(divided) == [(code.DIVIDED_TEXT, None)]


def test_parallel_and_fanout_over_protocol_a_on_gemini(server: LoopbackServer) -> None:
    async def ask(shape: str, said: str) -> dict[str, Any]:
        client = await LiveClient.open(ws_url(f"{server.url}/{shape}", f"chatId=a-{shape}"))
        try:
            await client.say(said)
            return assemble(await client.turn(wait=30))
        finally:
            await client.close()

    async def both() -> list[dict[str, Any]]:
        return list(
            await asyncio.gather(
                ask("parallel", "Tell me about ships"), ask("fanout", "Train or plane?")
            )
        )

    ships, trains = asyncio.run(both())
    assert branches_then(ships) == (
        {(parallel.HISTORY, "historian"), (parallel.FUTURE, "futurist")},
        [(parallel.MERGED, None)],
    )
    assert branches_then(trains)[0] == {(fanout.PROS, "pros"), (fanout.CONS, "cons")}
