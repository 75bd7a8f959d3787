"""The team app through the real clients, every feature in one conversation per client:
the AI SDK's own Chat over SSE (ai 6 and 7, tests/js/drive-chat.mjs), ai 7's
WebSocketChatTransport (protocol B, tests/js/drive-ws.mjs), and protocol A
(tests/support/ws_client.py). Every chunk is validated by the client version's own schema.

The conversation: a plain answer, an AgentTool, a state tool stamped by an
after_tool_callback, reasoning, request body fields in the state, a transfer there and
back, a require_confirmation tool denied with a reason, a tool asking for its own
confirmation approved with an edited payload, a long-running server call completed by the
back-office (then resumed), one the page completes, a browser tool, and a tool that raises
with a secret."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from agents.team.agent import LEDGER, TOOL_SECRET, build_app

from adk_asgi import AdkApp, PauseOptions, SurfaceOptions

from support import LoopbackServer
from support.aisdk_client import run_chat_versions, run_ws_chat
from support.ws_client import DONE, LiveClient, kinds, text, ws_url

pytestmark = pytest.mark.node

GENERIC = "The agent failed to answer. Please try again. (ValueError)"
RESOLVED = {"status": "resolved", "ticket": "T-1"}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    app = AdkApp(
        adk_app=build_app(),
        pauses=PauseOptions(client_completes=["book_trip"]),
        surface=SurfaceOptions(agent_names=True, state_keys=["fact"]),
        body_fields={"locale": str},
        warm_up=False,
    )
    with LoopbackServer(app) as running:
        yield running


def assistants(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] == "assistant"]


def said(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def tool(message: dict[str, Any], name: str) -> dict[str, Any]:
    [part] = [p for p in message["parts"] if p["type"] == f"tool-{name}"]
    return part


def check_conversation(messages: list[dict[str, Any]], *, live: bool) -> None:
    """What the page holds at the end (the same on every client and transport)."""
    (hello, research, remember, think, recall, billing, refund, send, ticket, completion, *rest) = (
        assistants(messages)
    )
    assert said(hello) == "You said: hello"
    assert tool(research, "researcher")["output"] == {"result": "Research notes on cats."}
    assert tool(remember, "remember")["output"] == {"remembered": "fact", "stamped": True}
    assert [p["data"] for p in remember["parts"] if p["type"] == "data-state"] == [{"fact": "blue"}]
    if not live:
        assert any(p["type"] == "reasoning" for p in think["parts"])
    assert '"locale": "ja"' in said(recall)
    assert [p["data"]["name"] for p in billing["parts"] if p["type"] == "data-agent"] == [
        "concierge",
        "billing",
        "concierge",
    ]
    assert billing["metadata"]["adk"]["authors"] == {
        "0": "concierge",
        "1": "billing",
        "2": "concierge",
    }
    assert tool(refund, "refund")["state"] == "output-denied"
    assert '"reason": "too much"' in said(refund)
    assert tool(send, "send_money")["output"] == {"status": "sent", "amount": 25, "to": "alice"}
    pending = tool(ticket, "open_ticket")
    assert pending["providerExecuted"] is True and pending["preliminary"] is True
    assert pending["output"]["status"] == "pending"
    completed = tool(completion, "open_ticket")  # the back-office's turn, resumed
    assert completed["toolCallId"] == pending["toolCallId"]
    assert completed["providerExecuted"] is True and completed["output"] == RESOLVED
    assert not completed.get("preliminary")
    assert 'open_ticket returned {"status": "resolved"' in said(completion)
    if not live:
        trip, where, exploded = rest
        booked = tool(trip, "book_trip")
        assert booked["output"] == {"status": "booked", "city": "Paris"}
        assert 'book_trip returned {"city": "Paris", "status": "booked"}' in said(trip)
    else:
        where, exploded = rest
    assert tool(where, "get_location")["output"] == {"lat": 35.68}
    assert "get_location returned" in said(where)
    assert tool(exploded, "explode")["state"] == "output-error"


STEPS: list[dict[str, Any]] = [
    {"action": "send", "text": "hello"},
    {"action": "send", "text": "research cats"},
    {"action": "send", "text": "remember blue"},
    {"action": "send", "text": "think about it"},
    {"action": "send", "text": "recall please", "body": {"locale": "ja"}},
    {"action": "send", "text": "billing please"},
    {"action": "send", "text": "refund 20 please"},
    {"action": "approve", "approved": False, "reason": "too much"},
    {"action": "send", "text": "send 30 to alice"},
    {"action": "approve", "approved": True, "payload": {"amount": 25, "to": "alice"}},
    {"action": "send", "text": "open a ticket please"},
    {"action": "completeToolCall", "tool": "open_ticket", "output": RESOLVED},
    {"action": "resume"},
]
BROWSER_COMPLETES: list[dict[str, Any]] = [
    {"action": "send", "text": "book a trip to Paris"},
    {"action": "toolOutput", "tool": "book_trip", "output": {"status": "booked", "city": "Paris"}},
    {"action": "sendEmpty"},
]
ENDING: list[dict[str, Any]] = [
    {"action": "send", "text": "where am i"},
    {"action": "toolOutput", "tool": "get_location", "output": {"lat": 35.68}},
    {"action": "sendEmpty"},
    {"action": "send", "text": "please explode"},
]


def test_sse_with_ai6_and_ai7(server: LoopbackServer) -> None:
    LEDGER.clear()
    steps = [*STEPS, *BROWSER_COMPLETES, *ENDING]
    reports = run_chat_versions(
        server.url,
        steps,
        versions=("ai6", "ai7"),
        chat_id="team",
        auto_send="approvals",
        timeout=120,
    )
    for version, report in reports.items():
        results = report["stepResults"]
        assert len(results) == len(steps), (version, report["problems"])
        # Only the last step fails: the tool that raised; the chat shows the generic text.
        assert all(r["stepError"] is None for r in results), (version, report["problems"])
        assert [r["status"] for r in results[:-1]] == ["ready"] * (len(steps) - 1), version
        assert results[-1]["status"] == "error" and results[-1]["error"] == GENERIC
        assert not any(r["invalid"] for r in report["requests"]), version
        raw = "".join("".join(r["rawEvents"]) for r in report["requests"])
        assert TOOL_SECRET not in raw and "exploded" not in raw
        assert report["completions"] == [
            {"status": 202, "body": {"messageId": assistants(report["messages"])[9]["id"]}}
        ]
        check_conversation(report["messages"], live=False)
    assert sorted(entry["amount"] for entry in LEDGER) == [25, 25]  # one per version


def drive_ws(server: LoopbackServer, steps: list[dict[str, Any]], chat_id: str) -> dict[str, Any]:
    return run_ws_chat(
        server.url.replace("http://", "ws://") + "/",
        steps,
        chat_id=chat_id,
        api=server.url,
        auto_send="approvals",
        node_timeout_ms=60000,
        timeout=90,
    )


def test_protocol_b_with_ai7(server: LoopbackServer) -> None:
    steps = [*STEPS, *ENDING]
    report = drive_ws(server, steps, "team-b")
    results = report["stepResults"]
    assert len(results) == len(steps) and all(r["stepError"] is None for r in results), report[
        "problems"
    ]
    assert [r["status"] for r in results[:-1]] == ["ready"] * (len(steps) - 1), report["problems"]
    assert results[-1]["status"] == "error" and results[-1]["error"] == GENERIC
    assert report["invalid"] == [] and report["nullPaths"] == []
    assert TOOL_SECRET not in json.dumps(report["frames"])
    assert [c["status"] for c in report["completions"]] == [202]
    check_conversation(report["messages"], live=True)


async def test_protocol_a(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url, "chatId=team-a"))
    try:
        await client.say("billing please")
        transferred = await client.turn(wait=20)
        assert [
            c["toolName"]
            for c in transferred
            if isinstance(c, dict) and c["type"] == "tool-input-available"
        ] == ["transfer_to_agent", "transfer_to_agent"]
        await client.say("refund 20 please")
        request = (await client.until("tool-approval-request", wait=20))[-1]
        await client.send(
            "tool_result",
            toolCallId=request["approvalId"],
            result={"confirmed": False, "reason": "too much"},
        )
        refused = await client.turn(wait=20)
        assert "tool-output-denied" in kinds(refused) and '"reason": "too much"' in text(refused)
        await client.say("send 30 to alice")
        asked = await client.until("tool-approval-request", wait=20)
        restated = [c for c in asked if c["type"] == "tool-input-available"][-1]
        assert restated["providerMetadata"]["adk"]["payload"] == {"amount": 30, "to": "alice"}
        await client.send(
            "tool_result",
            toolCallId=asked[-1]["approvalId"],
            result={"confirmed": True, "payload": {"amount": 25, "to": "alice"}},
        )
        sent = await client.turn(wait=20)
        assert '"amount": 25' in text(sent) and '"status": "sent"' in text(sent)
        await client.say("where am i")
        located: list[Any] = []
        while not any(
            isinstance(c, dict)
            and c.get("toolName") == "get_location"
            and c["type"] == "tool-input-available"
            for c in located
        ):
            located.append(await client.next(wait=20))
        await client.send(
            "tool_result", toolCallId=located[-1]["toolCallId"], result={"lat": 35.68}
        )
        answered = await client.turn(wait=20)
        assert "get_location returned" in text(answered) and answered[-1] == DONE
        await client.say("please explode")
        exploded = await client.turn(wait=20)
        assert exploded[-2] == {"type": "error", "errorText": GENERIC}
        assert "tool-output-error" in kinds(exploded)
        await asyncio.sleep(0)
    finally:
        await client.close()
