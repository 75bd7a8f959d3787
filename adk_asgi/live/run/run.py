"""LiveRun: the ``Runner.run_live`` side of one connection — the chat's session, the
model's input (``input.py``: the one writer of the ``LiveRequestQueue``), and the pump task
that feeds run_live's events to the connection.

The run starts with the first message (or the first audio) and is restarted with a fresh
queue after a model error, up to ``MAX_RESTARTS`` times, so the connection stays usable. A
run that never reached the model (no API key, the service down) is not restarted at once:
its failure answers what the page sent, and the page's next message or media starts it
again.

A root ``run_live`` cannot hold a conversation with (a ``Workflow``, a ``ParallelAgent``:
``models.converses_live``) is served *turn by turn*: each message the queue receives runs
as over SSE (``Runner.run_async``, the app's run config), and ``TurnDone`` ends the turn
when that run ends (a stopped turn aborts its run). Audio and activity signals have
nothing to go to there: they are dropped (logged once).

A run resumes the chat's Live API session when the session's newest event is a resumption
handle (a reload, another worker): the model continues where the last connection left off
instead of being sent the history again. A handle the service no longer knows is dropped
and the run starts over from the history.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final

from google.adk.agents import RunConfig
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.genai import types

from ...adk.runtime import AgentRuntime
from ...adk.sessions import (
    LIVE_MESSAGE_KEY,
    META_KEY,
    SessionUnavailable,
    failure,
    get_or_create_session,
    session_failure,
)
from ...observability.failures import log_exception, original, serving
from ...observability.logs import current_log_context
from ...stores import StreamStore
from ...wire.errors import CHAT_NOT_FOUND
from ..gate.gate import LiveGate
from ..gate.plugin import LiveGatePlugin
from .input import LiveInput
from .link import CURRENT_LINK, Link
from .models import converses_live
from .preload import LivePreload

__all__ = (
    "FAILED_ANSWER",
    "MAX_RESTARTS",
    "LiveModelUnavailable",
    "LiveRun",
    "RunEnded",
    "RunFailed",
    "RunItem",
    "StreamEnded",
    "ToolSent",
    "TurnDone",
    "resumable_handle",
)

logger = logging.getLogger("adk_asgi")


FAILED_ANSWER: Final = "(This answer failed with an error.)"
MAX_RESTARTS: Final = 5


class LiveModelUnavailable(RuntimeError):
    """The run could not connect to its live model (``describe_error`` sees this code; the
    cause is the connection's own error)."""


@dataclass(frozen=True, slots=True)
class RunFailed:
    """The run raised; it is restarted (a fresh queue) unless it failed too often."""

    error: BaseException


@dataclass(frozen=True, slots=True)
class RunEnded:
    """The run is over for good."""


@dataclass(frozen=True, slots=True)
class TurnDone:
    """A turn-by-turn run answered the message: the turn ends."""


@dataclass(frozen=True, slots=True)
class ToolSent:
    """Function responses ADK sent the model itself (``partial``: a streaming tool's
    yielded value)."""

    responses: list[types.FunctionResponse]
    partial: bool


@dataclass(frozen=True, slots=True)
class StreamEnded:
    """A streaming tool's call is over (its generator ended, failed or was stopped)."""

    call_id: str


RunItem = Event | RunFailed | RunEnded | TurnDone | ToolSent | StreamEnded


class LiveRun:
    """One connection's live run (not started until ``start``)."""

    def __init__(
        self,
        runtime: AgentRuntime,
        plugin: LiveGatePlugin,
        gate: LiveGate,
        store: StreamStore,
        *,
        user_id: str,
        runner: Runner,
        config: RunConfig,
        deliver: Callable[[RunItem], Coroutine[Any, Any, None]],
    ) -> None:
        self._runtime = runtime
        self._runner = runner
        self._plugin = plugin
        self._gate = gate
        self._store = store
        self._user_id = user_id
        self._config = config
        self._deliver = deliver
        self.chat_id: str | None = None
        self.input = LiveInput(
            user_id,
            manual_activity=self.manual_activity,
            preload=LivePreload(runner),
            tool_results=self._tool_sent,
        )
        self._sending: set[asyncio.Task[None]] = set()
        """What the page sends the model (audio, images, messages): the queue's writer."""
        self._pump: asyncio.Task[None] | None = None
        self._closed = False
        self.turn_based = not converses_live(runner.agent)
        """Each message runs as over SSE (``run_async``): ``run_live`` cannot hold a
        conversation with the root."""
        self._turn_abort: asyncio.Event | None = None  # the turn-by-turn run's

    def _tool_sent(self, responses: list[types.FunctionResponse], partial: bool) -> None:
        # Called synchronously by ADK's tool task: delivered in order, by tasks kept alive.
        self.later(ToolSent(responses, partial))

    def later(self, item: RunItem) -> None:
        """Deliver ``item`` from synchronous code (in order with other such items)."""
        task = asyncio.get_running_loop().create_task(self._deliver(item))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    @property
    def user_id(self) -> str:
        return self._user_id

    @property
    def started(self) -> bool:
        return self._pump is not None

    @property
    def manual_activity(self) -> bool:
        """The page says when the user speaks (automatic activity detection is off)."""
        config = self._config.realtime_input_config
        detection = config.automatic_activity_detection if config else None
        return bool(detection and detection.disabled)

    def stop_turn(self) -> None:
        """The page stopped the turn: a turn-by-turn run is aborted (a live run's model
        answer is dropped by the turn layer)."""
        if self._turn_abort is not None:
            self._turn_abort.set()

    def interrupt(self) -> None:
        """Stop the model's answer (manual activity detection: an activity start does; a
        turn-by-turn run is aborted)."""
        if self.turn_based:
            self.stop_turn()
            return
        self.input.interrupt()

    async def claim(self, chat_id: str) -> str | None:
        """Why this connection cannot run ``chat_id`` (another chat's, or not the user's),
        else None."""
        if self._pump is not None:
            return None if chat_id == self.chat_id else "This connection serves another chat."
        if not await self._store.claim(chat_id, self._user_id):
            return CHAT_NOT_FOUND
        return None

    async def start(self, chat_id: str) -> str | None:
        """Start the run of ``chat_id`` (its model connection reads the session's history
        now: start it under the chat's turn lock); the reason it cannot, else None."""
        problem = await self.claim(chat_id)
        if problem is not None or self._pump is not None:
            return problem
        runtime = self._runtime
        try:
            await get_or_create_session(
                runtime.session_service, runtime.app_name, self._user_id, chat_id
            )
        except Exception as exc:
            raise SessionUnavailable(failure(exc)) from exc
        self.chat_id = chat_id
        context = current_log_context()
        if context is not None:
            context.chat_id = chat_id  # the connection's log lines name the chat from now on
        self._pump = asyncio.create_task(self._run(), name="adk-asgi-live-pump")
        return None

    async def close(self) -> None:
        """Stop the run: no gated call runs, ADK closes the model connection."""
        self._closed = True
        self._gate.close()
        self.input.close()
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
        self._plugin.detach(self.input.queue)

    async def _run(self) -> None:
        restarts = 0
        resume = True
        while True:
            queue = self.input.queue
            self._plugin.attach(queue, self._gate)
            # The run's model link: ADK's tasks inherit it (``models.LiveModel.connect``).
            link = Link(queue=queue)
            CURRENT_LINK.set(link)
            config = self._config
            try:
                config = await self._run_config(resume)
                await self._pump_events(queue, config)
                await self._deliver(RunEnded())
                return
            except Exception as raised:
                exc = original(raised)
                self._plugin.detach(queue)
                if config is not self._config and link.connections == 0 and not self._closed:
                    # The service refused the stored handle (expired, unknown): start over
                    # from the session's history, and tell nobody. Nothing read the queue
                    # (no connection was made): what the page sent is still in it.
                    logger.info(
                        "Live session of chat %r could not be resumed (%s); starting a new one",
                        self.chat_id,
                        type(exc).__name__,
                    )
                    resume = False
                    continue
                if session_failure(exc):
                    # The session database failed under the run: the connection ends
                    # (close 1013, one log line there); a restart would fail the same way.
                    await self._deliver(RunFailed(SessionUnavailable(failure(exc))))
                    return
                log_exception("Live run failed", self.chat_id, exc)
                if link.connections == 0 and not self._closed:
                    # It never reached the model (no key, the service down): a restart
                    # now would fail the same way, once more per turn. What the page sent
                    # is answered with this error; the next message tries again.
                    unreachable = LiveModelUnavailable(f"{type(exc).__name__}: {exc}")
                    unreachable.__cause__ = exc
                    await self._deliver(RunFailed(unreachable))
                    self.input.renew()
                    await self.input.sent()
                    continue
                await self._deliver(RunFailed(exc))
                restarts += 1
                if restarts > MAX_RESTARTS or self._closed:
                    await self._deliver(RunEnded())
                    return
                # A fresh queue and run: the connection stays usable after a model error.
                self.input.renew()
                assert self.chat_id is not None
                await close_failed_exchange(self._runtime, self._user_id, self.chat_id)

    async def _pump_events(self, queue: LiveRequestQueue, config: RunConfig) -> None:
        if self.turn_based:
            await self._pump_turns(queue)
            return
        run = self._runner.run_live(
            user_id=self._user_id,
            session_id=self.chat_id,
            live_request_queue=queue,
            run_config=config,
        )
        with serving():
            async with contextlib.aclosing(run) as events:
                async for event in events:
                    await self._deliver(event)

    async def _pump_turns(self, queue: LiveRequestQueue) -> None:
        """Turn by turn: every message runs the root as over SSE, then the turn ends."""
        runtime = self._runtime
        dropped = False
        while True:
            request = await queue.get()
            if request.close:
                return
            if request.content is None:
                if not dropped:
                    dropped = True
                    logger.warning(
                        "Chat %r: %s runs turn by turn (not on a live model); "
                        "its audio and activity signals are dropped",
                        self.chat_id,
                        type(self._runner.agent).__name__,
                    )
                continue
            abort = self._turn_abort = asyncio.Event()
            # Tagged with the page's id of the turn, as the plugin tags a live run's events.
            tags: dict[str, Any] = {"live": True}
            if (message_id := self._plugin.turn_of(self._gate)) is not None:
                tags[LIVE_MESSAGE_KEY] = message_id
            config = runtime.run_config_for(tags)
            run = self._runner.run_async(
                user_id=self._user_id,
                session_id=self.chat_id or "",
                new_message=request.content,
                state_delta=request.state_delta,
                run_config=config,
                abort_signal=abort,
            )
            try:
                with serving():
                    async with contextlib.aclosing(run) as events:
                        async for event in events:
                            await self._deliver(event)
            except Exception as raised:  # this turn failed; the next message runs anew
                exc = original(raised)
                log_exception("Live run failed", self.chat_id, exc)
                await self._deliver(RunFailed(exc))
                continue
            finally:
                self._turn_abort = None
            await self._deliver(TurnDone())

    async def _run_config(self, resume: bool) -> RunConfig:
        """The run's config: with the chat's resumption handle when it can resume."""
        config = self._config
        if not resume or config.session_resumption is None:
            return config
        runtime = self._runtime
        assert self.chat_id is not None
        session = await runtime.session_service.get_session(
            app_name=runtime.app_name, user_id=self._user_id, session_id=self.chat_id
        )
        handle = resumable_handle(session)
        if handle is None:
            return config
        resumption = config.session_resumption.model_copy(update={"handle": handle})
        return config.model_copy(update={"session_resumption": resumption})


async def close_failed_exchange(runtime: AgentRuntime, user_id: str, chat_id: str) -> None:
    """Record that the last answer failed, so the restarted run's history does not end on
    the user's message (the model would answer it again, and fail again)."""
    session = await runtime.session_service.get_session(
        app_name=runtime.app_name, user_id=user_id, session_id=chat_id
    )
    if session is None or not session.events or session.events[-1].author != "user":
        return
    await runtime.session_service.append_event(
        session,
        Event(
            invocation_id=session.events[-1].invocation_id,
            author=runtime.agent_name,
            content=types.Content(role="model", parts=[types.Part(text=FAILED_ANSWER)]),
            custom_metadata={META_KEY: {"liveError": True}},
        ),
    )


def resumable_handle(session: Session | None) -> str | None:
    """The Live API handle the chat's session ends with, if any. ADK stores every
    resumption update as a session event; a handle is only good while nothing was said
    after it (an HTTP turn, a turn cut short): the service's session would lack that."""
    for event in reversed(session.events if session is not None else ()):
        update = event.live_session_resumption_update
        if update is not None:
            if update.new_handle and update.resumable is not False:
                return update.new_handle
            continue
        if (
            event.content is not None
            or event.input_transcription is not None
            or event.output_transcription is not None
        ):
            return None
    return None
