"""Answers of any size reach a reading client whole (issue 28, item 1): a 5 MiB tool result
and a 200,000-character reply through the real AI SDK clients (ai 5, 6 and 7 over SSE, every
chunk validated by that version's schema), against a real ``adk-asgi serve`` process serving
tests/agents/bulk. The page, the history (``GET {api}/{chatId}``) and the tool's own result
agree. Before the outbox judged a client by its backlog behind the largest message, the
5 MiB ``tool-output-available`` chunk alone counted as a slow client: the stream was reset
part-way, with no ``error`` chunk and no log line.

One server and one Node process (``drive-history.mjs``) for every case.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import pytest
from agents.bulk import agent as bulk

from support import Serve
from support.aisdk_client import drive_history, require_node_harness
from support.paths import TESTS

pytestmark = pytest.mark.node

VERSIONS: Final = ("ai5", "ai6", "ai7")
SAID: Final = {"search": "search the archive", "recite": "recite the long text"}


@pytest.fixture(scope="module")
def server() -> Iterator[Serve]:
    with Serve(
        "agents.bulk.agent:root_agent",
        env={"PYTHONPATH": str(TESTS)},
        token_delay=0,
        log_level="info",
    ) as running:
        yield running


@pytest.fixture(scope="module")
def results(server: Serve) -> dict[tuple[str, str], dict[str, Any]]:
    require_node_harness()
    runs = [
        {
            "ai": ai,
            "api": server.url,
            "chatId": f"{case}-{ai}",
            "steps": [{"action": "send", "text": text}],
            "timeoutMs": 60_000,
        }
        for case, text in SAID.items()
        for ai in VERSIONS
    ]
    results = drive_history(runs, concurrency=3)
    return {(r["chatId"].rsplit("-", 1)[0], r["ai"]): r for r in results}


def answer(result: dict[str, Any]) -> dict[str, Any]:
    assert "crash" not in result, result.get("crash")
    report = result["report"]
    assert report["ok"], (result["ai"], report["problems"], report["error"])
    (request,) = report["requests"]
    assert request["sawDone"] and not request["invalid"], request.get("streamError")
    assert request["chunks"][-1]["type"] == "finish"
    assert result["validation"]["ok"], result["validation"]
    shown = report["messages"]
    assert result["history"]["body"]["messages"] == shown, result["ai"]
    message: dict[str, Any] = shown[-1]
    assert message["role"] == "assistant"
    return message


@pytest.mark.parametrize("ai", VERSIONS)
def test_a_5_mib_tool_result_streams_whole(
    ai: str, results: dict[tuple[str, str], dict[str, Any]], server: Serve
) -> None:
    message = answer(results[("search", ai)])
    (tool,) = [p for p in message["parts"] if p["type"] == "tool-search_archive"]
    assert tool["state"] == "output-available"
    assert len(json.dumps(tool["output"])) > bulk.RESULT_BYTES
    assert tool["output"]["rows"] == bulk.rows()
    texts = [p["text"] for p in message["parts"] if p["type"] == "text"]
    assert texts == [f"Found {bulk.ROW_COUNT} rows."]
    assert "stopped reading" not in server.output()


@pytest.mark.parametrize("ai", VERSIONS)
def test_a_200000_character_reply_streams_whole(
    ai: str, results: dict[tuple[str, str], dict[str, Any]]
) -> None:
    message = answer(results[("recite", ai)])
    assert len(bulk.LONG_TEXT) >= 200_000
    assert [p["text"] for p in message["parts"] if p["type"] == "text"] == [bulk.LONG_TEXT]
