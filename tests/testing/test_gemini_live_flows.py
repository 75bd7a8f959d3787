"""Live API conversations through google-genai's ``client.aio.live.connect``: streamed
text and audio, transcriptions, thoughts, interruptions (barge-in), tool calls and their
cancellation, scripted errors."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable

import pytest
from google.genai import errors, types

from adk_asgi.testing.gemini import GeminiEmulator, Reply, Rule, Script, demo_reply

from .helpers import DEMO_TOOLS, tone
from .test_gemini_live_rules import MANUAL, TEXT, live, say, text_of, turn, until_closed

AUDIO = types.LiveConnectConfig(
    response_modalities=[types.Modality.AUDIO],
    input_audio_transcription=types.AudioTranscriptionConfig(),
    output_audio_transcription=types.AudioTranscriptionConfig(),
    tools=DEMO_TOOLS,
)


def server_contents(messages: list[types.LiveServerMessage]) -> list[types.LiveServerContent]:
    return [m.server_content for m in messages if m.server_content]


async def test_text_turn_shape(emulator: GeminiEmulator) -> None:
    async with live(emulator) as session:
        await say(session, "hello")
        messages = await turn(session)
    contents = server_contents(messages)
    chunks = [c.model_turn.parts[0].text for c in contents if c.model_turn and c.model_turn.parts]
    assert chunks[:3] == ["You ", "said: ", '"hello". ']
    # ... text chunks, then generationComplete, then turnComplete with the usage.
    assert contents[-2].generation_complete and not contents[-2].turn_complete
    assert contents[-1].turn_complete
    usage = messages[-1].usage_metadata
    assert usage is not None
    assert usage.prompt_token_count == 2
    assert usage.total_token_count == usage.prompt_token_count + (usage.response_token_count or 0)


async def test_chunking_in_live(make_emulator: Callable[..., GeminiEmulator]) -> None:
    emulator = make_emulator(tokens_per_chunk=8)
    async with live(emulator) as session:
        await say(session, "story")
        chunks = [
            c.model_turn.parts[0].text
            for c in server_contents(await turn(session))
            if c.model_turn and c.model_turn.parts
        ]
    assert len(chunks) == 8
    assert "".join(c or "" for c in chunks).endswith("until everyone fell asleep.")


async def test_audio_out_with_both_transcriptions(emulator: GeminiEmulator) -> None:
    async with live(emulator, AUDIO) as session:
        await session.send_realtime_input(
            audio=types.Blob(mime_type="audio/pcm;rate=16000", data=tone(0.3))
        )
        await session.send_realtime_input(audio_stream_end=True)
        messages = await turn(session)
    contents = server_contents(messages)
    heard = [c.input_transcription for c in contents if c.input_transcription]
    assert [(t.text, t.finished) for t in heard] == [("What's the weather in Tokyo?", True)]
    blobs = [
        p.inline_data
        for c in contents
        if c.model_turn
        for p in c.model_turn.parts or ()
        if p.inline_data
    ]
    assert blobs and all(b.mime_type == "audio/pcm;rate=24000" for b in blobs)
    assert all(len(b.data or b"") == 1920 for b in blobs)  # 40 ms of 24 kHz 16-bit PCM
    spoken = "".join(c.output_transcription.text or "" for c in contents if c.output_transcription)
    assert spoken == "Let me check the weather in Tokyo."
    assert not any(p.text for c in contents if c.model_turn for p in c.model_turn.parts or ())
    assert any(m.tool_call for m in messages)


async def test_no_transcriptions_unless_asked(emulator: GeminiEmulator) -> None:
    config = types.LiveConnectConfig(response_modalities=[types.Modality.AUDIO])
    async with live(emulator, config) as session:
        await session.send_realtime_input(
            audio=types.Blob(mime_type="audio/pcm;rate=16000", data=tone(0.2))
        )
        await session.send_realtime_input(audio_stream_end=True)
        contents = server_contents(await turn(session))
    assert not any(c.input_transcription or c.output_transcription for c in contents)
    assert any(c.model_turn for c in contents)


async def test_audio_is_the_default_modality_and_base64_is_standard(
    emulator: GeminiEmulator, raw_live: Callable[..., object]
) -> None:
    async with raw_live(emulator) as ws:  # type: ignore[attr-defined]
        await ws.setup()
        await ws.send({"realtimeInput": {"text": "hello"}})
        messages = [await ws.recv()]
        # Read the whole turn: a client that stops reading cannot finish the close
        # handshake (websockets stops reading once its queue is full).
        while not messages[-1].get("serverContent", {}).get("turnComplete"):
            messages.append(await ws.recv())
    message = next(m for m in messages if "modelTurn" in m.get("serverContent", {}))
    blob = message["serverContent"]["modelTurn"]["parts"][0]["inlineData"]
    assert blob["mimeType"] == "audio/pcm;rate=24000"
    # proto3 JSON bytes: the standard alphabet with padding, which browsers' atob reads.
    assert base64.b64decode(blob["data"], validate=True)
    assert "-" not in blob["data"] and "_" not in blob["data"]


async def test_thoughts_in_text_mode(emulator: GeminiEmulator) -> None:
    config = TEXT.model_copy(
        update={"thinking_config": types.ThinkingConfig(include_thoughts=True)}
    )
    async with live(emulator, config) as session:
        await say(session, "think about tea")
        parts = [
            p
            for c in server_contents(await turn(session))
            if c.model_turn
            for p in c.model_turn.parts or ()
        ]
    thought = "".join(p.text or "" for p in parts if p.thought)
    assert thought.startswith("The user wants me to think about tea.")
    assert parts[0].thought and not parts[-1].thought


async def test_history_and_realtime_text(emulator: GeminiEmulator) -> None:
    seen: list[int] = []
    script = Script(Rule(lambda r: True, lambda r: seen.append(len(r.contents)) or Reply("ok")))
    with_script = GeminiEmulator(script).start()
    try:
        async with live(with_script) as session:
            # History first (turnComplete false: no answer), then a realtime text turn.
            await session.send_client_content(
                turns=[
                    types.Content(role="user", parts=[types.Part(text="earlier")]),
                    types.Content(role="model", parts=[types.Part(text="reply")]),
                ],
                turn_complete=False,
            )
            await session.send_realtime_input(text="now")
            assert text_of(await turn(session)) == "ok"
    finally:
        with_script.stop()
    assert seen == [3]


# Interruptions ------------------------------------------------------------------------


async def read_until_text(session: object, count: int) -> list[types.LiveServerMessage]:
    """Read messages until ``count`` model text chunks arrived."""
    messages: list[types.LiveServerMessage] = []
    async for message in session.receive():  # type: ignore[attr-defined]
        messages.append(message)
        if sum(1 for m in messages if m.text) >= count:
            return messages
    raise AssertionError("the turn ended early")


async def test_activity_start_barges_in_with_manual_detection(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    emulator = make_emulator(chunk_delay=0.05)
    config = TEXT.model_copy(update={"realtime_input_config": MANUAL})
    async with live(emulator, config) as session:
        await say(session, "story")
        await read_until_text(session, 3)
        await session.send_realtime_input(activity_start=types.ActivityStart())
        rest = await turn(session)
        contents = server_contents(rest)
        # interrupted, then turnComplete; no generationComplete in an interrupted turn.
        assert [bool(c.interrupted) for c in contents][-2:] == [True, False]
        assert contents[-1].turn_complete
        assert not any(c.generation_complete for c in contents)
        # The user's speech then gets its answer.
        await session.send_realtime_input(
            audio=types.Blob(mime_type="audio/pcm;rate=16000", data=tone(0.2))
        )
        await session.send_realtime_input(activity_end=types.ActivityEnd())
        answer = await turn(session)
    assert text_of(answer) == "Let me check the weather in Tokyo."


async def test_speech_barges_in_with_automatic_detection(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    emulator = make_emulator(chunk_delay=0.05, silence_gap=0.2)
    async with live(emulator) as session:
        await say(session, "story")
        await read_until_text(session, 2)
        await session.send_realtime_input(
            audio=types.Blob(mime_type="audio/pcm;rate=16000", data=tone(0.2))
        )
        cut = server_contents(await turn(session))
        assert cut[-2].interrupted and cut[-1].turn_complete
        assert text_of(await turn(session)) == "Let me check the weather in Tokyo."


def story_or_ok() -> Script:
    """The demo's story for "story", "ok" to anything else (short turns)."""
    return Script(Rule("story", lambda r: demo_reply(r)), fallback=Reply("ok"))


async def test_client_content_interrupts(make_emulator: Callable[..., GeminiEmulator]) -> None:
    emulator = make_emulator(story_or_ok(), chunk_delay=0.05)
    async with live(emulator) as session:
        await say(session, "story")
        await read_until_text(session, 2)
        await say(session, "hello")
        cut = server_contents(await turn(session))
        assert cut[-2].interrupted
        assert text_of(await turn(session)) == "ok"


async def test_no_interruption_when_asked(make_emulator: Callable[..., GeminiEmulator]) -> None:
    emulator = make_emulator(chunk_delay=0.02, silence_gap=0.2)
    config = TEXT.model_copy(
        update={
            "realtime_input_config": types.RealtimeInputConfig(
                activity_handling=types.ActivityHandling.NO_INTERRUPTION
            )
        }
    )
    async with live(emulator, config) as session:
        await say(session, "story")
        await read_until_text(session, 2)
        await session.send_realtime_input(
            audio=types.Blob(mime_type="audio/pcm;rate=16000", data=tone(0.2))
        )
        story = server_contents(await turn(session))
        assert not any(c.interrupted for c in story)
        assert story[-2].generation_complete
        assert text_of(await turn(session)) == "Let me check the weather in Tokyo."


async def test_interrupting_a_turn_cancels_its_calls(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    script = Script(Rule("pay", Reply.call("pay", to="Ann")), fallback=Reply("ok"))
    emulator = make_emulator(script, chunk_delay=0.3)
    config = TEXT.model_copy(update={"realtime_input_config": MANUAL})
    async with live(emulator, config) as session:
        await say(session, "pay Ann")
        call = None
        async for message in session.receive():
            if message.tool_call:
                (call,) = message.tool_call.function_calls or []
                break
        assert call is not None
        await session.send_realtime_input(activity_start=types.ActivityStart())
        rest = await turn(session)
        cancelled = [m.tool_call_cancellation.ids for m in rest if m.tool_call_cancellation]
        assert cancelled == [[call.id]]
        assert server_contents(rest)[-2].interrupted
        # A late answer to the cancelled call is ignored, not refused.
        await session.send_tool_response(
            function_responses=types.FunctionResponse(id=call.id, name=call.name, response={})
        )
        await say(session, "hello")
        assert text_of(await turn(session)) == "ok"


# Scripted failures --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "code", "reason"),
    [
        ("please fail with 429", 1011, "Resource has been exhausted (e.g. check quota)."),
        ("please fail with 503", 1011, "The model is overloaded. Please try again later."),
        ("please fail", 1011, 'The demo model failed on purpose ("please fail").'),
    ],
)
async def test_scripted_errors_close_the_connection(
    emulator: GeminiEmulator, prompt: str, code: int, reason: str
) -> None:
    async with live(emulator) as session:
        await say(session, prompt)
        _, error = await until_closed(session)
    assert isinstance(error, errors.APIError)
    assert (error.code, error.details) == (code, reason)


async def test_error_in_the_middle_of_a_live_turn(emulator: GeminiEmulator) -> None:
    async with live(emulator) as session:
        await say(session, "please raise")
        messages, error = await until_closed(session)
    assert text_of(messages) == "I am "
    assert error.code == 1011


async def test_a_voice_turn_without_audio_is_no_turn(
    make_emulator: Callable[..., GeminiEmulator],
) -> None:
    emulator = make_emulator(silence_gap=0.1)
    config = TEXT.model_copy(update={"realtime_input_config": MANUAL})
    async with live(emulator, config) as session:
        await session.send_realtime_input(activity_start=types.ActivityStart())
        await session.send_realtime_input(activity_end=types.ActivityEnd())
        await say(session, "hello")
        assert text_of(await turn(session)).startswith('You said: "hello"')
    # Silence alone never opens a turn under automatic detection either.
    async with live(emulator) as session:
        await session.send_realtime_input(
            audio=types.Blob(mime_type="audio/pcm;rate=16000", data=bytes(6400))
        )
        await asyncio.sleep(0.3)
        await say(session, "hello")
        assert text_of(await turn(session)).startswith('You said: "hello"')
