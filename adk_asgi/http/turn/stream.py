"""TurnStream: one POST's turn — run ADK, translate every event, write the chunks as SSE
bytes to the client and to the stream store (so a reload can resume it).

One ADK event -> one socket write. How a turn stops early, and what its stream then ends
with: ``stop.py``. A run that ends by itself ends with ``finish``; an ADK or model error
with one ``error`` chunk, never a trace; a session store failing mid-turn (the answer
could not be stored) with ``error`` and one log line, no trace.
"""

from __future__ import annotations

import asyncio
import logging
import time

from ...adk.runtime import AgentRuntime
from ...adk.sessions import failure as dependency_failure
from ...adk.sessions import session_failure
from ...observability.failures import log_error_event, log_exception, serving
from ...observability.metrics import METRICS, Outcome
from ...options import Settings
from ...pauses.signin import register_sign_ins
from ...stores import StreamRecorder, StreamStore
from ...translate.message import AssistantMessage
from ...translate.translator import EventTranslator
from ...transport.asgi import Receive, Send
from ...wire.chunks import DONE_FRAME, UIChunk, sse_frame
from ...wire.errors import NOT_SAVED_ERROR, ErrorInfo
from .continuity import CallLedger
from .plan import TurnPlan
from .sse import GoneReason, SSEChannel, sse_channel
from .stop import StopReason, TurnStop

__all__ = ("StopReason", "TurnStream")

logger = logging.getLogger("adk_asgi")


class TurnStream:
    """One POST's turn: runs ADK, writes every event's chunks to the client and the store."""

    __slots__ = (
        "_answered",
        "_channel",
        "_ledger",
        "_received",
        "_recorder",
        "_stop",
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
        translator: EventTranslator,
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
        self._stop = TurnStop(settings.limits, settings.streaming.resume_grace, chat_id)
        self._channel: SSEChannel | None = None
        self._recorder: StreamRecorder | None = None
        self._streamed = 0  # bytes of the turn's stream so far (Limits.max_turn_bytes)
        self.detached = detached
        """No client reads the turn as it runs (a server-side completion): no pings, no
        stuck-client watchdog, and its stream stays resumable after it ends."""
        # For the metrics: when the request came (perf_counter), whether the model's first
        # chunk was sent, how the turn ended.
        self._received = time.perf_counter() if received is None else received
        self._answered = False
        self._translator = translator
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
        """Stop the turn (``stop.py`` says what the stream then ends with)."""
        self._stop.stop(reason)

    def _on_gone(self, reason: GoneReason) -> None:
        recorder = self._recorder
        assert recorder is not None
        self._stop.client_gone(reason, recorder.has_followers)

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
        if not done:
            self._stop.streamed(self._streamed)
        self._recorder.append(recorded)
        await self._channel.write(blob)

    async def run(
        self,
        send: Send,
        receive: Receive,
        recorder: StreamRecorder,
        channel: SSEChannel | None = None,
    ) -> None:
        """Stream the turn; ``recorder`` (from ``store.record``, taken by the endpoint
        before the response starts, so a store outage is still a 503) records it.
        ``channel``: the response already started (a queued turn, ``queue.py``)."""
        self._recorder = recorder
        recorder.on_stop(lambda: self.stop("stopped"))
        if channel is None:
            channel = sse_channel(
                send, receive, self.settings, watched=not self.detached, on_gone=self._on_gone
            )
            await channel.open()
        else:
            channel.on_gone(self._on_gone)
            if channel.gone:
                self._on_gone("client")
        self._channel = channel
        METRICS.turn_started("sse")
        self._stop.arm()
        try:
            await self._produce()
        finally:
            await self._stop.close()
            message = self._translator.message
            METRICS.turn_ended(
                "sse",
                self.outcome,
                time.perf_counter() - self._received,
                tokens=message.output_tokens,
                approvals=message.approvals_requested,
            )
            await channel.close()
            # Resumable: nobody received its end (detached: nobody was reading at all), or
            # it waits for the page: a reload shows the pause, its answer continues it.
            resumable = self._stop.reason is None and (
                channel.gone or self.detached or bool(self._translator.message.awaiting_client)
            )
            await recorder.end(resumable=resumable)

    async def _produce(self) -> None:
        plan = self.plan
        translator = self._translator
        message = translator.message
        out: list[UIChunk] = message.start()
        if plan.new_message is None:
            # Only an approval for a browser tool: nothing for ADK until the page sends the
            # tool's result. Acknowledge on the same message.
            out.extend(message.finish())
            self.outcome = "awaiting" if message.awaiting_client else "completed"
            await self._emit(out, done=True)
            return
        out.extend(plan.stated(message))
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
            abort_signal=self._stop.signal,
        )
        finished = not_saved = False
        files = runtime.artifacts.of_chat(self.user_id, self.chat_id, self.api_path)
        try:
            with serving():
                async for event in run:
                    out.extend(translator.translate(event))
                    if translator.pauses.oauth:
                        await self._register_sign_ins()
                    # Streamed tokens (partial) never save artifacts: nothing to await.
                    saved = files.after(event, done=message.done)
                    if saved is not None:
                        out.extend(await saved)
                    if out:
                        if not self._answered:
                            self._first_chunk()
                        await self._emit(out)
            finished = True
            if (failure := message.failure) is not None:
                log_error_event(
                    "ADK reported an error", self.chat_id, failure.code, failure.message
                )
        except asyncio.CancelledError:
            if not self._absorb_stuck_cancel():
                raise
        except Exception as exc:
            out.clear()
            not_saved = session_failure(exc)
            out.extend(_failed(exc, not_saved, message, self.chat_id))
        finally:
            if not finished:
                self._stop.signal.set()
            try:
                await run.aclose()
            except Exception:
                logger.exception("Error while closing the ADK run of chat %r", self.chat_id)
            if plan.credentials:
                runtime.credentials.drop(self.user_id, self.chat_id)  # never taken: gone
        out.extend(self._stop.last_chunks(message))
        self.outcome = self._stop.outcome(
            failed=message.failure is not None or not_saved, awaiting=bool(message.awaiting_client)
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


def _failed(
    exc: Exception, not_saved: bool, message: AssistantMessage, chat_id: str
) -> list[UIChunk]:
    """The end of a turn whose run raised: one log line and the ``error`` chunk."""
    if not_saved:
        # A dependency, not a bug: one line, no trace, no text that could quote the answer
        # (a driver's error can carry the statement's parameters).
        logger.error(
            "Session store failed during the turn of chat %r; the answer was not saved: %s",
            chat_id,
            dependency_failure(exc),
        )
        METRICS.store_error("sessions", "turn")
        return message.fail(NOT_SAVED_ERROR)
    log_exception("ADK run failed", chat_id, exc)
    return message.fail(ErrorInfo(type(exc).__name__, str(exc), exc))
