"""ADK end to end through the emulator: a real ``Runner`` with the demo agent on ADK's real
``google.adk.models.Gemini`` model (google-genai underneath), over loopback TLS."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.events import Event
from google.adk.models import Gemini
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.testing.gemini import GeminiEmulator, Reply, Request, Rule, Script

from .helpers import LIVE_MODEL, TEXT_MODEL, silence, tone

SSE = RunConfig(streaming_mode=StreamingMode.SSE)
USER = "user-1"


@pytest.fixture(autouse=True)
def clean_payment_log() -> Iterator[None]:
    PAYMENT_LOG.clear()
    yield
    PAYMENT_LOG.clear()


class Chat:
    def __init__(self, runner: Runner, session_id: str) -> None:
        self.runner = runner
        self.session_id = session_id

    async def send(self, message: types.Content) -> list[Event]:
        return [
            event
            async for event in self.runner.run_async(
                user_id=USER, session_id=self.session_id, new_message=message, run_config=SSE
            )
        ]

    async def say(self, text: str) -> list[Event]:
        return await self.send(types.Content(role="user", parts=[types.Part(text=text)]))


async def open_chat(model: Gemini) -> Chat:
    runner = Runner(
        agent=build_demo_agent(model=model),
        app_name="demo",
        session_service=InMemorySessionService(),
    )
    session = await runner.session_service.create_session(app_name="demo", user_id=USER)
    return Chat(runner, session.id)


@pytest.fixture
async def chat(emulator: GeminiEmulator) -> AsyncIterator[Chat]:
    opened = await open_chat(emulator.gemini(TEXT_MODEL))
    yield opened
    await opened.runner.close()


def texts(events: list[Event], *, partial: bool) -> list[str]:
    return [
        part.text
        for event in events
        if bool(event.partial) == partial and event.content
        for part in event.content.parts or ()
        if part.text and not part.thought
    ]


def calls(events: list[Event]) -> list[types.FunctionCall]:
    return [
        part.function_call
        for event in events
        if not event.partial and event.content
        for part in event.content.parts or ()
        if part.function_call
    ]


# run_async (SSE) --------------------------------------------------------------------------


async def test_sse_text_streams_word_by_word(chat: Chat) -> None:
    events = await chat.say("hello there")
    partials = texts(events, partial=True)
    assert partials[:3] == ["You ", "said: ", '"hello ']
    (final,) = texts(events, partial=False)
    assert final == "".join(partials)
    assert final.startswith('You said: "hello there". I am the offline adk-asgi demo model')


async def test_sse_environment_alone_reaches_the_emulator(
    emulator: GeminiEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in emulator.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    chat = await open_chat(Gemini(model=TEXT_MODEL))
    try:
        events = await chat.say("hello")
    finally:
        await chat.runner.close()
    assert texts(events, partial=False)[0].startswith('You said: "hello"')


async def test_sse_server_tool(chat: Chat) -> None:
    events = await chat.say("What's the weather in Paris?")
    (call,) = calls(events)[:1]
    assert (call.name, call.args) == ("get_weather", {"location": "Paris"})
    responses = [
        part.function_response.response
        for event in events
        if event.content
        for part in event.content.parts or ()
        if part.function_response
    ]
    assert responses[0]["forecast"] == "cloudy, 18°C"  # type: ignore[index]
    assert texts(events, partial=False)[-1] == "The weather in Paris is cloudy, 18°C."


@pytest.mark.parametrize("approved", [True, False])
async def test_sse_confirmation_gated_tool(chat: Chat, approved: bool) -> None:
    events = await chat.say("Send 50 dollars to Hanako")
    (request,) = [c for c in calls(events) if c.name == "adk_request_confirmation"]
    assert PAYMENT_LOG == []
    answer = types.FunctionResponse(
        id=request.id, name="adk_request_confirmation", response={"confirmed": approved}
    )
    resumed = await chat.send(
        types.Content(role="user", parts=[types.Part(function_response=answer)])
    )
    final = texts(resumed, partial=False)[-1]
    if approved:
        assert final == "Sent 50 USD to Hanako."
        assert [p["recipient"] for p in PAYMENT_LOG] == ["Hanako"]
    else:
        assert final == "The payment to Hanako was cancelled."
        assert PAYMENT_LOG == []


async def test_sse_upstream_429_surfaces_as_an_error(chat: Chat) -> None:
    events: list[Event] = []
    with pytest.raises(Exception) as raised:
        async for event in chat.runner.run_async(
            user_id=USER,
            session_id=chat.session_id,
            new_message=types.Content(role="user", parts=[types.Part(text="please fail with 429")]),
            run_config=SSE,
        ):
            events.append(event)
    assert getattr(raised.value, "code", None) == 429
    assert "Resource has been exhausted (e.g. check quota)." in str(raised.value)
    errors = [e for e in events if e.error_code]
    assert errors and errors[-1].error_code == "RESOURCE_EXHAUSTED"


async def test_sse_finish_reason_error(chat: Chat) -> None:
    events = await chat.say("please fail")
    final = [e for e in events if not e.partial and e.error_code]
    assert final and final[-1].error_code == "OTHER"


# run_live ---------------------------------------------------------------------------------


class Live:
    """One ``run_live`` on a runner; events are collected as they come."""

    def __init__(self, runner: Runner, session_id: str, config: RunConfig) -> None:
        self.queue = LiveRequestQueue()
        self.events: list[Event] = []
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._run(runner, session_id, config))

    async def _run(self, runner: Runner, session_id: str, config: RunConfig) -> None:
        async for event in runner.run_live(
            user_id=USER, session_id=session_id, live_request_queue=self.queue, run_config=config
        ):
            self.events.append(event)
            self._changed.set()

    async def wait_for(self, check: Callable[[list[Event]], bool], within: float = 15) -> None:
        async def watch() -> None:
            while not check(self.events):
                if self._task.done():
                    self._task.result()
                    raise AssertionError("run_live ended")
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(watch(), within)

    def turns(self) -> int:
        return sum(1 for e in self.events if e.turn_complete)

    async def close(self) -> None:
        self.queue.close()
        try:
            await asyncio.wait_for(self._task, 10)
        except (TimeoutError, asyncio.CancelledError):
            self._task.cancel()


@pytest.fixture
def start_live() -> Iterator[Callable[..., Any]]:
    opened: list[tuple[Live, Runner]] = []

    async def start(model: Gemini, config: RunConfig) -> Live:
        runner = Runner(
            agent=build_demo_agent(model=model),
            app_name="demo",
            session_service=InMemorySessionService(),
        )
        session = await runner.session_service.create_session(app_name="demo", user_id=USER)
        live = Live(runner, session.id, config)
        opened.append((live, runner))
        return live

    yield start
    # Closed by the test (async) through ``finish``.
    assert all(live._task.done() for live, _ in opened)


async def finish(live: Live) -> None:
    await live.close()


LIVE_TEXT = RunConfig(response_modalities=[types.Modality.TEXT])


def final_texts(events: list[Event]) -> list[str]:
    return texts(events, partial=False)


async def test_live_text_turn_and_tool_call(
    emulator: GeminiEmulator, start_live: Callable[..., Any]
) -> None:
    live = await start_live(emulator.gemini(LIVE_MODEL), LIVE_TEXT)
    try:
        live.queue.send_content(types.Content(role="user", parts=[types.Part(text="hello")]))
        await live.wait_for(lambda events: live.turns() >= 1)
        assert final_texts(live.events)[0].startswith('You said: "hello"')
        live.queue.send_content(
            types.Content(role="user", parts=[types.Part(text="What's the weather in Paris?")])
        )
        await live.wait_for(
            lambda events: "The weather in Paris is cloudy, 18°C." in final_texts(events)
        )
    finally:
        await finish(live)
    assert [c.name for c in calls(live.events)] == ["get_weather"]
    assert [r.kind for r in emulator.journal.records() if r.connection].count("toolResponse") >= 1


async def test_live_audio_in_and_out_with_transcriptions(
    make_emulator: Callable[..., GeminiEmulator], start_live: Callable[..., Any]
) -> None:
    emulator = make_emulator(silence_gap=0.2)
    config = RunConfig(response_modalities=[types.Modality.AUDIO])  # transcriptions: ADK's default
    live = await start_live(emulator.gemini(LIVE_MODEL), config)
    try:
        for chunk in (tone(0.2), tone(0.2), silence(0.3)):
            live.queue.send_realtime(types.Blob(mime_type="audio/pcm;rate=16000", data=chunk))
        await live.wait_for(lambda events: live.turns() >= 2)
    finally:
        await finish(live)
    heard = [
        e.input_transcription.text
        for e in live.events
        if e.input_transcription and e.input_transcription.finished
    ]
    assert heard == ["What's the weather in Tokyo?"]
    spoken = [
        e.output_transcription.text
        for e in live.events
        if e.output_transcription and e.output_transcription.finished
    ]
    assert spoken == ["Let me check the weather in Tokyo.", "The weather in Tokyo is sunny, 22°C."]
    audio = [
        p.inline_data
        for e in live.events
        if e.content
        for p in e.content.parts or ()
        if p.inline_data
    ]
    assert audio and {a.mime_type for a in audio} == {"audio/pcm;rate=24000"}


async def test_live_barge_in_with_manual_activity_detection(
    make_emulator: Callable[..., GeminiEmulator], start_live: Callable[..., Any]
) -> None:
    emulator = make_emulator(chunk_delay=0.05)
    config = RunConfig(
        response_modalities=[types.Modality.TEXT],
        realtime_input_config=types.RealtimeInputConfig(
            automatic_activity_detection=types.AutomaticActivityDetection(disabled=True)
        ),
    )
    live = await start_live(emulator.gemini(LIVE_MODEL), config)
    try:
        live.queue.send_content(types.Content(role="user", parts=[types.Part(text="story")]))
        await live.wait_for(lambda events: len(texts(events, partial=True)) >= 3)
        live.queue.send_activity_start()
        await live.wait_for(lambda events: any(e.interrupted for e in events))
        live.queue.send_realtime(types.Blob(mime_type="audio/pcm;rate=16000", data=tone(0.2)))
        live.queue.send_activity_end()
        await live.wait_for(
            lambda events: "Let me check the weather in Tokyo." in final_texts(events)
        )
    finally:
        await finish(live)
    cut = [e for e in live.events if e.interrupted and e.content]
    (story,) = texts(cut, partial=False)
    assert story.startswith("Once upon")
    assert len(story.split()) < 60  # cut short
    kinds = [r.data for r in emulator.journal.records("realtimeInput")]
    assert any("activityStart" in k or "activity_start" in k for k in kinds)


async def test_live_session_resumed_on_a_new_connection(
    make_emulator: Callable[..., GeminiEmulator], start_live: Callable[..., Any]
) -> None:
    seen: list[int] = []

    def count(request: Request) -> Reply:
        seen.append(len(request.contents))
        return Reply(f"turn with {len(request.contents)} contents")

    emulator = make_emulator(
        Script(Rule(lambda r: True, count)), connection_lifetime=1.5, go_away_lead=0.5
    )
    config = RunConfig(
        response_modalities=[types.Modality.TEXT],
        session_resumption=types.SessionResumptionConfig(),
    )
    live = await start_live(emulator.gemini(LIVE_MODEL), config)
    try:
        live.queue.send_content(types.Content(role="user", parts=[types.Part(text="first")]))
        await live.wait_for(lambda events: live.turns() >= 1)
        # goAway after 1 s: ADK reconnects with the last handle.
        await live.wait_for(
            lambda events: len({r.connection for r in emulator.journal.records("setup")}) >= 2
        )
        live.queue.send_content(types.Content(role="user", parts=[types.Part(text="second")]))
        await live.wait_for(lambda events: live.turns() >= 2)
    finally:
        await finish(live)
    setups = emulator.journal.records("setup")
    assert "handle" in str(setups[1].data)
    # ADK closed the first connection itself, on goAway, before the deadline.
    assert [r.connection for r in emulator.journal.records("disconnect")][:1] == [1]
    assert not [r for r in emulator.journal.records("close") if r.connection == 1]
    assert seen == [1, 3]  # the resumed session kept "first" and its answer
    assert final_texts(live.events) == ["turn with 1 contents", "turn with 3 contents"]
    assert not any(e.error_code for e in live.events)
