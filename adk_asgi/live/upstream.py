"""Upstream: one live connection's incoming side — socket frames -> commands -> the
connection's inbox (turns, answers, resumes) or the run's input (``run/input.py``: audio,
images, activity).

The first frame that parses picks the protocol (``protocol/choice.py``: the connection
holds it, the upstream tells it of each frame); a frame that does not parse, or a command
the limits refuse, gets an error frame and the connection goes on. Audio and images go
straight to the model's input (they are not ordered with turns) once ``media.py``'s rules
pass; everything that changes a turn goes through the inbox, which ``Connection``'s
downstream task reads.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

from google.genai import types

from ..options import Limits
from ..pauses.approvals import ClientAnswer, answers_in
from ..pauses.notices import GateNotice
from ..transport.limits import check_limits
from ..wire.body import BodyFields
from ..wire.errors import CHAT_NOT_FOUND, RequestError
from ..wire.request import check_storable, user_content, valid_chat_id
from .protocol.choice import ProtocolChoice
from .protocol.commands import (
    Abort,
    Audio,
    AudioControl,
    Command,
    Image,
    Interrupt,
    Messages,
    Ping,
    Resume,
    ToolResult,
    parse_json,
)
from .protocol.media import ImageAdmission, InputRefused, check_pcm
from .protocol.protocol_a import ProtocolA
from .protocol.protocol_b import ProtocolB
from .protocol.socket import LiveSocket
from .run.run import LiveRun, RunItem

__all__ = ("Answers", "InboxItem", "Shutdown", "StartRun", "Upstream", "UserMessage", "Wake")


# -- inbox items besides run items and gate notices -------------------------------------


@dataclass(frozen=True, slots=True)
class StartRun:
    chat_id: str


@dataclass(frozen=True, slots=True)
class UserMessage:
    chat_id: str
    content: types.Content
    request_id: str | None
    state_delta: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Answers:
    answers: list[ClientAnswer]
    request_id: str | None


@dataclass(frozen=True, slots=True)
class Shutdown:
    pass


@dataclass(frozen=True, slots=True)
class Wake:
    """Nothing to do: wakes the downstream (the pump's shortcut failed, ``connection.py``)."""


InboxItem = (
    RunItem
    | GateNotice
    | StartRun
    | UserMessage
    | Answers
    | Resume
    | Abort
    | Interrupt
    | Shutdown
    | Wake
)


class Upstream:
    def __init__(
        self,
        socket: LiveSocket,
        inbox: asyncio.Queue[InboxItem],
        run: LiveRun,
        protocol: ProtocolChoice,
        *,
        limits: Limits,
        body_fields: BodyFields | None,
        chat_id: str | None,
    ) -> None:
        self.socket = socket
        self.inbox = inbox
        self.run = run
        self.protocol = protocol  # the connection's: the first frame that parses picks it
        self.limits = limits
        self.body_fields = body_fields
        self.chat_id = chat_id  # named at the handshake, if it was
        self.images = ImageAdmission(limits)

    async def serve(self) -> None:
        protocol = self.protocol
        while True:
            frame = await self.socket.receive()
            if isinstance(frame, bytes):
                protocol.pick(None)
                if frame and protocol.codec.name == "A":
                    try:
                        await self._audio(Audio(frame))
                    except InputRefused as error:
                        await self._refused(frame, error)
                continue
            try:
                parsed = parse_json(frame)
            except RequestError as error:
                await self._refused(frame, error)
                continue
            protocol.pick(parsed)
            await self._decoded(frame, parsed)

    async def _decoded(self, text: str, frame: dict[str, Any]) -> None:
        try:
            check_storable(text, frame)  # the same rule as for HTTP bodies
            await self._command(self.protocol.codec.decode(frame))
        except RequestError as error:
            await self._refused(text, error)

    async def _refused(self, frame: str | bytes, error: RequestError) -> None:
        if isinstance(error, InputRefused):
            # Realtime input belongs to no turn: a control frame, so no turn ends.
            await self.socket.send([ProtocolA.input_error(error)])
            return
        codec = self.protocol.codec
        request_id = ProtocolB.request_id_of(frame) if codec.name == "B" else None
        await self.socket.send([codec.error(error.message, request_id)])

    async def _command(self, command: Command) -> None:
        match command:
            case Ping(timestamp):
                await self.socket.send([ProtocolA.pong(timestamp)])
            case Audio() as audio:
                await self._audio(audio)
            case Image() as image:
                self.images.admit(image)
                await self._begin()
                self.run.input.realtime(image.mime_type, image.data)
            case AudioControl(action):
                await self._begin()
                self.run.input.microphone(action)
            case Interrupt():
                if self.run.manual_activity:
                    self.run.interrupt()  # at once: barge-in should not queue behind events
                # the turn ends in order with its events (manual: a turn held for its
                # streaming tools, which the model's interruption does not end)
                await self.inbox.put(command)
            case Messages() as messages:
                await self._messages(messages)
            case ToolResult(call_id, result):
                await self.inbox.put(
                    Answers([ClientAnswer.from_tool_result(call_id, result)], None)
                )
            case Resume() | Abort():
                await self.inbox.put(command)

    async def _begin(self) -> None:
        if not self.run.started:
            await self.inbox.put(StartRun(self._chat_id()))

    def _chat_id(self) -> str:
        """The connection's chat: named at the handshake, or by the first message, or new."""
        return self.chat_id or self.run.chat_id or f"live-{uuid.uuid4().hex[:16]}"

    async def _audio(self, chunk: Audio) -> None:
        check_pcm(chunk.pcm)
        await self._begin()
        self.run.input.realtime(chunk.mime_type, chunk.pcm)

    async def _messages(self, command: Messages) -> None:
        messages = command.messages
        check_limits(messages, self.limits)
        last = messages[-1]
        chat = command.chat_id or self._chat_id()
        if not valid_chat_id(chat):
            raise RequestError(404, "chat_not_found", CHAT_NOT_FOUND)
        if last.role == "user":
            fields = self.body_fields
            await self.inbox.put(
                UserMessage(
                    chat,
                    user_content(last, self.limits.max_file_bytes),
                    command.request_id,
                    fields.check(command.body) if fields else {},
                )
            )
        elif last.role == "assistant":
            await self.inbox.put(
                Answers([a for part in last.parts for a in answers_in(part)], command.request_id)
            )
        else:
            raise RequestError(
                422,
                "invalid_last_message",
                "The last message must be a user or an assistant message.",
            )
