"""ToolStreams: a live turn's streaming tools (ADK's async-generator tools in ``run_live``).

ADK answers such a call at once with a "pending" response and runs the generator in the
background; each value it yields goes to the model as one more response for the call
(``LiveRequestQueue.send_content(partial=True)``), never as an event. Here they reach the
page as they come: the "pending" response and each value are the call's *preliminary*
output (``tool-output-available`` with ``preliminary: true``), and when the generator ends
its last value (or the error ADK sent the model) is the final one. The turn stays open
while its streaming tools run (``held``), so every value lands in the message that shows
the call; a message from the user, or a stop, ends a held turn (the tools go on, unseen).
An ``Event(message=...)`` the tool yields is an ADK event: text in the open turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.adk.events import Event
from google.genai import types

from ...wire.chunks import UIChunk
from .turn import LiveTurn

__all__ = ("Stream", "ToolStreams", "tool_message")


@dataclass(slots=True)
class Stream:
    """One streaming call of a turn: what was sent the model for it so far."""

    echoed: bool = False
    """ADK sent the model the "pending" response (shown with the call's event)."""
    pending: Any = None
    last: Any = None
    """The last value the tool yielded."""
    failed: Any = None
    """What ADK sent the model when the tool raised (``{"error": ...}``)."""


class ToolStreams:
    def __init__(
        self,
        current: Callable[[], LiveTurn | None],
        emit: Callable[[list[UIChunk]], Awaitable[None]],
        end: Callable[[], Awaitable[None]],
    ) -> None:
        self._current = current
        self._emit = emit
        self._end = end

    def settled(self, call_id: str, *, streaming: bool) -> None:
        """A call ran on the server; a streaming tool's was answered "pending": its
        output is interim."""
        turn = self._current()
        if turn is not None and streaming:
            turn.streams[call_id] = Stream()
            turn.translator.message.tools.long_running(call_id)

    def hold(self, turn: LiveTurn, event: Event) -> bool:
        """The model's turn is over but the turn's streaming tools still run: it stays open
        for their values."""
        turn.held = bool(turn.streams) and not event.interrupted
        return turn.held

    def foreign(self, turn: LiveTurn | None, event: Event) -> bool:
        """A streaming tool's message whose turn ended while another turn is open: it is
        not shown there (with no turn open it is a message of its own)."""
        if turn is None or not tool_message(event):
            return False
        return (event.branch or "").rsplit("@", 1)[-1] not in turn.translator.emitted_calls

    async def release(self) -> bool:
        """End a held turn now (the user speaks again, or stops it)."""
        turn = self._current()
        if turn is None or not turn.held:
            return False
        await self._end()
        return True

    async def sent(self, responses: list[types.FunctionResponse], partial: bool) -> None:
        """Function responses ADK sent the model itself."""
        turn = self._current()
        if turn is None:
            return
        out: list[UIChunk] = []
        for response in responses:
            call_id = response.id or ""
            stream = turn.streams.get(call_id)
            if stream is None:
                continue  # an ordinary call's response, shown with its event
            if partial:
                stream.last = response.response
                out.extend(turn.translator.stream_value(call_id, response.response))
            elif not stream.echoed:
                stream.echoed, stream.pending = True, response.response
            else:
                stream.failed = response.response
        await self._emit(out)

    async def ended(self, call_id: str) -> None:
        """The tool's generator is over: its final output; a held turn with no other
        streaming tool ends."""
        turn = self._current()
        stream = turn.streams.pop(call_id, None) if turn is not None else None
        if turn is None or stream is None:
            return
        final: Any = next(
            (v for v in (stream.failed, stream.last, stream.pending) if v is not None), {}
        )
        await self._emit(turn.translator.stream_done(call_id, final))
        if turn.held and not turn.streams:
            await self._end()


def tool_message(event: Event) -> bool:
    """An ``Event(message=...)`` a streaming tool yielded (ADK delivers it on the branch
    ``{tool}@{call id}``, as a user-role content from the agent)."""
    content = event.content
    return (
        content is not None
        and content.role == "user"
        and event.author != "user"
        and "@" in (event.branch or "")
    )
