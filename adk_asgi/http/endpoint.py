"""ChatEndpoint: the HTTP side of the app — ``POST`` a chat request and get the assistant
message back as SSE; ``GET``/``DELETE {chatId}/stream`` resume or stop a chat's stream.

request bytes -> ChatRequest -> TurnPlan (with the session) -> TurnStream (Runner.run_async
-> ADK events -> EventTranslator -> UI chunks -> SSE bytes -> socket + stream store).

A turn holds the chat's turn lock from before the session is read until its stream ends,
so two tabs on one chat take turns instead of interleaving.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Final

from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from ..core.asgi import ClientGone, Receive, Scope, Send, read_body, send_error, send_json
from ..core.auth import Authenticate, AuthError, anonymous, resolve_user
from ..core.errors import RequestError, chat_not_found
from ..core.limits import Limits
from ..core.request import ChatRequest, UIMessage, decode_chat_request, message_text
from ..core.runtime import AgentRuntime
from ..core.sessions import META_KEY
from ..core.translator import ConfirmationStyle, DescribeError, describe_error_generic
from ..observability.logs import log_context
from ..observability.metrics import METRICS
from ..observability.tracing import TURN, current, end_span, start_span
from ..stores import StreamStore
from .sse import SSEChannel
from .stream import StreamOptions, TurnStream
from .turn import TurnPlan, plan_turn

__all__ = ("SEED_MAX_CHARS", "SEED_MAX_MESSAGES", "ChatEndpoint", "ChatOptions")

logger = logging.getLogger("adk_asgi")

SEED_MAX_MESSAGES: Final = 200
SEED_MAX_CHARS: Final = 200_000


@dataclass(frozen=True, slots=True)
class ChatOptions:
    limits: Limits = field(default_factory=Limits)
    ping_interval: float | None = 15.0
    send_timeout: float | None = 60.0
    confirmation_style: ConfirmationStyle = "native"
    authenticate: Authenticate = anonymous
    resume_grace: float = 0.0
    """Seconds a turn keeps running after its client disconnected, so a reload can resume
    it (``GET {api}/{chatId}/stream``); 0 aborts the run at once."""
    describe_error: DescribeError = describe_error_generic


class ChatEndpoint:
    """The HTTP side of the app: one instance serves every chat."""

    def __init__(self, runtime: AgentRuntime, options: ChatOptions, store: StreamStore) -> None:
        self.runtime = runtime
        self.options = options
        self.store = store
        self.turns: set[TurnStream] = set()
        self.draining = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._stream_options = StreamOptions(
            ping_interval=options.ping_interval, send_timeout=options.send_timeout,
            resume_grace=options.resume_grace, confirmation_style=options.confirmation_style,
            describe_error=options.describe_error)

    async def authorize(self, scope: Scope, send: Send) -> str | None:
        """The user of this request, or None after answering 401/403."""
        try:
            return await resolve_user(self.options.authenticate, scope)
        except AuthError as error:
            await send_error(send, RequestError(
                error.status, "unauthorized" if error.status == 401 else "forbidden",
                error.message))
            return None

    # -- POST / -------------------------------------------------------------------

    async def post(self, scope: Scope, receive: Receive, send: Send) -> None:
        received = time.perf_counter()
        if self.draining:
            await send_error(send, _shutting_down())
            return
        user_id = await self.authorize(scope, send)
        if user_id is None:
            return
        limits = self.options.limits
        try:
            body = await read_body(scope, receive, limits.max_body_bytes)
            request = decode_chat_request(body, limits)
        except ClientGone:
            return
        except RequestError as error:
            await send_error(send, error)
            return
        # The turn's span is current while ADK runs: ADK's spans become its children.
        span = start_span(TURN, "sse", request.id, user_id)
        outcome = "error"
        with log_context(request.id, user_id), current(span):
            try:
                outcome = await self._turn(request, user_id, send, receive, received)
            finally:
                end_span(span, outcome)

    async def _turn(self, request: ChatRequest, user_id: str, send: Send, receive: Receive,
                    received: float) -> str:
        """The turn of a decoded request; its outcome (``refused``/``unavailable`` when it
        did not run)."""
        await self.runtime.startup()
        if not await self.store.claim(request.id, user_id):
            await send_error(send, chat_not_found())
            return "refused"
        async with self.store.lock(request.id):
            try:
                plan = await self._prepare(request, user_id)
            except RequestError as error:
                await send_error(send, error)
                return "refused"
            except Exception:
                logger.exception("Could not prepare the session of chat %r", request.id)
                METRICS.store_error("sessions", "prepare")
                await send_error(send, RequestError(503, "session_unavailable",
                                                    "The chat session could not be loaded.",
                                                    retry_after=2))
                return "unavailable"
            stream = TurnStream(self.runtime, self.store, self._stream_options, plan, user_id,
                                request.id, received=received)
            self.turns.add(stream)
            self._idle.clear()
            try:
                await stream.run(send, receive)
            finally:
                self.turns.discard(stream)
                if not self.turns:
                    self._idle.set()
            return stream.outcome

    async def _prepare(self, request: ChatRequest, user_id: str) -> TurnPlan:
        runtime = self.runtime
        service = runtime.session_service
        session = await service.get_session(app_name=runtime.app_name, user_id=user_id,
                                            session_id=request.id)
        plan = plan_turn(request, session, runtime.approval_tools,
                         self.options.limits.max_file_bytes)
        if session is None:
            session = await service.create_session(app_name=runtime.app_name, user_id=user_id,
                                                   session_id=request.id)
            await self._seed(session, plan.seed)
        elif plan.rewind_before is not None:
            await runtime.runner.rewind_async(user_id=user_id, session_id=request.id,
                                              rewind_before_invocation_id=plan.rewind_before)
        return plan

    async def _seed(self, session: Session, history: list[UIMessage]) -> None:
        """Seeding: a new session gets the earlier turns the client sent (e.g. after a
        restart of an in-memory store); their *text* becomes the session's history, so the
        model keeps the context. Tool calls and files of those turns are not replayed.

        Only the most recent ``SEED_MAX_MESSAGES`` messages and ``SEED_MAX_CHARS`` characters
        are kept: appending costs grow with the session in ADK's stores, and a client must
        not be able to make one request seed a huge history."""
        service = self.runtime.session_service
        author = self.runtime.agent_name
        kept: list[tuple[UIMessage, str]] = []
        budget = SEED_MAX_CHARS
        for message in reversed(history):
            text = message_text(message)
            if not text:
                continue
            if len(kept) == SEED_MAX_MESSAGES or len(text) > budget:
                break
            budget -= len(text)
            kept.append((message, text))
        for message, text in reversed(kept):
            user = message.role == "user"
            event = Event(
                invocation_id="adk-asgi-seed",
                author="user" if user else author,
                content=types.Content(role="user" if user else "model",
                                      parts=[types.Part(text=text)]),
                custom_metadata={META_KEY: {"seeded": True, "messageId": message.id}},
            )
            await service.append_event(session, event)

    # -- GET / DELETE /{chatId}/stream ---------------------------------------------

    async def resume(self, scope: Scope, receive: Receive, send: Send, chat_id: str) -> None:
        """``GET {api}/{chatId}/stream``: replay the chat's active stream from its start and
        follow it (the AI SDK's ``resumeStreamIsReplay``); 204 when there is none."""
        user_id = await self.authorize(scope, send)
        if user_id is None:
            return
        owner = await self.store.owner(chat_id)
        if owner is not None and owner != user_id:
            await send_error(send, chat_not_found())
            return
        follow = await self.store.follow(chat_id) if owner == user_id else None
        if scope["method"] != "HEAD":
            METRICS.resumed("sse", follow is not None)
        if follow is None or scope["method"] == "HEAD":
            status = 204 if follow is None else 200
            await send({"type": "http.response.start", "status": status, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            if follow is not None:
                await follow.aclose()
            return
        channel = SSEChannel(send, receive, ping_interval=self.options.ping_interval,
                             send_timeout=self.options.send_timeout)
        await channel.open()
        try:
            async for blob in follow:
                await channel.write(blob)
                if channel.gone:
                    break
        finally:
            await follow.aclose()
            await channel.close()

    async def stop(self, scope: Scope, receive: Receive, send: Send, chat_id: str) -> None:
        """``DELETE {api}/{chatId}/stream``: stop the chat's running turn, on any worker
        (with resumable streams a disconnect does not stop it; this does)."""
        user_id = await self.authorize(scope, send)
        if user_id is None:
            return
        if await self.store.owner(chat_id) != user_id:
            await send_error(send, chat_not_found())
            return
        stopped = await self.store.stop(chat_id)
        await send_json(send, 200, b'{"stopped":true}' if stopped else b'{"stopped":false}')

    # -- shutdown ---------------------------------------------------------------------

    async def drain(self, grace: float) -> None:
        """Refuse new turns (503); give running turns ``grace`` seconds to end, then end
        the rest with an ``error`` chunk and ``[DONE]``."""
        self.draining = True
        if self.turns:
            try:
                await asyncio.wait_for(self._idle.wait(), grace)
            except TimeoutError:
                for stream in list(self.turns):
                    stream.stop("shutdown")
                try:
                    await asyncio.wait_for(self._idle.wait(), 5.0)
                except TimeoutError:
                    logger.warning("%d chat stream(s) did not end after shutdown",
                                   len(self.turns))


def _shutting_down() -> RequestError:
    return RequestError(503, "shutting_down",
                        "The server is restarting. Please try again in a moment.",
                        retry_after=2)
