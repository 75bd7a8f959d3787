"""Every agent shape through the real clients: a ``ParallelAgent`` of two streaming agents
(in a ``SequentialAgent`` with a writer), a ``Workflow`` of function nodes (with a retried
node, a failing node and a node that times out), a workflow fanning out to two LLM nodes
and a ``JoinNode``, an agent with ``BuiltInCodeExecutor`` on Gemini-shaped code parts
(tests/agents/*). One server serves them all (each app mounted at its own path).

Over SSE the AI SDK's own Chat of ai 5, 6 and 7 (tests/js/drive-chat.mjs), over live
protocol B ai 7's WebSocketChatTransport (tests/js/drive-ws.mjs), every chunk validated by
that version's schema; over protocol A our own client (tests/support/ws_client.py), whose chunks
are assembled as the AI SDK assembles them (``ws_client.assemble``). On each, the final
message has exactly the expected parts: each branch's text intact in a block of its own, attributed
to its author, the steps' authors, node outputs, the code and its output.

Tool results that are not plain JSON are tests/translate/test_tool_results.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import httpx
import pytest
from agents.code import agent as code
from agents.fanout import agent as fanout
from agents.parallel import agent as parallel
from agents.team.scripted import Reply as Said
from agents.team.scripted import ScriptedModel
from agents.workflow import agent as workflow
from google.adk.agents import LlmAgent, LoopAgent, SequentialAgent
from starlette.applications import Starlette

from adk_asgi import AdkApp, AdkMiddleware, SurfaceOptions, mount
from adk_asgi.live.run.models import converses_live, live_runner

from support import LoopbackServer, parse_sse
from support.aisdk_client import run_chat_versions, run_ws_chat
from support.ws_client import LiveClient, assemble, ws_url

pytestmark = pytest.mark.node

SSE_VERSIONS: Final = ("ai5", "ai6", "ai7")
TRANSPORTS: Final = (*SSE_VERSIONS, "protocol-b", "protocol-a")


def generic(code: str) -> str:
    return f"The agent failed to answer. Please try again. ({code})"


# -- the apps and what is said to them -------------------------------------------------------

STEPS: Final[dict[str, list[str]]] = {
    "parallel": ["Tell me about ships"],
    "workflow": ["2 apples please", "is it in stock?", "pay now", "track it"],
    "fanout": ["Train or plane?"],
    "code": ["compute 2 + 2", "divide 1 by 0"],
}
FAILING: Final = {
    ("workflow", 2): generic("PermissionError"),
    ("workflow", 3): generic("NodeTimeoutError"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    site = Starlette()
    mount(
        site,
        "/parallel",
        AdkApp(
            agent=parallel.build_root_agent(),
            surface=SurfaceOptions(agent_names=True),
            warm_up=False,
        ),
    )
    mount(site, "/workflow", AdkApp(agent=workflow.build_workflow(), warm_up=False))
    mount(site, "/fanout", AdkApp(agent=fanout.build_workflow(), warm_up=False))
    mount(site, "/code", AdkApp(agent=code.build_root_agent(), warm_up=False))
    with LoopbackServer(site) as running:
        yield running


# -- what each message must hold --------------------------------------------------------------

Part = tuple[Any, ...]


def step() -> Part:
    return ("step",)


def text(said: str, author: str | None = None) -> Part:
    return ("text", said, author)


def node(name: str, path: str, output: Any) -> Part:
    return ("data-node", {"node": name, "path": path, "output": output})


def expected(shape: str) -> list[tuple[list[Part], dict[str, Any] | None]]:
    """(parts, messageMetadata.adk) of every assistant message of the shape's chat."""
    if shape == "parallel":
        return [
            (
                [
                    step(),
                    ("data-agent", {"name": "research"}),
                    text(parallel.HISTORY, "historian"),
                    text(parallel.FUTURE, "futurist"),
                    step(),
                    ("data-agent", {"name": "writer"}),
                    text(parallel.MERGED),
                ],
                {"author": "writer", "authors": {"0": "research", "1": "writer"}},
            )
        ]
    if shape == "workflow":

        def triage(request: str, kind: str) -> Part:
            return node("triage", "orders@1/triage@1", {"request": request, "kind": kind})

        return [
            (
                [
                    step(),
                    triage("2 apples please", "order"),
                    step(),
                    node(
                        "parse_order", "orders@1/parse_order@1", {"item": "apples", "quantity": 2}
                    ),
                    step(),
                    node(
                        "price",
                        "orders@1/price@1",
                        {
                            "item": "apples",
                            "quantity": 2,
                            "total": "3.00",
                            "currency": "EUR",
                            "valid_until": "2030-01-02T03:04:05Z",
                        },
                    ),
                    step(),
                    text("Your order: 2 apples for 3.00 EUR."),
                ],
                {
                    "author": "confirm",
                    "authors": {"0": "triage", "1": "parse_order", "2": "price", "3": "confirm"},
                },
            ),
            (
                [step(), triage("is it in stock?", "stock"), step(), text("In stock: 12 left.")],
                {"author": "check_stock", "authors": {"0": "triage", "1": "check_stock"}},
            ),
            ([step(), triage("pay now", "pay")], None),
            ([step(), triage("track it", "track")], None),
        ]
    if shape == "fanout":
        return [
            (
                [
                    step(),
                    text(fanout.PROS, "pros"),
                    text(fanout.CONS, "cons"),
                    step(),
                    node("join", "fanout@1/join@1", {"pros": fanout.PROS, "cons": fanout.CONS}),
                    step(),
                    text(fanout.verdict({"pros": fanout.PROS, "cons": fanout.CONS})),
                ],
                {"author": "verdict", "authors": {"0": "fanout", "1": "join", "2": "verdict"}},
            )
        ]
    assert shape == "code"
    return [
        (
            [
                step(),
                text("Let me compute that. "),
                (
                    "tool-code_execution",
                    "output-available",
                    True,
                    {"language": "PYTHON", "code": "print(2 + 2)"},
                    {"outcome": "OUTCOME_OK", "output": "4\n"},
                ),
                text("The answer is 4."),
            ],
            {"author": "calculator", "authors": {"0": "calculator"}},
        ),
        (
            [
                step(),
                (
                    "tool-code_execution",
                    "output-error",
                    True,
                    {"language": "PYTHON", "code": "print(1 / 0)"},
                    "ZeroDivisionError: division by zero",
                ),
                text("Dividing by zero fails."),
            ],
            {"author": "calculator", "authors": {"0": "calculator"}},
        ),
    ]


def parts_of(message: dict[str, Any]) -> list[Part]:
    """A UI message's parts, as compared here."""
    out: list[Part] = []
    for part in message["parts"]:
        kind = part["type"]
        if kind == "step-start":
            out.append(step())
        elif kind == "text":
            meta = (part.get("providerMetadata") or {}).get("adk") or {}
            out.append(text(part["text"], meta.get("author")))
        elif kind.startswith("data-"):
            out.append((kind, part["data"]))
        elif kind.startswith("tool-"):
            result = (
                part.get("output") if part["state"] == "output-available" else part.get("errorText")
            )
            out.append((kind, part["state"], part.get("providerExecuted"), part["input"], result))
        else:
            out.append((kind,))
    return out


def canonical(parts: list[Part]) -> list[Part]:
    """Which of two branches streaming side by side starts first is not defined: their
    text parts (consecutive, each with its branch's author) compare in a fixed order."""
    out: list[Part] = []
    run: list[Part] = []
    for part in [*parts, ("end",)]:
        if part[0] == "text" and part[2] is not None:
            run.append(part)
            continue
        out += sorted(run, key=repr)
        run = []
        out.append(part)
    return out[:-1]


def check_chat(shape: str, messages: list[dict[str, Any]], where: str) -> None:
    assistants = [m for m in messages if m["role"] == "assistant"]
    wanted = expected(shape)
    assert len(assistants) == len(wanted), (where, assistants)
    for message, (parts, adk) in zip(assistants, wanted, strict=True):
        assert canonical(parts_of(message)) == canonical(parts), (where, message)
        assert (message.get("metadata") or {}).get("adk") == adk, (where, message)


# -- SSE: ai 5, 6 and 7 ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def sse_reports(server: LoopbackServer) -> dict[str, dict[str, Any]]:
    def run(shape: str) -> dict[str, Any]:
        steps = [{"action": "send", "text": said} for said in STEPS[shape]]
        return run_chat_versions(
            f"{server.url}/{shape}",
            steps,
            versions=SSE_VERSIONS,
            chat_id=f"sse-{shape}",
            timeout=90,
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(STEPS, pool.map(run, STEPS), strict=True))


@pytest.mark.parametrize("shape", list(STEPS))
def test_sse_with_ai5_ai6_and_ai7(sse_reports: dict[str, dict[str, Any]], shape: str) -> None:
    for version, report in sse_reports[shape].items():
        where = f"{shape} {version}"
        assert not any(r["invalid"] for r in report["requests"]), (where, report["problems"])
        results = report["stepResults"]
        assert len(results) == len(STEPS[shape]), (where, report["problems"])
        for index, result in enumerate(results):
            failing = FAILING.get((shape, index))
            if failing is None:
                assert result["status"] == "ready", (where, index, result)
            else:
                assert (result["status"], result["error"]) == ("error", failing), where
        check_chat(shape, report["messages"], where)


def test_parallel_branches_really_interleave(sse_reports: dict[str, dict[str, Any]]) -> None:
    """The test above is about interleaved branches: their deltas alternate on the wire."""
    chunks = sse_reports["parallel"]["ai7"]["requests"][0]["chunks"]
    ids = [c["id"] for c in chunks if c["type"] == "text-delta"]
    first, second = ids[0], next(i for i in ids if i != ids[0])
    switches = sum(1 for a, b in itertools.pairwise(ids) if {a, b} == {first, second})
    assert switches >= 4, ids


# -- live: protocol B (ai 7) and protocol A -----------------------------------------------------


@pytest.fixture(scope="module")
def b_reports(server: LoopbackServer) -> dict[str, dict[str, Any]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(
            zip(
                STEPS,
                pool.map(
                    lambda shape: run_ws_chat(
                        ws_url(f"{server.url}/{shape}"),
                        [{"action": "send", "text": said} for said in STEPS[shape]],
                        chat_id=f"b-{shape}",
                    ),
                    STEPS,
                ),
                strict=True,
            )
        )


@pytest.mark.parametrize("shape", list(STEPS))
def test_protocol_b_with_ai7(b_reports: dict[str, dict[str, Any]], shape: str) -> None:
    report = b_reports[shape]
    assert report["invalid"] == [], report["invalid"]
    results = report["stepResults"]
    assert len(results) == len(STEPS[shape]), report["problems"]
    for index, result in enumerate(results):
        failing = FAILING.get((shape, index))
        if failing is None:
            assert result["status"] == "ready", (index, result, report["problems"])
        else:
            assert (result["status"], result["error"]) == ("error", failing)
    check_chat(shape, report["messages"], f"{shape} protocol B")


@pytest.fixture(scope="module")
def dropped() -> Iterator[list[str]]:
    """The server's "audio ... dropped" log lines."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "dropped" in record.getMessage():
                lines.append(record.getMessage())

    handler = Keep(logging.WARNING)
    logging.getLogger("adk_asgi").addHandler(handler)
    yield lines
    logging.getLogger("adk_asgi").removeHandler(handler)


@pytest.fixture(scope="module")
def a_turns(server: LoopbackServer, dropped: list[str]) -> dict[str, list[list[Any]]]:
    async def converse(shape: str) -> list[list[Any]]:
        client = await LiveClient.open(ws_url(f"{server.url}/{shape}", f"chatId=a-{shape}"))
        try:
            turns = []
            if shape == "workflow":  # served turn by turn: audio has nothing to go to
                await client.say("2 apples please")
                await client.audio(b"\x00\x00" * 1600)
                await client.audio(b"\x00\x00" * 1600, binary=True)
                assert (await client.turn(wait=30))[-2]["type"] == "finish"
            for said in STEPS[shape]:
                await client.say(said)
                turns.append(await client.turn(wait=30))
            return turns
        finally:
            await client.close()

    async def every() -> list[list[list[Any]]]:
        return list(await asyncio.gather(*(converse(shape) for shape in STEPS)))

    return dict(zip(STEPS, asyncio.run(every()), strict=True))


@pytest.mark.parametrize("shape", list(STEPS))
def test_protocol_a(a_turns: dict[str, list[list[Any]]], shape: str) -> None:
    turns = a_turns[shape]
    for index, turn in enumerate(turns):
        failing = FAILING.get((shape, index))
        last = turn[-2]
        if failing is None:
            assert last["type"] == "finish", turn
        else:
            assert last == {"type": "error", "errorText": failing}
    check_chat(shape, [assemble(turn) for turn in turns], f"{shape} protocol A")


def test_turn_by_turn_roots_drop_audio_with_one_log_line(
    a_turns: dict[str, list[list[Any]]], dropped: list[str]
) -> None:
    """The workflow's protocol-A chat sent audio in its first turn (see ``a_turns``):
    dropped, logged once for the connection, and the chat went on (test_protocol_a)."""
    assert a_turns["workflow"]
    assert dropped == [
        "Chat 'a-workflow': Workflow runs turn by turn (not on a live "
        "model); its audio and activity signals are dropped"
    ]


def test_node_outputs_can_be_turned_off() -> None:
    """``SurfaceOptions(node_outputs=False)``: no node outputs; the LLM nodes' text still
    streams."""
    app = AdkApp(
        agent=fanout.build_workflow(delay=0),
        surface=SurfaceOptions(node_outputs=False),
        warm_up=False,
    )

    async def post() -> list[Any]:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=30
        ) as client:
            response = await client.post(
                "/",
                json={
                    "id": "quiet",
                    "messages": [
                        {"id": "u", "role": "user", "parts": [{"type": "text", "text": "Train?"}]}
                    ],
                },
            )
        return [c for c in parse_sse(response.text) if isinstance(c, dict)]

    chunks = asyncio.run(post())
    assert not [c for c in chunks if c["type"] == "data-node"]
    blocks: dict[str, str] = {}
    for chunk in chunks:
        if chunk["type"] == "text-delta":
            blocks[chunk["id"]] = blocks.get(chunk["id"], "") + chunk["delta"]
    assert sorted(blocks.values()) == sorted([fanout.PROS, fanout.CONS])  # no verdict


def test_turn_by_turn_roots_keep_the_apps_own_models() -> None:
    """Served turn by turn, on the app's text models: ``LiveOptions.model`` is not put in."""
    for root in (parallel.build_root_agent(), workflow.build_workflow()):
        runner = AdkApp(agent=root, warm_up=False).runtime.runner
        assert live_runner(runner, "gemini-live-2.5-flash") is runner


async def test_a_stopped_turn_by_turn_answer_aborts_its_run() -> None:
    """Protocol A's ``interrupt`` on a root served turn by turn ends the turn and aborts its
    run: the writer after the parallel branches never runs for it, and the next message is
    answered whole."""
    parallel.WRITTEN.clear()
    slow = AdkApp(agent=parallel.build_root_agent(delay=0.05), warm_up=False)
    with LoopbackServer(slow) as running:
        client = await LiveClient.open(ws_url(running.url, "chatId=stopped"))
        try:
            await client.say("Tell me about ships")
            await client.until("text-delta", wait=30)
            await client.send("interrupt")
            stopped = await client.turn(wait=30)
            await client.say("Tell me about ships again")
            again = assemble(await client.turn(wait=60))
        finally:
            await client.close()
    assert stopped[-2]["type"] == "finish"
    assert parallel.MERGED not in json.dumps(stopped)
    said = [p["text"] for p in again["parts"] if p["type"] == "text"]
    assert sorted(said[:2]) == sorted([parallel.HISTORY, parallel.FUTURE])
    assert said[2:] == [parallel.MERGED]
    assert parallel.WRITTEN == [parallel.MERGED]  # once: for the second message only


def test_adk_middleware_serves_a_workflow() -> None:
    """``AdkMiddleware(site, agent=workflow)`` as ``AdkApp(agent=workflow)``."""
    site = AdkMiddleware(Starlette(), path="/api/chat", agent=workflow.build_workflow())

    async def post() -> list[Any]:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=site), base_url="http://t", timeout=30
        ) as client:
            response = await client.post(
                "/api/chat",
                json={
                    "id": "mw",
                    "messages": [
                        {
                            "id": "u",
                            "role": "user",
                            "parts": [{"type": "text", "text": "3 pears please"}],
                        }
                    ],
                },
            )
        return [c for c in parse_sse(response.text) if isinstance(c, dict)]

    chunks = asyncio.run(post())
    said = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert said == "Your order: 3 pears for 4.50 EUR."
    assert [c["data"]["node"] for c in chunks if c["type"] == "data-node"] == [
        "triage",
        "parse_order",
        "price",
    ]


def test_a_loop_agent_is_steps_of_one_message_and_runs_turn_by_turn() -> None:
    """docs/your-own-agents.md's table: each iteration's model call is a step of the same
    message; ADK's run_live raises for a LoopAgent, so the WebSocket serves it turn by turn
    (also inside a SequentialAgent)."""
    drafter = LlmAgent(
        name="drafter",
        instruction="Improve the draft.",
        model=ScriptedModel(planner=lambda contents: Said(text="Draft.")),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        loop = LoopAgent(name="polish", sub_agents=[drafter], max_iterations=2)
        assert not converses_live(SequentialAgent(name="s", sub_agents=[loop.clone()]))
    assert not converses_live(loop)
    app = AdkApp(agent=loop, warm_up=False)

    async def post() -> list[Any]:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=30
        ) as client:
            response = await client.post(
                "/",
                json={
                    "id": "loop",
                    "messages": [
                        {"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]}
                    ],
                },
            )
        return [c for c in parse_sse(response.text) if isinstance(c, dict)]

    chunks = asyncio.run(post())
    assert [c["type"] for c in chunks].count("start-step") == 2
    assert chunks[-1]["messageMetadata"]["adk"]["authors"] == {"0": "drafter", "1": "drafter"}
