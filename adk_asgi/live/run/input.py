"""LiveInput: what the page sends a live run's model, and the only writer of the run's
``LiveRequestQueue``: the user's messages (after what ``preload_memory`` finds for them,
``preload.py``), audio and images, the microphone's activity signals, an interruption.

The turn layer sends the messages (``turns/conversation.py``), the upstream the realtime
input (``upstream.py``), both through the run (``LiveRun.input``); the run reads the queue
(``run_live``, or its turn-by-turn pump) and gives the input a fresh one when it restarts.
The queue also remembers the request ADK's sender took until the model connection has it:
ADK cancels its sender to reconnect, and a request taken but not yet sent (an activity
start, an utterance's audio) is given back for the next connection (``link.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from google.adk.agents.live_request_queue import LiveRequest, LiveRequestQueue
from google.genai import types

from .preload import LivePreload

__all__ = ("LiveInput", "ToolResults")

ToolResults = Callable[[list[types.FunctionResponse], bool], None]
"""Hears the function responses ADK sends the model itself, and whether they are partial."""


class _Queue(LiveRequestQueue):
    """The run's queue, which also tells who listens of the function responses ADK's
    streaming tools send the model through it (``partial``: one per yielded value; they
    never become events, so the page would not see them), and keeps what ADK's sender
    took until a model connection has it (``link.Taken``)."""

    def __init__(self, heard: ToolResults | None) -> None:
        super().__init__()
        self._heard = heard
        self._taken: LiveRequest | None = None  # taken by ADK's sender, not sent yet
        self._back: LiveRequest | None = None  # given back: the next ``get`` returns it

    async def get(self) -> LiveRequest:
        # The sender asks again: what it took last was sent, or dropped on purpose (a
        # before-model callback blocked it, a state change with nothing to send).
        self._taken = None
        if self._back is not None:
            request, self._back = self._back, None
        else:
            request = await super().get()
        self._taken = request
        return request

    def handed(self) -> None:
        """The model connection has the request the sender took."""
        self._taken = None

    def give_back(self) -> None:
        """ADK cancelled its sender (to reconnect) while it held a request it took: the
        next connection's sender gets that one first, in its place."""
        if self._taken is not None:
            self._back, self._taken = self._taken, None

    def send_content(self, content: types.Content, partial: bool = False) -> None:
        super().send_content(content, partial)
        parts = content.parts or []
        if self._heard is not None and parts and all(p.function_response for p in parts):
            self._heard([p.function_response for p in parts if p.function_response], partial)


class LiveInput:
    __slots__ = ("_heard", "_manual_activity", "_preload", "_queue", "_sent", "_user_id")

    def __init__(
        self,
        user_id: str,
        *,
        manual_activity: bool,
        preload: LivePreload | None = None,
        tool_results: ToolResults | None = None,
    ) -> None:
        self._user_id = user_id
        self._manual_activity = manual_activity  # the page says when the user speaks
        self._preload = preload if preload is not None and preload.active else None
        self._heard = tool_results
        self._queue = _Queue(tool_results)
        self._sent = asyncio.Event()  # the page sent the model something since ``renew``

    @property
    def queue(self) -> _Queue:
        """The queue the run reads (written only here)."""
        return self._queue

    def renew(self) -> _Queue:
        """A fresh queue, for a restarted run."""
        self._queue = _Queue(self._heard)
        self._sent.clear()
        return self._queue

    async def sent(self) -> None:
        """Until the page sends the model a message or media on the current queue."""
        await self._sent.wait()

    def close(self) -> None:
        """The run is over: ADK closes the model connection."""
        self._queue.close()

    async def message(
        self, chat_id: str, content: types.Content, state_delta: dict[str, Any] | None
    ) -> None:
        """The user's message, after what ``preload_memory`` finds for it (in the same
        model turn); the request's body fields (``AdkApp(body_fields=...)``) go into the
        session state."""
        if self._preload is not None:
            for found in await self._preload.contents(self._user_id, chat_id, content):
                self._queue.send(LiveRequest(content=found, partial=True))
        self._queue.send(LiveRequest(content=content, state_delta=state_delta or None))
        self._sent.set()

    def realtime(self, mime_type: str, data: bytes) -> None:
        """Audio or an image (``protocol/media.py``'s rules passed)."""
        self._queue.send_realtime(types.Blob(mime_type=mime_type, data=data))
        self._sent.set()

    def microphone(self, action: Literal["start", "stop"]) -> None:
        if self._manual_activity:
            # Push-to-talk: the page says when the user speaks (and so barges in).
            if action == "start":
                self._queue.send_activity_start()
            else:
                self._queue.send_activity_end()
        elif action == "stop":
            # The model detects speech itself; the microphone is off now.
            self._queue.send_audio_stream_end()

    def interrupt(self) -> None:
        """Stop the model's answer (manual activity detection: an activity start does)."""
        self._queue.send_activity_start()
        self._queue.send_activity_end()
