"""The real model stack over SSE: the demo agent on ADK's ``google.adk.models.Gemini``
(google-genai's HTTP client underneath) against the Gemini API emulator, driven by the real
AI SDK clients (ai 5, strict 6, 6 and 7 in Node), every chunk validated by the client's
own schema. The scripted-model runs of the same flows are tests/clients/test_conformance.py and
tests/clients/test_hitl_client.py; these prove the same flows hold on the model class users run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from adk_asgi import AdkMiddleware, PauseOptions
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.testing.gemini import GeminiEmulator

from support import LoopbackServer, not_found_app
from support.aisdk_client import (
    AI_VERSIONS,
    NodeHarnessMissing,
    require_node_harness,
    run_chat_versions,
)

pytestmark = pytest.mark.node

TEXT_MODEL = "gemini-2.5-flash"


def _serve(emulator: GeminiEmulator, **options: Any) -> AdkMiddleware:
    agent = build_demo_agent(model=emulator.gemini(TEXT_MODEL))
    return AdkMiddleware(not_found_app, path="/api/chat", agent=agent, warm_up=False, **options)


@pytest.fixture(scope="module")
def api(gemini_emulator: GeminiEmulator) -> Iterator[str]:
    try:
        require_node_harness()
    except NodeHarnessMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    with LoopbackServer(_serve(gemini_emulator)) as server:
        yield f"{server.url}/api/chat"


@pytest.fixture(scope="module")
def seed_api(gemini_emulator: GeminiEmulator) -> Iterator[str]:
    seed_style = PauseOptions(confirmation_style="adk-tool")
    with LoopbackServer(_serve(gemini_emulator, pauses=seed_style)) as server:
        yield f"{server.url}/api/chat"


def clean(reports: dict[str, dict[str, Any]], *, status: str = "ready") -> None:
    for version, report in reports.items():
        if status == "ready":
            assert report["ok"], (version, report["error"], report["problems"])
        for request in report["requests"]:
            assert request["status"] == 200, version
            assert request["invalid"] == [] and request["nullPaths"] == [], version
            assert request["sawDone"], version
        assert report["status"] == status, (version, report["status"], report["error"])


def last(report: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = report["messages"][-1]
    assert message["role"] == "assistant"
    return message


def kinds(message: dict[str, Any]) -> list[str]:
    return [p["type"] for p in message["parts"]]


def tool_states(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["type"], p["state"]) for p in message["parts"] if p["type"].startswith("tool-")]


def final_text(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def paid(name: str) -> int:
    return sum(1 for p in PAYMENT_LOG if p["recipient"] == name)


def test_text_reasoning_and_a_server_tool(api: str, gemini_emulator: GeminiEmulator) -> None:
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": "hello gemini"},
            {"action": "send", "text": "think about the sea"},
            {"action": "send", "text": "What's the weather in Paris?"},
        ],
        chat_id="g-text",
    )
    clean(reports)
    for version, report in reports.items():
        hello, think, weather = [m for m in report["messages"] if m["role"] == "assistant"]
        assert kinds(hello) == ["step-start", "text"], version
        assert final_text(hello).startswith('You said: "hello gemini"')
        # usage and the model's name come from Gemini's usageMetadata / modelVersion
        assert hello["metadata"]["usage"]["totalTokens"] > 0
        assert hello["metadata"]["model"] == TEXT_MODEL
        # thought parts (includeThoughts) become a reasoning part
        assert kinds(think) == ["step-start", "reasoning", "text"], version
        assert "sea" in think["parts"][1]["text"]
        assert kinds(weather) == ["step-start", "text", "tool-get_weather", "step-start", "text"], (
            version
        )
        tool = weather["parts"][2]
        assert tool["state"] == "output-available" and tool["input"] == {"location": "Paris"}
        assert final_text(weather).endswith("The weather in Paris is cloudy, 18°C.")
        # 8-token chunks: the answer came in several deltas of several words
        deltas = [c["delta"] for c in report["requests"][0]["chunks"] if c["type"] == "text-delta"]
        assert len(deltas) > 2 and all(len(d.split()) <= 8 for d in deltas)
    # Every request went through google-genai's streaming call to the emulator.
    streamed = [
        r
        for r in gemini_emulator.journal.records("streamGenerateContent")
        if "hello gemini" in str(r.data)
    ]
    assert len(streamed) >= len(AI_VERSIONS)


@pytest.mark.parametrize("approved", [True, False])
def test_native_approval(api: str, approved: bool) -> None:
    who = f"GeminiHanako{int(approved)}"
    versions = ("ai6strict", "ai6", "ai7") if approved else ("ai7",)
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": f"Send 50 dollars to {who}"},
            {"action": "approve", "approved": approved},
        ],
        chat_id=f"g-pay-{approved}",
        auto_send="approvals",
        versions=versions,
    )
    clean(reports)
    for version, report in reports.items():
        first, second = report["requests"]
        assert first["chunks"][-1]["finishReason"] == "tool-calls"
        assert second["chunks"][0]["messageId"] == first["chunks"][0]["messageId"]
        state = "output-available" if approved else "output-denied"
        assert tool_states(last(report)) == [("tool-process_payment", state)], version
        expected = f"Sent 50 USD to {who}." if approved else f"The payment to {who} was cancelled."
        assert final_text(last(report)).endswith(expected), version
    assert paid(who) == (len(versions) if approved else 0)


def test_several_approvals_one_denied(api: str) -> None:
    reports = run_chat_versions(
        api,
        [
            {
                "action": "send",
                "text": "Send 30 dollars to GeminiAlice and 40 dollars to GeminiBob",
            },
            {"action": "approve", "approved": True},
            {"action": "approve", "approved": False},
        ],
        chat_id="g-two",
        auto_send="approvals",
        versions=("ai6", "ai7"),
    )
    clean(reports)
    for report in reports.values():
        assert len(report["requests"]) == 2  # both answers in one request
        assert [s for _, s in tool_states(last(report))] == ["output-available", "output-denied"]
    assert paid("GeminiAlice") == 2 and paid("GeminiBob") == 0


def test_browser_tools_both_patterns(api: str) -> None:
    # get_location: the page approves, runs it and sends approval and result together;
    # change_bgm: no approval, the page runs it and sends its result.
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
            {"action": "send", "text": "Play track 2"},
            {"action": "toolOutput", "tool": "change_bgm", "output": {"success": True, "track": 2}},
        ],
        chat_id="g-browser",
        auto_send="toolCalls",
        versions=("ai6strict", "ai6", "ai7"),
    )
    clean(reports)
    for report in reports.values():
        location, bgm = [m for m in report["messages"] if m["role"] == "assistant"]
        assert tool_states(location) == [("tool-get_location", "output-available")]
        assert "latitude 35.6" in final_text(location)
        assert tool_states(bgm) == [("tool-change_bgm", "output-available")]
        assert final_text(bgm).endswith("Now playing track 2.")


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
        chat_id="g-loc-later",
        versions=("ai7",),
    )
    clean(reports)
    (report,) = reports.values()
    assert len(report["requests"]) == 3
    assert "latitude 1.5" in final_text(last(report))


@pytest.mark.parametrize("confirmed", [True, False])
def test_adk_tool_style_confirmation(seed_api: str, confirmed: bool) -> None:
    who = f"GeminiSeed{int(confirmed)}"
    reports = run_chat_versions(
        seed_api,
        [
            {"action": "send", "text": f"Send 80 dollars to {who}"},
            {
                "action": "toolOutput",
                "tool": "adk_request_confirmation",
                "output": {"confirmed": confirmed},
            },
        ],
        chat_id=f"g-seed-{confirmed}",
        auto_send="toolCalls",
        versions=AI_VERSIONS if confirmed else ("ai5",),
    )  # ai5 too: no approval chunks
    clean(reports)
    for version, report in reports.items():
        states = dict(tool_states(last(report)))
        assert states["tool-adk_request_confirmation"] == "output-available", version
        assert states["tool-process_payment"] == (
            "output-available" if confirmed else "output-error"
        ), version
    assert paid(who) == (len(reports) if confirmed else 0)


@pytest.mark.parametrize(
    ("phrase", "code", "upstream", "versions"),
    [
        ("please fail with 429", "RESOURCE_EXHAUSTED", "Resource has been exhausted", AI_VERSIONS),
        ("please fail with 500", "INTERNAL", "An internal error has occurred", ("ai5", "ai7")),
        # a 500 in the middle of the stream, after two words
        ("please raise", "INTERNAL", "An internal error has occurred", ("ai6",)),
    ],
)
def test_upstream_errors_reach_the_chat_as_an_error_chunk(
    api: str, phrase: str, code: str, upstream: str, versions: tuple[str, ...]
) -> None:
    reports = run_chat_versions(
        api,
        [{"action": "send", "text": phrase}],
        chat_id=f"g-err-{phrase.replace(' ', '-')}",
        versions=versions,
    )
    clean(reports, status="error")
    for version, report in reports.items():
        (request,) = report["requests"]
        error = request["chunks"][-1]
        assert error["type"] == "error", version
        # a clear text with the error's code; never the upstream's message (SECURITY.md)
        assert error["errorText"] == f"The agent failed to answer. Please try again. ({code})"
        assert upstream not in str(request["rawEvents"])
        assert report["error"] == error["errorText"], version
