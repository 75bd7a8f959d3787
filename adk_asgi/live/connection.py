"""Connection: one WebSocket carries a whole live conversation (``Runner.run_live``).

Per connection three tasks run and end together:

    upstream    socket frames -> commands -> inbox / the run's input (``upstream.py``)
    downstream  inbox -> Conversation (turns, gate notices) -> frames -> socket
    watchdog    stuck sends and idleness

and the run's pump (``run.py``) feeds run_live's events into the same inbox (``inbox.py``:
everything that changes a turn goes through it, in the order it happened; a streamed token
of the open turn may be handled by the pump itself, in that order).

Who owns what: the connection holds the protocol its first frame picks
(``protocol/choice.py``: the upstream picks, the turn output reads); the run's input
(``run/input.py``) is the only writer of the ``LiveRequestQueue``; each turn
(``turns/turn.py``) owns its recording from open to end.

When any task ends (client gone, idle timeout, send timeout, run ended) the others are
cancelled, every pending gate wait is cancelled (so no gated tool runs), the
LiveRequestQueue is closed (ADK closes the model connection) and the socket is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from google.adk.agents import RunConfig
from google.adk.events import Event
from google.adk.runners import Runner

from ..adk.outages import Outage, report_outage
from ..adk.runtime import AgentRuntime
from ..adk.sessions import SessionUnavailable
from ..options import Settings
from ..pauses.credentials import CredentialRequest
from ..pauses.notices import (
    ApprovalNotice,
    AskNotice,
    GateNotice,
    ResolvedNotice,
    SettledNotice,
    WaitNotice,
)
from ..pauses.signin import LIVE_SIGN_INS, register_sign_ins
from ..stores import StoreUnavailable, StreamStore
from ..translate.factory import Translators
from ..translate.live import LiveTranslator
from ..transport.asgi import ClientGone, Receive, Send
from .gate.gate import LiveGate
from .gate.plugin import LiveGatePlugin
from .inbox import Inbox
from .protocol.choice import ProtocolChoice
from .protocol.commands import Abort, Interrupt, Resume
from .protocol.socket import (
    CLOSE_ERROR,
    CLOSE_RESTART,
    CLOSE_TRY_AGAIN,
    UNAVAILABLE_REASON,
    LiveSocket,
)
from .resume import Followers
from .run.run import LiveRun, RunEnded, RunFailed, RunItem, StreamEnded, ToolSent, TurnDone
from .turns.conversation import Conversation
from .turns.output import TurnOutput
from .upstream import Answers, Shutdown, StartRun, Upstream, UserMessage

__all__ = ("Connection", "LiveServices")

logger = logging.getLogger("adk_asgi")


@dataclass(frozen=True, slots=True)
class LiveServices:
    """What the live endpoint hands each of its connections: the app's runtime and
    settings, the stream store, and the runner (with its gate plugin) of live runs."""

    runtime: AgentRuntime
    settings: Settings
    store: StreamStore
    runner: Runner
    plugin: LiveGatePlugin
    translators: Translators


class Connection:
    def __init__(
        self,
        services: LiveServices,
        receive: Receive,
        send: Send,
        *,
        user_id: str,
        audio: bool,
        run_config: RunConfig,
        chat_id: str | None,
        api_path: str = "",
        oauth_redirect: str | None = None,
    ) -> None:
        settings = services.settings
        options = settings.live
        self.services = services
        self.user_id = user_id
        self.chat_id = chat_id
        self.api_path = api_path
        self.audio = audio
        self.limits = settings.limits
        self.store = services.store
        self.socket = LiveSocket(
            receive,
            send,
            settings.limits,
            send_timeout=settings.streaming.send_timeout,
            idle_timeout=options.idle_timeout,
        )
        self.protocol = ProtocolChoice()  # A until the first frame says B
        runtime = services.runtime
        self.gate = LiveGate(
            self._deliver,
            timeout=options.wait_timeout,
            max_waiting=self.limits.max_pending_approvals,
            approval_tools=runtime.approval_tools,
            sign_in=self._sign_in,
            redirect_uri=oauth_redirect,
        )
        self.run = LiveRun(
            runtime,
            services.plugin,
            self.gate,
            self.store,
            user_id=user_id,
            runner=services.runner,
            config=run_config,
            deliver=self._deliver,
        )
        self.conversation = self._conversation()
        self.inbox = Inbox(
            options.inbox_size, self.conversation.event, lambda: self.conversation.turn is not None
        )
        self.upstream = Upstream(
            self.socket,
            self.inbox.queue,
            self.run,
            self.protocol,
            limits=self.limits,
            body_fields=runtime.body_fields,
            chat_id=chat_id,
        )
        self.followers = Followers(self.socket, self.store, user_id)

    def _conversation(self) -> Conversation:
        runtime = self.services.runtime
        translators = self.services.translators

        def new_translator() -> LiveTranslator:
            message_id = f"msg-{uuid.uuid4().hex[:20]}"
            # The turn's events carry the id the page gets: the history names it so too.
            self.services.plugin.name_turn(self.gate, message_id)
            return translators.live(
                message_id, audio_out=self.audio, turn_based=self.run.turn_based
            )

        return Conversation(
            TurnOutput(self.protocol, self.socket.send),
            run=self.run,
            gate=self.gate,
            store=self.store,
            new_translator=new_translator,
            artifacts=runtime.artifacts,
            api_path=self.api_path,
            turn_ended=runtime.turn_ended,
        )

    # -- lifecycle --------------------------------------------------------------

    async def serve(self) -> None:
        tasks = [
            asyncio.create_task(self.upstream.serve(), name="adk-asgi-live-upstream"),
            asyncio.create_task(self._downstream(), name="adk-asgi-live-downstream"),
            asyncio.create_task(
                self.socket.watchdog(self._idle_since), name="adk-asgi-live-watchdog"
            ),
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if (
                    task.cancelled()
                    or (exc := task.exception()) is None
                    or isinstance(exc, ClientGone)
                ):
                    continue
                if isinstance(exc, (StoreUnavailable, SessionUnavailable)):
                    # A dependency is down: one line, and the client may try again.
                    report_outage(Outage.of(exc, "live", self.run.chat_id or self.chat_id))
                    self.socket.close_with(CLOSE_TRY_AGAIN, UNAVAILABLE_REASON)
                else:
                    logger.error("Live connection failed", exc_info=exc)
                    self.socket.close_code = CLOSE_ERROR
        finally:
            await self._teardown(tasks)

    async def _teardown(self, tasks: list[asyncio.Task[None]]) -> None:
        self.socket.closed = True
        # Cancel the waits first (in run.close): a gated call whose client is gone must not
        # run.
        tasks.extend(self.followers.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(self.run.close(), *tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.conversation.close(
                "error" if self.socket.close_code == CLOSE_ERROR else "client_gone"
            )
        await self.socket.close()

    def _idle_since(self) -> float | None:
        conversation = self.conversation
        return None if conversation.busy or self.gate.busy else conversation.idle_since

    async def drain(self, grace: float) -> None:
        """Server shutdown: no new turns; the running one gets ``grace`` seconds."""
        self.conversation.draining = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        # Polling is fine here: it runs once per connection, at shutdown only.
        while self.conversation.busy and not self.socket.closed and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        if not self.socket.closed:
            with contextlib.suppress(asyncio.QueueFull):
                self.inbox.queue.put_nowait(Shutdown())

    async def _sign_in(self, request: CredentialRequest) -> asyncio.Future[str] | None:
        """Wait for an OAuth2 sign-in's callback in this process (``pauses/signin.py``)."""
        chat_id, redirect = self.run.chat_id, self.gate.redirect_uri
        if chat_id is None or redirect is None:
            return None
        await register_sign_ins(
            self.store,
            [request],
            chat_id=chat_id,
            user_id=self.user_id,
            message_id="",
            redirect_uri=redirect,
            ttl=self.services.settings.pauses.sign_in_timeout,
            transport="live",
        )
        future = LIVE_SIGN_INS.wait(chat_id, request.call_id)
        future.add_done_callback(lambda _: LIVE_SIGN_INS.forget(chat_id, request.call_id))
        return future

    def _watch(self, call_id: str, running: asyncio.Future[Any]) -> None:
        """A streaming tool's task: its end goes through the inbox."""
        running.add_done_callback(lambda _: self.run.later(StreamEnded(call_id)))

    async def _deliver(self, item: RunItem | GateNotice) -> None:
        if not self.socket.closed:
            await self.inbox.deliver(item)

    # -- downstream: inbox -> conversation -> socket -------------------------------------

    async def _downstream(self) -> None:
        conversation = self.conversation
        while True:
            match await self.inbox.next():
                case Event() as event:
                    await conversation.event(event)
                case ApprovalNotice() | AskNotice() as notice:
                    await conversation.approval(notice)
                case WaitNotice(call_id=call_id):
                    await conversation.client_waits(call_id)
                case SettledNotice(call_id=call_id, running=running):
                    await conversation.settled(call_id, streaming=running is not None)
                    if isinstance(running, asyncio.Future):
                        self._watch(call_id, running)
                case ToolSent(responses, partial):
                    await conversation.streams.sent(responses, partial)
                case StreamEnded(call_id):
                    await conversation.streams.ended(call_id)
                case ResolvedNotice() as notice:
                    await conversation.resolved(notice)
                case UserMessage(chat_id, content, request_id, state_delta):
                    await conversation.user_message(chat_id, content, request_id, state_delta)
                case Answers(answers, request_id):
                    await conversation.answers(answers, request_id)
                case StartRun(chat_id):
                    await self.run.start(chat_id)
                case Resume(request_id, chat_id):
                    await self.followers.resume(request_id, chat_id)
                case Abort(request_id):
                    await conversation.abort(request_id)
                case Interrupt() if self.run.manual_activity:
                    await conversation.streams.release()  # the model was interrupted
                case Interrupt():
                    await conversation.interrupt()
                case RunFailed(error):
                    await conversation.run_failed(error)
                    if isinstance(error, SessionUnavailable):
                        raise error  # serve: one log line, close 1013
                case TurnDone():
                    await conversation.run_answered()
                case RunEnded():
                    self.socket.close_code = CLOSE_ERROR
                    return
                case Shutdown():
                    await conversation.shutdown()
                    self.socket.close_with(CLOSE_RESTART, "The server is restarting.")
                    return
