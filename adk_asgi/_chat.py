"""ChatEndpoint: ``POST`` a chat request, stream the assistant message back over SSE.

request bytes -> ChatRequest -> Turn (with the session) -> Runner.run_async
-> ADK events -> EventTranslator -> UI chunks -> SSE bytes -> socket (+ stream store).

A turn runs in the request's own task, one ADK event -> one socket write, and
each write is also recorded in the stream store so a reload can resume it.
The turn holds the chat's turn lock from before the session is read until the
stream ends, so two tabs on one chat take turns instead of interleaving.

How a turn stops early, and what the stream then ends with:

=================  =========================================  ======================
cause              what happens                               last chunks
=================  =========================================  ======================
client gone        ADK run aborted at once (``abort_signal``); (nobody listens)
                   with ``resume_grace`` > 0 it keeps running
                   detached until it ends, or until nobody
                   resumed it within the grace
stuck client       no send completed for ``send_timeout``:    (nobody listens)
                   dropped, run aborted
``DELETE`` stream  the owner asked to stop (any worker)       ``abort``, ``[DONE]``
server shutdown    ``drain``: runs get ``shutdown_grace`` to  ``error``, ``[DONE]``
                   finish, then are aborted
ADK/model error    one ``error`` chunk, never a trace         ``error``, ``[DONE]``
=================  =========================================  ======================
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Final, Literal

from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types

from ._auth import Authenticate, AuthError, anonymous, resolve_user
from ._chunks import DONE_FRAME, ToolOutputDenied, UIChunk, sse_frame
from ._errors import RequestError
from ._http import ClientGone, read_body, send_error, send_json_error
from ._limits import Limits
from ._request import ChatRequest, UIMessage, decode_chat_request, message_text
from ._runtime import AgentRuntime
from ._sse import GoneReason, SSEChannel
from ._streams import StreamRecorder, StreamStore
from ._translator import ConfirmationStyle, EventTranslator
from ._turn import META_KEY, Turn, plan_turn
from ._types import Receive, Scope, Send

__all__ = ("ChatEndpoint", "ChatOptions")

logger = logging.getLogger("adk_asgi")

GENERIC_ERROR: Final = "The agent failed to answer. Please try again."
SEED_MAX_MESSAGES: Final = 200
SEED_MAX_CHARS: Final = 200_000
SHUTDOWN_ERROR: Final = "The server is restarting. Please send your message again."
StopReason = Literal["client", "stuck", "stopped", "shutdown"]


@dataclass(frozen=True, slots=True)
class ChatOptions:
    limits: Limits = field(default_factory=Limits)
    ping_interval: float | None = 15.0
    send_timeout: float | None = 60.0
    confirmation_style: ConfirmationStyle = "native"
    authenticate: Authenticate = anonymous
    resume_grace: float = 0.0
    """Seconds a turn keeps running after its client disconnected, so a reload can
    resume it (``GET {api}/{chatId}/stream``); 0 aborts the run at once."""


class ChatEndpoint:
    """The HTTP side of the app: one instance serves every chat."""

    def __init__(self, runtime: AgentRuntime, options: ChatOptions, store: StreamStore) -> None:
        self.runtime = runtime
        self.options = options
        self.store = store
        self.turns: set[_TurnStream] = set()
        self.draining = False
        self._idle = asyncio.Event()
        self._idle.set()

    async def authorize(self, scope: Scope, send: Send) -> str | None:
        """The user of this request, or None after answering 401/403."""
        try:
            return await resolve_user(self.options.authenticate, scope)
        except AuthError as error:
            await send_json_error(send, error.status,
                                  "unauthorized" if error.status == 401 else "forbidden",
                                  error.message)
            return None

    # -- POST / -------------------------------------------------------------------

    async def post(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.draining:
            await _unavailable(send)
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
        await self.runtime.startup()
        if not await self.store.claim(request.id, user_id):
            await _chat_not_found(send)
            return
        async with self.store.lock(request.id):
            try:
                turn = await self._prepare(request, user_id)
            except RequestError as error:
                await send_error(send, error)
                return
            except Exception:
                logger.exception("Could not prepare the session of chat %r", request.id)
                await send_json_error(send, 503, "session_unavailable",
                                      "The chat session could not be loaded.")
                return
            stream = _TurnStream(self, turn, user_id, request.id)
            self.turns.add(stream)
            self._idle.clear()
            try:
                await stream.run(send, receive)
            finally:
                self.turns.discard(stream)
                if not self.turns:
                    self._idle.set()

    async def _prepare(self, request: ChatRequest, user_id: str) -> Turn:
        runtime = self.runtime
        service = runtime.session_service
        session = await service.get_session(app_name=runtime.app_name, user_id=user_id,
                                            session_id=request.id)
        turn = plan_turn(request, session, runtime.approval_tools,
                         self.options.limits.max_file_bytes)
        if session is None:
            session = await service.create_session(app_name=runtime.app_name, user_id=user_id,
                                                   session_id=request.id)
            await self._seed(session, turn.seed)
        elif turn.rewind_before is not None:
            await runtime.runner.rewind_async(user_id=user_id, session_id=request.id,
                                              rewind_before_invocation_id=turn.rewind_before)
        return turn

    async def _seed(self, session: Session, history: list[UIMessage]) -> None:
        """A new session with earlier turns from the client (e.g. after a restart of an
        in-memory store): their *text* becomes the session's history, so the model
        keeps the context. Tool calls and files of those turns are not replayed.

        Only the most recent ``SEED_MAX_MESSAGES`` messages and ``SEED_MAX_CHARS``
        characters are kept: appending costs grow with the session in ADK's stores, and
        a client must not be able to make one request seed a huge history."""
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
        """``GET {api}/{chatId}/stream``: replay the chat's active stream from its start
        and follow it (the AI SDK's ``resumeStreamIsReplay``); 204 when there is none."""
        user_id = await self.authorize(scope, send)
        if user_id is None:
            return
        owner = await self.store.owner(chat_id)
        if owner is not None and owner != user_id:
            await _chat_not_found(send)
            return
        follow = await self.store.follow(chat_id) if owner == user_id else None
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
            await _chat_not_found(send)
            return
        stopped = await self.store.stop(chat_id)
        body = b'{"stopped":true}' if stopped else b'{"stopped":false}'
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    # -- shutdown ---------------------------------------------------------------------

    async def drain(self, grace: float) -> None:
        """Refuse new turns (503); give running turns ``grace`` seconds to end, then
        end the rest with an ``error`` chunk and ``[DONE]``."""
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


class _TurnStream:
    """One POST's turn: runs ADK, writes every event's chunks to the client and the store."""

    __slots__ = (
        "_abort",
        "_channel",
        "_grace_task",
        "_reason",
        "_recorder",
        "chat_id",
        "endpoint",
        "turn",
        "user_id",
    )

    def __init__(self, endpoint: ChatEndpoint, turn: Turn, user_id: str, chat_id: str) -> None:
        self.endpoint = endpoint
        self.turn = turn
        self.user_id = user_id
        self.chat_id = chat_id
        self._abort = asyncio.Event()
        self._reason: StopReason | None = None
        self._channel: SSEChannel | None = None
        self._recorder: StreamRecorder | None = None
        self._grace_task: asyncio.Task[None] | None = None

    def stop(self, reason: StopReason) -> None:
        if self._reason is None:
            self._reason = reason
        self._abort.set()

    def _on_gone(self, reason: GoneReason) -> None:
        grace = self.endpoint.options.resume_grace
        if reason == "client" and grace > 0:
            # Keep running detached: a reload may resume this stream.
            self._grace_task = asyncio.create_task(self._detached(grace),
                                                   name="adk-asgi-resume-grace")
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
        blob = sse_frame(chunks[0]) if len(chunks) == 1 else b"".join(
            [sse_frame(c) for c in chunks])
        if done:
            blob += DONE_FRAME
        chunks.clear()
        assert self._recorder is not None and self._channel is not None
        self._recorder.append(blob)
        await self._channel.write(blob)

    async def run(self, send: Send, receive: Receive) -> None:
        endpoint = self.endpoint
        options = endpoint.options
        self._recorder = recorder = await endpoint.store.record(self.chat_id)
        recorder.on_stop(lambda: self.stop("stopped"))
        self._channel = channel = SSEChannel(send, receive, ping_interval=options.ping_interval,
                                             send_timeout=options.send_timeout,
                                             on_gone=self._on_gone)
        await channel.open()
        try:
            await self._produce()
        finally:
            if self._grace_task is not None:
                self._grace_task.cancel()
                await asyncio.gather(self._grace_task, return_exceptions=True)
            await channel.close()
            resumable = self._reason is None and channel.gone
            await recorder.end(resumable=resumable)

    async def _produce(self) -> None:
        turn = self.turn
        runtime = self.endpoint.runtime
        translator = EventTranslator(turn.message_id,
                                     confirmation_style=self.endpoint.options.confirmation_style,
                                     denied_call_ids=turn.denied_call_ids,
                                     approval_tools=runtime.approval_tools,
                                     awaiting=turn.still_pending)
        out: list[UIChunk] = translator.start()
        if turn.new_message is None:
            # Only an approval for a browser tool: nothing for ADK until the page
            # sends the tool's result. Acknowledge on the same message.
            out.extend(translator.finish())
            await self._emit(out, done=True)
            return
        out.extend(ToolOutputDenied(tool_call_id=call_id) for call_id in turn.denied_client_calls)
        await self._emit(out)
        metadata = {"messageId": turn.message_id}
        if turn.user_message_id:
            metadata["userMessageId"] = turn.user_message_id
        run = runtime.runner.run_async(
            user_id=self.user_id,
            session_id=self.chat_id,
            new_message=turn.new_message,
            run_config=runtime.run_config_for(metadata),
            abort_signal=self._abort,
        )
        finished = False
        try:
            async for event in run:
                translator.translate(event, out)
                if out:
                    await self._emit(out)
            finished = True
        except asyncio.CancelledError:
            channel = self._channel
            task = asyncio.current_task()
            if not (channel is not None and channel.stuck and task is not None
                    and task.cancelling()):
                raise
            task.uncancel()  # the stuck-send watchdog's cancel landed outside a send
            self.stop("stuck")
        except Exception as exc:
            logger.exception("ADK run failed in chat %r", self.chat_id)
            out.clear()
            out.extend(translator.fail(f"{GENERIC_ERROR} ({type(exc).__name__})"))
        finally:
            if not finished:
                self._abort.set()
            try:
                await run.aclose()
            except Exception:
                logger.exception("Error while closing the ADK run of chat %r", self.chat_id)
        reason = self._reason
        if reason == "shutdown":
            out.extend(translator.fail(SHUTDOWN_ERROR))
        elif reason is not None:
            out.extend(translator.abort())
        else:
            out.extend(translator.finish())
        await self._emit(out, done=True)


async def _unavailable(send: Send) -> None:
    await send_json_error(send, 503, "shutting_down",
                          "The server is restarting. Please try again in a moment.",
                          headers=[(b"retry-after", b"2")])


async def _chat_not_found(send: Send) -> None:
    # The same answer whether the chat exists for someone else or not at all.
    await send_json_error(send, 404, "chat_not_found", "No such chat.")
