"""Real-client conformance: the `ai` package itself (5.x, strict 6.0.230, 6.x, 7.x),
headless in Node, drives its own Chat + DefaultChatTransport against a real server
and validates every chunk with its own `uiMessageChunkSchema`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from adk_asgi import AdkMiddleware
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, not_found_app
from support.aisdk_client import (
    AI_VERSIONS,
    NodeHarnessMissing,
    require_node_harness,
    run_chat_versions,
)

pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def api() -> Iterator[str]:
    try:
        require_node_harness()
    except NodeHarnessMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    app = AdkMiddleware(not_found_app, path="/api/chat", agent=build_demo_agent(token_delay=0))
    with LoopbackServer(app) as server:
        yield f"{server.url}/api/chat"


def assert_clean(reports: dict[str, dict[str, Any]]) -> None:
    for version, report in reports.items():
        assert report["ok"], (
            version,
            report.get("error"),
            report.get("problems"),
            [r.get("invalid") for r in report["requests"]],
        )
        for request in report["requests"]:
            assert request["status"] == 200, version
            assert request["invalid"] == [], (version, request["invalid"])
            assert request["nullPaths"] == [], (version, request["nullPaths"])
            assert request["sawDone"], version
            assert request["headers"].get("x-vercel-ai-ui-message-stream") == "v1"
        assert report["status"] == "ready", (version, report["status"])


def assistant(report: dict[str, Any], index: int = -1) -> dict[str, Any]:
    messages = [m for m in report["messages"] if m["role"] == "assistant"]
    return messages[index]


def parts_of(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"] == kind]


def test_plain_text(api: str) -> None:
    reports = run_chat_versions(api, [{"action": "send", "text": "hello there"}], chat_id="plain")
    assert_clean(reports)
    for version, report in reports.items():
        message = assistant(report)
        texts = parts_of(message, "text")
        assert len(texts) == 1 and texts[0]["state"] == "done", version
        assert texts[0]["text"].startswith('You said: "hello there"'), version
        assert len(parts_of(message, "step-start")) == 1
        assert message["metadata"]["usage"]["totalTokens"] > 0
        assert message["id"].startswith("msg-")


def test_think_reasoning_part(api: str) -> None:
    reports = run_chat_versions(
        api, [{"action": "send", "text": "think about the sea"}], chat_id="think"
    )
    assert_clean(reports)
    for version, report in reports.items():
        kinds = [p["type"] for p in assistant(report)["parts"]]
        assert kinds == ["step-start", "reasoning", "text"], (version, kinds)
        reasoning = parts_of(assistant(report), "reasoning")[0]
        assert reasoning["state"] == "done" and "sea" in reasoning["text"]


def test_weather_tool(api: str) -> None:
    reports = run_chat_versions(
        api, [{"action": "send", "text": "What's the weather in Tokyo?"}], chat_id="weather"
    )
    assert_clean(reports)
    for version, report in reports.items():
        message = assistant(report)
        kinds = [p["type"] for p in message["parts"]]
        assert kinds == ["step-start", "text", "tool-get_weather", "step-start", "text"], (
            version,
            kinds,
        )
        tool = parts_of(message, "tool-get_weather")[0]
        assert tool["state"] == "output-available"
        assert tool["input"] == {"location": "Tokyo"}
        assert tool["output"]["location"] == "Tokyo"
        assert "Tokyo" in message["parts"][-1]["text"]
        assert len(report["requests"]) == 1  # nothing re-POSTed automatically


def test_weather_with_auto_send_does_not_loop(api: str) -> None:
    # The tool result and the answer are in separate steps, so the client's
    # lastAssistantMessageIsCompleteWithToolCalls sees text after the tool and stops.
    reports = run_chat_versions(
        api,
        [{"action": "send", "text": "weather in Paris?"}],
        chat_id="auto",
        auto_send="toolCalls",
        versions=("ai6", "ai7"),
    )
    assert_clean(reports)
    for report in reports.values():
        assert len(report["requests"]) == 1


def test_multi_turn_and_regenerate(api: str) -> None:
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": "hello one"},
            {"action": "send", "text": "hello two"},
            {"action": "regenerate"},
        ],
        chat_id="turns",
    )
    assert_clean(reports)
    for version, report in reports.items():
        assert [m["role"] for m in report["messages"]] == [
            "user",
            "assistant",
            "user",
            "assistant",
        ], version
        bodies = [r["body"] for r in report["requests"]]
        assert bodies[2]["trigger"] == "regenerate-message"
        ids = [r["chunks"][0]["messageId"] for r in report["requests"]]
        assert len(set(ids)) == 3  # each answer is its own message
        assert assistant(report)["id"] == ids[2]


def test_model_error_reaches_the_chat_as_an_error(api: str) -> None:
    reports = run_chat_versions(
        api, [{"action": "send", "text": "please fail"}], chat_id="fail", versions=AI_VERSIONS
    )
    for version, report in reports.items():
        assert report["status"] == "error", version
        assert report["error"], version
        request = report["requests"][0]
        assert request["invalid"] == [] and request["nullPaths"] == []
        assert [c["type"] for c in request["chunks"]][-1] == "error"
