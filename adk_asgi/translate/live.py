"""LiveTranslator: the shared ``EventTranslator`` plus what only ``run_live`` produces.

Live events differ from SSE events in four ways, handled here through the translator's
hooks (``translate/translator.py`` documents the contract):

- a model turn sends its text and its calls as separate final events and ends at
  ``turn_complete`` (``final_ends_call``: no; the turn layer calls ``end_model_turn``);
  the aggregated final text has a *new* event id, which the lanes' "streamed since the last
  final" already handles;
- model audio arrives as ``inline_data`` PCM chunks (``on_file``): each becomes a
  transient ``data-pcm`` chunk (never a ``file`` part: the page plays it, it is not kept);
- transcriptions (``on_event``): the output transcription is what the model *says*, so it
  is the assistant message's text (``text-*`` blocks of the speaking agent's lane); the
  input transcription is what the user said, a transient ``data-transcription`` chunk;
- ``turn_complete`` / ``interrupted`` are control events that end a turn (the turn layer
  decides when: ``live/turns/conversation.py``), and the gate's approval requests and
  resolutions are injected between events.
"""

from __future__ import annotations

import base64
import re
from typing import Any, Final

from google.adk.events import Event
from google.genai import types

from ..pauses.approvals import CONFIRMATION_TOOL
from ..pauses.notices import ApprovalNotice, AskNotice, ResolvedNotice
from ..wire.chunks import DataChunk, ToolOutputAvailable, UIChunk
from .lanes import TEXT, Lane
from .message import MessageContext, MessageSettings
from .translator import Chunks, EventTranslator

__all__ = ("PCM_CHUNK_TYPE", "TRANSCRIPTION_CHUNK_TYPE", "LiveTranslator")

PCM_CHUNK_TYPE: Final = "data-pcm"
TRANSCRIPTION_CHUNK_TYPE: Final = "data-transcription"
_RATE: Final = re.compile(r"rate=(\d+)")


class LiveTranslator(EventTranslator):
    """One assistant message of a live conversation (one model turn, tools included).

    No ``__slots__`` of its own, so that an application's translator (a subclass of
    ``EventTranslator``) combines with it for live turns (``Translators``)."""

    def __init__(
        self,
        message_id: str,
        settings: MessageSettings | None = None,
        *,
        audio_out: bool = True,
        turn_based: bool = False,
        context: MessageContext | None = None,
    ) -> None:
        super().__init__(message_id, settings, context)
        # False: a text connection on a model that only speaks; its transcript is the text.
        self._audio_out = audio_out
        # The run answers each message with run_async (run.py): SSE's events.
        self._turn_based = turn_based
        self.emitted_calls: set[str] = set()
        """Tool calls whose ``tool-input-available`` went out (approvals wait for it)."""
        self.model_called_tools = False
        """The model called tools in its current turn: its ``turn_complete`` does not end
        the message, the model answers the results next."""
        self.pauses.live = True

    # -- hooks --------------------------------------------------------------------------

    def on_event(self, event: Event, lane: Lane) -> Chunks:
        out = list(super().on_event(event, lane))
        heard = event.input_transcription
        if heard is not None and heard.text:
            out.append(
                DataChunk(
                    type=TRANSCRIPTION_CHUNK_TYPE,
                    transient=True,
                    data={"role": "user", "text": heard.text, "finished": bool(heard.finished)},
                )
            )
        said = event.output_transcription
        if said is not None and said.text:
            out.extend(self._spoken(event, lane, said.text))
        if event.turn_complete and event.content is None:
            # Usage arrives on the turn_complete event.
            out.extend(self.message.record_response(event))
        if event.actions is not None and event.actions.transfer_to_agent:
            # ADK closes the calling agent's model connection without its turn_complete;
            # the next agent starts a model turn of its own, in this message.
            self.end_model_turn()
        return out

    def final_ends_call(self) -> bool:
        # A live model turn ends at turn_complete (end_model_turn); a turn-by-turn run's
        # events are SSE's.
        return self._turn_based

    def on_file(self, part: types.Part, lane: Lane, *, partial: bool) -> Chunks:
        blob = part.inline_data
        if blob is not None and (blob.mime_type or "").startswith("audio/"):
            return [_pcm(blob)] if self._audio_out else ()
        return super().on_file(part, lane, partial=partial)

    def on_function_call(self, call: types.FunctionCall, event: Event, lane: Lane) -> Chunks:
        if call.id and call.name != CONFIRMATION_TOOL:
            self.emitted_calls.add(call.id)
            self.model_called_tools = True
        return super().on_function_call(call, event, lane)

    def stream_value(self, call_id: str, value: Any) -> list[UIChunk]:
        """A value a streaming tool yielded (what ADK sent the model): the call's
        preliminary output."""
        return self.message.tools.outcome(call_id, value, agent=True)

    def stream_done(self, call_id: str, result: Any) -> list[UIChunk]:
        """A streaming tool's call ended: its last value, or its error, is the output."""
        return self.message.tools.outcome(call_id, result)

    def _spoken(self, event: Event, lane: Lane, text: str) -> list[UIChunk]:
        """The output transcription: what the model says is the message's text."""
        message = self.message
        out = message.open_step(lane)
        if event.partial:
            lane.streamed |= TEXT
            out.extend(message.text(lane, text))
            return out
        if not lane.streamed & TEXT:
            out.extend(message.text(lane, text))
        lane.streamed &= ~TEXT
        out.extend(message.close(lane))
        return out

    # -- the gate -----------------------------------------------------------

    def approval_request(self, notice: ApprovalNotice) -> list[UIChunk]:
        """The same chunks as an SSE approval request, for a call already on the page."""
        message = self.message
        if message.settings.confirmation_style == "native":
            return message.tools.approval_request(
                notice.key, notice.call_id, notice.name, notice.args, notice.hint, notice.payload
            )
        confirmation: dict[str, object] = {"hint": notice.hint, "confirmed": False}
        if notice.payload is not None:
            confirmation["payload"] = notice.payload
        original = {"id": notice.call_id, "name": notice.name, "args": notice.args}
        return message.tools.call(
            notice.key,
            CONFIRMATION_TOOL,
            {"originalFunctionCall": original, "toolConfirmation": confirmation},
            client_side=True,
        )

    def client_call(self, notice: AskNotice) -> list[UIChunk]:
        """The gate asks the user (a credential): a client call of its own."""
        return self.message.tools.call(notice.key, notice.name, notice.shown, client_side=True)

    def resolved(self, notice: ResolvedNotice) -> list[UIChunk]:
        """A wait ended: the page answered (or the wait timed out)."""
        message = self.message
        tools = message.tools
        tools.awaiting.discard(notice.key)
        if notice.kind in ("input", "credential") and not notice.timed_out:
            # What the page answered, as it shows it (a credential: only that it was given).
            out = message.close()
            out.append(ToolOutputAvailable(tool_call_id=notice.key, output=notice.output))
            return out
        if notice.kind != "approval":
            return []
        if not notice.confirmed and not notice.timed_out:
            # ADK answers the call with its "rejected" error: shown as denied.
            tools.deny(notice.call_id)
        elif notice.confirmed:
            tools.expect_outcome(notice.call_id)
        if message.settings.confirmation_style == "adk-tool" and not notice.timed_out:
            # The ADK-tool style: the confirmation call is a tool part of its own; close it.
            out = message.close()
            out.append(
                ToolOutputAvailable(tool_call_id=notice.key, output={"confirmed": notice.confirmed})
            )
            return out
        return []

    def suspend(self, waiting: set[str]) -> list[UIChunk]:
        """End this request's part of the message while calls wait for the client."""
        self.message.tools.awaiting.update(waiting)
        return self.message.finish()

    def end_model_turn(self) -> None:
        """The model's turn ended (with tool calls, whose results it answers next, or with a
        transfer): what comes next is a new model call, in a new step."""
        self.model_called_tools = False
        for lane in self.lanes:
            lane.streamed = 0
        self.message.model_call_finished()


def _pcm(blob: types.Blob) -> DataChunk:
    mime = blob.mime_type or ""
    match = _RATE.search(mime)
    return DataChunk(
        type=PCM_CHUNK_TYPE,
        transient=True,
        data={
            "content": base64.b64encode(blob.data or b"").decode("ascii"),
            "sampleRate": int(match.group(1)) if match else 24_000,
            "channels": 1,
            "bitDepth": 16,
        },
    )
