"""The real model stack in live mode: the demo agent on ADK's ``Gemini`` (google-genai's
Live API client, ADK's ``GeminiLlmConnection``) against the emulator, which enforces the
Live API's rules. Its live model is a native-audio one, as ``adk-asgi serve --model
gemini-2.5-flash`` serves it: text connections get the transcript of its speech.

Protocol A through tests/support/ws_client.py (every chunk checked against our strict structs),
protocol B through ai@7's own ``WebSocketChatTransport`` (every chunk validated by its
schema). The scripted-model runs of these flows are tests/live/test_live_ws.py and
tests/clients/test_live_aisdk.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from adk_asgi import AdkApp, LiveOptions
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.live.run.models import DEFAULT_GEMINI_LIVE_MODEL
from adk_asgi.testing.gemini import GeminiEmulator

from .live_helpers import chunks_of, connections_of, drive_ws, pick, sent_on, silence, tone
from support import LoopbackServer
from support.ws_client import DONE, LiveClient, dicts, kinds, text, ws_url

TEXT_MODEL = "gemini-2.5-flash"


def _app(emulator: GeminiEmulator, **options: Any) -> AdkApp:
    agent = build_demo_agent(model=emulator.gemini(TEXT_MODEL))
    live = LiveOptions(model=DEFAULT_GEMINI_LIVE_MODEL, **options)
    return AdkApp(agent, live_options=live, warm_up=False)


@pytest.fixture(scope="module")
def gemini_emulator() -> Iterator[GeminiEmulator]:
    """This module's emulator: chunks 50 ms apart, so a long answer can be interrupted."""
    with GeminiEmulator(tokens_per_chunk=8, chunk_delay=0.05) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def server(gemini_emulator: GeminiEmulator) -> Iterator[LoopbackServer]:
    with LoopbackServer(_app(gemini_emulator)) as running:
        yield running


@pytest.fixture(autouse=True)
def clean_payments() -> None:
    PAYMENT_LOG.clear()


def no_errors(chunks: list[Any]) -> None:
    assert "error" not in kinds(chunks), [c for c in dicts(chunks) if c["type"] == "error"]


# -- protocol A -----------------------------------------------------------------------


async def test_text_turns_and_what_the_live_api_was_asked(
    server: LoopbackServer, gemini_emulator: GeminiEmulator
) -> None:
    client = await LiveClient.open(ws_url(server.url, "chatId=g-live-text"))
    try:
        await client.say("hello live gemini")
        hello = await client.turn()
        await client.say("What's the weather in Paris?")
        weather = await client.turn()
    finally:
        await client.close()
    for chunks in (hello, weather):
        no_errors(chunks)
        assert kinds(chunks)[-2:] == ["finish", DONE]
        # a text connection: the transcript of the model's speech, never its audio
        assert "data-pcm" not in kinds(chunks)
    assert text(hello).startswith('You said: "hello live gemini"')
    assert text(weather) == (
        "Let me check the weather in Paris.The weather in Paris is cloudy, 18°C."
    )
    assert "tool-output-available" in kinds(weather)
    (setup,) = sent_on(
        gemini_emulator, connections_of(gemini_emulator, "hello live gemini"), "setup"
    )
    asked = setup.data
    assert asked["model"] == f"models/{DEFAULT_GEMINI_LIVE_MODEL}"
    # A native-audio model refuses TEXT: AUDIO, with the transcript as the text.
    assert asked["generationConfig"]["responseModalities"] == ["AUDIO"]
    assert "outputAudioTranscription" in asked
    # Manual activity detection (the page drives the microphone), resumption handles and
    # the sliding window on by default.
    assert pick(asked, "realtimeInputConfig", "automaticActivityDetection", "disabled") is True
    assert pick(asked, "sessionResumption") == {}
    assert pick(asked, "contextWindowCompression", "slidingWindow") == {}


async def test_approvals_and_browser_tools(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url, "chatId=g-live-tools"))
    try:
        await client.say("Send 50 dollars to Hanako and 20 dollars to Taro")
        head = await client.until("tool-approval-request")
        head += await client.until("tool-approval-request")
        requests = [c for c in dicts(head) if c["type"] == "tool-approval-request"]
        calls = {
            c["toolCallId"]: c["input"]["recipient"]
            for c in dicts(head)
            if c["type"] == "tool-input-start"
            or (c["type"] == "tool-input-available" and "providerMetadata" not in c)
            if "input" in c
        }
        by_name = {calls[r["toolCallId"]]: r for r in requests}
        assert PAYMENT_LOG == []
        await client.send(
            "tool_result", toolCallId=by_name["Taro"]["approvalId"], result={"confirmed": False}
        )
        await client.send(
            "tool_result", toolCallId=by_name["Hanako"]["approvalId"], result={"confirmed": True}
        )
        paid = await client.turn()
        await client.say("where am I?")
        location = await client.until("tool-approval-request")
        await client.send(
            "tool_result", toolCallId=location[-1]["approvalId"], result={"confirmed": True}
        )
        await client.send(
            "tool_result",
            toolCallId=location[-1]["toolCallId"],
            result={"latitude": 35.68, "longitude": 139.76},
        )
        located = await client.turn()
        await client.say("play track 2")
        bgm = await client.until("tool-input-available")
        await client.send(
            "tool_result", toolCallId=bgm[-1]["toolCallId"], result={"success": True, "track": 2}
        )
        played = await client.turn()
    finally:
        await client.close()
    for chunks in (paid, located, played):
        no_errors(chunks)
    assert [p["recipient"] for p in PAYMENT_LOG] == ["Hanako"]
    assert "Sent 50 USD to Hanako." in text(paid) and "Taro was cancelled" in text(paid)
    assert "35.68" in text(located)
    assert text(played).endswith("Now playing track 2.")


async def test_audio_in_and_out_with_both_transcriptions(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url, "chatId=g-live-voice&modality=audio"))
    try:
        await client.send("audio_control", action="start")
        for chunk in chunks_of(tone(0.4)):
            await client.audio(chunk, binary=True)
        await client.send("audio_control", action="stop")
        chunks = await client.turn(wait=15)
    finally:
        await client.close()
    no_errors(chunks)
    heard = [c["data"] for c in dicts(chunks) if c["type"] == "data-transcription"]
    # what the user said: as it is recognized, then finished
    assert heard[-1] == {"role": "user", "text": "What's the weather in Tokyo?", "finished": True}
    assert {h["text"] for h in heard} == {"What's the weather in Tokyo?"}
    pcm = [c for c in dicts(chunks) if c["type"] == "data-pcm"]
    assert pcm and {c["data"]["sampleRate"] for c in pcm} == {24_000}
    # the output transcription is the assistant's text
    assert text(chunks) == "Let me check the weather in Tokyo.The weather in Tokyo is sunny, 22°C."
    assert "tool-output-available" in kinds(chunks)


async def test_barge_in_with_manual_activity(
    server: LoopbackServer, gemini_emulator: GeminiEmulator
) -> None:
    client = await LiveClient.open(ws_url(server.url, "chatId=g-live-barge&modality=audio"))
    try:
        await client.say("tell me a long story")
        seen = await client.until("data-pcm")
        # the user starts talking while the model speaks: it stops
        await client.send("audio_control", action="start")
        for chunk in chunks_of(tone(0.3)):
            await client.audio(chunk)
        rest = await client.turn(wait=15)
        await client.send("audio_control", action="stop")
        answer = await client.turn(wait=15)
    finally:
        await client.close()
    story = seen + rest
    no_errors(story)
    assert kinds(story)[-2:] == ["finish", DONE]
    assert len(text(story).split()) < 60  # the 60-word story was cut short
    assert text(answer).startswith("Let me check the weather in Tokyo.")
    starts = [
        r
        for r in sent_on(
            gemini_emulator,
            connections_of(gemini_emulator, "tell me a long story"),
            "realtimeInput",
        )
        if "activityStart" in r.data
    ]
    assert starts  # manual activity detection: the page's start interrupted the model


async def test_automatic_activity_detection(
    server: LoopbackServer, gemini_emulator: GeminiEmulator
) -> None:
    """``?activity=automatic``: the model hears speech itself; no activity signals go out
    (the Live API refuses them), the microphone's end is an audioStreamEnd, and
    ``interrupt`` ends the answer on the page."""
    client = await LiveClient.open(
        ws_url(server.url, "chatId=g-live-auto&modality=audio&activity=automatic")
    )
    try:
        await client.say("auto mode hello")
        await client.turn()
        for chunk in chunks_of(tone(0.3) + silence(0.2)):
            await client.audio(chunk, binary=True)
        await client.send("audio_control", action="stop")  # the microphone is off
        voice = await client.turn(wait=15)
        await client.say("tell me a long story")
        await client.until("data-pcm")
        await client.send("interrupt")
        cut = await client.turn()
        await client.say("auto mode again")
        again = await client.turn()
    finally:
        await client.close()
    for chunks in (voice, cut, again):
        no_errors(chunks)
    assert text(voice).startswith("Let me check the weather in Tokyo.")
    assert kinds(cut)[-2:] == ["finish", DONE]
    assert text(again).startswith('You said: "auto mode again"')
    connections = connections_of(gemini_emulator, "auto mode hello")
    (setup,) = sent_on(gemini_emulator, connections, "setup")
    assert (
        pick(setup.data, "realtimeInputConfig", "automaticActivityDetection", "disabled") is False
    )
    realtime = [r.data for r in sent_on(gemini_emulator, connections, "realtimeInput")]
    assert not [d for d in realtime if "activityStart" in d or "activityEnd" in d]
    assert [d for d in realtime if d.get("audioStreamEnd")]
    assert not [
        r for r in gemini_emulator.journal.records("close") if r.connection in connections
    ]  # nothing the service would refuse


async def test_a_model_error_is_an_error_chunk_and_the_connection_goes_on(
    server: LoopbackServer,
) -> None:
    """The Live API has no finish reasons: a failed answer closes the model connection
    (1011 with the reason). That is not retried as a dropped connection would be."""
    client = await LiveClient.open(ws_url(server.url, "chatId=g-live-fail"))
    try:
        await client.say("please fail")
        failed = await client.turn(wait=15)
        await client.say("hello after the failure")
        after = await client.turn(wait=15)
    finally:
        await client.close()
    error = [c for c in dicts(failed) if c["type"] == "error"]
    assert error == [
        {
            "type": "error",
            "errorText": "The agent failed to answer. Please try again. (LiveModelError)",
        }
    ]
    assert "demo model failed" not in json.dumps(failed)  # never the upstream's reason
    no_errors(after)
    assert text(after).startswith('You said: "hello after the failure"')


async def test_an_unknown_activity_mode_is_refused(server: LoopbackServer) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async with connect(ws_url(server.url, "activity=sometimes")) as ws:
        with pytest.raises(ConnectionClosed):
            await ws.recv()
        assert ws.close_code == 1008


# -- protocol B: ai@7's WebSocketChatTransport ------------------------------------------


def _said(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def _assistants(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in result["messages"] if m["role"] == "assistant"]


@pytest.mark.node
def test_protocol_b_text_approval_and_abort(server: LoopbackServer) -> None:
    url = server.url.replace("http://", "ws://") + "/"
    result = drive_ws(
        url,
        [
            {"action": "send", "text": "hello from ai7"},
            {"action": "send", "text": "Send 50 dollars to Hanako"},
            {"action": "approve", "approved": True},
            {"action": "send", "text": "tell me a long story", "noWait": True},
            {"action": "waitFor", "textLength": 20},
            {"action": "stop"},
            {"action": "send", "text": "hello after the stop"},
        ],
        chat_id="g-live-b",
        auto="approvals",
    )
    hello, payment, story, after = _assistants(result)
    assert _said(hello).startswith('You said: "hello from ai7"')
    paid = next(p for p in payment["parts"] if p["type"] == "tool-process_payment")
    assert paid["state"] == "output-available" and "Sent 50 USD to Hanako" in _said(payment)
    assert len(_said(story)) >= 20 and len(_said(story).split()) < 60  # stopped mid-story
    assert _said(after).startswith('You said: "hello after the stop"')
    assert [f for f in result["sent"] if f["type"] == "abort"]
    assert not [f for f in result["frames"] if f["type"] == "error"]
    assert '"data-pcm"' not in json.dumps(result["frames"])  # a text connection


@pytest.mark.node
def test_protocol_b_browser_tools(server: LoopbackServer) -> None:
    url = server.url.replace("http://", "ws://") + "/"
    result = drive_ws(
        url,
        [
            {"action": "send", "text": "where am I?"},
            {"action": "approve", "approved": True},
            {
                "action": "toolOutput",
                "tool": "get_location",
                "output": {"latitude": 35.68, "longitude": 139.76},
            },
            {"action": "send", "text": "play track 2"},
            {"action": "toolOutput", "tool": "change_bgm", "output": {"success": True, "track": 2}},
        ],
        chat_id="g-live-b-tools",
        auto="toolCalls",
    )
    location, bgm = _assistants(result)
    part = next(p for p in location["parts"] if p["type"] == "tool-get_location")
    assert part["state"] == "output-available" and "35.68" in _said(location)
    part = next(p for p in bgm["parts"] if p["type"] == "tool-change_bgm")
    assert part["state"] == "output-available" and _said(bgm).endswith("Now playing track 2.")
