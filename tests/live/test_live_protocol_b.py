"""Live mode, protocol B frames on the wire (resume, abort, refused answers), raw Python."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from agents.parallel import agent as parallel
from websockets.asyncio.client import ClientConnection, connect

from adk_asgi import AdkApp
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent

from support import LoopbackServer
from support.ws_client import check_chunk, ws_url


def _send(request_id: str, text: str, chat: str = "b1") -> str:
    return json.dumps(
        {
            "type": "send",
            "requestId": request_id,
            "id": chat,
            "trigger": "submit-message",
            "messages": [
                {"id": f"u-{request_id}", "role": "user", "parts": [{"type": "text", "text": text}]}
            ],
            "headers": {},
            "body": {},
        }
    )


async def _frames(
    ws: ClientConnection, request_id: str, until: str = "end"
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert isinstance(frame.get("requestId"), str)
        if frame["type"] == "chunk":
            check_chunk(json.dumps(frame["chunk"]))
        if frame["requestId"] != request_id:
            continue
        out.append(frame)
        if frame["type"] in (until, "error", "no-active"):
            return out


async def test_resume_replays_the_active_stream_then_follows_it() -> None:
    with LoopbackServer(AdkApp(build_demo_agent(token_delay=0.02), warm_up=False)) as server:
        async with connect(ws_url(server.url)) as ws:
            await ws.send(_send("r1", "tell me a long story"))
            first = [json.loads(await ws.recv()) for _ in range(5)]
            await ws.send(json.dumps({"type": "resume", "requestId": "r2", "id": "b1"}))
            resumed = await _frames(ws, "r2")
            assert resumed[0] == {"type": "start", "requestId": "r2"}
            chunks = [f for f in resumed if f["type"] == "chunk"]
            assert [f["sequence"] for f in chunks] == list(range(len(chunks)))
            assert chunks[0]["chunk"] == first[0]["chunk"]  # replayed from the start
            assert chunks[-1]["chunk"]["type"] == "finish" and resumed[-1]["type"] == "end"
            await ws.send(json.dumps({"type": "resume", "requestId": "r3", "id": "b1"}))
            assert await _frames(ws, "r3") == [{"type": "no-active", "requestId": "r3"}]


async def test_abort_stops_the_model_and_the_next_send_works() -> None:
    with LoopbackServer(AdkApp(build_demo_agent(token_delay=0.02), warm_up=False)) as server:
        async with connect(ws_url(server.url)) as ws:
            await ws.send(_send("a1", "tell me a long story"))
            for _ in range(4):
                await ws.recv()
            await ws.send(json.dumps({"type": "abort", "requestId": "a1"}))
            await ws.send(_send("a2", "hello"))  # right away: it waits for the stopped turn
            frames = await _frames(ws, "a2")
            chunks = [f["chunk"] for f in frames if f["type"] == "chunk"]
            assert chunks[0]["type"] == "start" and chunks[-1]["type"] == "finish"
            assert "hello" in "".join(c.get("delta", "") for c in chunks)


async def test_a_send_right_after_an_abort_of_a_turn_by_turn_answer_gets_its_answer() -> None:
    """A root served turn by turn, automatic activity detection: the aborted run's end
    closes the stopped turn, never the next message's (which got an empty reply, its
    answer reaching only the history)."""
    app = AdkApp(agent=parallel.build_root_agent(delay=0.05), warm_up=False)
    with LoopbackServer(app) as server:
        async with connect(ws_url(server.url, "activity=automatic")) as ws:
            await ws.send(_send("s1", "Tell me about ships", chat="b-stop"))
            while (frame := json.loads(await asyncio.wait_for(ws.recv(), 30)))["type"] != (
                "chunk"
            ) or frame["chunk"]["type"] != "text-delta":
                pass
            await ws.send(json.dumps({"type": "abort", "requestId": "s1"}))
            await ws.send(_send("s2", "Tell me about ships again", chat="b-stop"))
            frames = await _frames(ws, "s2")
        async with httpx.AsyncClient(base_url=server.url) as http:
            history = (await http.get("/b-stop")).json()["messages"]
    chunks = [f["chunk"] for f in frames if f["type"] == "chunk"]
    said = "".join(c.get("delta", "") for c in chunks)
    assert chunks[-1]["type"] == "finish" and chunks[-1]["finishReason"] == "stop"
    assert parallel.MERGED in said
    again = history[-1]
    assert again["id"] == chunks[0]["messageId"] and history[-2]["parts"][0]["text"] == (
        "Tell me about ships again"
    )
    assert parallel.MERGED in "".join(p.get("text", "") for p in again["parts"])


async def test_unknown_or_replayed_approval_gets_an_error_frame_and_runs_nothing() -> None:
    PAYMENT_LOG.clear()
    with LoopbackServer(AdkApp(build_demo_agent(), warm_up=False)) as server:
        async with connect(ws_url(server.url)) as ws:
            await ws.send(_send("p1", "Send 50 dollars to Hanako"))
            frames = await _frames(ws, "p1")
            chunks = [f["chunk"] for f in frames if f["type"] == "chunk"]
            request = next(c for c in chunks if c["type"] == "tool-approval-request")
            assert chunks[-1]["type"] == "finish" and chunks[-1]["finishReason"] == "tool-calls"

            def answer(request_id: str, approval_id: str) -> str:
                return json.dumps(
                    {
                        "type": "send",
                        "requestId": request_id,
                        "id": "b1",
                        "trigger": "submit-message",
                        "messages": [
                            {
                                "id": chunks[0]["messageId"],
                                "role": "assistant",
                                "parts": [
                                    {
                                        "type": "tool-process_payment",
                                        "toolCallId": request["toolCallId"],
                                        "state": "approval-responded",
                                        "input": {},
                                        "approval": {"id": approval_id, "approved": True},
                                    }
                                ],
                            }
                        ],
                    }
                )

            await ws.send(answer("p2", "adk-forged"))
            error = await _frames(ws, "p2")
            assert error[0]["type"] == "error" and "waiting" in error[0]["errorText"]
            assert PAYMENT_LOG == []
            await ws.send(answer("p3", request["approvalId"]))
            done = await _frames(ws, "p3")
            assert done[-1]["type"] == "end" and len(PAYMENT_LOG) == 1
            await ws.send(answer("p4", request["approvalId"]))  # replayed
            error = await _frames(ws, "p4")
            assert error[0]["type"] == "error" and "already answered" in error[0]["errorText"]
            assert len(PAYMENT_LOG) == 1
