"""LiveTranslator: the shared ``EventTranslator`` plus what only ``run_live`` produces.

Live events differ from SSE events in four ways, handled here through the translator's
protected hooks (``core/translator.py`` documents the contract):

- the aggregated final text has a *new* event id (in SSE it shares the id of its
  partials), so "partials were streamed since the last final" is tracked instead;
- model audio arrives as ``inline_data`` PCM chunks: each becomes a transient ``data-pcm``
  chunk (never a ``file`` part: the page plays it, it is not kept);
- transcriptions: the output transcription is what the model *says*, so it is the
  assistant message's text (``text-*`` blocks); the input transcription is what the user
  said, a transient ``data-transcription`` chunk;
- ``turn_complete`` / ``interrupted`` are control events that end a turn (the turn layer
  decides when; see ``turns.py``), and the gate's approval requests and resolutions are
  injected between events.
"""

from __future__ import annotations

import base64
import re
from typing import Any, Final

from google.adk.events import Event
from google.genai import types

from ..chunks import DataChunk, ToolOutputAvailable, UIChunk
from ..core.approvals import CONFIRMATION_TOOL
from ..core.translator import EventTranslator
from .gate import ApprovalNotice, AskNotice, ResolvedNotice

__all__ = ("PCM_CHUNK_TYPE", "TRANSCRIPTION_CHUNK_TYPE", "LiveTranslator")

PCM_CHUNK_TYPE: Final = "data-pcm"
TRANSCRIPTION_CHUNK_TYPE: Final = "data-transcription"
_RATE: Final = re.compile(r"rate=(\d+)")


class LiveTranslator(EventTranslator):
    """One assistant message of a live conversation (one model turn, tools included)."""

    __slots__ = ("_audio_out", "_live_streamed", "emitted_calls", "model_called_tools")

    def __init__(self, message_id: str, *, audio_out: bool = True, **options: Any) -> None:
        super().__init__(message_id, **options)
        # False: a text connection on a model that only speaks; its transcript is the text.
        self._audio_out = audio_out
        self._live_streamed = False
        # Tool calls whose `tool-input-available` went out (approvals wait for it).
        self.emitted_calls: set[str] = set()
        # The model called tools in the current model turn: its `turn_complete` does not
        # end the message, the model answers the results next.
        self.model_called_tools = False
        self.pauses.live = True

    def translate(self, event: Event, out: list[UIChunk]) -> None:
        if self.done:
            return
        if event.input_transcription is not None and event.input_transcription.text:
            t = event.input_transcription
            out.append(DataChunk(type=TRANSCRIPTION_CHUNK_TYPE, transient=True,
                                 data={"role": "user", "text": t.text,
                                       "finished": bool(t.finished)}))
        if event.output_transcription is not None and event.output_transcription.text:
            self._spoken(event, event.output_transcription.text, out)
        if event.turn_complete and event.content is None:
            self._record_response(event, out)  # usage arrives on the turn_complete event
            return
        content = event.content
        if content is not None and content.parts and event.author != "user":
            audio = [p for p in content.parts
                     if p.inline_data is not None and (p.inline_data.mime_type or "")
                     .startswith("audio/")]
            if audio:
                self._open_step(out)
                for part in audio if self._audio_out else ():
                    assert part.inline_data is not None
                    out.append(_pcm(part.inline_data))
                if len(audio) == len(content.parts):
                    return
                event = event.model_copy(update={"content": types.Content(
                    role=content.role, parts=[p for p in content.parts if p not in audio])})
                content = event.content
            assert content is not None and content.parts is not None
            if event.partial and content.role == "model" and _has_text(content):
                self._live_streamed = True
            if not event.partial:
                for part in content.parts:
                    call = part.function_call
                    if call is not None and call.id and call.name != CONFIRMATION_TOOL:
                        self.emitted_calls.add(call.id)
                        self.model_called_tools = True
        super().translate(event, out)
        if event.actions is not None and event.actions.transfer_to_agent:
            # ADK closes the calling agent's model connection without its turn_complete;
            # the next agent starts a model turn of its own, in this message.
            self.end_model_turn()

    def _final_ends_call(self) -> bool:
        return False  # the model turn ends at turn_complete (end_model_turn)

    def _partial_streamed(self, event: Event) -> None:
        pass  # tracked by `_live_streamed` (a fresh id per event: a set would grow per token)

    def _already_streamed(self, event: Event) -> bool:
        content = event.content
        if content is None or content.role != "model" or not _has_text(content):
            return False
        streamed, self._live_streamed = self._live_streamed, False
        return streamed

    def _spoken(self, event: Event, text: str, out: list[UIChunk]) -> None:
        self._open_step(out)
        if event.partial:
            self._live_streamed = True
            self._stream_text(text, False, out)
            return
        if not self._live_streamed:
            self._stream_text(text, False, out)
        self._live_streamed = False
        self._close_blocks(out)

    # -- the gate -----------------------------------------------------------

    def approval_request(self, notice: ApprovalNotice, out: list[UIChunk]) -> None:
        """The same chunks as an SSE approval request, for a call already on the page."""
        if self._confirmation_style == "native":
            self._approval_request(notice.key, notice.call_id, notice.name, notice.args,
                                   notice.hint, notice.payload, out)
            return
        confirmation: dict[str, object] = {"hint": notice.hint, "confirmed": False}
        if notice.payload is not None:
            confirmation["payload"] = notice.payload
        args = {"originalFunctionCall": {"id": notice.call_id, "name": notice.name,
                                         "args": notice.args},
                "toolConfirmation": confirmation}
        self._tool_call(notice.key, CONFIRMATION_TOOL, args, True, out)

    def client_call(self, notice: AskNotice, out: list[UIChunk]) -> None:
        """The gate asks the user (a credential): a client call of its own."""
        self._tool_call(notice.key, notice.name, notice.shown, True, out)

    def resolved(self, notice: ResolvedNotice, out: list[UIChunk]) -> None:
        self.tools.awaiting.discard(notice.key)
        if notice.kind in ("input", "credential") and not notice.timed_out:
            # What the page answered, as it shows it (a credential: only that it was given).
            self._close_blocks(out)
            out.append(ToolOutputAvailable(tool_call_id=notice.key, output=notice.output))
            return
        if notice.kind != "approval":
            return
        if not notice.confirmed and not notice.timed_out:
            # ADK answers the call with its "rejected" error: shown as denied.
            self.tools.deny(notice.call_id)
        elif notice.confirmed:
            self.tools.expect_outcome(notice.call_id)
        if self._confirmation_style == "adk-tool" and not notice.timed_out:
            # The ADK-tool style: the confirmation call is a tool part of its own; close it.
            self._close_blocks(out)
            out.append(ToolOutputAvailable(tool_call_id=notice.key,
                                           output={"confirmed": notice.confirmed}))

    def suspend(self, waiting: set[str]) -> list[UIChunk]:
        """End this request's part of the message while calls wait for the client."""
        self.tools.awaiting.update(waiting)
        return self.finish()

    def end_model_turn(self) -> None:
        """The model's turn ended (with tool calls, whose results it answers next, or with a
        transfer): what comes next is a new model call, in a new step."""
        self.model_called_tools = False
        self._live_streamed = False
        self._model_call_finished()


def _has_text(content: types.Content) -> bool:
    return any(p.text is not None and not p.function_call for p in content.parts or ())


def _pcm(blob: types.Blob) -> DataChunk:
    mime = blob.mime_type or ""
    match = _RATE.search(mime)
    return DataChunk(type=PCM_CHUNK_TYPE, transient=True, data={
        "content": base64.b64encode(blob.data or b"").decode("ascii"),
        "sampleRate": int(match.group(1)) if match else 24_000,
        "channels": 1,
        "bitDepth": 16,
    })
