"""The history's rules on hand-made sessions (no server): rewinds, restored histories,
answers a page never shows, and chunks a client would refuse."""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import AsyncGenerator
from typing import Any

import httpx
from google.adk.agents import LlmAgent, ParallelAgent
from google.adk.events import Event
from google.adk.events.event_actions import EventActions
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.sessions import Session
from google.genai import types

from adk_asgi import AdkApp
from adk_asgi.adk.sessions import META_KEY
from adk_asgi.history.messages import HistoryOptions, rebuild_messages
from adk_asgi.options import Settings
from adk_asgi.pauses.tools import ToolKinds
from adk_asgi.translate.factory import Translators
from adk_asgi.wire.ui_message import UIMessageState

from support import chat_body, parse_sse, user_message

SECRET = "sk-live-do-not-show"


def turn(
    invocation: str,
    message_id: str,
    author: str,
    *parts: types.Part,
    user_message_id: str | None = None,
    **actions: Any,
) -> Event:
    tags: dict[str, Any] = {"messageId": message_id}
    if user_message_id:
        tags["userMessageId"] = user_message_id
    return Event(
        invocation_id=invocation,
        author=author,
        content=types.Content(role="user" if author == "user" else "model", parts=list(parts)),
        custom_metadata={META_KEY: tags},
        actions=EventActions(**actions),
    )


def text(value: str) -> types.Part:
    return types.Part(text=value)


def said(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(m["role"], "".join(p.get("text", "") for p in m["parts"])) for m in messages]


def _options(tools: ToolKinds | None = None) -> HistoryOptions:
    """The history read with the default app settings (and ``tools``)."""
    return HistoryOptions(Translators(Settings(), lambda: tools or ToolKinds()))


def session(*events: Event) -> Session:
    return Session(id="c", app_name="a", user_id="u", events=list(events))


async def test_rewound_turns_are_gone() -> None:
    events = session(
        turn("i1", "m1", "user", text("first"), user_message_id="u1"),
        turn("i1", "m1", "agent", text("one")),
        turn("i2", "m2", "user", text("second"), user_message_id="u2"),
        turn("i2", "m2", "agent", text("two")),
        Event(
            invocation_id="r", author="user", actions=EventActions(rewind_before_invocation_id="i2")
        ),
        turn("i3", "m3", "user", text("second, again"), user_message_id="u2"),
        turn("i3", "m3", "agent", text("two, again")),
    )
    messages = await rebuild_messages(events, _options())
    assert said(messages) == [
        ("user", "first"),
        ("assistant", "one"),
        ("user", "second, again"),
        ("assistant", "two, again"),
    ]
    assert [m["id"] for m in messages] == ["u1", "m1", "u2", "m3"]


async def test_restored_history_reads_back() -> None:
    seeded = [
        Event(
            invocation_id="adk-asgi-seed",
            author=author,
            content=types.Content(
                role="user" if author == "user" else "model", parts=[text(words)]
            ),
            custom_metadata={META_KEY: {"seeded": True, "messageId": mid}},
        )
        for author, words, mid in (("user", "hi", "a"), ("agent", "hello", "b"))
    ]
    messages = await rebuild_messages(session(*seeded), _options())
    assert messages == [
        {"id": "a", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
        {
            "id": "b",
            "role": "assistant",
            "parts": [{"type": "text", "text": "hello", "state": "done"}],
        },
    ]


async def test_answers_a_page_does_not_show_stay_hidden() -> None:
    """A call of a kind the page is not shown an answer for (a credential request, say):
    the user's answer is never part of the history."""
    call = types.Part(
        function_call=types.FunctionCall(
            id="cred-1", name="adk_request_credential", args={"scheme": "apiKey"}
        )
    )
    answer = types.Part(
        function_response=types.FunctionResponse(
            id="cred-1", name="adk_request_credential", response={"apiKey": SECRET}
        )
    )
    events = session(
        turn("i1", "m1", "user", text("use my key"), user_message_id="u1"),
        Event(
            invocation_id="i1",
            author="agent",
            content=types.Content(role="model", parts=[call]),
            long_running_tool_ids={"cred-1"},
            custom_metadata={META_KEY: {"messageId": "m1"}},
        ),
        turn("i1", "m1", "user", answer),
        turn("i1", "m1", "agent", text("done")),
        turn("i2", "m2", "user", answer),  # as a completion would look
    )
    messages = await rebuild_messages(
        events, _options(ToolKinds(long_running=frozenset({"open_ticket"})))
    )
    assert SECRET not in json.dumps(messages)
    assert said(messages)[:2] == [("user", "use my key"), ("assistant", "done")]


def test_chunks_a_client_would_refuse_are_skipped() -> None:
    state = UIMessageState("m")
    for chunk in (
        {"type": "tool-output-available", "toolCallId": "x", "output": {}},
        {"type": "tool-approval-request", "toolCallId": "x", "approvalId": "a"},
        {"type": "tool-output-denied", "toolCallId": "x"},
        {"type": "text-delta", "id": "t", "delta": "lost"},
        {"type": "text-end", "id": "t"},
    ):
        state.apply(chunk)
    assert state.message == {"id": "m", "role": "assistant", "parts": []}


async def test_user_files_come_back_as_data_urls() -> None:
    image = types.Part(
        inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG", display_name="dot.png")
    )
    linked = types.Part(
        file_data=types.FileData(file_uri="https://example.com/a.pdf", mime_type="application/pdf")
    )
    events = session(
        turn("i1", "m1", "user", image, linked, text("what are these?"), user_message_id="u1")
    )
    [user] = await rebuild_messages(events, _options())
    assert user["parts"] == [
        {
            "type": "file",
            "mediaType": "image/png",
            "filename": "dot.png",
            "url": "data:image/png;base64,iVBORw==",
        },
        {"type": "file", "mediaType": "application/pdf", "url": "https://example.com/a.pdf"},
        {"type": "text", "text": "what are these?"},
    ]


async def test_sources_and_model_files() -> None:
    """What a model's final response carries besides text: grounding sources (each once)
    and files it made, as the stream shows them."""
    grounding = types.GroundingMetadata(
        grounding_chunks=[
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://adk.dev", title="ADK")),
            types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://adk.dev", title="ADK")),
        ]
    )
    answer = turn(
        "i1",
        "m1",
        "agent",
        text("see the chart"),
        types.Part(inline_data=types.Blob(mime_type="image/png", data=b"png")),
    )
    answer.grounding_metadata = grounding
    events = session(turn("i1", "m1", "user", text("chart please"), user_message_id="u1"), answer)
    _, assistant = await rebuild_messages(events, _options())
    assert assistant["parts"] == [
        {"type": "step-start"},
        {"type": "text", "text": "see the chart", "state": "done"},
        {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,cG5n"},
        {"type": "source-url", "sourceId": "m1-s1", "url": "https://adk.dev", "title": "ADK"},
    ]


class _Paced(BaseLlm):
    """Streams ``words`` after waiting ``first`` seconds, ``pace`` seconds apart."""

    model: str = "paced"
    words: list[str]
    first: float = 0.0
    pace: float = 0.01

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        await asyncio.sleep(self.first)
        for word in self.words:
            yield LlmResponse(content=types.Content(role="model", parts=[text(word)]), partial=True)
            await asyncio.sleep(self.pace)
        yield LlmResponse(
            content=types.Content(role="model", parts=[text("".join(self.words))]),
            partial=False,
            finish_reason=types.FinishReason.STOP,
        )


async def test_branches_read_back_in_the_order_the_stream_showed_them() -> None:
    """The branch that begins to write first ends last: the history lays the branches out as
    the stream showed them (in the order they began to write; the bridge's plugin tags it),
    not in the order the session stored their answers (when each ended)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        both = ParallelAgent(
            name="both",
            sub_agents=[
                LlmAgent(name="late", model=_Paced(words=["brief"], first=0.15)),
                LlmAgent(name="early", model=_Paced(words=["a ", "long ", "answer"], pace=0.15)),
            ],
        )
    app = AdkApp(both, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        response = await client.post("/", json=chat_body("race", user_message("go")))
        streamed = [
            chunk["providerMetadata"]["adk"]["author"]
            for chunk in parse_sse(response.text)
            if isinstance(chunk, dict) and chunk.get("type") == "text-start"
        ]
        assert streamed == ["early", "late"]
        messages = (await client.get("/race")).json()["messages"]
    shown = [
        part["providerMetadata"]["adk"]["author"]
        for part in messages[-1]["parts"]
        if part["type"] == "text"
    ]
    assert shown == streamed
