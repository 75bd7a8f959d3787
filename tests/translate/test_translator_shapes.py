"""EventTranslator on the event shapes of parallel branches, code execution, workflow nodes
and stored sessions (hand-built, as ADK 2.13 emits them; the real runs are
tests/clients/test_agent_shapes.py)."""

from __future__ import annotations

import datetime
import json
import logging
from typing import Any

import pytest
from google.adk.events import Event
from google.adk.events.event import NodeInfo
from google.genai import types

from adk_asgi.chunks import UIChunk, encode_chunk
from adk_asgi.options import SurfaceOptions
from adk_asgi.translate.live import LiveTranslator
from adk_asgi.translate.message import MessageSettings
from adk_asgi.translate.translator import EventTranslator


def ev(
    *parts: types.Part,
    author: str = "assistant",
    partial: bool | None = None,
    event_id: str = "e1",
    branch: str | None = None,
    path: str = "",
    **kw: Any,
) -> Event:
    return Event(
        id=event_id,
        invocation_id="inv",
        author=author,
        partial=partial,
        branch=branch,
        node_info=NodeInfo(path=path),
        content=types.Content(role=kw.pop("role", "model"), parts=list(parts)) if parts else None,
        **kw,
    )


def run(translator: EventTranslator, *events: Event) -> list[dict[str, Any]]:
    out: list[UIChunk] = []
    for event in events:
        out.extend(translator.translate(event))
    out.extend(translator.message.finish())
    return [json.loads(encode_chunk(c)) for c in out]


def said(chunks: list[dict[str, Any]]) -> dict[str, str]:
    """Each text block's text, by block id."""
    blocks: dict[str, str] = {}
    for chunk in chunks:
        if chunk["type"] == "text-delta":
            blocks[chunk["id"]] = blocks.get(chunk["id"], "") + chunk["delta"]
    return blocks


def text(t: str, thought: bool = False) -> types.Part:
    return types.Part(text=t, thought=thought or None)


CODE = types.Part(
    executable_code=types.ExecutableCode(language=types.Language.PYTHON, code="print(2 + 2)")
)
RESULT = types.Part(
    code_execution_result=types.CodeExecutionResult(outcome=types.Outcome.OUTCOME_OK, output="4\n")
)


# -- parallel branches -------------------------------------------------------------------------


def branch_events() -> list[Event]:
    def a(t: str, partial: bool = True) -> Event:
        return ev(text(t), author="alpha", branch="both.alpha", partial=partial, event_id="a")

    def b(t: str, partial: bool = True) -> Event:
        return ev(text(t), author="beta", branch="both.beta", partial=partial, event_id="b")

    return [
        a("one "),
        b("UNO "),
        a("two"),
        b("DOS"),
        a("one two", False),
        b("UNO DOS", False),
        ev(text("merged"), author="writer", partial=False, event_id="w"),
    ]


def test_parallel_branches_write_their_own_blocks_in_one_step() -> None:
    chunks = run(
        EventTranslator("m", MessageSettings(surface=SurfaceOptions(agent_names=True))),
        *branch_events(),
    )
    assert list(said(chunks).values()) == ["one two", "UNO DOS", "merged"]
    starts = [c for c in chunks if c["type"] == "text-start"]
    assert [s.get("providerMetadata") for s in starts] == [
        {"adk": {"author": "alpha", "branch": "both.alpha"}},
        {"adk": {"author": "beta", "branch": "both.beta"}},
        None,
    ]
    kinds = [c["type"] for c in chunks]
    # No step ends while a branch still writes: both in step 0, the writer in step 1.
    assert kinds.count("start-step") == 2
    assert kinds.index("finish-step") > max(
        i for i, c in enumerate(chunks) if c.get("id") == starts[1]["id"]
    )
    assert chunks[-1]["messageMetadata"]["adk"] == {
        "author": "writer",
        "authors": {"0": "both", "1": "writer"},
    }
    # data-agent: alpha opened step 0, the ParallelAgent replaced it (same id).
    agents = [(c["id"], c["data"]["name"]) for c in chunks if c["type"] == "data-agent"]
    assert agents == [("m-agent0", "alpha"), ("m-agent0", "both"), ("m-agent1", "writer")]


def test_workflow_nodes_are_named_by_their_node_path() -> None:
    def node(t: str, name: str, partial: bool = True) -> Event:
        return ev(
            text(t),
            author=name,
            branch=f"{name}@1",
            path=f"fan@1/{name}@1",
            partial=partial,
            event_id=name,
        )

    chunks = run(
        EventTranslator("m", MessageSettings(surface=SurfaceOptions())),
        node("yes", "pros"),
        node("no", "cons"),
        node("yes", "pros", False),
        node("no", "cons", False),
        Event(
            invocation_id="inv",
            author="fan",
            output={"pros": "yes", "cons": "no"},
            node_info=NodeInfo(path="fan@1/join@1"),
        ),
    )
    assert list(said(chunks).values()) == ["yes", "no"]
    assert chunks[-1]["messageMetadata"]["adk"]["authors"] == {"0": "fan", "1": "join"}
    [joined] = [c for c in chunks if c["type"] == "data-node"]
    assert joined["data"] == {
        "node": "join",
        "path": "fan@1/join@1",
        "output": {"pros": "yes", "cons": "no"},
    }


# -- code execution ----------------------------------------------------------------------------


@pytest.mark.parametrize("final_id", ["e1", "another"])
def test_code_parts_stream_in_order_and_the_final_event_repeats_nothing(final_id: str) -> None:
    """ADK's code executor gives the final event a new id: nothing depends on it."""
    chunks = run(
        EventTranslator("m"),
        ev(text("Let me see. "), partial=True),
        ev(CODE, partial=True),
        ev(RESULT, partial=True),
        ev(text("It is 4."), partial=True),
        Event(id="x", invocation_id="inv", author="assistant"),  # the executor's
        ev(text("Let me see. "), CODE, RESULT, text("It is 4."), partial=False, event_id=final_id),
    )
    assert [c["type"] for c in chunks] == [
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "tool-input-start",
        "tool-input-available",
        "tool-output-available",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    assert chunks[5] == {
        "type": "tool-input-available",
        "toolCallId": "m-code1",
        "toolName": "code_execution",
        "providerExecuted": True,
        "input": {"language": "PYTHON", "code": "print(2 + 2)"},
    }
    assert chunks[6]["output"] == {"outcome": "OUTCOME_OK", "output": "4\n"}


def test_code_as_whole_events_and_a_failed_run() -> None:
    """Without progressive streaming (or with another code executor) code and result come
    as events of their own; a failed outcome is output-error."""
    failed = types.Part(
        code_execution_result=types.CodeExecutionResult(
            outcome=types.Outcome.OUTCOME_FAILED, output="Traceback: boom"
        )
    )
    chunks = run(
        EventTranslator("m"),
        ev(text("```python\nprint(1/0)\n```"), partial=True),
        ev(CODE, partial=False, event_id="e2"),
        ev(failed, event_id="e3"),
    )
    kinds = [c["type"] for c in chunks]
    assert kinds.count("tool-input-available") == 1
    assert {
        "type": "tool-output-error",
        "toolCallId": "m-code1",
        "errorText": "Traceback: boom",
    } in chunks


# -- workflow nodes ----------------------------------------------------------------------------


def output(value: Any, name: str = "step", **kw: Any) -> Event:
    return Event(
        invocation_id="inv",
        author="wf",
        output=value,
        node_info=NodeInfo(path=f"wf@1/{name}@1"),
        **kw,
    )


def test_node_outputs_a_string_as_text_and_the_rest_as_data_converted() -> None:
    when = datetime.datetime(2030, 1, 2, tzinfo=datetime.UTC)
    chunks = run(
        EventTranslator("m", MessageSettings(surface=SurfaceOptions())),
        output({"at": when, "tags": ("a",)}, "plan"),
        output("Done.", "say"),
    )
    assert [c for c in chunks if c["type"] == "data-node"] == [
        {
            "type": "data-node",
            "data": {
                "node": "plan",
                "path": "wf@1/plan@1",
                "output": {"at": "2030-01-02T00:00:00Z", "tags": ["a"]},
            },
        }
    ]
    assert list(said(chunks).values()) == ["Done."]
    assert chunks[-1]["messageMetadata"]["adk"]["authors"] == {"0": "plan", "1": "say"}


def test_node_outputs_can_be_turned_off() -> None:
    chunks = run(
        EventTranslator("m", MessageSettings(surface=SurfaceOptions(node_outputs=False))),
        output({"x": 1}),
        output("text"),
    )
    assert [c["type"] for c in chunks] == ["finish"]


def test_a_node_retried_after_its_error_event_goes_on() -> None:
    error = Event(
        invocation_id="inv",
        author="wf",
        error_code="ConnectionError",
        error_message="secret",
        node_info=NodeInfo(path="wf@1/stock@1"),
    )
    t = EventTranslator("m")
    chunks = run(t, error, output("In stock.", "stock"))
    assert chunks[-1]["type"] == "finish" and t.message.failure is None
    # Another node's output does not make the failure go away.
    t = EventTranslator("m")
    chunks = run(t, error, output("Other.", "other"))
    assert chunks[-1]["type"] == "error" and "Other." not in json.dumps(chunks)


def test_a_result_with_no_json_form_is_a_tool_error(caplog: pytest.LogCaptureFixture) -> None:
    call = types.Part(function_call=types.FunctionCall(id="c1", name="t", args={}))
    response = types.Part(
        function_response=types.FunctionResponse(id="c1", name="t", response={"handle": object()})
    )
    with caplog.at_level(logging.ERROR, "adk_asgi"):
        chunks = run(
            EventTranslator("m"), ev(call, partial=False), ev(response, role="user", event_id="e2")
        )
    assert {
        "type": "tool-output-error",
        "toolCallId": "c1",
        "errorText": "The tool failed.",
    } in chunks
    assert chunks[-1]["type"] == "finish"
    assert [r.getMessage() for r in caplog.records] == [
        "The result of tool call c1 cannot be sent: a dict has no JSON form"
    ]


# -- stored sessions ---------------------------------------------------------------------------


def test_stored_events_without_partials_give_the_same_message() -> None:
    """What a session holds (finals only, ids as stored) translates to the message the
    stream sent: same parts, same tool-call ids, same authors."""
    call = types.Part(function_call=types.FunctionCall(id="c1", name="look", args={}))
    response = types.Part(
        function_response=types.FunctionResponse(id="c1", name="look", response={"ok": True})
    )
    live = [
        ev(text("Looking. "), partial=True),
        ev(text("Looking. "), call, partial=False),
        ev(response, role="user", event_id="e2"),
        ev(text("Sun"), partial=True, event_id="e3"),
        ev(CODE, partial=True, event_id="e3"),
        ev(RESULT, partial=True, event_id="e3"),
        ev(text("Sun"), CODE, RESULT, partial=False, event_id="e3"),
    ]
    stored = [e for e in live if not e.partial]

    def message(chunks: list[dict[str, Any]]) -> list[Any]:
        return [
            (c["type"], c.get("toolCallId"), c.get("delta"), c.get("output"))
            for c in chunks
            if c["type"] not in ("text-start", "text-end")
        ]

    surface = SurfaceOptions()
    streamed = run(EventTranslator("m", MessageSettings(surface=surface)), *live)
    replayed = run(EventTranslator("m", MessageSettings(surface=surface)), *stored)
    assert "".join(c["delta"] for c in streamed if c["type"] == "text-delta") == "".join(
        c["delta"] for c in replayed if c["type"] == "text-delta"
    )
    assert [m for m in message(streamed) if m[0] != "text-delta"] == [
        m for m in message(replayed) if m[0] != "text-delta"
    ]


# -- live -------------------------------------------------------------------------------------


def test_live_audio_does_not_cut_the_spoken_text() -> None:
    def spoken(t: str, partial: bool) -> Event:
        return Event(
            invocation_id="inv",
            author="assistant",
            partial=partial,
            output_transcription=types.Transcription(text=t, finished=not partial),
        )

    audio = ev(
        types.Part(inline_data=types.Blob(mime_type="audio/pcm;rate=24000", data=b"\x00\x00"))
    )
    chunks = run(
        LiveTranslator("m"),
        spoken("Hel", True),
        audio,
        spoken("lo", True),
        audio,
        spoken("Hello", False),
    )
    assert said(chunks) == {"m-t1": "Hello"}
    assert [c["type"] for c in chunks].count("data-pcm") == 2


def test_state_and_data_parts_without_json_form_are_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from google.adk.events import EventActions

    from adk_asgi import EventParts

    def hook(event: Event, parts: EventParts) -> None:
        parts.data("handle", object())

    surface = SurfaceOptions(state_keys=lambda key: True, on_event=hook)
    changed = Event(
        invocation_id="inv",
        author="assistant",
        actions=EventActions(state_delta={"when": datetime.date(2030, 1, 2), "handle": object()}),
    )
    with caplog.at_level(logging.ERROR, "adk_asgi"):
        chunks = run(EventTranslator("m", MessageSettings(surface=surface)), changed)
    assert [c["data"] for c in chunks if c["type"] == "data-state"] == [{"when": "2030-01-02"}]
    assert not [c for c in chunks if c["type"] == "data-handle"]
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0] == "State key 'handle' is not sent: a object has no JSON form"
    assert messages[1].startswith("on_event raised") and len(messages) == 2
