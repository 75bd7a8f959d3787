"""Streaming tools and a run that cannot start, in live mode on ADK's real ``Gemini``
through the emulator's Live API (which takes a ``NON_BLOCKING`` call's responses as the
real service does: ADK declares its streaming tools so, answers their calls with a
"pending" response, then sends one more response per value the tool yields).

Protocol A through tests/support/ws_client.py (every chunk checked against our strict
structs); one server and one emulator for the module.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.models import Gemini

from adk_asgi import AdkApp, LiveOptions
from adk_asgi.live.run.models import DEFAULT_GEMINI_LIVE_MODEL
from adk_asgi.testing.gemini import GeminiEmulator

from .live_helpers import connections_of, pick, sent_on
from support import LoopbackServer
from support.ws_client import DONE, LiveClient, dicts, kinds, text, ws_url

KEY = "the-emulator's-key"


async def watch_price(symbol: str) -> AsyncIterator[dict[str, Any]]:
    """Streams the price of a stock, three quotes."""
    for price in (100, 101, 102):
        await asyncio.sleep(0.02)
        yield {"symbol": symbol, "price": price}


@pytest.fixture(scope="module")
def emulator() -> Iterator[GeminiEmulator]:
    with GeminiEmulator(tokens_per_chunk=8, api_key=KEY) as running:
        yield running


def _app(model: Gemini) -> AdkApp:
    agent = LlmAgent(name="quotes", model=model, tools=[watch_price], instruction="Quote.")
    live = LiveOptions(model=DEFAULT_GEMINI_LIVE_MODEL)
    return AdkApp(agent, live_options=live, warm_up=False)


@pytest.fixture(scope="module")
def server(emulator: GeminiEmulator) -> Iterator[LoopbackServer]:
    with LoopbackServer(_app(emulator.gemini())) as running:
        yield running


@pytest.fixture(scope="module")
def keyless(emulator: GeminiEmulator) -> Iterator[LoopbackServer]:
    """The same agent with a key the service refuses: its live run cannot start."""
    client_kwargs = {"api_key": "not-the-key", "http_options": emulator.http_options()}
    with LoopbackServer(_app(Gemini(client_kwargs=client_kwargs))) as running:
        yield running


def errors_of(chunks: list[Any]) -> list[dict[str, Any]]:
    return [c for c in dicts(chunks) if c["type"] == "error"]


async def test_a_streaming_tool_keeps_the_conversation_going(
    server: LoopbackServer, emulator: GeminiEmulator
) -> None:
    """Each yield is one more response for the call: the service ignores them (the
    "pending" one ended the call), so the model connection stays, the turn finishes and
    the socket answers the next message."""
    client = await LiveClient.open(ws_url(server.url, "chatId=g-stream-a"))
    try:
        await client.say("Use watch_price symbol=GOOG")
        quote = await client.turn(wait=15)
        await client.say("hello after the quotes")
        after = await client.turn(wait=15)
    finally:
        await client.close()
    assert errors_of(quote) == [] and errors_of(after) == []
    assert kinds(quote)[-2:] == ["finish", DONE]
    assert text(after).startswith('You said: "hello after the quotes"')
    connections = connections_of(emulator, "Use watch_price symbol=GOOG")
    responses = [r.data for r in sent_on(emulator, connections, "toolResponse")]
    ids = {pick(f, "id") for r in responses for f in pick(r, "functionResponses")}
    assert len(responses) >= 2 and len(ids) == 1  # "pending", then the quotes: one call
    assert not sent_on(emulator, connections, "close")  # nothing closed the connection


async def test_a_run_that_cannot_start_answers_each_message_once(
    keyless: LoopbackServer, emulator: GeminiEmulator
) -> None:
    """No model connection: each message gets one clear ``error`` and the socket stays,
    instead of a turn nobody asked for per restart and a close 1011."""

    def refused() -> int:
        return sum(1 for r in emulator.journal.records("close") if r.data["code"] == 1007)

    before = refused()
    client = await LiveClient.open(ws_url(keyless.url, "chatId=g-no-key"))
    try:
        await client.say("hello without a key")
        first = await client.turn(wait=20)
        await client.say("and again")
        second = await client.turn(wait=20)
    finally:
        await client.close()
    for chunks in (first, second):
        assert kinds(chunks) == ["start", "error", DONE]
        assert errors_of(chunks)[0]["errorText"] == (
            "The agent failed to answer. Please try again. (LiveModelUnavailable)"
        )
        assert "API key" not in str(chunks)
    # one model connection tried per message, none in between
    assert refused() - before == 2
