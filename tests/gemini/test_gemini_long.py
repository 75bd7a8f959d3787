"""Long live sessions on the real model stack, with the Live API's limits scaled down: a
connection lasts 2 s (``goAway`` 0.7 s before its end) and a session holds 600 tokens.

A voice session spanning more than five connection lifetimes completes every turn with no
``error`` chunk and without the page's WebSocket closing (the connections to the model are
renewed between turns with resumption handles, and the sliding window keeps the session
under its context limit); a connection that drops while a call waits for the user is
resumed and told what it missed; a reload resumes the chat's Live API session from the
handle stored in the chat's session, and an expired handle starts over from the history.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from adk_asgi import AdkApp, LiveOptions
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.live.run.models import DEFAULT_GEMINI_LIVE_MODEL
from adk_asgi.testing.gemini import GeminiEmulator

from .live_helpers import chunks_of, connections_of, pick, sent_on, tone
from support import LoopbackServer
from support.ws_client import DONE, LiveClient, dicts, kinds, text, ws_url

LIFETIME = 2.0
LIMITS: dict[str, Any] = {
    "connection_lifetime": LIFETIME,
    "go_away_lead": 0.7,
    "context_window": 600,
    "tokens_per_chunk": 8,
    "chunk_delay": 0.03,
}

pytestmark = pytest.mark.slow


def _app(emulator: GeminiEmulator) -> AdkApp:
    agent = build_demo_agent(model=emulator.gemini("gemini-2.5-flash"))
    return AdkApp(agent, live_options=LiveOptions(model=DEFAULT_GEMINI_LIVE_MODEL), warm_up=False)


@pytest.fixture(scope="module")
def emulator() -> Iterator[GeminiEmulator]:
    with GeminiEmulator(**LIMITS) as running:
        yield running


@pytest.fixture(scope="module")
def server(emulator: GeminiEmulator) -> Iterator[LoopbackServer]:
    with LoopbackServer(_app(emulator)) as running:
        yield running


def clean(chunks: list[Any]) -> None:
    assert "error" not in kinds(chunks), [c for c in dicts(chunks) if c["type"] == "error"]
    assert kinds(chunks)[-2:] == ["finish", DONE]


async def test_a_voice_session_outlives_five_connection_lifetimes(
    server: LoopbackServer, emulator: GeminiEmulator
) -> None:
    client = await LiveClient.open(ws_url(server.url, "chatId=g-long&modality=audio"))
    await client.say("long session opening")
    clean(await client.turn())
    started = time.monotonic()
    turns = 0
    try:
        while time.monotonic() - started < 5.5 * LIFETIME:
            await client.send("audio_control", action="start")
            for chunk in chunks_of(tone(0.3)):
                await client.audio(chunk, binary=True)
            await client.send("audio_control", action="stop")
            chunks = await client.turn(wait=15)
            clean(chunks)
            assert text(chunks) == (
                "Let me check the weather in Tokyo.The weather in Tokyo is sunny, 22°C."
            )
            turns += 1
            await asyncio.sleep(0.2)
        assert client.ws.close_code is None  # the page's socket never closed
    finally:
        await client.close()
    # this test's model connections: the first one, and every one opened after it
    first = min(connections_of(emulator, "long session opening"))
    connections = {
        r.connection
        for r in emulator.journal.records()
        if r.connection is not None and r.connection >= first
    }
    setups = sent_on(emulator, connections, "setup")
    assert len(setups) >= 6, len(setups)  # one model connection per lifetime, or more
    # every renewal resumed the session with a handle (nothing replayed, nothing lost)
    assert all(pick(s.data, "sessionResumption")["handle"] for s in setups[1:])
    # ADK closed each one itself, between turns, before its deadline: the emulator never
    # had to end one (1011), and the sliding window kept the session alive (no overflow)
    assert not [r for r in emulator.journal.records("close") if r.connection in connections]
    assert turns >= 8


async def test_a_call_waiting_across_the_deadline_is_resumed_and_answered(
    server: LoopbackServer, emulator: GeminiEmulator
) -> None:
    PAYMENT_LOG.clear()
    client = await LiveClient.open(ws_url(server.url, "chatId=g-long-approval"))
    try:
        await client.say("Send 50 dollars to Hanako")
        request = (await client.until("tool-approval-request"))[-1]
        await asyncio.sleep(LIFETIME + 0.5)  # the model connection's deadline passes
        await client.send(
            "tool_result", toolCallId=request["approvalId"], result={"confirmed": True}
        )
        rest = await client.turn(wait=15)
    finally:
        await client.close()
    clean(rest)
    assert rest[0]["type"] == "tool-output-available"
    assert "Sent 50 USD to Hanako." in text(rest)
    assert [p["recipient"] for p in PAYMENT_LOG] == ["Hanako"]
    connections = connections_of(emulator, "Send 50 dollars to Hanako")
    closed = [r for r in emulator.journal.records("close") if r.connection in connections]
    assert [c.data["code"] for c in closed][:1] == [1011]  # the deadline ended the first
    # the next connection resumed with the last handle and was told what it missed: the
    # question, the call and its answer, as client content the model then answered
    replayed = sent_on(emulator, connections, "clientContent")[-1].data
    assert "functionCall" in str(replayed) and "functionResponse" in str(replayed)
    assert pick(replayed, "turnComplete") is True


async def test_a_reload_resumes_the_live_session(
    server: LoopbackServer, emulator: GeminiEmulator
) -> None:
    first = await LiveClient.open(ws_url(server.url, "chatId=g-reload"))
    try:
        await first.say("before the reload")
        clean(await first.turn())
    finally:
        await first.close()
    second = await LiveClient.open(ws_url(server.url, "chatId=g-reload"))
    try:
        await second.say("after the reload")
        after = await second.turn(wait=15)
    finally:
        await second.close()
    clean(after)
    assert text(after).startswith('You said: "after the reload"')
    (resumed,) = connections_of(emulator, "after the reload")
    (setup,) = sent_on(emulator, {resumed}, "setup")
    assert pick(setup.data, "sessionResumption")["handle"]
    # the session was resumed, not rebuilt: no history was sent, only the new message
    (sent,) = sent_on(emulator, {resumed}, "clientContent")
    assert "before the reload" not in str(sent.data)


async def test_an_expired_handle_starts_over_from_the_history() -> None:
    with (
        GeminiEmulator(**LIMITS, handle_ttl=0.3) as emulator,
        LoopbackServer(_app(emulator)) as server,
    ):
        first = await LiveClient.open(ws_url(server.url, "chatId=g-expired"))
        try:
            await first.say("before the expiry")
            clean(await first.turn())
        finally:
            await first.close()
        await asyncio.sleep(0.8)  # the handle expires
        second = await LiveClient.open(ws_url(server.url, "chatId=g-expired"))
        try:
            await second.say("after the expiry")
            after = await second.turn(wait=15)
        finally:
            await second.close()
        clean(after)
        assert text(after).startswith('You said: "after the expiry"')
        refused = [r for r in emulator.journal.records("close") if r.data["code"] == 1008]
        assert refused  # the stored handle was tried, and refused
        (fresh,) = connections_of(emulator, "after the expiry")
        (setup,) = sent_on(emulator, {fresh}, "setup")
        assert "handle" not in pick(setup.data, "sessionResumption")
        # a new session: the history went first, then the new message
        history = sent_on(emulator, {fresh}, "clientContent")[0]
        assert "before the expiry" in str(history.data)
