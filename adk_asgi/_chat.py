"""ChatEndpoint: ``POST`` a chat request, stream the assistant message back over SSE.

request bytes -> ChatRequest -> Turn (with the session) -> Runner.run_async
-> ADK events -> EventTranslator -> UI chunks -> SSE frames -> socket.

The turn holds the chat's session lock from before the session is read until
the stream ends, so two tabs on one chat take turns instead of interleaving.
A disconnect (seen by sse-starlette's listener) cancels the stream; the ADK run
is then aborted through ``abort_signal`` and its generator closed, so no work
outlives the request.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final

from google.adk.events import Event
from google.adk.sessions import Session
from google.genai import types
from sse_starlette import EventSourceResponse, ServerSentEvent

from ._chunks import DONE_FRAME, ToolOutputDenied, UIChunk, sse_frame
from ._errors import RequestError
from ._http import ClientGone, read_body, send_error, send_json_error
from ._request import ChatRequest, UIMessage, decode_chat_request, message_text
from ._runtime import AgentRuntime
from ._translator import ConfirmationStyle, EventTranslator
from ._turn import META_KEY, Turn, plan_turn
from ._types import Receive, Scope, Send, UserIdResolver

__all__ = ("ChatEndpoint", "ChatOptions")

logger = logging.getLogger("adk_asgi")

STREAM_HEADERS: Final = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
GENERIC_ERROR: Final = "The agent failed to answer. Please try again."


def anonymous_user(scope: Scope) -> str:
    return "anonymous"


@dataclass(frozen=True, slots=True)
class ChatOptions:
    max_body_bytes: int = 16 * 1024 * 1024
    ping_interval: float = 15.0
    send_timeout: float | None = 60.0
    confirmation_style: ConfirmationStyle = "native"
    user_id: UserIdResolver = anonymous_user


class ChatEndpoint:
    """The HTTP side of the app: one instance serves every chat."""

    __slots__ = ("options", "runtime")

    def __init__(self, runtime: AgentRuntime, options: ChatOptions) -> None:
        self.runtime = runtime
        self.options = options

    async def resolve_user(self, scope: Scope) -> str:
        user = self.options.user_id(scope)
        if inspect.isawaitable(user):
            user = await user
        return str(user)

    async def post(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            body = await read_body(scope, receive, self.options.max_body_bytes)
            request = decode_chat_request(body)
            user_id = await self.resolve_user(scope)
        except ClientGone:
            return
        except RequestError as error:
            await send_error(send, error)
            return
        await self.runtime.startup()
        async with self.runtime.locks.hold(user_id, request.id):
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
            response = EventSourceResponse(
                self._stream(turn, user_id, request.id),
                headers=STREAM_HEADERS,
                ping=self.options.ping_interval,
                sep="\n",
                ping_message_factory=_ping,
                send_timeout=self.options.send_timeout,
            )
            await response(scope, receive, send)

    async def _prepare(self, request: ChatRequest, user_id: str) -> Turn:
        runtime = self.runtime
        service = runtime.session_service
        session = await service.get_session(app_name=runtime.app_name, user_id=user_id,
                                            session_id=request.id)
        turn = plan_turn(request, session, runtime.approval_tools)
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
        keeps the context. Tool calls and files of those turns are not replayed."""
        service = self.runtime.session_service
        author = self.runtime.agent_name
        for message in history:
            text = message_text(message)
            if not text:
                continue
            user = message.role == "user"
            event = Event(
                invocation_id="adk-asgi-seed",
                author="user" if user else author,
                content=types.Content(role="user" if user else "model",
                                      parts=[types.Part(text=text)]),
                custom_metadata={META_KEY: {"seeded": True, "messageId": message.id}},
            )
            await service.append_event(session, event)

    async def _stream(self, turn: Turn, user_id: str, session_id: str) -> AsyncIterator[bytes]:
        translator = EventTranslator(turn.message_id,
                                     confirmation_style=self.options.confirmation_style,
                                     denied_call_ids=turn.denied_call_ids,
                                     approval_tools=self.runtime.approval_tools,
                                     awaiting=turn.still_pending)
        if turn.new_message is None:
            # Only an approval for a browser tool: nothing for ADK until the page
            # sends the tool's result. Acknowledge on the same message.
            yield _frames([*translator.start(), *translator.finish()])
            yield DONE_FRAME
            return
        metadata = {"messageId": turn.message_id}
        if turn.user_message_id:
            metadata["userMessageId"] = turn.user_message_id
        abort = asyncio.Event()
        run = self.runtime.runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=turn.new_message,
            run_config=self.runtime.run_config_for(metadata),
            abort_signal=abort,
        )
        out: list[UIChunk] = translator.start()
        out.extend(ToolOutputDenied(tool_call_id=call_id) for call_id in turn.denied_client_calls)
        finished = False
        try:
            yield _frames(out)
            out.clear()
            async for event in run:
                translator.translate(event, out)
                if out:
                    yield _frames(out)
                    out.clear()
            finished = True
        except Exception as exc:
            logger.exception("ADK run failed in chat %r", session_id)
            out.clear()
            out.extend(translator.fail(_error_text(exc)))
        finally:
            if not finished:
                abort.set()
            try:
                await run.aclose()
            except Exception:
                logger.exception("Error while closing the ADK run of chat %r", session_id)
        out.extend(translator.finish())
        if out:
            yield _frames(out)
        yield DONE_FRAME

    async def no_active_stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``GET /{chatId}/stream``: no stream is kept for replay, so 204 (the AI SDK's
        "nothing to resume"), and the chat stays ready."""
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def _frames(chunks: list[UIChunk]) -> bytes:
    # One ASGI send per ADK event, not per chunk.
    if len(chunks) == 1:
        return sse_frame(chunks[0])
    return b"".join([sse_frame(c) for c in chunks])


def _ping() -> ServerSentEvent:
    return ServerSentEvent(comment="ping", sep="\n")


def _error_text(exc: Exception) -> str:
    # Model/ADK errors that ADK did not report as an event: the class name only,
    # never the message or trace (they may hold internals).
    return f"{GENERIC_ERROR} ({type(exc).__name__})"
