"""Tool failures that ADK reports as results (tests/agents/failures): an MCP tool's
``isError: true`` (a real MCP server over streamable HTTP on loopback, ADK's
``McpToolset``), an ``McpToolset`` whose server refuses its bearer token (ADK answers the
call with its "not found" text for the model, which the retry plugin wraps), and
``ReflectAndRetryToolPlugin``'s guidance for a tool that raised. Each is a
``tool-output-error`` on the page: the generic text, or what the app's ``describe_error``
says for it (here: for MCP errors); no text meant for the model reaches the page or the
history; one log line each.

One conversation per client: ai 5, 6 and 7 over SSE, ai 7 over protocol B, protocol A
(assembled as the AI SDK would); the history of the ai 7 chat.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest
from agents.failures import agent as failures

from adk_asgi import AdkApp
from adk_asgi.wire.errors import ErrorInfo, describe_error_generic

from support import LoopbackServer
from support.aisdk_client import run_chat_versions, run_ws_chat
from support.logs import kept_records
from support.ws_client import LiveClient, assemble, ws_url

pytestmark = pytest.mark.node

ASKED: Final = ("order", "vault", "seat", "count")
TRANSPORTS: Final = ("ai5", "ai6", "ai7", "protocol-b", "protocol-a")
ORDERS_DOWN: Final = "The order service could not answer."


def describe_error(error: ErrorInfo) -> str:
    """The app names MCP failures; anything else gets the generic text."""
    if error.code == "MCP_TOOL_ERROR" and error.tool == "find_order":
        return ORDERS_DOWN
    return describe_error_generic(error)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(failures.mcp_server()) as mcp:
        chat = AdkApp(
            adk_app=failures.build_app(f"{mcp.url}/mcp"),
            describe_error=describe_error,
            warm_up=False,
        )
        with LoopbackServer(chat) as running:
            yield running


@pytest.fixture(scope="module")
def logged() -> Iterator[list[logging.LogRecord]]:
    with kept_records() as records:
        yield records


@pytest.fixture(scope="module")
def chats(
    server: LoopbackServer, logged: list[logging.LogRecord]
) -> dict[str, list[dict[str, Any]]]:
    """Every transport's messages, one question of ``ASKED`` after the other; and the
    history of the ai 7 chat (``"history"``)."""
    steps = [{"action": "send", "text": f"the {word} please"} for word in ASKED]
    out: dict[str, list[dict[str, Any]]] = {}
    for version, report in run_chat_versions(
        server.url, steps, versions=TRANSPORTS[:3], chat_id="failures", timeout=90
    ).items():
        assert not any(r["invalid"] for r in report["requests"]), report["problems"]
        assert [r["status"] for r in report["stepResults"]] == ["ready"] * len(ASKED), report[
            "problems"
        ]
        out[version] = report["messages"]
    report = run_ws_chat(ws_url(server.url), steps, chat_id="failures-b")
    assert report["invalid"] == [] and report["nullPaths"] == [], report["problems"]
    assert [r["status"] for r in report["stepResults"]] == ["ready"] * len(ASKED)
    out["protocol-b"] = report["messages"]

    async def protocol_a() -> list[dict[str, Any]]:
        client = await LiveClient.open(ws_url(server.url, "chatId=failures-a"))
        try:
            said = []
            for word in ASKED:
                await client.say(f"the {word} please")
                turn = await client.turn(wait=30)
                assert turn[-2]["type"] == "finish", turn
                said.append(assemble(turn))
            return said
        finally:
            await client.close()

    out["protocol-a"] = asyncio.run(protocol_a())
    out["history"] = httpx.get(f"{server.url}/failures-ai7", timeout=10).json()["messages"]
    return out


def answer(chats: dict[str, list[dict[str, Any]]], transport: str, word: str) -> dict[str, Any]:
    said = [m for m in chats[transport] if m["role"] == "assistant"]
    return said[ASKED.index(word)]


def tools(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"].startswith("tool-")]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_mcp_is_error_result_is_a_tool_error(
    chats: dict[str, list[dict[str, Any]]], transport: str
) -> None:
    [tool] = tools(answer(chats, transport, "order"))
    assert tool["type"] == "tool-find_order"
    assert (tool["state"], tool["errorText"]) == ("output-error", ORDERS_DOWN)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_toolset_that_failed_to_connect_is_a_tool_error(
    chats: dict[str, list[dict[str, Any]]], transport: str
) -> None:
    [tool] = tools(answer(chats, transport, "vault"))
    assert tool["type"] == "tool-open_vault"
    assert (tool["state"], tool["errorText"]) == ("output-error", "The tool failed.")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_retry_plugins_guidance_is_a_tool_error_then_the_retry_succeeds(
    chats: dict[str, list[dict[str, Any]]], transport: str
) -> None:
    first, retry = tools(answer(chats, transport, "seat"))
    assert (first["state"], first["errorText"]) == ("output-error", "The tool failed.")
    assert first["input"] == {"seat": 13}
    assert (retry["state"], retry["input"]) == ("output-available", {"seat": 14})
    assert retry["output"] == {"result": "seat 14"}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_mcp_success_stays_a_result(
    chats: dict[str, list[dict[str, Any]]], transport: str
) -> None:
    [tool] = tools(answer(chats, transport, "count"))
    assert tool["state"] == "output-available"
    assert tool["output"]["structuredContent"] == {"result": 3}


def test_no_text_meant_for_the_model_reaches_the_page_or_the_history(
    chats: dict[str, list[dict[str, Any]]],
) -> None:
    for transport, messages in chats.items():
        shown = json.dumps(messages)
        assert [t for t in failures.MODEL_ONLY if t in shown] == [], transport


def test_the_history_is_what_the_page_showed(chats: dict[str, list[dict[str, Any]]]) -> None:
    def outcomes(messages: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
        return [
            (p["type"], p["state"], p.get("errorText", p.get("output")))
            for m in messages
            for p in m["parts"]
            if p["type"].startswith("tool-")
        ]

    assert outcomes(chats["history"]) == outcomes(chats["ai7"])


def test_one_log_line_per_failure(
    chats: dict[str, list[dict[str, Any]]], logged: list[logging.LogRecord]
) -> None:
    lines = [r.getMessage() for r in logged if "the page shows a tool error" in r.getMessage()]
    # three failures per conversation, none again for the history
    assert len(lines) == 3 * len(TRANSPORTS), lines
    # (with the retry plugin installed, ADK's "not found" answer is the plugin's too)
    for tool, code in (("find_order", "MCP_TOOL_ERROR"), ("open_vault", "ValueError")):
        said = [line for line in lines if line.startswith(f"Tool {tool!r}")]
        assert len(said) == len(TRANSPORTS) and all(f": {code};" in line for line in said)
    assert not any(t in line for line in lines for t in failures.MODEL_ONLY)
