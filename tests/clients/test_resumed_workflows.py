"""A workflow resumed after ``RequestInput`` shows what its nodes said once (issue 28, item
6): tests/agents/intake greets (a node's text output), asks for the topic, then files the
ticket. On resume ADK 2.13 yields the greeting's output event again (and stores it again;
the node ran once); the page (ai 5, 6 and 7 over SSE, every chunk validated), the stream and
the history (``GET {api}/{chatId}``) hold it once. Before: twice on the page and in the
history.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import pytest
from agents.intake import agent as intake

from adk_asgi import AdkApp

from support import LoopbackServer
from support.aisdk_client import drive_history, require_node_harness

pytestmark = pytest.mark.node

VERSIONS: Final = ("ai5", "ai6", "ai7")


@pytest.fixture(scope="module")
def results() -> Iterator[dict[str, dict[str, Any]]]:
    require_node_harness()
    with LoopbackServer(AdkApp(intake.root_agent, warm_up=False)) as server:
        runs = [
            {
                "ai": ai,
                "api": server.url,
                "chatId": f"intake-{ai}",
                "steps": [
                    {"action": "send", "text": "hi"},
                    {"action": "toolOutput", "tool": "adk_request_input", "output": "billing"},
                ],
                "autoSend": "toolCalls",
                "timeoutMs": 30_000,
            }
            for ai in VERSIONS
        ]
        results = drive_history(runs, concurrency=3)
        yield {r["ai"]: r for r in results}


def texts(message: dict[str, Any]) -> list[str]:
    return [p["text"] for p in message["parts"] if p["type"] == "text"]


@pytest.mark.parametrize("ai", VERSIONS)
def test_a_resumed_workflow_shows_what_ran_before_the_pause_once(
    ai: str, results: dict[str, dict[str, Any]]
) -> None:
    result = results[ai]
    assert "crash" not in result, result.get("crash")
    report = result["report"]
    assert report["ok"], report["problems"]
    _first, resumed = report["requests"]
    streamed = [c["delta"] for c in resumed["chunks"] if c["type"] == "text-delta"]
    assert intake.GREETING not in streamed  # the resumed stream does not say it again
    assert streamed[-1] == intake.ticket("billing")
    (message,) = [m for m in report["messages"] if m["role"] == "assistant"]
    assert texts(message).count(intake.GREETING) == 1, texts(message)
    assert texts(message)[0] == intake.GREETING
    assert texts(message)[-1] == intake.ticket("billing")
    assert result["validation"]["ok"], result["validation"]
    assert result["history"]["body"]["messages"] == report["messages"]
