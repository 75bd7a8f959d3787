"""The live turn layer (``adk_asgi/live/turns.py``) without a socket or a model: ADK events,
gate notices and client answers in, frames out."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from google.adk.events import Event
from google.genai import types

from adk_asgi.live.gate.gate import LiveGate
from adk_asgi.live.protocol.choice import ProtocolChoice
from adk_asgi.live.protocol.protocol_a import ProtocolA
from adk_asgi.live.protocol.protocol_b import ProtocolB
from adk_asgi.live.run.input import LiveInput
from adk_asgi.live.turns.conversation import Conversation
from adk_asgi.live.turns.output import TurnOutput
from adk_asgi.pauses.approvals import ClientAnswer
from adk_asgi.pauses.notices import ApprovalNotice
from adk_asgi.stores import MemoryStreamStore
from adk_asgi.translate.live import LiveTranslator


class Run:
    """What the turn layer needs of the live run: a chat, its user and its input."""

    manual_activity = True

    def __init__(self) -> None:
        self.chat_id: str | None = None
        self.user_id = "anonymous"
        self.input = LiveInput(self.user_id, manual_activity=True)

    async def claim(self, chat_id: str) -> str | None:
        return None

    async def start(self, chat_id: str) -> str | None:
        self.chat_id = chat_id
        return None

    def interrupt(self) -> None:
        self.input.interrupt()


async def conversation(
    codec: Any, notices: list[Any] | None = None
) -> tuple[Conversation, list[str], LiveGate]:
    frames: list[str] = []

    async def send(batch: list[str]) -> None:
        frames.extend(batch)

    async def notify(notice: Any) -> None:
        if notices is not None:
            notices.append(notice)

    gate = LiveGate(notify, timeout=5)
    conv = Conversation(
        TurnOutput(ProtocolChoice(codec), send),
        run=Run(),
        gate=gate,  # type: ignore[arg-type]
        store=MemoryStreamStore(),
        new_translator=lambda: LiveTranslator("msg-1"),
    )
    return conv, frames, gate


def model(
    text: str | None = None, *, partial: bool = False, call: str | None = None, **fields: Any
) -> Event:
    parts = [types.Part(text=text)] if text is not None else []
    if call is not None:
        parts.append(
            types.Part(function_call=types.FunctionCall(id=call, name="pay", args={"amount": 5}))
        )
    content = types.Content(role="model", parts=parts) if parts else None
    return Event(author="assistant", content=content, partial=partial, **fields)


def chunks_a(frames: list[str]) -> list[Any]:
    return [f[6:-2] if f.endswith("[DONE]\n\n") else json.loads(f[6:-2])["type"] for f in frames]


async def test_a_turn_opens_streams_and_ends_on_turn_complete() -> None:
    conv, frames, _ = await conversation(ProtocolA())
    content = types.Content(role="user", parts=[types.Part(text="hi")])
    await conv.user_message("c1", content, None)
    assert conv.turn is not None and chunks_a(frames) == ["start"]
    for event in (
        model("Hel", partial=True),
        model("lo", partial=True),
        model("Hello"),
        model(turn_complete=True),
    ):
        await conv.event(event)
    assert chunks_a(frames) == [
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
        "[DONE]",
    ]
    assert conv.turn is None and not conv.busy


async def test_a_second_message_waits_for_the_turn() -> None:
    conv, frames, _ = await conversation(ProtocolA())
    content = types.Content(role="user", parts=[types.Part(text="hi")])
    await conv.user_message("c1", content, None)
    await conv.user_message("c1", content, None)
    assert len(conv.queued) == 1 and chunks_a(frames) == ["start"]
    await conv.event(model("ok"))
    await conv.event(model(turn_complete=True))
    assert chunks_a(frames)[-2:] == ["[DONE]", "start"] and not conv.queued


async def test_protocol_b_suspends_while_an_approval_waits_and_the_answer_continues() -> None:
    notices: list[Any] = []
    conv, frames, gate = await conversation(ProtocolB(), notices)
    content = types.Content(role="user", parts=[types.Part(text="pay")])
    await conv.user_message("c1", content, "r1")
    await conv.event(model(call="call-1"))
    # What the gate plugin does when the tool asks: announce, then wait for the answer.
    waiting = asyncio.create_task(gate.approve("call-1", "pay", {"amount": 5}, browser=False))
    await asyncio.sleep(0)
    [notice] = notices
    assert isinstance(notice, ApprovalNotice)
    await conv.approval(notice)
    sent = [json.loads(f) for f in frames]
    assert sent[-1] == {"type": "end", "requestId": "r1"}
    assert [f["chunk"]["type"] for f in sent if f["type"] == "chunk"][-3:] == [
        "tool-approval-request",
        "finish-step",
        "finish",
    ]
    assert conv.turn is not None and conv.turn.suspended
    frames.clear()
    await conv.answers([ClientAnswer(notice.key, "approval", fresh=True, confirmed=True)], "r2")
    sent = [json.loads(f) for f in frames]
    assert sent[0] == {
        "type": "chunk",
        "requestId": "r2",
        "sequence": 0,
        "chunk": {"type": "start", "messageId": "msg-1"},
    }
    assert not conv.turn.suspended and conv.turn.listeners[0].request_id == "r2"
    decision = await waiting
    assert not isinstance(decision, str) and decision.confirmed
    assert decision.response == {"confirmed": True}


async def test_refused_answers_get_an_error_frame_and_change_nothing() -> None:
    conv, frames, _ = await conversation(ProtocolB())
    await conv.answers([ClientAnswer("adk-forged", "approval", fresh=True)], "r9")
    assert [json.loads(f) for f in frames] == [
        {
            "type": "error",
            "requestId": "r9",
            "errorText": "No call 'adk-forged' is waiting for an answer.",
        }
    ]
    assert conv.turn is None
