"""LiveTurn: one live turn's state — its translator, recording, lock and listeners, the
calls of its current step and which of them wait for the client — and its bookkeeping
(the chat's turn lock, metrics, the turn's span). ``Conversation`` (``conversation.py``)
drives it and ``TurnOutput`` (``output.py``) writes it out; both read its fields, and only
its own methods change them. It owns its recording (the SSE a follower or protocol B's
``resume`` replays) from ``open`` to ``end``: only its methods append to it or end it.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.trace import INVALID_SPAN, Span

from ...adk.artifacts import ChatFiles
from ...observability.failures import log_error_event
from ...observability.metrics import METRICS, Outcome
from ...observability.tracing import LIVE_TURN, end_span, start_span
from ...pauses.notices import ApprovalNotice, AskNotice
from ...stores import StreamRecorder, StreamStore
from ...translate.live import LiveTranslator
from ...wire.chunks import DONE_FRAME, UIChunk, sse_event
from ..protocol.commands import Listener

__all__ = ("LiveTurn",)


@dataclass(slots=True)
class LiveTurn:
    chat_id: str
    translator: LiveTranslator
    _recorder: StreamRecorder
    lock: contextlib.AsyncExitStack
    files: ChatFiles | None = None  # the file parts of the artifacts the agent saves
    listeners: list[Listener] = field(default_factory=list)
    suspended: bool = False
    deferred: list[ApprovalNotice | AskNotice] = field(default_factory=list)
    step_calls: set[str] = field(default_factory=set)
    waiting: set[str] = field(default_factory=set)
    announced: set[str] = field(default_factory=set)
    settled: set[str] = field(default_factory=set)
    streams: dict[str, Any] = field(default_factory=dict)
    """Its streaming tools' calls still running (``tool_streams.Stream`` by call id)."""
    held: bool = False
    """The model is done; the turn stays open for its streaming tools' values."""
    # For the metrics and the turn's span.
    span: Span = INVALID_SPAN
    started: float = field(default_factory=time.perf_counter)
    answered: bool = False
    stopped: bool = False

    @classmethod
    async def open(
        cls,
        store: StreamStore,
        chat_id: str,
        user_id: str,
        translator: LiveTranslator,
        request_id: str | None,
        files: ChatFiles | None = None,
    ) -> LiveTurn:
        # The chat's turn lock, as an HTTP turn holds it: a turn on another socket (or a
        # POST) for this chat waits for this one to end, so the session's history does not
        # interleave. Held while the turn waits for the client, too: the invocation runs.
        lock = contextlib.AsyncExitStack()
        await lock.enter_async_context(store.lock(chat_id))
        try:
            recorder = await store.record(chat_id)
        except BaseException:
            await lock.aclose()
            raise
        turn = cls(
            chat_id,
            translator,
            recorder,
            lock,
            files,
            span=start_span(LIVE_TURN, "websocket", chat_id, user_id),
        )
        METRICS.turn_started("websocket")
        if request_id is not None:
            turn.listeners.append(Listener(request_id))
        return turn

    def answering(self) -> None:
        """The turn sent its first output: time to first token."""
        if not self.answered:
            self.answered = True
            METRICS.first_token("websocket", time.perf_counter() - self.started)

    async def listen(self, request_id: str, store: StreamStore) -> list[UIChunk]:
        """Protocol B: the request ``request_id`` (the client's answers) streams the rest
        of the turn; the chunks that open its stream (a suspended turn continues its
        message in a new recording)."""
        self.listeners = [Listener(request_id)]
        if not self.suspended:
            return self.translator.message.start()
        self.suspended = False
        self._recorder = await store.record(self.chat_id)
        return self.translator.message.continue_turn()

    def record(self, encoded: list[bytes]) -> None:
        """Record chunks the turn sent (each encoded once, as JSON) as SSE events."""
        self._recorder.append(b"".join([sse_event(data) for data in encoded]))

    def stop_for(self, request_id: str) -> bool:
        """Protocol B's abort of ``request_id``: it no longer listens, and the turn counts
        as stopped; False when that request does not listen to this turn."""
        if all(x.request_id != request_id for x in self.listeners):
            return False
        self.listeners = [x for x in self.listeners if x.request_id != request_id]
        self.stopped = True
        return True

    async def suspend(self) -> list[Listener]:
        """The turn waits for the client and ends this request's stream (protocol B), and
        so its recording (``listen`` starts the next); the listeners to tell, none left."""
        self._recorder.append(DONE_FRAME)
        await self._recorder.end(resumable=False)
        told, self.listeners = self.listeners, []
        self.suspended = True
        return told

    def new_step(self, calls: dict[str, str]) -> None:
        """The model called tools: a new step, none of whose calls waits or ran yet."""
        self.step_calls = set(calls)
        self.waiting.clear()
        self.settled.clear()

    def defer(self, notice: ApprovalNotice | AskNotice) -> None:
        """An approval or question for a call the client does not have yet."""
        self.deferred.append(notice)

    def wait_for(self, call_id: str) -> None:
        """The call waits for the client."""
        self.waiting.add(call_id)

    def settle(self, call_id: str) -> None:
        """The call ran on the server."""
        self.settled.add(call_id)

    def resolve(self, call_id: str) -> None:
        """The client answered the call: it no longer waits (if it waits again, that is
        news to announce)."""
        self.waiting.discard(call_id)
        self.announced.discard(call_id)

    def unannounced(self) -> list[str] | None:
        """The calls the turn waits for, when the client was not told of this set yet
        (protocol A's ``data-awaiting-client``); None when it was."""
        if self.announced == self.waiting:
            return None
        self.announced = set(self.waiting)
        return sorted(self.waiting)

    def ready_notices(self) -> list[ApprovalNotice | AskNotice]:
        """Deferred approval requests whose tool call has now reached the client."""
        if not self.deferred:
            return []
        emitted = self.translator.emitted_calls
        ready = [n for n in self.deferred if n.call_id in emitted]
        self.deferred = [n for n in self.deferred if n not in ready]
        return ready

    def waits_for_client(self) -> bool:
        """Every call of the step ran on the server or waits for the client, and some wait
        (so the turn can go no further without the client), and it is not suspended yet."""
        return (
            not self.suspended
            and bool(self.waiting)
            and not self.deferred
            and bool(self.step_calls)
            and self.step_calls <= self.waiting | self.settled
        )

    async def end(self, outcome: Outcome | None) -> None:
        """The turn's message finished (its last chunks are recorded): count the turn (an
        error ADK reported as an event is logged; a raised one was logged by the run), end
        its recording with ``[DONE]`` and release the chat's turn lock."""
        failure = self.translator.message.failure
        if failure is not None and failure.exception is None:
            log_error_event("ADK reported an error", self.chat_id, failure.code, failure.message)
        self._count(outcome)
        self._recorder.append(DONE_FRAME)
        await self._release()

    async def abandon(self, outcome: Outcome) -> None:
        """The connection went away under the turn: count it, end its recording (no
        ``[DONE]``: the message did not finish) and release the chat's turn lock."""
        self._count(outcome)
        await self._release()

    def _count(self, outcome: Outcome | None) -> None:
        """Count the turn and end its span (``None``: from how the translator ended)."""
        translator = self.translator
        if outcome is None or (outcome == "interrupted" and self.stopped):
            outcome = (
                "error"
                if translator.message.failure is not None
                else ("stopped" if self.stopped else "completed")
            )
        METRICS.turn_ended(
            "websocket",
            outcome,
            time.perf_counter() - self.started,
            tokens=translator.message.output_tokens,
            approvals=translator.message.approvals_requested,
        )
        end_span(self.span, outcome)

    async def _release(self) -> None:
        """End the recording (not resumable: live turns are replayed by followers only)
        and release the chat's turn lock."""
        try:
            await self._recorder.end(resumable=False)
        finally:
            await self.lock.aclose()
