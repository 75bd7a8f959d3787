"""The offline demo agent (adk_asgi.demo) driven through a real ADK Runner."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.apps import App, ResumabilityConfig
from google.adk.events import Event
from google.adk.models import LlmRequest, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_asgi.demo import (
    ERROR_CODE,
    FRONTEND_TOOL_NAMES,
    MODEL_NAME,
    PAYMENT_LOG,
    DemoModel,
    DemoModelError,
    build_demo_agent,
    get_weather,
    process_payment,
    root_agent,
)
from adk_asgi.demo._rules import STORY, plan_reply, split_tokens

SSE = RunConfig(streaming_mode=StreamingMode.SSE)
USER = "user-1"

# ---------------------------------------------------------------------------
# Fixtures and helpers
# ---------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail loudly on any non-loopback connection or Gemini client."""
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            host = str(address[0])
            if not (host.startswith("127.") or host in {"::1", "localhost"}):
                raise RuntimeError(f"network access attempted: {address!r}")
        real_connect(self, address)

    def no_client(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("google.genai.Client was constructed")

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr("google.genai.Client.__init__", no_client)


@pytest.fixture(autouse=True)
def clean_payment_log() -> Iterator[None]:
    PAYMENT_LOG.clear()
    yield
    PAYMENT_LOG.clear()


def make_runner(agent: LlmAgent, *, resumable: bool) -> Runner:
    if not resumable:
        return Runner(agent=agent, app_name="demo", session_service=InMemorySessionService())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ResumabilityConfig is experimental
        config = ResumabilityConfig(is_resumable=True)
    app = App(name="demo", root_agent=agent, resumability_config=config)
    return Runner(app=app, session_service=InMemorySessionService())


class Chat:
    """One session on one runner."""

    def __init__(self, runner: Runner, session_id: str) -> None:
        self.runner = runner
        self.session_id = session_id

    async def send(self, message: types.Content, run_config: RunConfig = SSE) -> list[Event]:
        return [
            event
            async for event in self.runner.run_async(
                user_id=USER,
                session_id=self.session_id,
                new_message=message,
                run_config=run_config,
            )
        ]

    async def say(self, text: str, run_config: RunConfig = SSE) -> list[Event]:
        return await self.send(user_text(text), run_config)


@pytest.fixture(params=["resumable", "plain"])
async def chat(request: pytest.FixtureRequest) -> AsyncIterator[Chat]:
    runner = make_runner(build_demo_agent(), resumable=request.param == "resumable")
    session = await runner.session_service.create_session(app_name="demo", user_id=USER)
    yield Chat(runner, session.id)
    await runner.close()


def user_text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def tool_results(*results: tuple[str | None, str, dict[str, Any]]) -> types.Content:
    parts = [
        types.Part(function_response=types.FunctionResponse(id=id_, name=name, response=response))
        for id_, name, response in results
    ]
    return types.Content(role="user", parts=parts)


def texts(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text for p in parts if p.text and not p.thought)


def final_calls(events: list[Event]) -> list[types.FunctionCall]:
    return [fc for e in events if not e.partial for fc in e.get_function_calls()]


def responses(events: list[Event]) -> list[types.FunctionResponse]:
    return [fr for e in events for fr in e.get_function_responses()]


def answer(events: list[Event]) -> Event:
    """The last model text event (ignores content-less end_of_agent events)."""
    finals = [e for e in events if not e.partial and texts(e)]
    assert finals, events
    return finals[-1]


def confirmation_calls(events: list[Event]) -> list[types.FunctionCall]:
    return [fc for fc in final_calls(events) if fc.name == "adk_request_confirmation"]


# ---------------------------------------------------------------------------
# The rules, without ADK
# ---------------------------------------------------------------------------


def calls_for(text: str) -> list[tuple[str | None, dict[str, Any]]]:
    return [(c.name, dict(c.args or {})) for c in plan_reply([user_text(text)]).calls]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What's the weather in Tokyo?", [("get_weather", {"location": "Tokyo"})]),
        ("weather in New York please", [("get_weather", {"location": "New York"})]),
        ("How is the WEATHER?", [("get_weather", {"location": "Tokyo"})]),
        ("大阪の天気は？", [("get_weather", {"location": "大阪"})]),
        ("天気を教えて", [("get_weather", {"location": "東京"})]),
        (
            "Send 50 dollars to Hanako",
            [("process_payment", {"amount": 50, "recipient": "Hanako", "currency": "USD"})],
        ),
        (
            "花子さんに50ドル送金してください",
            [("process_payment", {"amount": 50, "recipient": "花子", "currency": "USD"})],
        ),
        (
            "Send 30 dollars to Alice and 40 dollars to Bob",
            [
                ("process_payment", {"amount": 30, "recipient": "Alice", "currency": "USD"}),
                ("process_payment", {"amount": 40, "recipient": "Bob", "currency": "USD"}),
            ],
        ),
        (
            "please pay $12.50 to bob",
            [("process_payment", {"amount": 12.5, "recipient": "Bob", "currency": "USD"})],
        ),
        (
            "transfer 1000 yen to Taro",
            [("process_payment", {"amount": 1000, "recipient": "Taro", "currency": "JPY"})],
        ),
        ("Where am I?", [("get_location", {})]),
        ("What is my location", [("get_location", {})]),
        ("現在地を教えて", [("get_location", {})]),
        ("Play track 3", [("change_bgm", {"track": 3})]),
        ("Change BGM to track 2", [("change_bgm", {"track": 2})]),
        ("BGMを変えて", [("change_bgm", {"track": 1})]),
        ("トラック2を再生して", [("change_bgm", {"track": 2})]),
        ("作曲家について教えて", []),
        ("Hello there", []),
        ("Send my regards to Bob", []),
    ],
)
def test_rules_pick_tool_calls(text: str, expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert calls_for(text) == expected


def test_rules_streaming_shapes() -> None:
    assert len(plan_reply([user_text("bench 7")]).text_tokens) == 7
    assert len(plan_reply([user_text("tell me a long story")]).text_tokens) == 60
    assert plan_reply([user_text("story")]).text == STORY
    echo = plan_reply([user_text("Hello there")])
    assert echo.text.startswith('You said: "Hello there".')
    assert echo.text.count(". ") >= 2 and 20 <= len(echo.text_tokens) <= 40
    assert plan_reply([user_text("please fail")]).error
    assert plan_reply([user_text("please raise")]).raise_after == 2
    for text in (STORY, "花子さんに50 USDを送金しました。", "  a  b ", "x"):
        assert "".join(split_tokens(text)) == text
    assert len(split_tokens("花子さんに50 USDを送金しました。")) > 3


def test_network_guard_blocks_outbound_connections() -> None:
    with socket.socket() as sock, pytest.raises(RuntimeError, match="network access"):
        sock.connect(("192.0.2.1", 443))  # TEST-NET-1: never routable anyway


def test_tools_are_deterministic() -> None:
    assert get_weather("Tokyo")["forecast"] == "sunny, 22°C"
    assert get_weather("Springfield") == get_weather("Springfield")
    receipt = process_payment(amount=5, recipient="Bob")
    assert receipt["status"] == "success" and receipt["transaction_id"].startswith("txn-")
    assert PAYMENT_LOG == [receipt]
    assert "error" in process_payment(amount=-1, recipient="Bob")
    assert len(PAYMENT_LOG) == 1


def test_build_demo_agent_variants() -> None:
    assert isinstance(root_agent.model, DemoModel) and root_agent.model.token_delay == 0
    slow = build_demo_agent(token_delay=0.05)
    assert isinstance(slow.model, DemoModel) and slow.model.token_delay == 0.05
    named = build_demo_agent(model=f"{MODEL_NAME}-test")
    assert isinstance(named.model, DemoModel) and named.model.model == f"{MODEL_NAME}-test"
    instance = DemoModel(token_delay=0.1)
    assert build_demo_agent(model=instance).model is instance
    # A real model name is kept as a string for ADK to resolve (never called here).
    assert build_demo_agent(model="gemini-2.5-flash").model == "gemini-2.5-flash"
    tool_names = {getattr(t, "name", None) for t in root_agent.tools}
    assert tool_names == {"get_weather", "process_payment", *FRONTEND_TOOL_NAMES}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no name-based capability FutureWarning
        assert DemoModel().capabilities.output_schema_and_tools


# ---------------------------------------------------------------------------
# run_async (SSE), resumable and non-resumable apps
# ---------------------------------------------------------------------------


async def test_plain_text_streams_partials(chat: Chat) -> None:
    events = await chat.say("Hello there")
    partials = [e for e in events if e.partial]
    final = answer(events)
    assert len(partials) >= 20
    assert "".join(texts(e) for e in partials) == texts(final)
    assert texts(final).startswith('You said: "Hello there".')
    assert final.is_final_response() and final.finish_reason == types.FinishReason.STOP
    assert final.model_version == MODEL_NAME
    usage = final.usage_metadata
    assert usage is not None and usage.candidates_token_count == len(partials)
    assert usage.total_token_count == (usage.prompt_token_count or 0) + len(partials)
    # ADK gives the partials of one response the id of its aggregate.
    assert {e.id for e in partials} == {final.id}


async def test_non_streaming_mode_yields_only_the_final(chat: Chat) -> None:
    events = await chat.say("Hello there", RunConfig(streaming_mode=StreamingMode.NONE))
    assert not [e for e in events if e.partial]
    assert texts(answer(events)).startswith("You said:")


async def test_weather_calls_the_tool_then_answers(chat: Chat) -> None:
    events = await chat.say("What's the weather in Tokyo?")
    calls = final_calls(events)
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"location": "Tokyo"})]
    call_id = calls[0].id
    assert call_id and call_id.startswith("adk-")  # assigned by ADK, not the model
    partial_calls = [fc for e in events if e.partial for fc in e.get_function_calls()]
    assert [fc.id for fc in partial_calls] == [call_id]
    (result,) = responses(events)
    assert result.id == call_id and (result.response or {})["condition"] == "sunny"
    first_text = "".join(texts(e) for e in events[: events.index(answer(events))] if e.partial)
    assert first_text.startswith("Let me check the weather in Tokyo.")
    assert texts(answer(events)) == "The weather in Tokyo is sunny, 22°C."
    kinds = [
        "call" if e.get_function_calls() else "result" if e.get_function_responses() else "text"
        for e in events
        if not e.partial and e.content
    ]
    assert kinds == ["call", "result", "text"]


async def test_think_streams_thought_parts_first(chat: Chat) -> None:
    events = await chat.say("think about the meaning of life")
    partial_parts = [p for e in events if e.partial and e.content for p in e.content.parts or []]
    flags = [bool(p.thought) for p in partial_parts]
    assert flags[0] and not flags[-1] and flags == sorted(flags, reverse=True)
    final = answer(events)
    assert final.content is not None and final.content.parts is not None
    thought, text = final.content.parts
    assert thought.thought and thought.text == "".join(
        p.text or "" for p in partial_parts if p.thought
    )
    assert not text.thought and "42" in (text.text or "")
    assert final.usage_metadata and final.usage_metadata.thoughts_token_count


@pytest.mark.parametrize(
    ("message", "recipient", "reply"),
    [
        ("Send 50 dollars to Hanako", "Hanako", "Sent 50 USD to Hanako."),
        ("花子さんに50ドル送金してください", "花子", "花子さんに50 USDを送金しました。"),
    ],
)
async def test_payment_needs_approval_and_runs_once(
    chat: Chat, message: str, recipient: str, reply: str
) -> None:
    events = await chat.say(message)
    (payment,) = [c for c in final_calls(events) if c.name == "process_payment"]
    (request,) = confirmation_calls(events)
    assert request.id and request.id.startswith("adk-")
    request_event = next(e for e in events if request in e.get_function_calls())
    assert request_event.long_running_tool_ids == {request.id}
    args = request.args or {}
    assert args["originalFunctionCall"]["id"] == payment.id
    assert args["originalFunctionCall"]["args"] == {
        "amount": 50,
        "recipient": recipient,
        "currency": "USD",
    }
    (placeholder,) = responses(events)
    assert "requires confirmation" in str((placeholder.response or {}).get("error"))
    assert PAYMENT_LOG == []

    approval = tool_results((request.id, "adk_request_confirmation", {"confirmed": True}))
    events = await chat.send(approval)
    (result,) = responses(events)
    assert result.id == payment.id and (result.response or {})["status"] == "success"
    assert texts(answer(events)) == reply
    assert len(PAYMENT_LOG) == 1 and PAYMENT_LOG[0]["recipient"] == recipient

    # A repeated approval is ignored by ADK: the payment still ran exactly once.
    await chat.send(approval)
    assert len(PAYMENT_LOG) == 1


async def test_rejected_payment_never_runs(chat: Chat) -> None:
    (request,) = confirmation_calls(await chat.say("Send 50 dollars to Hanako"))
    events = await chat.send(
        tool_results((request.id, "adk_request_confirmation", {"confirmed": False}))
    )
    (result,) = responses(events)
    assert (result.response or {}) == {"error": "This tool call is rejected."}
    assert texts(answer(events)) == "The payment to Hanako was cancelled."
    assert PAYMENT_LOG == []


async def test_approval_payload_overrides_the_amount(chat: Chat) -> None:
    (request,) = confirmation_calls(await chat.say("Send 50 dollars to Hanako"))
    approval = {"confirmed": True, "payload": {"amount": 20}}
    events = await chat.send(tool_results((request.id, "adk_request_confirmation", approval)))
    assert texts(answer(events)) == "Sent 20 USD to Hanako."
    assert [p["amount"] for p in PAYMENT_LOG] == [20]


async def test_two_payments_need_two_approvals(chat: Chat) -> None:
    events = await chat.say("Send 30 dollars to Alice and 40 dollars to Bob")
    payments = [c for c in final_calls(events) if c.name == "process_payment"]
    assert [(c.args or {})["recipient"] for c in payments] == ["Alice", "Bob"]
    requests = confirmation_calls(events)
    assert len(requests) == 2 and len({r.id for r in requests}) == 2
    by_recipient = {
        (r.args or {})["originalFunctionCall"]["args"]["recipient"]: r for r in requests
    }
    assert PAYMENT_LOG == []

    events = await chat.send(
        tool_results(
            (by_recipient["Alice"].id, "adk_request_confirmation", {"confirmed": True}),
            (by_recipient["Bob"].id, "adk_request_confirmation", {"confirmed": False}),
        )
    )
    assert len(responses(events)) == 2
    assert texts(answer(events)) == "Sent 30 USD to Alice. The payment to Bob was cancelled."
    assert [p["recipient"] for p in PAYMENT_LOG] == ["Alice"]


@pytest.mark.parametrize(
    ("message", "tool", "result", "reply"),
    [
        (
            "Where am I?",
            "get_location",
            {"latitude": 35.68, "longitude": 139.76},
            "You are at latitude 35.68, longitude 139.76.",
        ),
        (
            "Where am I?",
            "get_location",
            {"error": "User denied geolocation"},
            "I could not get your location: User denied geolocation.",
        ),
        ("Play track 3", "change_bgm", {"success": True, "track": 3}, "Now playing track 3."),
    ],
)
async def test_browser_tools_pause_for_the_client(
    chat: Chat, message: str, tool: str, result: dict[str, Any], reply: str
) -> None:
    events = await chat.say(message)
    (call,) = final_calls(events)
    assert call.name == tool and call.id
    call_event = next(e for e in events if not e.partial and e.get_function_calls())
    assert call_event.long_running_tool_ids == {call.id}
    assert responses(events) == []  # nothing ran on the server

    events = await chat.send(tool_results((call.id, tool, result)))
    assert texts(answer(events)) == reply


async def test_please_fail_yields_an_error_event(chat: Chat) -> None:
    events = await chat.say("please fail")
    errors = [e for e in events if e.error_code]
    assert [e.error_code for e in errors] == [ERROR_CODE]
    assert errors[0].error_message and "please fail" in errors[0].error_message


async def test_please_raise_raises_mid_stream(chat: Chat) -> None:
    seen: list[Event] = []
    with pytest.raises(DemoModelError):
        async for event in chat.runner.run_async(
            user_id=USER, session_id=chat.session_id, new_message=user_text("please raise"),
            run_config=SSE,
        ):  # fmt: skip
            seen.append(event)
    assert len([e for e in seen if e.partial]) == 2
    assert seen[-1].error_code == "DemoModelError"


async def test_token_delay_paces_the_stream() -> None:
    runner = make_runner(build_demo_agent(token_delay=0.01), resumable=False)
    session = await runner.session_service.create_session(app_name="demo", user_id=USER)
    started = time.perf_counter()
    events = await Chat(runner, session.id).say("bench 10")
    assert time.perf_counter() - started >= 0.09
    assert texts(answer(events)) == " ".join(f"w{i}" for i in range(1, 11))
    await runner.close()


# ---------------------------------------------------------------------------
# run_live
# ---------------------------------------------------------------------------


class LiveChat:
    """A run_live session consumed in the background."""

    def __init__(self, runner: Runner, session_id: str, run_config: RunConfig) -> None:
        self.queue = LiveRequestQueue()
        self.events: list[Event] = []
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._consume(runner, session_id, run_config))

    async def _consume(self, runner: Runner, session_id: str, run_config: RunConfig) -> None:
        try:
            async for event in runner.run_live(
                user_id=USER,
                session_id=session_id,
                live_request_queue=self.queue,
                run_config=run_config,
            ):
                self.events.append(event)
                self._changed.set()
        finally:
            self._changed.set()

    def turns(self) -> int:
        return sum(1 for e in self.events if e.turn_complete)

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        async with asyncio.timeout(5):
            while not predicate():
                if self._task.done():
                    self._task.result()
                    raise AssertionError("run_live ended early")
                self._changed.clear()
                await self._changed.wait()

    async def wait_turns(self, count: int) -> None:
        await self.wait_for(lambda: self.turns() >= count)

    async def close(self) -> None:
        self.queue.close()
        await asyncio.wait_for(self._task, 5)


@contextlib.asynccontextmanager
async def live_chat(
    modality: types.Modality = types.Modality.TEXT,
    *,
    token_delay: float = 0.0,
    voice_transcript: str | None = None,
) -> AsyncIterator[LiveChat]:
    model = DemoModel(token_delay=token_delay)
    if voice_transcript is not None:
        model.voice_transcript = voice_transcript
    runner = make_runner(build_demo_agent(model=model), resumable=False)
    session = await runner.session_service.create_session(app_name="demo", user_id=USER)
    live = LiveChat(runner, session.id, RunConfig(response_modalities=[modality]))
    try:
        yield live
        await live.close()
    finally:
        await runner.close()


async def test_live_text_turn_ends_with_turn_complete() -> None:
    async with live_chat() as live:
        live.queue.send_content(user_text("Hello there"))
        await live.wait_turns(1)
        *body, done = live.events
        assert done.turn_complete and done.usage_metadata
        partials = [e for e in body if e.partial]
        (full,) = [e for e in body if not e.partial]
        assert "".join(texts(e) for e in partials) == texts(full)
        assert texts(full).startswith('You said: "Hello there".')


async def test_live_weather_round_trip() -> None:
    async with live_chat() as live:
        live.queue.send_content(user_text("What's the weather in Paris?"))
        await live.wait_turns(2)
        (call,) = final_calls(live.events)
        assert call.name == "get_weather" and call.args == {"location": "Paris"}
        (result,) = responses(live.events)
        assert result.id == call.id
        assert texts(answer(live.events)) == "The weather in Paris is cloudy, 18°C."
        order = [
            "call" if e.get_function_calls()
            else "result" if e.get_function_responses()
            else "done" if e.turn_complete
            else "text"
            for e in live.events
            if not e.partial
        ]  # fmt: skip
        assert order == ["text", "call", "result", "done", "text", "done"]


async def test_live_activity_start_interrupts_a_turn() -> None:
    async with live_chat(token_delay=0.01) as live:
        live.queue.send_content(user_text("Tell me a long story"))
        await live.wait_for(lambda: sum(1 for e in live.events if e.partial) >= 3)
        live.queue.send_activity_start()
        await live.wait_turns(1)
        partials = [e for e in live.events if e.partial]
        interrupted = [e for e in live.events if e.interrupted]
        assert len(interrupted) == 2
        said, done = interrupted
        assert texts(said) == "".join(texts(e) for e in partials)
        assert 3 <= len(partials) < 60
        assert done.turn_complete and not done.content
        # The connection keeps working after the interruption.
        live.queue.send_content(user_text("bench 3"))
        await live.wait_turns(2)
        assert texts(answer(live.events)) == "w1 w2 w3"


async def test_live_audio_turn_transcribes_and_speaks() -> None:
    async with live_chat(types.Modality.AUDIO) as live:
        for _ in range(3):
            live.queue.send_realtime(types.Blob(mime_type="audio/pcm;rate=16000", data=bytes(320)))
        live.queue.send_activity_end()
        await live.wait_turns(2)  # spoken weather question -> tool call turn -> answer turn
        heard = [e for e in live.events if e.input_transcription]
        assert len(heard) == 1 and heard[0].author == "user"
        assert heard[0].input_transcription == types.Transcription(
            text="What's the weather in Tokyo?", finished=True
        )
        audio = [
            p.inline_data
            for e in live.events
            if e.content
            for p in e.content.parts or []
            if p.inline_data
        ]
        assert audio and all(a.mime_type == "audio/pcm;rate=24000" and a.data for a in audio)
        spoken = [e.output_transcription for e in live.events if e.output_transcription]
        finished = [t.text or "" for t in spoken if t.finished]
        assert finished == [
            "Let me check the weather in Tokyo.",
            "The weather in Tokyo is sunny, 22°C.",
        ]
        partial_text = "".join(t.text or "" for t in spoken if not t.finished)
        assert partial_text == "".join(finished)
        assert not [e for e in live.events if texts(e)]  # AUDIO modality: no text parts


async def test_live_audio_stream_end_with_custom_transcript() -> None:
    async with live_chat(types.Modality.AUDIO, voice_transcript="bench 4") as live:
        live.queue.send_realtime(types.Blob(mime_type="audio/pcm;rate=16000", data=bytes(640)))
        live.queue.send_audio_stream_end()
        await live.wait_turns(1)
        spoken = [e.output_transcription for e in live.events if e.output_transcription]
        assert [t.text for t in spoken if t.finished] == ["w1 w2 w3 w4"]


async def test_live_please_raise_propagates() -> None:
    runner = make_runner(build_demo_agent(), resumable=False)
    session = await runner.session_service.create_session(app_name="demo", user_id=USER)
    live = LiveChat(runner, session.id, RunConfig(response_modalities=[types.Modality.TEXT]))
    live.queue.send_content(user_text("please raise"))
    with pytest.raises(DemoModelError):
        await asyncio.wait_for(live._task, 5)
    await runner.close()


async def test_live_connection_receive_contract() -> None:
    request = LlmRequest(
        live_connect_config=types.LiveConnectConfig(response_modalities=[types.Modality.TEXT])
    )
    async with DemoModel().connect(request) as connection:

        async def one_turn() -> list[LlmResponse]:
            return [r async for r in connection.receive()]

        receiving = asyncio.create_task(one_turn())
        await asyncio.sleep(0.01)
        assert not receiving.done()  # blocks until there is output
        await connection.send_content(user_text("bench 2"))
        first = await asyncio.wait_for(receiving, 1)
        assert first[-1].turn_complete and [r.partial for r in first[:-1]] == [True, True, False]
        await connection.close()
        assert await asyncio.wait_for(one_turn(), 1) == []  # closed: returns at once
        assert await asyncio.wait_for(one_turn(), 1) == []
