"""An agent the emulator has never seen, on its default script: ``adk-asgi serve
tests/agents/stocks`` (a stock-price tool and an order tool with
``require_confirmation=True``, model "gemini-2.5-flash" from the environment) with nothing
but the emulator's environment, no script. Each tool is called by naming it, over SSE
(ai@6 and ai@7's ``DefaultChatTransport``) and in live mode (ai@7's
``WebSocketChatTransport`` on a Live API model); the approval works both ways; no
undeclared tool is ever called, so no tool ever fails."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

import httpx
import pytest

from adk_asgi.testing.gemini import GeminiEmulator

from .live_helpers import drive_ws
from support import serve
from support.aisdk_client import require_node_harness, run_chat_versions

pytestmark = pytest.mark.node

LIVE_MODEL: Final = "gemini-live-2.5-flash-preview"
TOOLS: Final = {"get_stock_price", "place_order"}


@pytest.fixture(scope="module")
def emulator() -> Iterator[GeminiEmulator]:
    """This module's own emulator (its journal holds this module's requests only), with
    the default script."""
    with GeminiEmulator(tokens_per_chunk=8) as running:
        yield running


@pytest.fixture(scope="module")
def url(emulator: GeminiEmulator) -> Iterator[str]:
    require_node_harness()
    with serve("tests/agents/stocks", "--live-model", LIVE_MODEL, env=emulator.env) as base:
        yield base


def tools_of(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        p["type"].removeprefix("tool-"): p
        for p in message["parts"]
        if p["type"].startswith("tool-")
    }


def said(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def assistants(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] == "assistant"]


STEPS: Final = [
    {"action": "send", "text": "What is Google at? Use get_stock_price symbol=GOOG"},
    {"action": "send", "text": "Buy 10 shares: place_order symbol=GOOG quantity=10"},
    {"action": "approve", "approved": True},
    {"action": "send", "text": "Sell them with place_order symbol=GOOG quantity=10 side=sell"},
    {"action": "approve", "approved": False},
    {"action": "send", "text": "What's the weather in Tokyo?"},  # no weather tool: no call
]


def check(messages: list[dict[str, Any]], where: str) -> None:
    quote, bought, refused, weather = assistants(messages)
    price = tools_of(quote)["get_stock_price"]
    assert price["state"] == "output-available", where
    assert price["input"] == {"symbol": "GOOG"} and price["output"]["symbol"] == "GOOG"
    assert f'"price": {price["output"]["price"]}' in said(quote), where
    order = tools_of(bought)["place_order"]
    assert order["state"] == "output-available", (where, order)
    assert order["input"] == {"symbol": "GOOG", "quantity": 10}  # side: its default
    assert order["output"]["status"] == "placed"
    assert said(bought).startswith("place_order returned {"), where
    denied = tools_of(refused)["place_order"]
    assert denied["state"] == "output-denied", (where, denied)
    assert denied["input"] == {"symbol": "GOOG", "quantity": 10, "side": "sell"}
    assert tools_of(weather) == {}, where
    assert said(weather).startswith('You said: "What\'s the weather in Tokyo?"'), where
    # The fallback names this agent's tools and how to call them, never the demo's.
    assert "get_stock_price(symbol)" in said(weather), where
    assert "place_order(symbol, quantity, side)" in said(weather), where
    assert 'e.g. "use get_stock_price symbol=..."' in said(weather), where
    assert "demo" not in said(weather) and "payment" not in said(weather), where
    for message in assistants(messages):
        assert set(tools_of(message)) <= TOOLS, where
        assert not [p for p in message["parts"] if p.get("state") == "output-error"], where


def test_the_page_is_told_about_this_agent(url: str) -> None:
    """The bundled page's title, description and suggestions are the broker's own."""
    info = httpx.get(f"{url}/agent.json", timeout=10).json()
    assert info == {
        "title": "Talk to broker",
        "description": "Quotes stock prices and places orders.",
        "suggestions": ["use get_stock_price", "use place_order"],
        "api": "api/chat",
    }


def declared_calls_only(emulator: GeminiEmulator) -> int:
    """Every function call the model made (as each later request carries it) names a
    function that request declares; returns how many calls were checked."""
    checked = 0
    for record in emulator.journal.records("streamGenerateContent"):
        body = record.data["body"]
        tools, contents = body.get("tools") or [], body.get("contents") or []
        declared = {d["name"] for t in tools for d in t.get("functionDeclarations", ())}
        for content in contents:
            for part in content.get("parts", ()):
                call = part.get("functionCall") or part.get("function_call")
                if call:
                    assert call["name"] in declared, call
                    checked += 1
    return checked


def test_sse_each_tool_by_name_and_the_approval(url: str, emulator: GeminiEmulator) -> None:
    reports = run_chat_versions(
        f"{url}/api/chat",
        STEPS,
        chat_id="own-sse",
        auto_send="approvals",
        versions=("ai6", "ai7"),
        timeout=60,
    )
    for version, report in reports.items():
        assert report["ok"], (version, report["error"], report["problems"])
        for request in report["requests"]:
            assert request["status"] == 200 and request["invalid"] == [], version
        check(report["messages"], version)
    assert declared_calls_only(emulator) >= 2 * 3  # three calls per client version


def test_live_each_tool_by_name_and_the_approval(url: str, emulator: GeminiEmulator) -> None:
    before = len(emulator.journal)
    result = drive_ws(
        url.replace("http://", "ws://") + "/api/chat",
        STEPS,
        chat_id="own-live",
        auto="approvals",
        timeout_ms=60_000,
    )
    assert not [f for f in result["frames"] if f["type"] == "error"]
    check(result["messages"], "live")
    # It ran on the Live API: the setup declared the agent's two tools, and every call
    # the model sent (toolCall) was answered for a declared function.
    live = list(emulator.journal)[before:]
    setups = [r.data for r in live if r.kind == "setup"]
    assert setups and all(r["model"] == f"models/{LIVE_MODEL}" for r in setups)
    declared = {
        d["name"]
        for s in setups
        for t in s.get("tools", ())
        for d in t.get("functionDeclarations", t.get("function_declarations", ()))
    }
    assert declared == TOOLS
    answered = {
        r["name"]
        for rec in live
        if rec.kind == "toolResponse"
        for r in rec.data.get("functionResponses", rec.data.get("function_responses", ()))
    }
    assert answered == TOOLS, json.dumps([r.data for r in live if r.kind == "toolResponse"])
