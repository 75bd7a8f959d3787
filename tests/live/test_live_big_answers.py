"""Answers of any size reach a reading client whole in live mode too (issue 28, item 8): a
5 MiB tool result and a 200,000-character reply on protocol A (the npm package's
``AdkLiveTransport``, built from clients/js/src) and protocol B (ai@7's
``WebSocketChatTransport``), every chunk validated by ai@7's ``uiMessageChunkSchema``,
against a real ``adk-asgi serve`` process serving tests/agents/bulk (its scripted model
answers ``run_live`` too). The socket shares the SSE outbox's rule (a client is judged by
the bytes waiting behind the largest message, never by one message's size), so the 5 MiB
``tool-output-available`` frame no longer reads as a client that stopped reading.

One server; one conversation per protocol (both cases on one socket), the two side by side
in the shared Node driver process (tests/support/aisdk_client.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from agents.bulk import agent as bulk

from support import Serve
from support.aisdk_client import JS_DIR, run_ws_chat
from support.paths import TESTS

pytestmark = pytest.mark.node

PROTOCOLS: Final = {"A": "adk", "B": "ai"}
STEPS: Final = [
    {"action": "send", "text": "search the archive"},
    {"action": "send", "text": "recite the long text"},
]


@pytest.fixture(scope="module")
def server() -> Iterator[Serve]:
    modules = JS_DIR / "node_modules"
    if not (modules / "ai7").is_dir() or not (modules / "ws").is_dir():
        pytest.skip("tests/js/node_modules (npm ci --prefix tests/js) is required")
    with Serve(
        "agents.bulk.agent:root_agent",
        env={"PYTHONPATH": str(TESTS)},
        token_delay=0,
        log_level="info",
    ) as running:
        yield running


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident set (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def results(server: Serve) -> dict[str, dict[str, Any]]:
    url = server.url.replace("http://", "ws://", 1) + "/"
    with ThreadPoolExecutor(max_workers=len(PROTOCOLS)) as pool:
        runs = {
            name: pool.submit(
                run_ws_chat,
                server.url if name == "A" else url,
                STEPS,
                chat_id=f"big-live-{name}",
                transport=PROTOCOLS[name],
                node_timeout_ms=60_000,
                timeout=120,
            )
            for name in PROTOCOLS
        }
        out: dict[str, dict[str, Any]] = {}
        for name, run in runs.items():
            out[name] = run.result()
            history = httpx.get(f"{server.url}/big-live-{name}", timeout=30)
            assert history.status_code == 200
            out[name]["history"] = history.json()["messages"]
    print(f"server peak RSS: {peak_rss_mib(server.proc.pid):.0f} MiB")
    return out


def assistants(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] == "assistant" and m["parts"]]


def check(result: dict[str, Any]) -> list[dict[str, Any]]:
    assert result["ok"], (result["problems"], result["chatErrors"])
    assert result["invalid"] == [] and result["nullPaths"] == []
    assert [f["finishReason"] for f in result["finishes"]] == ["stop", "stop"]
    shown = assistants(result["messages"])
    assert len(shown) == 2
    return shown


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_5_mib_tool_result_streams_whole(
    protocol: str, results: dict[str, dict[str, Any]], server: Serve
) -> None:
    result = results[protocol]
    search = check(result)[0]
    for message in (search, assistants(result["history"])[0]):
        (tool,) = [p for p in message["parts"] if p["type"] == "tool-search_archive"]
        assert tool["state"] == "output-available"
        assert tool["output"]["rows"] == bulk.rows()
        assert len(json.dumps(tool["output"])) > bulk.RESULT_BYTES
        texts = [p["text"] for p in message["parts"] if p["type"] == "text"]
        assert texts == [f"Found {bulk.ROW_COUNT} rows."]
    assert "stopped reading" not in server.output()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_200000_character_reply_streams_whole(
    protocol: str, results: dict[str, dict[str, Any]]
) -> None:
    result = results[protocol]
    recited = check(result)[1]
    for message in (recited, assistants(result["history"])[1]):
        texts = [p["text"] for p in message["parts"] if p["type"] == "text"]
        assert texts == [bulk.LONG_TEXT]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_reload_shows_what_the_page_showed(
    protocol: str, results: dict[str, dict[str, Any]]
) -> None:
    """The history names each live turn's message as the page got it (the id travels on
    the turn's events), with the same parts, and no message the page never showed."""
    result = results[protocol]
    shown, stored = result["messages"], result["history"]
    assert [m for m in stored if m["role"] == "assistant"] == [
        m for m in shown if m["role"] == "assistant"
    ]
    assert [(m["role"], m["parts"]) for m in stored] == [(m["role"], m["parts"]) for m in shown]
