"""EventTranslator on hand-built ADK events (the shapes ADK 2.13 emits)."""

from __future__ import annotations

from typing import Any

from google.adk.events import Event, EventActions
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

from adk_asgi.chunks import UIChunk, encode_chunk
from adk_asgi.pauses.tools import ToolKinds
from adk_asgi.translate.message import MessageContext, MessageSettings
from adk_asgi.translate.translator import EventTranslator


def ev(
    *parts: types.Part,
    role: str = "model",
    partial: bool | None = None,
    event_id: str = "e1",
    author: str = "assistant",
    **kw: Any,
) -> Event:
    return Event(
        id=event_id,
        invocation_id="inv",
        author=author,
        partial=partial,
        content=types.Content(role=role, parts=list(parts)),
        **kw,
    )


def run(translator: EventTranslator, *events: Event, finish: bool = True) -> list[dict[str, Any]]:
    out: list[UIChunk] = []
    for event in events:
        out.extend(translator.translate(event))
    if finish:
        out.extend(translator.message.finish())
    import json

    return [json.loads(encode_chunk(c)) for c in out]


def types_(chunks: list[dict[str, Any]]) -> list[str]:
    return [c["type"] for c in chunks]


def text(t: str, thought: bool = False) -> types.Part:
    return types.Part(text=t, thought=thought or None)


def call(name: str, call_id: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def result(name: str, call_id: str, response: dict[str, Any]) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response=response)
    )


def test_partials_stream_and_the_aggregate_is_not_repeated() -> None:
    t = EventTranslator("m")
    chunks = run(
        t,
        ev(text("Hel"), partial=True),
        ev(text("lo"), partial=True),
        ev(text("Hello"), partial=False, finish_reason=types.FinishReason.STOP),
    )
    assert types_(chunks) == [
        "start-step",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    assert "".join(c["delta"] for c in chunks if c["type"] == "text-delta") == "Hello"
    assert chunks[-1] == {"type": "finish", "finishReason": "stop"}


def test_non_streaming_final_text_is_sent_whole() -> None:
    chunks = run(EventTranslator("m"), ev(text("All at once"), partial=False))
    assert types_(chunks)[:4] == ["start-step", "text-start", "text-delta", "text-end"]


def test_reasoning_then_text_are_separate_blocks() -> None:
    chunks = run(
        EventTranslator("m"),
        ev(text("hmm ", True), partial=True),
        ev(text("answer"), partial=True),
        ev(text("hmm ", True), text("answer"), partial=False),
    )
    assert types_(chunks) == [
        "start-step",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    assert chunks[1]["id"] != chunks[4]["id"]


def test_tool_call_result_and_answer_in_two_steps() -> None:
    chunks = run(
        EventTranslator("m"),
        ev(text("Checking."), partial=True, event_id="e1"),
        ev(call("get_weather", "c1", location="Tokyo"), partial=True, event_id="e1"),
        ev(
            text("Checking."),
            call("get_weather", "c1", location="Tokyo"),
            partial=False,
            event_id="e1",
        ),
        ev(result("get_weather", "c1", {"forecast": "sunny"}), role="user", event_id="e2"),
        ev(text("Sunny."), partial=True, event_id="e3"),
        ev(text("Sunny."), partial=False, event_id="e3"),
    )
    assert types_(chunks) == [
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    assert chunks[5]["input"] == {"location": "Tokyo"}
    assert chunks[6] == {
        "type": "tool-output-available",
        "toolCallId": "c1",
        "output": {"forecast": "sunny"},
    }


def test_tool_error_result() -> None:
    chunks = run(
        EventTranslator("m"),
        ev(call("t", "c1"), partial=False),
        ev(result("t", "c1", {"error": "boom"}), role="user", event_id="e2"),
    )
    assert {
        "type": "tool-output-error",
        "toolCallId": "c1",
        "errorText": "The tool failed.",
    } in chunks


def test_a_browser_tools_error_keeps_the_pages_text() -> None:
    """In live mode the page's answer for a browser tool comes back through the agent."""
    settings = MessageSettings(tools=ToolKinds(browser=frozenset({"t"})))
    chunks = run(
        EventTranslator("m", settings),
        ev(call("t", "c1"), partial=False),
        ev(result("t", "c1", {"error": "the speaker is unplugged"}), role="user", event_id="e2"),
    )
    error = {
        "type": "tool-output-error",
        "toolCallId": "c1",
        "errorText": "the speaker is unplugged",
    }
    assert error in chunks


def test_a_result_the_tools_error_hook_marks_is_a_tool_error() -> None:
    """ADK's error hook of a tool (``_detect_error_in_response``), as ``tool_kinds`` finds
    it, decides; a result it does not mark stays a result."""

    def detect(response: Any) -> str | None:
        return "ENV_FAILED" if response.get("status") == "failed" else None

    settings = MessageSettings(tools=ToolKinds(errors={"t": detect}))
    chunks = run(
        EventTranslator("m", settings),
        ev(call("t", "c1"), call("t", "c2"), partial=False),
        ev(
            result("t", "c1", {"status": "failed", "log": "for the model"}),
            result("t", "c2", {"status": "ok"}),
            role="user",
            event_id="e2",
        ),
    )
    assert {
        "type": "tool-output-error",
        "toolCallId": "c1",
        "errorText": "The tool failed.",
    } in chunks
    assert {"type": "tool-output-available", "toolCallId": "c2", "output": {"status": "ok"}} in (
        chunks
    )
    assert "for the model" not in str(chunks)


def _confirmation_events() -> list[Event]:
    confirmation = call(
        "adk_request_confirmation",
        "conf1",
        originalFunctionCall={"id": "c1", "name": "process_payment", "args": {"amount": 50}},
        toolConfirmation={"hint": "Pay?", "confirmed": False},
    )
    placeholder = ev(
        result("process_payment", "c1", {"error": "needs confirmation"}),
        role="user",
        event_id="e3",
        actions=EventActions(requested_tool_confirmations={"c1": ToolConfirmation(hint="Pay?")}),
    )
    return [
        ev(call("process_payment", "c1", amount=50), partial=False, event_id="e1"),
        ev(confirmation, partial=False, event_id="e2", long_running_tool_ids={"conf1"}),
        placeholder,
    ]


def test_native_approval_request_is_in_the_last_step() -> None:
    t = EventTranslator("m")
    chunks = run(t, *_confirmation_events())
    assert types_(chunks) == [
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-input-available",
        "tool-approval-request",
        "finish-step",
        "finish",
    ]
    assert chunks[3]["providerMetadata"] == {"adk": {"approvalId": "conf1", "hint": "Pay?"}}
    assert chunks[4] == {"type": "tool-approval-request", "approvalId": "conf1", "toolCallId": "c1"}
    assert chunks[-1]["finishReason"] == "tool-calls"
    assert t.message.tools.awaiting == {"conf1"}


def test_seed_style_shows_the_confirmation_as_a_tool() -> None:
    chunks = run(
        EventTranslator("m", MessageSettings(confirmation_style="adk-tool")),
        *_confirmation_events(),
    )
    names = [(c["type"], c.get("toolName")) for c in chunks]
    assert ("tool-input-available", "adk_request_confirmation") in names
    assert "tool-approval-request" not in types_(chunks)
    assert chunks[-1]["finishReason"] == "tool-calls"


def test_denied_call_becomes_output_denied() -> None:
    chunks = run(
        EventTranslator("m", context=MessageContext(denied=frozenset({"c1"}))),
        ev(result("process_payment", "c1", {"error": "This tool call is rejected."}), role="user"),
    )
    assert chunks[0] == {"type": "tool-output-denied", "toolCallId": "c1"}


def test_a_browser_tool_call_ends_with_tool_calls() -> None:
    t = EventTranslator("m", MessageSettings(tools=ToolKinds(browser=frozenset({"get_location"}))))
    chunks = run(t, ev(call("get_location", "c9"), partial=False, long_running_tool_ids={"c9"}))
    assert "providerExecuted" not in chunks[1]
    assert chunks[-1]["finishReason"] == "tool-calls"
    assert t.message.tools.awaiting == {"c9"}


def test_a_long_running_server_call_is_provider_executed_with_an_interim_result() -> None:
    t = EventTranslator("m", MessageSettings(tools=ToolKinds(browser=frozenset({"get_location"}))))
    chunks = run(
        t,
        ev(call("open_ticket", "c8"), partial=False, long_running_tool_ids={"c8"}),
        ev(result("open_ticket", "c8", {"status": "pending"}), role="user"),
    )
    assert chunks[1]["providerExecuted"] is True and chunks[2]["providerExecuted"] is True
    assert chunks[3] == {
        "type": "tool-output-available",
        "toolCallId": "c8",
        "output": {"status": "pending"},
        "preliminary": True,
    }
    assert chunks[-1]["finishReason"] == "stop" and not t.message.tools.awaiting


def test_error_event_is_the_one_terminal_chunk() -> None:
    t = EventTranslator("m")
    out = run(
        t,
        ev(text("par"), partial=True),
        Event(
            invocation_id="i", author="assistant", error_code="BOOM", error_message="model failed"
        ),
    )
    assert types_(out) == ["start-step", "text-start", "text-delta", "text-end", "error"]
    # Never the event's own message (it may hold an exception's text): the generic text.
    assert out[-1]["errorText"] == "The agent failed to answer. Please try again. (BOOM)"
    assert t.message.fail("again") == []  # never two terminal chunks


def test_aborted_run_emits_no_error() -> None:
    out = run(
        EventTranslator("m"),
        Event(invocation_id="i", author="assistant", error_code="INVOCATION_ABORTED"),
    )
    assert types_(out) == ["finish"]


def test_usage_is_summed_over_model_calls_and_content_less_events_are_ignored() -> None:
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=10, candidates_token_count=5, total_token_count=15
    )
    out = run(
        EventTranslator("m"),
        ev(text("a"), partial=False, usage_metadata=usage, model_version="v1"),
        Event(invocation_id="i", author="assistant"),  # end_of_agent-like
        ev(text("b"), partial=False, event_id="e2", usage_metadata=usage),
    )
    assert out[-1]["messageMetadata"] == {
        "usage": {"inputTokens": 20, "outputTokens": 10, "totalTokens": 30},
        "model": "v1",
    }


def test_inline_image_and_grounding_sources() -> None:
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
    grounding = types.GroundingMetadata(
        grounding_chunks=[
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://a.example", title="A")),
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://a.example", title="A")),
        ]
    )
    out = run(EventTranslator("m"), ev(image, partial=False, grounding_metadata=grounding))
    assert {
        "type": "file",
        "url": "data:image/png;base64,iVBORw==",
        "mediaType": "image/png",
    } in out
    sources = [c for c in out if c["type"] == "source-url"]
    assert len(sources) == 1 and sources[0]["url"] == "https://a.example"


def test_user_echo_is_ignored() -> None:
    e = Event(
        invocation_id="i",
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="hi")]),
    )
    assert types_(run(EventTranslator("m"), e)) == ["finish"]
