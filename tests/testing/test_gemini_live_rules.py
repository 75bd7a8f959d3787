"""The Live API rules the emulator enforces, each both ways: what the real service accepts
is accepted, what it refuses is refused the way it refuses it (close code and reason).

Clients: google-genai's own ``client.aio.live.connect`` where the SDK can send the
message, a raw WebSocket for frames the SDK would never send.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from google.genai import errors, types
from google.genai.live import AsyncSession

from adk_asgi.testing.gemini import GeminiEmulator, Reply, Request, Rule, Script

from .helpers import DEMO_TOOLS, LIVE_MODEL, TEXT_MODEL, RawLive, silence, tone

TEXT = types.LiveConnectConfig(response_modalities=[types.Modality.TEXT], tools=DEMO_TOOLS)
AUDIO = types.LiveConnectConfig(response_modalities=[types.Modality.AUDIO], tools=DEMO_TOOLS)
MANUAL = types.RealtimeInputConfig(
    automatic_activity_detection=types.AutomaticActivityDetection(disabled=True)
)
INVALID = "Request contains an invalid argument."


@contextlib.asynccontextmanager
async def live(
    emulator: GeminiEmulator,
    config: types.LiveConnectConfig = TEXT,
    *,
    model: str = LIVE_MODEL,
    version: str = "v1alpha",
) -> AsyncIterator[AsyncSession]:
    client = emulator.client(api_version=version)
    async with client.aio.live.connect(model=model, config=config) as session:
        yield session


async def turn(session: AsyncSession, within: float = 10) -> list[types.LiveServerMessage]:
    """The messages of one turn (up to and with turnComplete)."""

    async def read() -> list[types.LiveServerMessage]:
        return [message async for message in session.receive()]

    return await asyncio.wait_for(read(), within)


async def until_closed(session: AsyncSession, within: float = 10) -> tuple[list[Any], Any]:
    """Messages until the server closes; the messages and the SDK's error."""
    messages: list[types.LiveServerMessage] = []

    async def read() -> errors.APIError:
        try:
            while True:
                async for message in session.receive():
                    messages.append(message)
        except errors.APIError as error:
            return error

    return messages, await asyncio.wait_for(read(), within)


def text_of(messages: list[types.LiveServerMessage]) -> str:
    return "".join(m.text or "" for m in messages if m.server_content)


async def say(session: AsyncSession, text: str) -> None:
    await session.send_client_content(
        turns=types.Content(role="user", parts=[types.Part(text=text)])
    )


# 1. setup comes first, and once -------------------------------------------------------


async def test_setup_first_then_setup_complete(
    emulator: GeminiEmulator, raw_live: Callable[..., Any]
) -> None:
    async with raw_live(emulator) as ws:
        assert await ws.setup() == {"setupComplete": {}}
        await ws.send(
            {
                "clientContent": {
                    "turns": [{"role": "user", "parts": [{"text": "hi"}]}],
                    "turnComplete": True,
                }
            }
        )
        assert "serverContent" in await ws.recv()


async def test_a_first_message_other_than_setup_is_refused(
    emulator: GeminiEmulator, raw_live: Callable[..., Any]
) -> None:
    async with raw_live(emulator) as ws:
        await ws.send({"clientContent": {"turns": [], "turnComplete": True}})
        assert await ws.closed() == (1007, INVALID)
    assert emulator.journal.records("close")[-1].data["detail"] == (
        "The first message must be setup."
    )


async def test_a_second_setup_is_refused(
    emulator: GeminiEmulator, raw_live: Callable[..., Any]
) -> None:
    async with raw_live(emulator) as ws:
        await ws.setup()
        await ws.send({"setup": {"model": f"models/{LIVE_MODEL}"}})
        assert await ws.closed() == (1007, INVALID)
    assert emulator.journal.records("close")[-1].data["detail"] == (
        "setup may only be sent once, as the first message."
    )


async def test_malformed_messages_are_refused(
    emulator: GeminiEmulator, raw_live: Callable[..., Any]
) -> None:
    for message in (
        {"setup": {"model": f"models/{LIVE_MODEL}", "temperature": 1}},
        {"setup": {}},
        {"hello": {}},
        {"setup": {"model": f"models/{LIVE_MODEL}"}, "clientContent": {}},
    ):
        async with raw_live(emulator) as ws:
            await ws.send(message)
            assert await ws.closed() == (1007, INVALID), message
    async with raw_live(emulator) as ws:
        await ws.connection.send("{not json")
        assert await ws.closed() == (1007, INVALID)


@pytest.mark.parametrize(
    "message",
    [
        {"clientContent": {"turns": "x", "turnComplete": True}},
        {"clientContent": {"turns": [5]}},
        {"clientContent": "x"},
        {"realtimeInput": {"mediaChunks": "x"}},
        {"realtimeInput": {"audio": {"mimeType": "audio/pcm", "data": "%%%"}}},
        {"toolResponse": {"functionResponses": [5]}},
        {"toolResponse": {"functionResponses": [{"name": "f", "response": {}}]}},  # no id
        {"toolResponse": {}},
    ],
)
async def test_malformed_session_messages_are_refused(
    emulator: GeminiEmulator, raw_live: Callable[..., Any], message: dict[str, Any]
) -> None:
    async with raw_live(emulator) as ws:
        await ws.setup()
        await ws.send(message)
        assert await ws.closed() == (1007, INVALID)


@pytest.mark.parametrize(
    "setup",
    [
        {"generationConfig": "x"},
        {"contextWindowCompression": {"triggerTokens": "many"}},
        {"realtimeInputConfig": {"automaticActivityDetection": "off"}},
        {"tools": 5, "systemInstruction": 5},
    ],
)
async def test_odd_setups_are_refused_or_tolerated(
    emulator: GeminiEmulator, raw_live: Callable[..., Any], setup: dict[str, Any]
) -> None:
    async with raw_live(emulator) as ws:
        await ws.send({"setup": {"model": f"models/{LIVE_MODEL}", **setup}})
        try:
            assert await ws.recv() == {"setupComplete": {}}
        except Exception:
            assert await ws.closed() == (1007, INVALID)


# 2. explicit activity signals only with automatic activity detection disabled ---------


async def test_activity_signals_with_manual_detection(emulator: GeminiEmulator) -> None:
    config = TEXT.model_copy(update={"realtime_input_config": MANUAL})
    async with live(emulator, config) as session:
        await session.send_realtime_input(activity_start=types.ActivityStart())
        await session.send_realtime_input(
            audio=types.Blob(mime_type="audio/pcm;rate=16000", data=tone(0.3))
        )
        await session.send_realtime_input(activity_end=types.ActivityEnd())
        messages = await turn(session)
    assert text_of(messages) == "Let me check the weather in Tokyo."
    assert messages[-1].server_content and messages[-1].server_content.turn_complete


@pytest.mark.parametrize("signal", ["activity_start", "activity_end"])
async def test_activity_signals_with_automatic_detection_are_refused(
    emulator: GeminiEmulator, signal: str
) -> None:
    async with live(emulator) as session:
        value = types.ActivityStart() if signal == "activity_start" else types.ActivityEnd()
        await session.send_realtime_input(**{signal: value})
        _, error = await until_closed(session)
    assert (error.code, error.details) == (1007, INVALID)


# 3. audio input is 16-bit PCM ---------------------------------------------------------


async def test_pcm_audio_is_heard(make_emulator: Callable[..., GeminiEmulator]) -> None:
    emulator = make_emulator(silence_gap=0.2, heard_text="Where am I?")
    config = TEXT.model_copy(update={"input_audio_transcription": types.AudioTranscriptionConfig()})
    async with live(emulator, config) as session:
        for chunk in (silence(0.1), tone(0.2), tone(0.2), silence(0.3)):
            await session.send_realtime_input(
                audio=types.Blob(mime_type="audio/pcm;rate=16000", data=chunk)
            )
        messages = await turn(session)
    heard = [
        m.server_content.input_transcription
        for m in messages
        if m.server_content and m.server_content.input_transcription
    ]
    assert [(t.text, t.finished) for t in heard] == [("Where am I?", True)]
    assert messages[-2].tool_call is None or True  # the demo answers with get_location
    assert any(m.tool_call for m in messages)


@pytest.mark.parametrize(
    ("mime_type", "data"),
    [
        ("audio/webm", tone(0.1)),
        ("audio/pcm;rate=16000", tone(0.1) + b"\x00"),  # not whole 16-bit samples
        ("audio/pcm;rate=fast", tone(0.1)),
    ],
)
async def test_other_audio_is_refused(
    emulator: GeminiEmulator, mime_type: str, data: bytes
) -> None:
    async with live(emulator) as session:
        await session.send_realtime_input(audio=types.Blob(mime_type=mime_type, data=data))
        _, error = await until_closed(session)
    assert (error.code, error.details) == (1007, INVALID)
    detail = emulator.journal.records("close")[-1].data["detail"]
    assert "audio/pcm;rate=16000" in detail


# 4. tool responses only for pending calls ---------------------------------------------


async def test_tool_response_for_the_pending_call(emulator: GeminiEmulator) -> None:
    async with live(emulator) as session:
        await say(session, "What's the weather in Paris?")
        first = await turn(session)
        (call,) = next(m.tool_call for m in first if m.tool_call).function_calls or []
        assert (call.name, call.args) == ("get_weather", {"location": "Paris"})
        assert call.id
        await session.send_tool_response(
            function_responses=types.FunctionResponse(
                id=call.id, name=call.name, response={"condition": "rainy", "temperature_c": 9}
            )
        )
        answer = await turn(session)
    assert text_of(answer) == "The weather in Paris is rainy, 9°C."


@pytest.mark.parametrize("answered_twice", [False, True])
async def test_tool_response_for_an_unknown_call_is_refused(
    emulator: GeminiEmulator, answered_twice: bool
) -> None:
    async with live(emulator) as session:
        await say(session, "What's the weather in Paris?")
        first = await turn(session)
        (call,) = next(m.tool_call for m in first if m.tool_call).function_calls or []
        call_id = call.id if answered_twice else "function-call-42"
        response = types.FunctionResponse(id=call_id, name="get_weather", response={})
        if answered_twice:
            await session.send_tool_response(function_responses=response)
            await turn(session)
        await session.send_tool_response(function_responses=response)
        _, error = await until_closed(session)
    assert (error.code, error.details) == (1008, "Requested entity was not found.")


NON_BLOCKING_WEATHER = types.LiveConnectConfig(
    response_modalities=[types.Modality.TEXT],
    tools=[
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="get_weather",
                    parameters=types.Schema(
                        type=types.Type.OBJECT,
                        properties={"location": types.Schema(type=types.Type.STRING)},
                    ),
                    behavior=types.Behavior.NON_BLOCKING,
                )
            ]
        )
    ],
)


async def test_a_non_blocking_call_answers_as_a_generator(emulator: GeminiEmulator) -> None:
    """A NON_BLOCKING call takes several responses while ``willContinue`` says more come
    (SILENT ones only fill the context); its last response ends it, and a response after
    that is not considered: ignored, the connection goes on (FunctionResponse.will_continue).
    ADK's streaming tools answer this way: a "pending" response, then one per yield."""

    def weather(response: dict[str, Any], **more: Any) -> types.FunctionResponse:
        return types.FunctionResponse(id=call.id, name="get_weather", response=response, **more)

    async with live(emulator, NON_BLOCKING_WEATHER) as session:
        await say(session, "What's the weather in Paris?")
        first = await turn(session)
        (call,) = next(m.tool_call for m in first if m.tool_call).function_calls or []
        silent = types.FunctionResponseScheduling.SILENT
        await session.send_tool_response(
            function_responses=weather({"status": "pending"}, will_continue=True, scheduling=silent)
        )
        await session.send_tool_response(
            function_responses=weather({"condition": "rainy", "temperature_c": 9})
        )
        answer = await turn(session)
        # the call is over: this one is not considered, and nothing closes
        await session.send_tool_response(
            function_responses=weather({"condition": "sunny", "temperature_c": 30})
        )
        await say(session, "hello again")
        after = await turn(session)
    assert text_of(answer) == "The weather in Paris is rainy, 9°C."
    assert text_of(after).startswith('You said: "hello again"')
    received = [r for r in emulator.journal.records("toolResponse") if "sunny" in str(r.data)]
    assert received  # it was sent, and ignored


# 5. a connection's lifetime, announced by goAway --------------------------------------


async def test_connection_lifetime_and_go_away(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    emulator = make_emulator(connection_lifetime=1.5, go_away_lead=0.75)
    async with live(emulator) as session:
        await say(session, "hello")
        assert text_of(await turn(session)).startswith('You said: "hello"')  # alive
        messages, error = await until_closed(session)
    assert [m.go_away.time_left for m in messages if m.go_away] == ["0.75s"]
    assert (error.code, error.details) == (
        1011,
        "Deadline expired before operation could complete.",
    )
    assert emulator.journal.records("close")[-1].data["code"] == 1011


async def test_the_lifetime_counts_from_the_connection(
    make_emulator: Callable[..., GeminiEmulator], raw_live: Callable[..., Any]
) -> None:
    emulator = make_emulator(connection_lifetime=1.0, go_away_lead=0.5)
    async with raw_live(emulator) as ws:  # never sends setup
        assert await ws.recv() == {"goAway": {"timeLeft": "0.5s"}}
        assert (await ws.closed())[0] == 1011


def test_default_limits_are_the_documented_ones() -> None:
    from adk_asgi.testing.gemini import EmulatorSettings

    settings = EmulatorSettings()
    assert (settings.connection_lifetime, settings.go_away_lead) == (600.0, 60.0)
    assert settings.context_window == 128_000
    assert settings.handle_ttl == 7200.0
    assert settings.audio_tokens_per_second == 32


# 6. the context window ----------------------------------------------------------------


def _short_replies() -> Script:
    return Script(fallback=Reply("ok"))


async def test_context_window_without_compression_ends_the_session(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    emulator = make_emulator(_short_replies(), context_window=60)
    forty_chars = "x" * 40  # 10 tokens
    async with live(emulator) as session:
        answered = 0
        with pytest.raises(errors.APIError) as raised:
            for _ in range(10):
                await say(session, forty_chars)
                await turn(session)
                answered += 1
    # 10 + 1 tokens per exchange: the sixth user message takes the session past 60.
    assert answered == 5
    assert raised.value.code == 1011
    assert "context window is full" in str(raised.value.details)


async def test_context_window_compression_keeps_the_session_going(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    emulator = make_emulator(_short_replies(), context_window=60)
    config = TEXT.model_copy(
        update={
            "context_window_compression": types.ContextWindowCompressionConfig(
                sliding_window=types.SlidingWindow()
            )
        }
    )
    prompts: list[int] = []
    async with live(emulator, config) as session:
        for _ in range(20):
            await say(session, "x" * 40)
            messages = await turn(session)
            usage = next(m.usage_metadata for m in messages if m.usage_metadata)
            prompts.append(usage.prompt_token_count or 0)
    # The window slides: trigger at 80% (48 tokens), down to half of that.
    assert max(prompts) <= 48
    assert prompts[:4] == [10, 21, 32, 43]


async def test_audio_fills_the_context_at_32_tokens_a_second(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    emulator = make_emulator(_short_replies(), context_window=50, silence_gap=0.1)
    for seconds, ends in ((1.0, False), (2.0, True)):
        async with live(emulator) as session:
            await session.send_realtime_input(
                audio=types.Blob(mime_type="audio/pcm;rate=16000", data=tone(seconds))
            )
            await session.send_realtime_input(audio_stream_end=True)
            if ends:
                _, error = await until_closed(session)
                assert error.code == 1011
            else:
                messages = await turn(session)
                usage = next(m.usage_metadata for m in messages if m.usage_metadata)
                assert usage.prompt_token_count == 32


# 7. session resumption ----------------------------------------------------------------


def _counting() -> Script:
    return Script(Rule(lambda r: True, lambda r: Reply(f"{len(r.contents)} contents")))


RESUMABLE = TEXT.model_copy(update={"session_resumption": types.SessionResumptionConfig()})


def resumed(handle: str) -> types.LiveConnectConfig:
    return TEXT.model_copy(
        update={"session_resumption": types.SessionResumptionConfig(handle=handle)}
    )


def handles(messages: list[types.LiveServerMessage]) -> list[tuple[str | None, bool | None]]:
    return [
        (m.session_resumption_update.new_handle, m.session_resumption_update.resumable)
        for m in messages
        if m.session_resumption_update
    ]


async def raw_turn(ws: RawLive, text: str) -> list[dict[str, Any]]:
    """Send a user turn; the messages up to turnComplete and the one after it."""
    await ws.send(
        {
            "clientContent": {
                "turns": [{"role": "user", "parts": [{"text": text}]}],
                "turnComplete": True,
            }
        }
    )
    messages = [await ws.recv()]
    while not messages[-1].get("serverContent", {}).get("turnComplete"):
        messages.append(await ws.recv())
    messages.append(await ws.recv())
    return messages


def raw_text(messages: list[dict[str, Any]]) -> str:
    return "".join(
        part.get("text", "")
        for m in messages
        for part in m.get("serverContent", {}).get("modelTurn", {}).get("parts", [])
    )


async def test_a_resumed_session_keeps_its_history(
    make_emulator: Callable[..., GeminiEmulator], raw_live: Callable[..., Any]
) -> None:
    emulator = make_emulator(_counting())
    async with raw_live(emulator) as ws:
        await ws.setup(sessionResumption={}, generationConfig={"responseModalities": ["TEXT"]})
        first_update = (await ws.recv())["sessionResumptionUpdate"]
        assert first_update["resumable"] is True and first_update["newHandle"]
        first = await raw_turn(ws, "a")
        second = await raw_turn(ws, "b")
    assert raw_text(first) == "1 contents"
    assert raw_text(second) == "3 contents"
    updates = [m["sessionResumptionUpdate"] for m in second if "sessionResumptionUpdate" in m]
    # While generating: not resumable (an update without a handle); once the turn is
    # complete: a new handle.
    assert updates[0] == {"resumable": False}
    assert "sessionResumptionUpdate" in second[-1]
    handle = second[-1]["sessionResumptionUpdate"]["newHandle"]
    assert second[-1]["sessionResumptionUpdate"]["resumable"] is True
    async with live(emulator, resumed(handle)) as session:
        await say(session, "c")
        assert text_of(await turn(session)) == "5 contents"
    async with live(emulator, RESUMABLE) as session:  # no handle: a new session
        await say(session, "c")
        assert text_of(await turn(session)) == "1 contents"


async def test_no_handle_while_an_answer_is_owed(
    make_emulator: Callable[..., GeminiEmulator], raw_live: Callable[..., Any]
) -> None:
    # The call's result comes back before the call's turn is over: the model owes its
    # answer, so the session is not resumable until that answer's turn is complete.
    emulator = make_emulator(chunk_delay=0.2)
    async with raw_live(emulator) as ws:
        tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in DEMO_TOOLS]
        await ws.setup(
            sessionResumption={}, generationConfig={"responseModalities": ["TEXT"]}, tools=tools
        )
        await ws.recv()  # the handle of the new session
        await ws.send(
            {
                "clientContent": {
                    "turns": [
                        {"role": "user", "parts": [{"text": "What's the weather in Paris?"}]}
                    ],
                    "turnComplete": True,
                }
            }
        )
        messages = [await ws.recv()]
        while "toolCall" not in messages[-1]:
            messages.append(await ws.recv())
        (call,) = messages[-1]["toolCall"]["functionCalls"]
        answer = {"condition": "rainy", "temperature_c": 9}
        await ws.send(
            {"toolResponse": {"functionResponses": [{"id": call["id"], "response": answer}]}}
        )
        while "rainy" not in raw_text(messages) or not messages[-1].get("serverContent", {}).get(
            "turnComplete"
        ):
            messages.append(await ws.recv())
        messages.append(await ws.recv())
    updates = [m["sessionResumptionUpdate"] for m in messages if "sessionResumptionUpdate" in m]
    assert all(u == {"resumable": False} for u in updates[:-1]), updates
    assert updates[-1]["resumable"] is True and "sessionResumptionUpdate" in messages[-1]


async def test_an_older_handle_restores_the_older_state(
    make_emulator: Callable[..., GeminiEmulator], raw_live: Callable[..., Any]
) -> None:
    emulator = make_emulator(_counting())
    async with raw_live(emulator) as ws:
        await ws.setup(sessionResumption={})
        first_handle = (await ws.recv())["sessionResumptionUpdate"]["newHandle"]
    async with live(emulator, resumed(first_handle)) as session:
        await say(session, "a")
        assert text_of(await turn(session)) == "1 contents"


async def test_unknown_and_expired_handles_are_refused(
    make_emulator: Callable[..., GeminiEmulator], raw_live: Callable[..., Any]
) -> None:
    emulator = make_emulator(handle_ttl=0.3)
    async with raw_live(emulator) as ws:
        await ws.send(
            {
                "setup": {
                    "model": f"models/{LIVE_MODEL}",
                    "sessionResumption": {"handle": "no-such-handle"},
                }
            }
        )
        assert (await ws.closed())[0] == 1008
    async with raw_live(emulator) as ws:
        await ws.setup(sessionResumption={})
        handle = (await ws.recv())["sessionResumptionUpdate"]["newHandle"]
    async with raw_live(emulator) as ws:  # within the validity window
        assert await ws.setup(sessionResumption={"handle": handle}) == {"setupComplete": {}}
    await asyncio.sleep(0.6)
    async with raw_live(emulator) as ws:
        await ws.send(
            {"setup": {"model": f"models/{LIVE_MODEL}", "sessionResumption": {"handle": handle}}}
        )
        code, reason = await ws.closed()
    assert code == 1008
    assert reason == "Session resumption handle not found or expired."


async def test_a_session_held_by_an_open_connection_cannot_be_resumed(
    emulator: GeminiEmulator, raw_live: Callable[..., Any]
) -> None:
    async with raw_live(emulator) as holder:
        await holder.setup(sessionResumption={})
        handle = (await holder.recv())["sessionResumptionUpdate"]["newHandle"]
        async with raw_live(emulator) as second:
            await second.send(
                {
                    "setup": {
                        "model": f"models/{LIVE_MODEL}",
                        "sessionResumption": {"handle": handle},
                    }
                }
            )
            assert (await second.closed())[0] == 1011


async def test_no_handles_without_session_resumption(emulator: GeminiEmulator) -> None:
    async with live(emulator) as session:
        await say(session, "hello")
        assert handles(await turn(session)) == []


# 8. the API key -----------------------------------------------------------------------


async def test_missing_api_key_is_refused(
    emulator: GeminiEmulator, raw_live: Callable[..., Any]
) -> None:
    async with raw_live(emulator, api_key=None) as ws:
        await ws.send({"setup": {"model": f"models/{LIVE_MODEL}"}})
        code, reason = await ws.closed()
    assert code == 1008
    assert reason.startswith("Method doesn't allow unregistered callers (callers without")
    assert len(reason.encode()) <= 123
    async with raw_live(emulator, api_key="any-key") as ws:
        assert await ws.setup() == {"setupComplete": {}}


async def test_configured_api_key(
    make_emulator: Callable[..., GeminiEmulator], raw_live: Callable[..., Any]
) -> None:
    emulator = make_emulator(api_key="s3cret")
    async with raw_live(emulator, api_key="other") as ws:
        await ws.send({"setup": {"model": f"models/{LIVE_MODEL}"}})
        assert await ws.closed() == (1007, "API key not valid. Please pass a valid API key.")
    async with raw_live(emulator, api_key="s3cret") as ws:
        assert await ws.setup() == {"setupComplete": {}}


async def test_ephemeral_tokens_on_the_constrained_method(
    emulator: GeminiEmulator, raw_live: Callable[..., Any]
) -> None:
    path = (
        "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained"
    )
    async with raw_live(emulator, api_key=None, path=path + "?access_token=auth_tokens/x") as ws:
        assert await ws.setup() == {"setupComplete": {}}
    async with raw_live(emulator, api_key=None, path=path) as ws:
        await ws.send({"setup": {"model": f"models/{LIVE_MODEL}"}})
        assert (await ws.closed())[0] == 1008


# 9. a Live-capable model --------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1alpha", "v1beta"])
async def test_text_models_are_refused(
    emulator: GeminiEmulator, raw_live: Callable[..., Any], version: str
) -> None:
    async with raw_live(emulator, version=version) as ws:
        await ws.send({"setup": {"model": f"models/{TEXT_MODEL}"}})
        code, reason = await ws.closed()
    assert code == 1008
    expected = (
        f"models/{TEXT_MODEL} is not found for API version {version}, or is not supported "
        "for bidiGenerateContent. Call ListModels to see the list of available models"
    )
    assert expected.startswith(reason) and len(reason.encode()) == 123


@pytest.mark.parametrize(
    ("model", "config"),
    [
        ("gemini-live-2.5-flash-preview", TEXT),
        ("gemini-2.5-flash-native-audio-preview-12-2025", AUDIO),
        ("gemini-2.5-flash-native-audio-latest", AUDIO),
        ("gemini-3.1-flash-live-preview", AUDIO),
    ],
)
async def test_live_models_are_accepted(
    emulator: GeminiEmulator, model: str, config: types.LiveConnectConfig
) -> None:
    async with live(emulator, config, model=model) as session:
        await say(session, "hello")
        messages = await turn(session)
    assert messages[-1].server_content and messages[-1].server_content.turn_complete
    spoken = [m for m in messages if m.server_content and m.server_content.model_turn]
    assert spoken  # text parts (TEXT) or 24 kHz audio (AUDIO)


@pytest.mark.parametrize(
    "model", ["gemini-2.5-flash-native-audio-latest", "gemini-3.1-flash-live-preview"]
)
async def test_models_that_only_speak_refuse_text_responses(
    emulator: GeminiEmulator, raw_live: Callable[..., Any], model: str
) -> None:
    async with raw_live(emulator) as ws:
        await ws.setup(model, generationConfig={"responseModalities": ["AUDIO"]})
    async with raw_live(emulator) as ws:
        await ws.send(
            {
                "setup": {
                    "model": f"models/{model}",
                    "generationConfig": {"responseModalities": ["TEXT"]},
                }
            }
        )
        code, reason = await ws.closed()
    assert (code, reason) == (
        1007,
        "The requested combination of response modalities (TEXT) is not supported by the model.",
    )


async def test_the_live_model_rule_is_configurable(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    emulator = make_emulator(live_model_pattern=r"^my-realtime-")
    async with live(emulator, model="my-realtime-model") as session:
        await say(session, "hello")
        assert text_of(await turn(session))
    with pytest.raises(errors.APIError) as raised:
        async with live(emulator):
            pass
    assert raised.value.code == 1008


async def test_unknown_paths_are_refused(
    emulator: GeminiEmulator, raw_live: Callable[..., Any]
) -> None:
    path = "/ws/google.ai.generativelanguage.v2.GenerativeService.BidiGenerateContent"
    async with raw_live(emulator, path=path) as ws:
        assert (await ws.closed())[0] == 1008


async def test_requests_see_the_session(make_emulator: Callable[..., GeminiEmulator]) -> None:
    seen: list[Request] = []

    def script(request: Request) -> Reply:
        seen.append(request)
        return Reply("ok")

    emulator = make_emulator(script)
    config = TEXT.model_copy(
        update={
            "system_instruction": "Be brief.",
            "tools": [types.Tool(function_declarations=[types.FunctionDeclaration(name="f")])],
        }
    )
    async with live(emulator, config) as session:
        await say(session, "hello")
        await turn(session)
    (request,) = seen
    assert (request.model, request.live, request.text) == (LIVE_MODEL, True, "hello")
    assert request.system_instruction == "Be brief."
    assert request.function_names == {"f"}


# The raw client's type, for the fixture's users.
__all__ = ["RawLive"]
