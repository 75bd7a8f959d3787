"""ChatEndpoint: the HTTP side of the app — ``POST`` a chat request and get the assistant
message back as SSE; ``GET``/``DELETE {chatId}/stream`` resume or stop a chat's stream.
Its handlers raise what they refuse or fail on: ``http/errors.py`` answers it.

request bytes -> ChatRequest -> TurnPlan (with the session) -> TurnStream (Runner.run_async
-> ADK events -> EventTranslator -> UI chunks -> SSE bytes -> socket + stream store).

A turn holds the chat's turn lock from before the session is read until its stream ends,
so two tabs on one chat take turns instead of interleaving; a turn that waits for it is told
so at once (``turn/queue.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from ..adk.outages import Outage
from ..adk.runtime import AgentRuntime
from ..observability.logs import log_context
from ..observability.metrics import METRICS
from ..observability.tracing import TURN, current, end_span, start_span
from ..options import Settings
from ..pauses.signin import callback_url
from ..stores import StreamRecorder, StreamStore
from ..translate.factory import Translators
from ..transport.asgi import Receive, Scope, Send, read_body, send_json
from ..transport.auth import resolve_user
from ..transport.limits import check_limits
from ..wire.errors import RequestError, chat_not_found, shutting_down
from ..wire.request import ChatRequest, decode_chat_request, valid_chat_id
from .errors import failing
from .turn.continuity import previous_recording
from .turn.prepare import prepare_turn
from .turn.queue import queued_turn, refused
from .turn.seed import SEED_MAX_CHARS, SEED_MAX_MESSAGES
from .turn.sse import SSEChannel, sse_channel
from .turn.stream import TurnStream

__all__ = ("SEED_MAX_CHARS", "SEED_MAX_MESSAGES", "ChatEndpoint")

logger = logging.getLogger("adk_asgi")


class ChatEndpoint:
    """The HTTP side of the app: one instance serves every chat."""

    def __init__(
        self,
        runtime: AgentRuntime,
        settings: Settings,
        store: StreamStore,
        translators: Translators,
    ) -> None:
        self.runtime = runtime
        self.settings = settings
        self.store = store
        self.translators = translators
        """How the app's translators are made (``translate/factory.py``)."""
        self.turns: set[TurnStream] = set()
        self.draining = False
        self.api_path = ""
        """The path the app is mounted at, as ``mount``/``AdkMiddleware`` or the latest
        request (its ``root_path``) said: the base of artifact URLs in the turns no request
        started (``AdkApp.complete_tool_call``)."""
        self._idle = asyncio.Event()
        self._idle.set()

    async def authorize(self, scope: Scope) -> str:
        """The user of this request (raises ``AuthError``: 401/403)."""
        return await resolve_user(self.settings.authenticate, scope)

    # -- POST / -------------------------------------------------------------------

    async def post(self, scope: Scope, receive: Receive, send: Send) -> None:
        received = time.perf_counter()
        if self.draining:
            raise shutting_down()
        user_id = await self.authorize(scope)
        self.api_path = api_path = scope.get("root_path", "")
        limits = self.settings.limits
        body = await read_body(scope, receive, limits.max_body_bytes)
        request = decode_chat_request(body)
        check_limits(request.history, limits)
        fields = self.runtime.body_fields.read(body) if self.runtime.body_fields else {}
        await self.runtime.startup()
        # The turn's span is current while ADK runs: ADK's spans become its children.
        span = start_span(TURN, "sse", request.id, user_id)
        outcome, refused = "error", None
        with log_context(request.id, user_id), current(span):
            try:
                outcome = await self._turn(
                    request,
                    user_id,
                    send,
                    receive,
                    fields,
                    received,
                    api_path,
                    callback_url(scope, self.settings.pauses.oauth_redirect_uri),
                )
            except (RequestError, Outage) as exc:
                # Answered by http/errors.py, past the span: a refusal is no failure of it.
                outcome = "refused" if isinstance(exc, RequestError) else "unavailable"
                refused = exc
            finally:
                end_span(span, outcome)
        if refused is not None:
            raise refused

    async def _turn(
        self,
        request: ChatRequest,
        user_id: str,
        send: Send,
        receive: Receive,
        fields: dict[str, Any],
        received: float,
        api_path: str,
        oauth_redirect: str,
    ) -> str:
        """The turn of a decoded request; its outcome. The stream store's failures before
        the response started are the ``turn``'s outage; once it streams, they are logged
        and the turn goes on unrecorded."""
        with failing("turn", request.id):
            if not await self.store.claim(request.id, user_id):
                raise chat_not_found()
            deletions = await self.store.deletions(request.id)
            async with queued_turn(
                self.store, request.id, lambda: sse_channel(send, receive, self.settings)
            ) as channel:
                try:
                    if await self.store.deletions(request.id) != deletions:
                        raise chat_not_found()  # deleted while this message waited
                    with failing("prepare", request.id, "sessions"):
                        plan = await prepare_turn(
                            self.runtime,
                            request,
                            user_id,
                            self.settings.limits.max_file_bytes,
                            self.settings.chats,
                        )
                    plan.state_delta.update(fields)
                    plan.oauth_redirect = oauth_redirect
                    if plan.continues:  # before this turn's recording replaces it
                        plan.previous = await previous_recording(
                            self.store, request.id, plan.message_id
                        )
                    recorder = await self.store.record(request.id)
                except (RequestError, Outage) as exc:
                    if channel is None:
                        raise
                    await refused(channel, exc)  # its response started: the stream says it
                    return "refused" if isinstance(exc, RequestError) else "unavailable"
                stream = TurnStream(
                    self.runtime,
                    self.store,
                    self.settings,
                    plan,
                    self.translators.turn(plan.message_id, plan.message_context()),
                    user_id,
                    request.id,
                    received=received,
                    api_path=api_path,
                )
                await self.run_turn(stream, send, receive, recorder, channel)
                return stream.outcome

    async def run_turn(
        self,
        stream: TurnStream,
        send: Send,
        receive: Receive,
        recorder: StreamRecorder,
        channel: SSEChannel | None = None,
    ) -> None:
        """Run a turn (the caller holds the chat's turn lock and took ``recorder`` from
        ``store.record`` before answering; ``channel``: its response started while it was
        queued); ``drain`` waits for it."""
        self.turns.add(stream)
        self._idle.clear()
        try:
            await stream.run(send, receive, recorder, channel)
        finally:
            self.turns.discard(stream)
            if not self.turns:
                self._idle.set()
            if stream.plan.new_message is not None:  # ADK ran: the session changed
                self.runtime.turn_ended(stream.user_id, stream.chat_id)

    # -- a chat's own routes -------------------------------------------------------

    async def chat_reader(self, scope: Scope, chat_id: str, action: str) -> tuple[str, bool]:
        """Who asks about ``chat_id`` (one of its routes), and whether the chat is theirs
        (False: it has no owner yet, so nothing of it exists). Raises 401/403, ``404
        chat_not_found`` for an invalid id or another user's chat (the same answer as for a
        chat that does not exist), the stream store's outage (``action`` names the route
        in the metrics)."""
        user_id = await self.authorize(scope)
        if not valid_chat_id(chat_id):
            raise chat_not_found()
        with failing(action, chat_id):
            owner = await self.store.owner(chat_id)
        if owner is not None and owner != user_id:
            raise chat_not_found()
        return user_id, owner is not None

    # -- GET / DELETE /{chatId}/stream ---------------------------------------------

    async def resume(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``GET {api}/{chatId}/stream``: replay the chat's active stream from its start and
        follow it (the AI SDK's ``resumeStreamIsReplay``); 204 when there is none."""
        chat_id = _stream_of(scope)
        _, owned = await self.chat_reader(scope, chat_id, "resume")
        with failing("resume", chat_id):
            follow = await self.store.follow(chat_id) if owned else None
        if scope["method"] != "HEAD":
            METRICS.resumed("sse", follow is not None)
        if follow is None or scope["method"] == "HEAD":
            status = 204 if follow is None else 200
            await send({"type": "http.response.start", "status": status, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            if follow is not None:
                await follow.aclose()
            return
        channel = sse_channel(send, receive, self.settings)
        await channel.open()
        try:
            async for blob in follow:
                await channel.write(blob)
                if channel.gone:
                    break
        finally:
            await follow.aclose()
            await channel.close()

    async def stop(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``DELETE {api}/{chatId}/stream``: stop the chat's running turn, on any worker
        (with resumable streams a disconnect does not stop it; this does)."""
        chat_id = _stream_of(scope)
        user_id = await self.authorize(scope)
        with failing("stop", chat_id):
            if await self.store.owner(chat_id) != user_id:
                raise chat_not_found()
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
                    logger.warning("%d chat stream(s) did not end after shutdown", len(self.turns))


def _stream_of(scope: Scope) -> str:
    """The chat of a ``{chatId}/stream`` route: an invalid id is no chat, answered before
    who asks is."""
    chat_id: str = scope["path_params"]["chat_id"]
    if not valid_chat_id(chat_id):
        raise chat_not_found()
    return chat_id
