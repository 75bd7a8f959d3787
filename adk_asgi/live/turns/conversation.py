"""Conversation: the turn layer of one live connection — which assistant message is open,
who listens to it, when it ends or is suspended, and how the client's answers and the
gate's notices change it. It writes through a ``TurnOutput`` (``output.py``) around a plain
callable, so it is testable without a socket; a turn's own state, recording included, is a
``LiveTurn`` (``turn.py``), which it asks to change; the user's messages go to the model
through the run's input (``run/input.py``).

A turn is one assistant message: it opens with the user's message (or with the model
speaking unprompted), and ends at the model's ``turn_complete`` unless the model called
tools (it answers their results next) or a call waits for the page. One turn at a time:
a user message during a turn waits for it to end, and every turn holds the chat's turn
lock (``StreamStore.lock``), as an HTTP turn does, so turns from other sockets or POSTs on
the same chat wait too.

Protocol B (``codec.suspends``): once every call of the step is settled on the server or
waits for the client, the request's stream ends (``finish`` + ``end``); the client's next
``send``, with the answers, continues the same message. Protocol A keeps the turn open and
sends a transient ``data-awaiting-client`` chunk at that point instead.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.adk.events import Event
from google.genai import types

from ...adk.artifacts import ChatArtifacts
from ...adk.sessions import SessionUnavailable
from ...observability.metrics import Outcome
from ...pauses.approvals import ClientAnswer, decide
from ...pauses.notices import ApprovalNotice, AskNotice, ResolvedNotice
from ...stores import StreamStore
from ...translate.live import LiveTranslator
from ...wire.chunks import UIChunk
from ...wire.errors import NOT_SAVED_ERROR, SHUTDOWN_ERROR, ErrorInfo, RequestError
from ..gate.gate import LiveGate
from ..run.run import LiveRun
from .output import TurnOutput
from .tool_streams import ToolStreams, tool_message
from .turn import LiveTurn

__all__ = ("Conversation",)


@dataclass(frozen=True, slots=True)
class _Queued:
    chat_id: str
    content: types.Content
    request_id: str | None
    state_delta: dict[str, Any]


class Conversation:
    def __init__(
        self,
        output: TurnOutput,
        *,
        run: LiveRun,
        gate: LiveGate,
        store: StreamStore,
        new_translator: Callable[[], LiveTranslator],
        artifacts: ChatArtifacts | None = None,
        api_path: str = "",
        turn_ended: Callable[[str, str], None] | None = None,
    ) -> None:
        self.output = output
        self._run = run
        # The file parts of the artifacts the agent saves (their URLs start with the
        # connection's root_path), and who hears that a turn ended (memory).
        self._artifacts = artifacts
        self._api_path = api_path
        self._turn_ended = turn_ended
        self._gate = gate
        self._store = store
        self._new_translator = new_translator
        self.turn: LiveTurn | None = None
        self.queued: deque[_Queued] = deque()
        self.draining = False
        self.idle_since: float = asyncio.get_running_loop().time()
        self._dropping = False  # the model's answer was cut on the page: skip its rest
        self.streams = ToolStreams(lambda: self.turn, self._emit, self._end)

    @property
    def busy(self) -> bool:
        return self.turn is not None or bool(self.queued)

    # -- the client -------------------------------------------------------------------

    async def user_message(
        self,
        chat_id: str,
        content: types.Content,
        request_id: str | None,
        state_delta: dict[str, Any] | None = None,
    ) -> None:
        if self.draining:
            await self.output.error(SHUTDOWN_ERROR, request_id)
            return
        problem = await self._run.claim(chat_id)
        if problem is not None:
            await self.output.error(problem, request_id)
            return
        await self.streams.release()
        if self.turn is not None:
            self.queued.append(_Queued(chat_id, content, request_id, state_delta or {}))
            return
        turn = await self._open(request_id, chat_id)
        # Started under the turn lock: a model connection that read the history in the
        # middle of another client's turn would answer that turn's message as well.
        await self._run.start(chat_id)
        await self._emit(turn.translator.message.start())
        await self._run.input.message(chat_id, content, state_delta)

    async def answers(self, answers: list[ClientAnswer], request_id: str | None) -> None:
        """The client answered waiting calls (``core/approvals`` decides; all or nothing)."""
        try:
            decisions = decide(answers, self._gate)
        except RequestError as error:
            await self.output.error(error.message, request_id)
            return
        notices = [self._gate.apply(decision) for decision in decisions]
        turn = self.turn
        if turn is not None and request_id is not None:
            # Protocol B: the request that carried the answers streams the rest.
            if not turn.suspended:
                await self.output.turn_end(turn.listeners)
            await self._emit(await turn.listen(request_id, self._store))
        for notice in notices:
            await self.resolved(notice)

    async def abort(self, request_id: str) -> None:
        turn = self.turn
        if turn is not None and turn.stop_for(request_id):
            await self.interrupt()

    async def interrupt(self) -> None:
        """Stop the answer: an activity start (manual detection) or a turn-by-turn run's abort
        (its end ends the turn, not the next one's); else the turn ends here, the rest dropped."""
        if await self.streams.release():
            return
        if self._run.manual_activity or self._run.turn_based:
            self._run.interrupt()
        elif self.turn is not None:
            self._dropping = True
            self._run.stop_turn()
            await self._end()

    # -- the run ----------------------------------------------------------------------

    async def event(self, event: Event) -> None:
        if self._dropping:
            self._dropping = not event.turn_complete
            return
        turn, alone = self.turn, self.turn is None
        if self.streams.foreign(turn, event):
            return  # a streaming tool's message from an ended turn, during another
        if turn is None:
            meaningful = (
                event.content is not None
                or event.input_transcription is not None
                or event.output_transcription is not None
                or event.error_code
            )
            if not meaningful:
                return  # a control event between turns
            # The model speaks unprompted (voice input, proactive audio): a new message.
            turn = await self._open(None)
            await self._emit(turn.translator.message.start())
        translator = turn.translator
        out = translator.translate(event)
        saved = turn.files.after(event, done=translator.message.done) if turn.files else None
        if saved is not None:
            out.extend(await saved)
        if out:
            turn.answering()
        if not event.partial:
            calls = {c.id: c.name or "" for c in event.get_function_calls() if c.id}
            if calls:
                turn.new_step(calls)
                self._gate.know_calls(calls, set(event.long_running_tool_ids or ()))
            self._gate.shown({r.id for r in event.get_function_responses() if r.id})
        await self._emit(out)
        for notice in turn.ready_notices():
            await self.approval(notice)
        if alone and tool_message(event):
            await self._end()  # a streaming tool spoke after its turn: a message of its own
        elif event.turn_complete:
            if event.interrupted or translator.message.done or not translator.model_called_tools:
                if translator.message.done or self.queued or not self.streams.hold(turn, event):
                    await self._end("interrupted" if event.interrupted else None)
            else:
                # Tool results go back to the model, which answers in this message.
                translator.end_model_turn()

    async def run_answered(self) -> None:
        """A turn-by-turn run (``run.py``) answered the message: the turn ends."""
        self._dropping = False
        await self._end()

    async def run_failed(self, error: BaseException) -> None:
        turn = self.turn
        if turn is None:
            turn = await self._open(None)
            await self._emit(turn.translator.message.start())
        if isinstance(error, SessionUnavailable):
            await self._emit(turn.translator.message.fail(NOT_SAVED_ERROR))
        else:
            await self._emit(
                turn.translator.message.fail(ErrorInfo(type(error).__name__, str(error), error))
            )
        await self._end()

    async def shutdown(self) -> None:
        if self.turn is not None:
            await self._emit(self.turn.translator.message.fail(SHUTDOWN_ERROR))
            await self._end("shutdown")

    # -- the gate ---------------------------------------------------------------------

    async def approval(self, notice: ApprovalNotice | AskNotice) -> None:
        """A call waits for the user: an approval, or a question it asks (a credential)."""
        turn = self.turn
        if turn is None:
            return
        if notice.call_id not in turn.translator.emitted_calls:
            turn.defer(notice)  # its tool call has not reached the client yet
            return
        if isinstance(notice, AskNotice):
            out = turn.translator.client_call(notice)
        else:
            out = turn.translator.approval_request(notice)
        turn.wait_for(notice.call_id)
        await self._emit(out)
        await self._maybe_suspend()

    async def client_waits(self, call_id: str) -> None:
        if self.turn is not None:
            self.turn.wait_for(call_id)
            await self._maybe_suspend()

    async def settled(self, call_id: str, *, streaming: bool = False) -> None:
        """The call ran on the server (its response may come later; a streaming tool's too)."""
        if self.turn is not None:
            self.streams.settled(call_id, streaming=streaming)
            self.turn.settle(call_id)
            await self._maybe_suspend()

    async def resolved(self, notice: ResolvedNotice) -> None:
        turn = self.turn
        if turn is None:
            return
        turn.resolve(notice.call_id)
        out = turn.translator.resolved(notice)
        await self._emit(out)

    # -- turns ------------------------------------------------------------------------

    async def _open(self, request_id: str | None, chat_id: str | None = None) -> LiveTurn:
        run, artifacts = self._run, self._artifacts
        chat_id = chat_id or run.chat_id
        assert chat_id is not None
        files = artifacts.of_chat(run.user_id, chat_id, self._api_path) if artifacts else None
        self.turn = await LiveTurn.open(
            self._store, chat_id, run.user_id, self._new_translator(), request_id, files
        )
        return self.turn

    async def _end(self, outcome: Outcome | None = None) -> None:
        turn = self.turn
        if turn is None:
            return
        await self._emit(turn.translator.message.finish())
        await turn.end(outcome)
        self._ended(turn)
        self.idle_since = asyncio.get_running_loop().time()  # idleness counts from here
        await self.output.turn_end(turn.listeners)
        self.turn = None
        if self.queued:
            queued = self.queued.popleft()
            await self.user_message(
                queued.chat_id, queued.content, queued.request_id, queued.state_delta
            )

    async def close(self, outcome: Outcome = "client_gone") -> None:
        """The connection is gone: end the open turn (``outcome``), its recording, its lock."""
        turn, self.turn = self.turn, None
        if turn is not None:
            await turn.abandon(outcome)
            self._ended(turn)

    def _ended(self, turn: LiveTurn) -> None:
        if self._turn_ended is not None:
            self._turn_ended(self._run.user_id, turn.chat_id)

    async def _maybe_suspend(self) -> None:
        turn = self.turn
        if turn is not None and turn.waits_for_client():
            await self.output.waiting(turn)

    async def _emit(self, chunks: list[UIChunk]) -> None:
        if self.turn is not None:
            await self.output.emit(self.turn, chunks)
