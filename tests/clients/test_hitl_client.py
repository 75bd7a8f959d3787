"""Human in the loop with the real `ai` client (6.x and 7.x): approvals through the
library's own addToolApprovalResponse / addToolOutput and sendAutomaticallyWhen helpers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from adk_asgi import AdkMiddleware, PauseOptions
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent

from support import LoopbackServer, not_found_app
from support.aisdk_client import NodeHarnessMissing, require_node_harness, run_chat_versions

pytestmark = pytest.mark.node
VERSIONS = ("ai6strict", "ai6", "ai7")


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    try:
        require_node_harness()
    except NodeHarnessMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    app = AdkMiddleware(
        not_found_app, path="/api/chat", agent=build_demo_agent(token_delay=0), warm_up=False
    )
    with LoopbackServer(app) as server:
        yield f"{server.url}/api/chat"


def ok(reports: dict[str, dict[str, Any]]) -> None:
    for version, report in reports.items():
        assert report["ok"], (version, report["error"], report["problems"])
        for request in report["requests"]:
            assert request["invalid"] == [] and request["nullPaths"] == [], version
        assert report["status"] == "ready"


def last(report: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = report["messages"][-1]
    assert message["role"] == "assistant"
    return message


def tool_states(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["type"], p["state"]) for p in message["parts"] if p["type"].startswith("tool-")]


def final_text(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def payments_to(name: str) -> int:
    return sum(1 for p in PAYMENT_LOG if p["recipient"] == name)


@pytest.mark.parametrize("approved", [True, False])
def test_payment_approval(api: str, approved: bool) -> None:
    recipient = f"Hanako{int(approved)}"
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": f"Send 50 dollars to {recipient}"},
            {"action": "approve", "approved": approved, "reason": "checked"},
        ],
        chat_id=f"pay-{approved}",
        auto_send="approvals",
        versions=VERSIONS,
    )
    ok(reports)
    for version, report in reports.items():
        first, second = report["requests"]
        kinds = [c["type"] for c in first["chunks"]]
        assert kinds[-3:] == ["tool-approval-request", "finish-step", "finish"], kinds
        assert first["chunks"][-1]["finishReason"] == "tool-calls"
        request = next(c for c in first["chunks"] if c["type"] == "tool-approval-request")
        call = next(c for c in first["chunks"] if c["type"] == "tool-input-start")
        assert request["toolCallId"] == call["toolCallId"]
        # the continuation is the SAME assistant message
        assert second["body"]["messageId"] == first["chunks"][0]["messageId"]
        assert second["chunks"][0] == {
            "type": "start",
            "messageId": first["chunks"][0]["messageId"],
        }
        expected = "tool-output-available" if approved else "tool-output-denied"
        assert second["chunks"][1] == {
            **second["chunks"][1],
            "type": expected,
            "toolCallId": call["toolCallId"],
        }
        message = last(report)
        assert len([m for m in report["messages"] if m["role"] == "assistant"]) == 1
        state = "output-available" if approved else "output-denied"
        assert tool_states(message) == [("tool-process_payment", state)], version
        part = next(p for p in message["parts"] if p["type"] == "tool-process_payment")
        assert part["callProviderMetadata"]["adk"]["hint"]  # the hint reached the client
        assert (f"Sent 50 USD to {recipient}" in final_text(message)) is approved
    assert payments_to(recipient) == (len(VERSIONS) if approved else 0)  # once per chat


@pytest.mark.parametrize(
    ("first", "second"), [(True, True), (True, False), (False, True), (False, False)]
)
def test_two_payments_every_combination(api: str, first: bool, second: bool) -> None:
    a, b = f"Alice{int(first)}{int(second)}", f"Bob{int(first)}{int(second)}"
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": f"Send 30 dollars to {a} and 40 dollars to {b}"},
            {"action": "approve", "approved": first},
            {"action": "approve", "approved": second},
        ],
        chat_id=f"two-{first}-{second}",
        auto_send="approvals",
        versions=("ai6", "ai7"),
    )
    ok(reports)
    for report in reports.values():
        assert len(report["requests"]) == 2  # both answers in one request
        states = [s for _, s in tool_states(last(report))]
        assert states == [
            "output-available" if first else "output-denied",
            "output-available" if second else "output-denied",
        ]
    assert payments_to(a) == (2 if first else 0)
    assert payments_to(b) == (2 if second else 0)


def test_payments_answered_one_by_one(api: str) -> None:
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": "Send 10 dollars to Carol and 20 dollars to Dave"},
            {"action": "approve", "approved": True},
            {"action": "sendEmpty"},
            {"action": "approve", "approved": False},
            {"action": "sendEmpty"},
        ],
        chat_id="one-by-one",
        versions=("ai6", "ai7"),
    )
    ok(reports)
    for report in reports.values():
        assert len(report["requests"]) == 3
        middle = report["requests"][1]["chunks"]
        assert middle[-1] == {"type": "finish", "finishReason": "tool-calls"}  # one still open
        assert [s for _, s in tool_states(last(report))] == ["output-available", "output-denied"]
    assert payments_to("Carol") == 2 and payments_to("Dave") == 0


def test_browser_tool_with_approval_and_result_in_one_request(api: str) -> None:
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": "Where am I?"},
            {"action": "approve", "approved": True},
            {
                "action": "toolOutput",
                "tool": "get_location",
                "output": {"latitude": 35.6, "longitude": 139.7},
            },
        ],
        chat_id="loc-one",
        auto_send="toolCalls",
        versions=VERSIONS,
    )
    ok(reports)
    for report in reports.values():
        assert len(report["requests"]) == 2
        assert tool_states(last(report)) == [("tool-get_location", "output-available")]
        assert "latitude 35.6" in final_text(last(report))


def test_browser_tool_approval_first_result_later(api: str) -> None:
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": "Where am I?"},
            {"action": "approve", "approved": True},
            {"action": "sendEmpty"},
            {
                "action": "toolOutput",
                "tool": "get_location",
                "output": {"latitude": 1.5, "longitude": 2.5},
            },
            {"action": "sendEmpty"},
        ],
        chat_id="loc-two",
        versions=("ai6", "ai7"),
    )
    ok(reports)
    for report in reports.values():
        assert len(report["requests"]) == 3
        ack = [c["type"] for c in report["requests"][1]["chunks"]]
        assert ack == ["start", "finish"]  # approved; nothing to run until the result
        assert "latitude 1.5" in final_text(last(report))


def test_browser_tool_denied(api: str) -> None:
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": "Where am I?"},
            {"action": "approve", "approved": False},
        ],
        chat_id="loc-deny",
        auto_send="approvals",
        versions=("ai6", "ai7"),
    )
    ok(reports)
    for report in reports.values():
        assert tool_states(last(report)) == [("tool-get_location", "output-denied")]
        assert "could not" in final_text(last(report)).lower()


def test_browser_tool_without_approval(api: str) -> None:
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": "Play track 2"},
            {"action": "toolOutput", "tool": "change_bgm", "output": {"success": True}},
        ],
        chat_id="bgm",
        auto_send="toolCalls",
    )
    for version, report in reports.items():
        assert report["ok"], (version, report["problems"])
        assert tool_states(last(report)) == [("tool-change_bgm", "output-available")]
        assert final_text(last(report)).endswith("Now playing track 2.")


@pytest.fixture(scope="module")
def seed_api() -> Iterator[str]:
    app = AdkMiddleware(
        not_found_app,
        path="/api/chat",
        agent=build_demo_agent(token_delay=0),
        pauses=PauseOptions(confirmation_style="adk-tool"),
        warm_up=False,
    )
    with LoopbackServer(app) as server:
        yield f"{server.url}/api/chat"


@pytest.mark.parametrize("confirmed", [True, False])
def test_seed_style_confirmation(seed_api: str, confirmed: bool) -> None:
    name = f"Seed{int(confirmed)}"
    reports = run_chat_versions(
        seed_api,
        [
            {"action": "send", "text": f"Send 80 dollars to {name}"},
            {
                "action": "toolOutput",
                "tool": "adk_request_confirmation",
                "output": {"confirmed": confirmed},
            },
        ],
        chat_id=f"seed-{confirmed}",
        auto_send="toolCalls",
    )  # ai5 too: no approval chunks
    for version, report in reports.items():
        assert report["ok"], (version, report["problems"])
        assert len(report["requests"]) == 2, version
        states = dict(tool_states(last(report)))
        assert states["tool-adk_request_confirmation"] == "output-available"
        assert states["tool-process_payment"] == (
            "output-available" if confirmed else "output-error"
        ), version
    assert payments_to(name) == (len(reports) if confirmed else 0)


def test_seed_style_payload_reaches_the_tool(seed_api: str) -> None:
    reports = run_chat_versions(
        seed_api,
        [
            {"action": "send", "text": "Send 500 dollars to Payload"},
            {
                "action": "toolOutput",
                "tool": "adk_request_confirmation",
                "output": {"confirmed": True, "payload": {"amount": 20}},
            },
        ],
        chat_id="seed-payload",
        auto_send="toolCalls",
        versions=("ai7",),
    )
    ok(reports)
    assert [p["amount"] for p in PAYMENT_LOG if p["recipient"] == "Payload"] == [20]
