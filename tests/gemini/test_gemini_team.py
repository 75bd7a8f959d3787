"""The multi-agent team app (tests/agents/team) on ADK's real ``google.adk.models.Gemini``
against the Gemini API emulator, scripted by tests/agents/team/gemini_script.py: every
agent (the concierge, its sub-agents billing and travel, the researcher behind an
AgentTool) calls google-genai, which streams from the emulator. The scripted-model runs of
the same flows are tests/clients/test_team_clients.py and tests/adk/test_team_agent.py.

Over SSE with the AI SDK's own Chat (ai 7, tests/js/drive-chat.mjs; every chunk validated
by its schema): a transfer and the sub-agent's streamed answer, the AgentTool, a
require_confirmation approval, a dynamic confirmation approved with an edited payload, a
long-running tool's preliminary output, the raising tool's generic error text, state
written by ``output_key``. Over live protocol A: a transfer that ends the turn, and one
approval.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from agents.team.agent import LEDGER, TOOL_SECRET, build_app
from agents.team.gemini_script import TEAM_SCRIPT

from adk_asgi import AdkApp, LiveOptions, SurfaceOptions
from adk_asgi.live.run.models import DEFAULT_GEMINI_LIVE_MODEL as LIVE_MODEL
from adk_asgi.testing.gemini import GeminiEmulator

from .live_helpers import connections_of, sent_on
from support import LoopbackServer
from support.aisdk_client import NodeHarnessMissing, require_node_harness, run_chat_versions
from support.ws_client import DONE, LiveClient, dicts, kinds, text, ws_url

pytestmark = pytest.mark.node

TEXT_MODEL = "gemini-2.5-flash"
GENERIC = "The agent failed to answer. Please try again. (ValueError)"


@pytest.fixture(scope="module")
def emulator() -> Iterator[GeminiEmulator]:
    with GeminiEmulator(TEAM_SCRIPT, tokens_per_chunk=2) as running:
        yield running


@pytest.fixture(scope="module")
def team(emulator: GeminiEmulator) -> Iterator[LoopbackServer]:
    app = AdkApp(
        adk_app=build_app(model=emulator.gemini(TEXT_MODEL)),
        surface=SurfaceOptions(agent_names=True, state_keys=["billing_note"]),
        live_options=LiveOptions(model=LIVE_MODEL),
        warm_up=False,
    )
    with LoopbackServer(app) as server:
        yield server


def assistants(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in report["messages"] if m["role"] == "assistant"]


def said(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def tool(message: dict[str, Any], name: str) -> dict[str, Any]:
    [part] = [p for p in message["parts"] if p["type"] == f"tool-{name}"]
    return part


def test_the_team_over_sse_with_ai7(team: LoopbackServer, emulator: GeminiEmulator) -> None:
    try:
        require_node_harness()
    except NodeHarnessMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    LEDGER.clear()
    steps: list[dict[str, Any]] = [
        {"action": "send", "text": "billing please"},
        {"action": "send", "text": "research cats"},
        {"action": "send", "text": "refund 20 please"},
        {"action": "approve", "approved": True},
        {"action": "send", "text": "send 30 to alice"},
        {"action": "approve", "approved": True, "payload": {"amount": 25, "to": "alice"}},
        {"action": "send", "text": "open a ticket please"},
        {"action": "send", "text": "please explode"},
    ]
    reports = run_chat_versions(
        team.url, steps, versions=("ai7",), chat_id="g-team", auto_send="approvals", timeout=60
    )
    report = reports["ai7"]
    results = report["stepResults"]
    assert len(results) == len(steps), report["problems"]
    assert all(r["stepError"] is None for r in results), report["problems"]
    assert [r["status"] for r in results[:-1]] == ["ready"] * (len(steps) - 1), results
    assert not any(r["invalid"] for r in report["requests"])
    transfer, research, refund, send, ticket, exploded = assistants(report)
    # A transfer there and back in one message, each agent's text streamed in chunks.
    assert [p["data"]["name"] for p in transfer["parts"] if p["type"] == "data-agent"] == [
        "concierge",
        "billing",
        "concierge",
    ]
    assert said(transfer).startswith("Let me get billing.")
    deltas = [c for c in report["requests"][0]["chunks"] if c["type"] == "text-delta"]
    assert len(deltas) > 2
    # The AgentTool: the researcher's own Gemini call answered it.
    assert tool(research, "researcher")["output"] == {"result": "Research notes on cats."}
    # require_confirmation, approved: the refund ran once.
    assert tool(refund, "refund")["output"] == {"refunded": 20}
    assert "billing" in [p["data"]["name"] for p in refund["parts"] if p["type"] == "data-agent"]
    # billing's answer, in the state through its output_key (streamed as a data-state part).
    assert said(refund).endswith('refund returned {"refunded": 20.0}.')
    assert [p["data"] for p in refund["parts"] if p["type"] == "data-state"] == [
        {"billing_note": 'refund returned {"refunded": 20.0}.'}
    ]
    # request_confirmation with a payload, approved with an edited one: 25 was sent.
    assert tool(send, "send_money")["output"] == {"status": "sent", "amount": 25, "to": "alice"}
    assert LEDGER == [
        {"kind": "refund", "amount": 20},
        {"kind": "transfer", "amount": 25, "to": "alice"},
    ]
    # A long-running tool: its preliminary output, the turn ends.
    pending = tool(ticket, "open_ticket")
    assert pending["providerExecuted"] is True and pending["preliminary"] is True
    assert pending["output"]["status"] == "pending"
    # The raising tool: tool-output-error with the generic text, never the exception's.
    assert tool(exploded, "explode")["state"] == "output-error"
    assert results[-1]["status"] == "error" and results[-1]["error"] == GENERIC
    raw = "".join("".join(r["rawEvents"]) for r in report["requests"])
    assert TOOL_SECRET not in raw and "exploded" not in raw
    # Every agent asked the emulator (the AgentTool's researcher without streaming).
    asked = {
        str(r.data)
        for kind in ("streamGenerateContent", "generateContent")
        for r in emulator.journal.records(kind)
    }
    for instruction in ("Handle billing.", "Research the request.", "Help the user or hand over"):
        assert any(instruction in a for a in asked), instruction


async def test_the_team_over_live_protocol_a(
    team: LoopbackServer, emulator: GeminiEmulator
) -> None:
    """Each agent on its own Live API connection (ADK reconnects on a transfer)."""
    LEDGER.clear()
    client = await LiveClient.open(ws_url(team.url, "chatId=g-team-live"))
    try:
        await client.say("billing please, live")
        transferred = await client.turn(wait=20)
        await client.say("refund 20 please")
        asked = await client.until("tool-approval-request", wait=20)
        assert LEDGER == []
        await client.send(
            "tool_result", toolCallId=asked[-1]["approvalId"], result={"confirmed": True}
        )
        refunded = await client.turn(wait=20)
    finally:
        await client.close()
    # The transfer there and back ends the turn: one message, then the turn is over.
    assert [c["toolName"] for c in dicts(transferred) if c["type"] == "tool-input-available"] == [
        "transfer_to_agent"
    ] * 2
    assert kinds(transferred)[-2:] == ["finish", DONE]
    assert kinds(transferred).count("start") == 1
    assert text(transferred).startswith("Let me get billing.")
    assert [c["data"]["name"] for c in dicts(transferred) if c["type"] == "data-agent"][:2] == [
        "concierge",
        "billing",
    ]
    # The approval: billing's refund ran once, after it was approved, and billing answered.
    assert "tool-output-available" in kinds(refunded)
    assert text(refunded).endswith('refund returned {"refunded": 20.0}.')
    assert LEDGER == [{"kind": "refund", "amount": 20}]
    # Every agent had its own Live API connection, in turn: the concierge, billing, the
    # concierge again (billing handed back), then billing for the refund.
    connections = connections_of(emulator, "billing please, live")
    agents = [
        name
        for record in sent_on(emulator, connections, "setup")
        for instruction, name in (("Help the user", "concierge"), ("Handle billing.", "billing"))
        if instruction in json.dumps(record.data)
    ]
    assert agents == ["concierge", "billing", "concierge", "billing"]
    for record in sent_on(emulator, connections, "setup"):
        assert record.data["model"] == f"models/{LIVE_MODEL}"
