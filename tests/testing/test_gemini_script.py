"""The emulator's building blocks: scripts and rules, settings, token counts, errors,
resumption handles."""

from __future__ import annotations

import re

import pytest
from google.genai import types

from adk_asgi.testing.gemini import (
    ApiError,
    EmulatorSettings,
    GeminiEmulator,
    Reply,
    Request,
    Rule,
    Script,
    default_reply,
    demo_reply,
)
from adk_asgi.testing.gemini.errors import close_reason
from adk_asgi.testing.gemini.live.sessions import MAX_HANDLES_PER_SESSION, LiveSession, SessionStore
from adk_asgi.testing.gemini.tokens import content_tokens, pcm_rate, text_tokens

from .helpers import DEMO_TOOLS
from .test_gemini_live_rules import TEXT, live, say, text_of, turn


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def request(*contents: types.Content) -> Request:
    return Request(model="m", contents=contents)


def tool_result(name: str) -> types.Content:
    response = types.FunctionResponse(name=name, response={"ok": True})
    return types.Content(role="user", parts=[types.Part(function_response=response)])


def test_rules_in_order() -> None:
    script = Script(
        Rule("Refund", Reply.call("issue_refund", order="A1")),
        Rule(re.compile(r"\bhi\b"), "Hello!"),
        Rule(lambda r: len(r.contents) > 1, lambda r: Reply(f"{len(r.contents)} contents")),
        Rule.tool_result("issue_refund", Reply("Refunded.")),
        fallback=Reply("?"),
    )
    assert script(request(user("I want a REFUND"))).calls[0].name == "issue_refund"
    assert script(request(user("hi there"))).text == "Hello!"
    assert script(request(user("this"))).text == "?"
    assert script(request(user("a"), user("b"))).text == "2 contents"
    assert script(request(user("refund"), tool_result("issue_refund"))).text == "Refunded."
    # A text rule never answers a tool result (it would call the tool again).
    assert script(request(user("refund"), tool_result("other"))).text == "?"


def test_fallbacks() -> None:
    assert Script(fallback=lambda r: Reply(r.text.upper()))(request(user("x"))).text == "X"
    weather = user("What's the weather in Rome?")
    demo_tools = tuple(DEMO_TOOLS[0].function_declarations or ())
    declared = Request(model="m", contents=(weather,), declarations=demo_tools)
    demo = Script()(declared)
    assert demo.text == "Let me check the weather in Rome."
    assert demo == demo_reply(request(weather)) == default_reply(declared)
    # Without get_weather declared the demo's phrase does not apply: an echo, no call.
    echoed = Script()(request(weather))
    assert echoed.calls == () and echoed.text.startswith('You said: "What\'s the weather in Rome?"')


def test_request_views() -> None:
    req = request(user("question"), tool_result("f"))
    assert req.text == ""
    assert [r.name for r in req.tool_results] == ["f"]
    model_last = request(user("q"), types.Content(role="model", parts=[types.Part(text="a")]))
    assert model_last.text == ""
    assert request(user("q")).text == "q"


def test_reply_validation() -> None:
    with pytest.raises(ValueError):
        Reply(finish_reason="NOT_A_REASON")
    with pytest.raises(ValueError):
        Reply("x", fail_after=-1)
    failing = Reply.fail(503, after=2)
    assert failing.error is not None and failing.error.code == 503
    assert failing.fail_after == 2
    both = Reply.calls_of(("a", {"x": 1}), ("b", {}), text="Two calls.")
    assert [c.name for c in both.calls] == ["a", "b"] and both.text == "Two calls."


def test_demo_failures() -> None:
    assert demo_reply(request(user("please fail with 503"))).error == ApiError(503)
    assert demo_reply(request(user("please fail with 999"))).error is None
    blocked = demo_reply(request(user("please fail")))
    assert (blocked.finish_reason, blocked.text) == ("OTHER", "")
    raising = demo_reply(request(user("please raise")))
    assert raising.fail_after == 2 and raising.error is not None


def test_api_errors() -> None:
    assert ApiError(429).status == "RESOURCE_EXHAUSTED"
    assert ApiError(429).close_code == 1011
    assert ApiError(400).close_code == 1007
    assert ApiError(404).close_code == 1008
    assert ApiError(418).status == "FAILED_PRECONDITION"
    assert ApiError(503, "busy").body() == (
        b'{"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}}'
    )
    with pytest.raises(ValueError):
        ApiError(200)
    assert len(close_reason("é" * 100).encode()) <= 123


def test_settings_validation() -> None:
    with pytest.raises(ValueError):
        EmulatorSettings(tokens_per_chunk=0)
    with pytest.raises(ValueError):
        EmulatorSettings(connection_lifetime=1, go_away_lead=2)
    with pytest.raises(ValueError):
        EmulatorSettings(api_key="")
    settings = EmulatorSettings()
    assert settings.is_live_model("models/gemini-live-2.5-flash-preview")
    assert settings.is_live_model("gemini-2.5-flash-native-audio-preview-12-2025")
    assert not settings.is_live_model("gemini-2.5-flash")
    assert EmulatorSettings(api_key="k").client_api_key == "k"


def test_token_counts() -> None:
    assert text_tokens("abcd") == 1 and text_tokens("abcde") == 2
    assert pcm_rate("audio/pcm") == 16_000
    assert pcm_rate("audio/pcm;rate=24000") == 24_000
    assert pcm_rate("audio/pcm; rate=8000") == 8_000
    assert pcm_rate("audio/pcm;rate=x") == 0
    assert pcm_rate("audio/wav") is None
    second = types.Blob(mime_type="audio/pcm;rate=16000", data=bytes(32_000))
    audio = types.Content(role="user", parts=[types.Part(inline_data=second)])
    assert content_tokens([audio]) == 32
    image = types.Content(
        role="user", parts=[types.Part(inline_data=types.Blob(mime_type="image/png", data=b"x"))]
    )
    assert content_tokens([image, user("abcdefgh")]) == 258 + 2


def test_handles_are_capped_per_session() -> None:
    store = SessionStore(handle_ttl=60)
    session = LiveSession()
    handles = [store.issue(session) for _ in range(MAX_HANDLES_PER_SESSION + 3)]
    assert all(store.find(h) is None for h in handles[:3])
    assert all(store.find(h) is session for h in handles[3:])


async def test_context_updates_change_tools_and_instruction(
    make_emulator: object,
) -> None:
    seen: list[Request] = []

    def script(request: Request) -> Reply:
        seen.append(request)
        return Reply("ok")

    emulator: GeminiEmulator = make_emulator(script)  # type: ignore[operator]
    async with live(emulator, TEXT) as session:
        await session.send_context_update(
            system_instruction="New rules.",
            tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name="g")])],
        )
        await say(session, "hello")
        assert text_of(await turn(session)) == "ok"
    assert seen[-1].system_instruction == "New rules."
    assert seen[-1].function_names == {"g"}
