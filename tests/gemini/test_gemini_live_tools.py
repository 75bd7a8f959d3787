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

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.models import Gemini

from adk_asgi import AdkApp, LiveOptions
from adk_asgi.live.run.models import DEFAULT_GEMINI_LIVE_MODEL
from adk_asgi.testing.gemini import GeminiEmulator

from .live_helpers import connections_of, drive_ws, pick, sent_on
from support import LoopbackServer
from support.ws_client import DONE, LiveClient, assemble, dicts, kinds, text, ws_url

KEY = "the-emulator's-key"


async def watch_price(symbol: str) -> AsyncIterator[dict[str, Any]]:
    """Streams the price of a stock, three quotes."""
    for price in (100, 101, 102):
        await asyncio.sleep(0.02)
        yield {"symbol": symbol, "price": price}


async def build(target: str) -> AsyncIterator[Event | dict[str, Any]]:
    """Builds a target, telling the user how far it got."""
    for step in (1, 2):
        await asyncio.sleep(0.02)
        yield Event(message=f"Step {step} of building {target}.")
    yield {"built": target}


async def ticker(name: str) -> AsyncIterator[dict[str, Any]]:
    """Ticks until stopped."""
    tick = 0
    while True:
        tick += 1
        yield {"name": name, "tick": tick}
        await asyncio.sleep(0.05)


async def chatter(topic: str) -> AsyncIterator[Event]:
    """Talks about a topic until stopped."""
    count = 0
    while True:
        count += 1
        yield Event(message=f"Note {count} on {topic}.")
        await asyncio.sleep(0.1)


async def flaky_feed(source: str) -> AsyncIterator[dict[str, Any]]:
    """Reads a feed that breaks after its first item."""
    yield {"source": source, "item": 1}
    await asyncio.sleep(0.02)
    raise ConnectionError("the feed at 10.0.0.7 broke")


@pytest.fixture(scope="module")
def emulator() -> Iterator[GeminiEmulator]:
    with GeminiEmulator(tokens_per_chunk=8, api_key=KEY) as running:
        yield running


def _app(model: Gemini) -> AdkApp:
    agent = LlmAgent(
        name="quotes",
        model=model,
        tools=[watch_price, build, ticker, chatter, flaky_feed],
        instruction="Go.",
    )
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
    "pending" one ended the call), so the model connection stays. The page gets "pending"
    and each quote as they come, as preliminary outputs in the open turn, then the last
    quote as the output; the turn finishes and the socket answers the next message."""
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
    outputs = [c for c in dicts(quote) if c["type"] == "tool-output-available"]
    assert [(c["output"].get("price"), c.get("preliminary")) for c in outputs] == [
        (None, True),  # ADK's "pending"
        (100, True),
        (101, True),
        (102, True),
        (102, None),
    ]
    assert "pending" in str(outputs[0]["output"])
    assert text(after).startswith('You said: "hello after the quotes"')
    connections = connections_of(emulator, "Use watch_price symbol=GOOG")
    responses = [r.data for r in sent_on(emulator, connections, "toolResponse")]
    ids = {pick(f, "id") for r in responses for f in pick(r, "functionResponses")}
    assert len(responses) >= 2 and len(ids) == 1  # "pending", then the quotes: one call
    assert not sent_on(emulator, connections, "close")  # nothing closed the connection


async def test_a_streaming_tool_talks_to_the_user_in_the_open_turn(
    server: LoopbackServer,
) -> None:
    """``Event(message=...)``: text in the message that shows the call, as it comes; the
    message is finished and the socket answers the next message."""
    client = await LiveClient.open(ws_url(server.url, "chatId=g-stream-talk"))
    try:
        await client.say("Use build target=docs")
        built = await client.turn(wait=15)
        await client.say("hello once more")
        after = await client.turn(wait=15)
    finally:
        await client.close()
    assert errors_of(built) == [] and errors_of(after) == []
    assert kinds(built).count("start") == 1 and kinds(built)[-2:] == ["finish", DONE]
    texts = [p["text"] for p in assemble(built)["parts"] if p["type"] == "text"]
    assert texts[-2:] == ["Step 1 of building docs.", "Step 2 of building docs."]
    final = [c for c in dicts(built) if c["type"] == "tool-output-available"][-1]
    assert final["output"] == {"built": "docs"} and "preliminary" not in final
    assert text(after).startswith('You said: "hello once more"')


async def test_a_message_ends_a_turn_held_for_a_streaming_tool(server: LoopbackServer) -> None:
    """A tool that never ends holds its turn open only until the user speaks again: the
    turn finishes with the last value shown, and the new message is answered. A tool that
    raises ends with ``tool-output-error`` (ADK's generic text, never the exception's)."""
    client = await LiveClient.open(ws_url(server.url, "chatId=g-stream-held"))
    try:
        await client.say("Use ticker name=clock")
        held = await client.until("tool-output-available")  # "pending"
        while not [c for c in dicts(held) if c.get("output", {}).get("tick") == 2]:
            held.append(await client.next())
        await client.say("hello while it ticks")
        held += await client.turn()
        after = await client.turn()
        await client.say("Use flaky_feed source=news")
        flaky = await client.turn(wait=15)
    finally:
        await client.close()
    assert kinds(held)[-2:] == ["finish", DONE] and errors_of(held) == []
    assert text(after).startswith('You said: "hello while it ticks"')
    assert not [c for c in dicts(after) if c["type"].startswith("tool-")]  # later ticks: unseen
    (failed,) = [c for c in dicts(flaky) if c["type"] == "tool-output-error"]
    assert failed["errorText"] == "Invoking `flaky_feed()` failed with an internal error."
    assert "10.0.0.7" not in str(flaky) and kinds(flaky)[-2:] == ["finish", DONE]


async def test_a_streaming_tools_messages_after_its_turn(server: LoopbackServer) -> None:
    """A stop finishes a turn held for a streaming tool. What the tool says after that is a
    message of its own, finished, while no turn is open; during another turn it is not
    shown there (it belongs to none of its calls)."""
    client = await LiveClient.open(ws_url(server.url, "chatId=g-stream-chatter"))
    try:
        await client.say("Use chatter topic=tea")
        head = await client.until("text-delta")
        while "Note 3 on tea." not in text(head):  # the model's answer is over: held
            head.append(await client.next())
        await client.send("interrupt")
        head += await client.turn()
        alone = await client.turn()
        await client.say("hello between the notes")
        answer = await client.turn()
        while not text(answer).startswith("You said"):
            answer = await client.turn()
    finally:
        await client.close()
    assert kinds(head)[-2:] == ["finish", DONE] and errors_of(head) == []
    assert kinds(alone)[0] == "start" and kinds(alone)[-2:] == ["finish", DONE]
    assert text(alone).startswith("Note ") and text(alone).endswith(" on tea.")
    assert "Note" not in text(answer) and errors_of(answer) == []


@pytest.mark.node
def test_streaming_tools_on_protocol_b(server: LoopbackServer) -> None:
    """ai@7's ``WebSocketChatTransport``: the values, the messages and the final output
    reach the chat, each request's stream ends, and the next message is answered."""
    url = server.url.replace("http://", "ws://") + "/"
    result = drive_ws(
        url,
        [
            {"action": "send", "text": "Use watch_price symbol=AAPL"},
            {"action": "send", "text": "Use build target=site"},
            {"action": "send", "text": "hello after both"},
        ],
        chat_id="g-stream-b",
    )
    quote, built, after = [m for m in result["messages"] if m["role"] == "assistant"]
    (price,) = [p for p in quote["parts"] if p["type"] == "tool-watch_price"]
    assert price["state"] == "output-available" and not price.get("preliminary")
    assert price["output"] == {"symbol": "AAPL", "price": 102}
    chunks = [f["chunk"] for f in result["frames"] if f["type"] == "chunk"]
    preliminary = [
        c["output"].get("price")
        for c in chunks
        if c["type"] == "tool-output-available" and c.get("preliminary")
    ]
    assert preliminary[1:4] == [100, 101, 102]
    texts = [p["text"] for p in built["parts"] if p["type"] == "text"]
    assert texts[-2:] == ["Step 1 of building site.", "Step 2 of building site."]
    (done,) = [p for p in built["parts"] if p["type"] == "tool-build"]
    assert done["output"] == {"built": "site"}
    assert "".join(p["text"] for p in after["parts"] if p["type"] == "text").startswith(
        'You said: "hello after both"'
    )
    assert not [f for f in result["frames"] if f.get("type") == "error"]
    # A reload shows the same messages (ids, texts with the tool's messages) and no empty
    # message before them. Not yet the streaming tool's final value: ADK never stores what the tool
    # yields, so the history holds the call's "pending" answer (docs/live-mode.md).
    history = httpx.get(f"{server.url}/g-stream-b", timeout=10).json()["messages"]
    stored = [m for m in history if m["role"] == "assistant"]
    assert [m["id"] for m in stored] == [m["id"] for m in (quote, built, after)]
    for mine, shown in zip(stored, (quote, built, after), strict=True):
        # The same texts; their order may differ where the tool spoke while the model did.
        assert sorted(p["text"] for p in mine["parts"] if p["type"] == "text") == sorted(
            p["text"] for p in shown["parts"] if p["type"] == "text"
        )
    assert "pending" in str(stored[0]["parts"][1]["output"])


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
