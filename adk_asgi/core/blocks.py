"""MessageBlocks: the steps, the text/reasoning blocks and the files of one assistant
message.

Every ``*-delta`` needs its ``*-start`` before and its ``*-end`` after; a step
(``start-step`` ... ``finish-step``) is one model call plus the tool results that answer
it, and a model call after a finished one opens a new step.
"""

from __future__ import annotations

import base64

from google.genai import types

from ..chunks import (
    File,
    FinishStep,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    StartStep,
    TextDelta,
    TextEnd,
    TextStart,
    UIChunk,
)

__all__ = ("MessageBlocks",)


class MessageBlocks:
    __slots__ = ("_message_id", "_reasoning_id", "_seq", "_text_id", "call_done", "opened",
                 "step_open")

    def __init__(self, message_id: str) -> None:
        self._message_id = message_id
        self._text_id: str | None = None
        self._reasoning_id: str | None = None
        self._seq = 0
        self.step_open = False
        self.call_done = False
        """The model call of the open step has finished (its final response came)."""
        self.opened = 0
        """Steps opened so far."""

    def open_step(self, out: list[UIChunk]) -> None:
        """A model call: open a step, or a new one after a finished call."""
        if not self.step_open:
            out.append(StartStep())
            self.step_open = True
            self.call_done = False
            self.opened += 1
        elif self.call_done:
            self.close(out)
            out.append(FinishStep())
            out.append(StartStep())
            self.call_done = False
            self.opened += 1

    def ensure_step(self, out: list[UIChunk]) -> None:
        """A step for chunks that are not a model call's (a tool call out of one)."""
        if not self.step_open:
            out.append(StartStep())
            self.step_open = True
            self.opened += 1

    def finish_step(self, out: list[UIChunk]) -> None:
        self.close(out)
        if self.step_open:
            out.append(FinishStep())
            self.step_open = False

    def reset_step(self) -> None:
        """A new request continues the message: its chunks start a new step."""
        self.step_open = False
        self.call_done = False

    def stream(self, text: str, thought: bool, out: list[UIChunk]) -> None:
        """Append a delta to the open text (or reasoning) block, opening it."""
        if thought:
            if self._text_id is not None:
                self._end_text(out)
            if self._reasoning_id is None:
                self._reasoning_id = self._new_id("r")
                out.append(ReasoningStart(id=self._reasoning_id))
            out.append(ReasoningDelta(id=self._reasoning_id, delta=text))
        else:
            if self._reasoning_id is not None:
                self._end_reasoning(out)
            if self._text_id is None:
                self._text_id = self._new_id("t")
                out.append(TextStart(id=self._text_id))
            out.append(TextDelta(id=self._text_id, delta=text))

    def close(self, out: list[UIChunk]) -> None:
        """End the open text or reasoning block."""
        if self._reasoning_id is not None:
            self._end_reasoning(out)
        if self._text_id is not None:
            self._end_text(out)

    def _new_id(self, kind: str) -> str:
        self._seq += 1
        return f"{self._message_id}-{kind}{self._seq}"

    def _end_text(self, out: list[UIChunk]) -> None:
        assert self._text_id is not None
        out.append(TextEnd(id=self._text_id))
        self._text_id = None

    def _end_reasoning(self, out: list[UIChunk]) -> None:
        assert self._reasoning_id is not None
        out.append(ReasoningEnd(id=self._reasoning_id))
        self._reasoning_id = None

    def file(self, part: types.Part, out: list[UIChunk]) -> None:
        """Inline bytes as a ``data:`` URL, or a file reference, as a ``file`` part."""
        blob, ref = part.inline_data, part.file_data
        if blob is not None and blob.data is not None:
            mime = blob.mime_type or "application/octet-stream"
            data = base64.b64encode(blob.data).decode("ascii")
            out.append(File(url=f"data:{mime};base64,{data}", media_type=mime))
        elif ref is not None and ref.file_uri:
            out.append(File(url=ref.file_uri,
                            media_type=ref.mime_type or "application/octet-stream"))
