"""MessageBlocks: the steps, the text/reasoning blocks and the files of one assistant
message, written by lanes (``lanes.py``).

Every ``*-delta`` needs its ``*-start`` before and its ``*-end`` after; a step
(``start-step`` ... ``finish-step``) is one model call plus the tool results that answer
it, and a model call after a finished one opens a new step.

Lanes that write at the same time (parallel branches) share the step they meet in: a
step only ends when none of its lanes is mid-call or holds an open block (ai 5 and 6
forget open blocks at ``finish-step``). So a step holds one model call, or the calls of
branches that ran side by side; ``author_changed`` tells who wrote it (``lanes.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from ..wire.chunks import (
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
from .lanes import Lane, common_author

__all__ = ("MessageBlocks", "StepAuthor")

StepAuthor = Callable[[int, str, list[UIChunk]], None]
"""``(step, author, out)``: step ``step`` (from 1 in this request) is written by
``author`` (again, when a lane joined it); its chunks go to ``out``."""


class MessageBlocks:
    __slots__ = (
        "_author_changed",
        "_open",
        "_seq",
        "_step_lanes",
        "message_id",
        "opened",
        "step_open",
    )

    def __init__(self, message_id: str, author_changed: StepAuthor | None = None) -> None:
        self.message_id = message_id
        self._author_changed = author_changed
        self._seq = 0
        self._open: list[Lane] = []  # lanes holding an open text or reasoning block
        self._step_lanes: list[Lane] = []  # lanes that wrote in the open step
        self.step_open = False
        self.opened = 0
        """Steps opened so far."""

    # -- steps ------------------------------------------------------------------------

    def open_step(self, lane: Lane, out: list[UIChunk]) -> None:
        """``lane``'s model writes: open a step, or a new one after a finished call (when no
        other lane of the step is still writing), or join the open one."""
        if self.step_open and lane.step == self.opened and not lane.call_done:
            return  # the lane's call goes on (every token of a stream)
        lane.call_done = False
        if not self.step_open:
            self._start(lane, out)
        elif self._step_lanes and not any(
            each.busy for each in self._step_lanes if each is not lane
        ):
            self.close_all(out)
            out.append(FinishStep())
            self._start(lane, out)
        else:
            self._join(lane, out)

    def ensure_step(self, out: list[UIChunk], lane: Lane | None = None) -> None:
        """A step for chunks that are not a model call's (a tool call out of one)."""
        if not self.step_open:
            self._start(lane, out)
        elif lane is not None:
            self._join(lane, out)

    def finish_step(self, out: list[UIChunk]) -> None:
        self.close_all(out)
        if self.step_open:
            out.append(FinishStep())
            self.step_open = False
            self._step_lanes.clear()

    def reset_step(self) -> None:
        """A new request continues the message: its chunks start a new step."""
        self.step_open = False
        self._step_lanes.clear()

    def calls_done(self) -> None:
        """Every lane's model call has ended (a live model turn ended)."""
        for lane in self._step_lanes:
            lane.call_done = True

    def _start(self, lane: Lane | None, out: list[UIChunk]) -> None:
        out.append(StartStep())
        self.step_open = True
        self.opened += 1
        self._step_lanes.clear()
        if lane is not None:
            self._step_lanes.append(lane)
            lane.step = self.opened
            if self._author_changed is not None:
                self._author_changed(self.opened, lane.author, out)

    def _join(self, lane: Lane, out: list[UIChunk]) -> None:
        lane.step = self.opened
        lanes = self._step_lanes
        if lane in lanes:
            return
        before = common_author(lanes) if lanes else None
        lanes.append(lane)
        after = common_author(lanes)
        if after != before and self._author_changed is not None:
            self._author_changed(self.opened, after, out)

    # -- text and reasoning -----------------------------------------------------------

    def stream(self, lane: Lane, text: str, thought: bool, out: list[UIChunk]) -> None:
        """Append a delta to the lane's open text (or reasoning) block, opening it."""
        if thought:
            if lane.text_id is not None:
                self._end_text(lane, out)
            block = lane.reasoning_id
            if block is None:
                block = lane.reasoning_id = self._new_id("r")
                out.append(ReasoningStart(id=block, provider_metadata=lane.metadata))
                self._open.append(lane)
            out.append(ReasoningDelta(id=block, delta=text))
        else:
            if lane.reasoning_id is not None:
                self._end_reasoning(lane, out)
            block = lane.text_id
            if block is None:
                block = lane.text_id = self._new_id("t")
                out.append(TextStart(id=block, provider_metadata=lane.metadata))
                self._open.append(lane)
            out.append(TextDelta(id=block, delta=text))

    def close(self, lane: Lane, out: list[UIChunk]) -> None:
        """End the lane's open text or reasoning block."""
        if lane.reasoning_id is not None:
            self._end_reasoning(lane, out)
        if lane.text_id is not None:
            self._end_text(lane, out)

    def replace_text(self, lane: Lane, text: str, out: list[UIChunk]) -> None:
        """The lane's final text is not what it streamed: end the streamed block marked
        ``providerMetadata.adk.replaced`` (a text part cannot be edited once sent) and
        write ``text`` as a new block."""
        if lane.text_id is not None:
            adk = dict((lane.metadata or {}).get("adk", {}))
            adk["replaced"] = True
            out.append(TextEnd(id=lane.text_id, provider_metadata={"adk": adk}))
            lane.text_id = None
            if lane.reasoning_id is None:
                self._open.remove(lane)
        self.stream(lane, text, False, out)

    def close_all(self, out: list[UIChunk]) -> None:
        """End every open block (the message, or its step, ends)."""
        for lane in list(self._open):
            self.close(lane, out)

    def _new_id(self, kind: str) -> str:
        self._seq += 1
        return f"{self.message_id}-{kind}{self._seq}"

    def _end_text(self, lane: Lane, out: list[UIChunk]) -> None:
        assert lane.text_id is not None
        out.append(TextEnd(id=lane.text_id))
        lane.text_id = None
        if lane.reasoning_id is None:
            self._open.remove(lane)

    def _end_reasoning(self, lane: Lane, out: list[UIChunk]) -> None:
        assert lane.reasoning_id is not None
        out.append(ReasoningEnd(id=lane.reasoning_id))
        lane.reasoning_id = None
        if lane.text_id is None:
            self._open.remove(lane)
