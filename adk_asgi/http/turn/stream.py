"""TurnStream: one POST's turn — run ADK, translate every event, write the chunks as SSE
bytes to the client and to the stream store (so a reload can resume it).

One ADK event -> one socket write. How a turn stops early, and what the stream then ends
with:

=================  =========================================  ======================
cause              what happens                               last chunks
=================  =========================================  ======================
client gone        ADK run aborted at once (``abort_signal``); (nobody listens)
                   with ``resume_grace`` > 0 it keeps running
                   detached until it ends, or until nobody
                   resumed it within the grace
stuck client       took nothing for ``send_timeout``, or      (nobody listens)
                   over ``max_queued_bytes`` waiting: reset,
                   run aborted (``transport/outbox.py``)
``DELETE`` stream  the owner asked to stop (any worker)       ``abort``, ``[DONE]``
turn ceiling       ran ``Limits.max_turn_seconds`` or streamed  ``error``, ``[DONE]``
                   ``max_turn_bytes``: run aborted
server shutdown    ``drain``: runs get ``shutdown_grace`` to  ``error``, ``[DONE]``
                   finish, then are aborted
ADK/model error    one ``error`` chunk, never a trace         ``error``, ``[DONE]``
session store      the answer could not be stored (its        ``error``, ``[DONE]``
fails mid-turn     database failed under ADK): one log line,
                   no trace
=================  =========================================  ======================
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Literal

from ...adk.runtime import AgentRuntime
from ...adk.sessions import failure as dependency_failure
from ...adk.sessions import session_failure
from ...observability.failures import log_error_event, log_exception, serving
from ...observability.metrics import METRICS, Outcome
from ...options import Settings
from ...pauses.signin import register_sign_ins
from ...stores import StreamRecorder, StreamStore
from ...translate.translator import EventTranslator
from ...transport.asgi import Receive, Send
from ...wire.chunks import DONE_FRAME, ToolOutputAvailable, ToolOutputDenied, UIChunk, sse_frame
from ...wire.errors import (
    NOT_SAVED_ERROR,
    SHUTDOWN_ERROR,
    TURN_TOO_LARGE_ERROR,
    TURN_TOO_LONG_ERROR,
    ErrorInfo,
)
from .continuity import CallLedger
from .plan import TurnPlan
from .sse import GoneReason, SSEChannel

__all__ = ("StopReason", "TurnStream")

logger = logging.getLogger("adk_asgi")

StopReason = Literal["client", "stuck", "stopped", "shutdown", "too_long", "too_large"]
# What the client reads when the turn stops at a ceiling or for the server's shutdown.
_STOP_TEXTS: dict[StopReason, str] = {
    "shutdown": SHUTDOWN_ERROR,
    "too_long": TURN_TOO_LONG_ERROR,
    "too_large": TURN_TOO_LARGE_ERROR,
}


class TurnStream:
    """One POST's turn: runs ADK, writes every event's chunks to the client and the store."""

    __slots__ = (
        "_abort",
        "_answered",
        "_ceiling",
        "_channel",
        "_grace_task",
        "_ledger",
        "_reason",
        "_received",
        "_recorder",
        "_streamed",
        "_translator",
        "api_path",
        "chat_id",
        "detached",
        "outcome",
        "plan",
        "runtime",
        "settings",
        "store",
        "user_id",
    )

    def __init__(
        self,
        runtime: AgentRuntime,
        store: StreamStore,
        settings: Settings,
        plan: TurnPlan,
        user_id: str,
        chat_id: str,
        *,
        received: float | None = None,
        detached: bool = False,
        api_path: str = "",
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.settings = settings
        self.plan = plan
        self.user_id = user_id
        self.chat_id = chat_id
        self.api_path = api_path
        """The path the app is mounted at (``root_path``): artifact URLs start with it."""
        self._abort = asyncio.Event()
        self._reason: StopReason | None = None
        self._channel: SSEChannel | None = None
        self._recorder: StreamRecorder | None = None
        self._grace_task: asyncio.Task[None] | None = None
        self._ceiling: asyncio.TimerHandle | None = None
        self._streamed = 0  # bytes of the turn's stream so far (Limits.max_turn_bytes)
        self.detached = detached
        """No client reads the turn as it runs (a server-side completion): no pings, no
        stuck-client watchdog, and its stream stays resumable after it ends."""
        # For the metrics: when the request came (perf_counter), whether the model's first
        # chunk was sent, how the turn ended.
        self._received = time.perf_counter() if received is None else received
        self._answered = False
        self._translator = self._new_translator()
        self._ledger = (
            CallLedger(
                previous=plan.previous,
                answered={
                    k: v
                    for k, v in plan.answered_outputs.items()
                    if k not in {c.call_id for c in plan.credentials}
                },
                calls=plan.calls,
                browser=runtime.tools.browser,
                redirect_uri=plan.oauth_redirect,
            )
            if plan.continues or detached
            else None
        )
        self.outcome: Outcome = "error"

    def stop(self, reason: StopReason) -> None:
        if self._reason is None:
            self._reason = reason
            if reason in ("too_long", "too_large"):
                limits = self.settings.limits
                logger.warning(
                    "Stopped the turn of chat %r at its ceiling: %s",
                    self.chat_id,
                    f"{limits.max_turn_seconds:g} s (Limits.max_turn_seconds)"
                    if reason == "too_long"
                    else f"{limits.max_turn_bytes} bytes (Limits.max_turn_bytes)",
                )
        self._abort.set()

    def _on_gone(self, reason: GoneReason) -> None:
        grace = self.settings.streaming.resume_grace
        if reason == "client" and grace > 0:
            # Keep running detached: a reload may resume this stream.
            self._grace_task = asyncio.create_task(
                self._detached(grace), name="adk-asgi-resume-grace"
            )
        else:
            self.stop(reason)

    async def _detached(self, grace: float) -> None:
        assert self._recorder is not None
        while True:
            await asyncio.sleep(grace)
            if not await self._recorder.has_followers():
                self.stop("client")
                return

    async def _emit(self, chunks: list[UIChunk], done: bool = False) -> None:
        # One write per ADK event, not per chunk.
        blob = (
            sse_frame(chunks[0]) if len(chunks) == 1 else b"".join([sse_frame(c) for c in chunks])
        )
        # A continuation's recording replays as a whole message (http/turn/continuity.py).
        recorded = blob if self._ledger is None else self._ledger.record(chunks, blob)
        if done:
            blob += DONE_FRAME
            recorded += DONE_FRAME
        chunks.clear()
        assert self._recorder is not None and self._channel is not None
        self._streamed += len(blob)
        limit = self.settings.limits.max_turn_bytes
        if limit is not None and self._streamed > limit and not done:
            self.stop("too_large")
        self._recorder.append(recorded)
        await self._channel.write(blob)

    async def run(self, send: Send, receive: Receive, recorder: StreamRecorder) -> None:
        """Stream the turn; ``recorder`` (from ``store.record``, taken by the endpoint
        before the response starts, so a store outage is still a 503) records it."""
        streaming = self.settings.streaming
        self._recorder = recorder
        recorder.on_stop(lambda: self.stop("stopped"))
        watched = not self.detached
        self._channel = channel = SSEChannel(
            send,
            receive,
            ping_interval=streaming.ping_interval if watched else None,
            send_timeout=streaming.send_timeout if watched else None,
            on_gone=self._on_gone,
            max_queued=self.settings.limits.max_queued_bytes,
        )
        await channel.open()
        METRICS.turn_started("sse")
        ceiling = self.settings.limits.max_turn_seconds
        if ceiling is not None:
            self._ceiling = asyncio.get_running_loop().call_later(ceiling, self.stop, "too_long")
        try:
            await self._produce()
        finally:
            if self._ceiling is not None:
                self._ceiling.cancel()
            translator = self._translator
            METRICS.turn_ended(
                "sse",
                self.outcome,
                time.perf_counter() - self._received,
                tokens=translator.output_tokens,
                approvals=translator.approvals_requested,
            )
            if self._grace_task is not None:
                self._grace_task.cancel()
                await asyncio.gather(self._grace_task, return_exceptions=True)
            await channel.close()
            # Resumable: nobody received its end (detached: nobody was reading at all), or
            # it waits for the page: a reload shows the pause, its answer continues it.
            resumable = self._reason is None and (
                channel.gone or self.detached or bool(self._translator.awaiting_client)
            )
            await recorder.end(resumable=resumable)

    def _new_translator(self) -> EventTranslator:
        plan = self.plan
        return EventTranslator(
            plan.message_id,
            confirmation_style=self.settings.pauses.confirmation_style,
            denied_call_ids=plan.denied_call_ids,
            tools=self.runtime.tools,
            awaiting=plan.still_pending,
            resumed=plan.resumed_calls,
            describe_error=self.settings.describe_error,
            surface=self.runtime.surface,
            steps_before=plan.steps_before,
            oauth_redirect=plan.oauth_redirect,
        )

    async def _produce(self) -> None:
        plan = self.plan
        translator = self._translator
        out: list[UIChunk] = translator.start()
        if plan.new_message is None:
            # Only an approval for a browser tool: nothing for ADK until the page sends the
            # tool's result. Acknowledge on the same message.
            out.extend(translator.finish())
            self.outcome = "awaiting" if translator.awaiting_client else "completed"
            await self._emit(out, done=True)
            return
        out.extend(ToolOutputDenied(tool_call_id=call_id) for call_id in plan.denied_client_calls)
        # A credential the page gave: its copy of the secret is replaced by this output.
        out.extend(
            ToolOutputAvailable(tool_call_id=c.call_id, output=plan.answered_outputs.get(c.call_id))
            for c in plan.credentials
        )
        for call_id, name, args in plan.restated:
            translator.restate_call(call_id, name, args, out)
        for call_id, output in plan.completed.items():
            translator.tools.outcome(call_id, output, out)
        await self._emit(out)
        runtime = self.runtime
        for handed in plan.credentials:  # for the bridge plugin, when the run starts
            runtime.credentials.put(
                self.user_id,
                self.chat_id,
                handed.call_id,
                handed.args,
                handed.secret,
                handed.redirect_uri,
            )
        run = runtime.runner.run_async(
            user_id=self.user_id,
            session_id=self.chat_id,
            new_message=plan.new_message,
            state_delta=plan.state_delta or None,
            run_config=runtime.run_config_for(plan.run_metadata()),
            abort_signal=self._abort,
        )
        finished = not_saved = False
        files = runtime.artifacts.of_chat(self.user_id, self.chat_id, self.api_path)
        try:
            with serving():
                async for event in run:
                    translator.translate(event, out)
                    if translator.pauses.oauth:
                        await self._register_sign_ins()
                    # Streamed tokens (partial) never save artifacts: nothing to await.
                    saved = files.after(event, done=translator.done)
                    if saved is not None:
                        out.extend(await saved)
                    if out:
                        if not self._answered:
                            self._first_chunk()
                        await self._emit(out)
            finished = True
            if (failure := translator.failure) is not None:
                log_error_event(
                    "ADK reported an error", self.chat_id, failure.code, failure.message
                )
        except asyncio.CancelledError:
            if not self._absorb_stuck_cancel():
                raise
        except Exception as exc:
            out.clear()
            if session_failure(exc):
                # A dependency, not a bug: one line, no trace, no text that could quote
                # the answer (a driver's error can carry the statement's parameters).
                logger.error(
                    "Session store failed during the turn of chat %r; the answer was not saved: %s",
                    self.chat_id,
                    dependency_failure(exc),
                )
                METRICS.store_error("sessions", "turn")
                not_saved = True
                out.extend(translator.fail(NOT_SAVED_ERROR))
            else:
                log_exception("ADK run failed", self.chat_id, exc)
                out.extend(translator.fail(ErrorInfo(type(exc).__name__, str(exc), exc)))
        finally:
            if not finished:
                self._abort.set()
            try:
                await run.aclose()
            except Exception:
                logger.exception("Error while closing the ADK run of chat %r", self.chat_id)
            if plan.credentials:
                runtime.credentials.drop(self.user_id, self.chat_id)  # never taken: gone
        reason = self._reason
        if reason in _STOP_TEXTS:
            out.extend(translator.fail(_STOP_TEXTS[reason]))
        elif reason is not None:
            out.extend(translator.abort())
        else:
            out.extend(translator.finish())
        self.outcome = _outcome(
            reason, translator.failure is not None or not_saved, bool(translator.awaiting_client)
        )
        await self._emit(out, done=True)

    async def _register_sign_ins(self) -> None:
        """Keep the OAuth2 sign-ins the message asks for, so their callback finds them."""
        pauses = self._translator.pauses
        requests, pauses.oauth = pauses.oauth, []
        redirect = self.plan.oauth_redirect
        if redirect is None:
            return
        await register_sign_ins(
            self.store,
            requests,
            chat_id=self.chat_id,
            user_id=self.user_id,
            message_id=self.plan.message_id,
            redirect_uri=redirect,
            ttl=self.settings.pauses.sign_in_timeout,
        )

    def _first_chunk(self) -> None:
        self._answered = True
        METRICS.first_token("sse", time.perf_counter() - self._received)

    def _absorb_stuck_cancel(self) -> bool:
        """The stuck-send watchdog's cancel landed outside a send: the client is gone."""
        channel = self._channel
        task = asyncio.current_task()
        if not (channel is not None and channel.stuck and task is not None and task.cancelling()):
            return False
        task.uncancel()
        self.stop("stuck")
        return True


_STOPPED: dict[StopReason, Outcome] = {
    "client": "client_gone",
    "stuck": "stuck_client",
    "stopped": "stopped",
    "shutdown": "shutdown",
    "too_long": "limit",
    "too_large": "limit",
}


def _outcome(reason: StopReason | None, failed: bool, awaiting: bool) -> Outcome:
    if reason is not None:
        return _STOPPED[reason]
    if failed:
        return "error"
    return "awaiting" if awaiting else "completed"
