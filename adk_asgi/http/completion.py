"""Completing a long-running call from the server side: ``AdkApp.complete_tool_call`` and
``POST {api}/{chatId}/tool-output`` (for webhooks and back-office systems).

The call's final result goes to ADK as its function response, which resumes the call's
invocation, and the turn runs *detached*: no client reads it as it runs. Its stream is
recorded in the stream store like any turn, so ``GET {api}/{chatId}/stream`` (the AI SDK's
``resumeStream``) and protocol B's ``resume`` replay and follow it, and it stays there for
the store's retention after it ends. The turn holds the chat's turn lock like any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

import msgspec
from google.adk.sessions import Session
from msgspec import UNSET, UnsetType

from ..adk.outages import Outage, report_outage
from ..stores import StoreUnavailable
from ..transport.asgi import Message, Receive, Scope, Send, read_body, send_json
from ..wire.depth import check_depth
from ..wire.errors import (
    RequestError,
    chat_not_found,
    session_unavailable,
    shutting_down,
    store_unavailable,
)
from ..wire.request import check_storable, valid_chat_id
from .endpoint import ChatEndpoint
from .turn.continuity import previous_recording
from .turn.plan import TurnPlan, plan_completion
from .turn.stream import TurnStream

__all__ = ("ToolOutput", "complete_tool_call", "post_tool_output", "run_detached")

MAX_OUTPUT_BYTES: Final = 1024 * 1024


class ToolOutput(msgspec.Struct, rename="camel", forbid_unknown_fields=True):
    """The body of ``POST {api}/{chatId}/tool-output``: the call and its final result (an
    object, or ``errorText`` when it failed)."""

    tool_call_id: str
    output: dict[str, Any] | UnsetType = UNSET
    error_text: str | UnsetType = UNSET

    def result(self) -> dict[str, Any]:
        if (self.output is UNSET) == (self.error_text is UNSET):
            raise RequestError(
                422, "invalid_tool_output", "Give either `output` (an object) or `errorText`."
            )
        return (
            {"error": self.error_text}
            if isinstance(self.error_text, str)
            else dict(self.output)
            if isinstance(self.output, dict)
            else {}
        )


async def complete_tool_call(
    chat: ChatEndpoint,
    user_id: str,
    chat_id: str,
    call_id: str,
    result: dict[str, Any],
    *,
    wait: bool = False,
    api_path: str | None = None,
) -> str:
    """Complete ``call_id`` of ``chat_id`` (owned by ``user_id``) with ``result``; returns
    the id of the assistant message the turn streams (``wait``: once the turn ended);
    ``api_path``: where the app is mounted (default: where it was last reached).
    Raises ``RequestError`` (404 ``chat_not_found``, 409 ``unknown_tool_call``, 422
    ``wrong_answer_kind``, 503 ``shutting_down``)."""
    if len(msgspec.json.encode(result)) > MAX_OUTPUT_BYTES:
        raise RequestError(
            413, "output_too_large", f"A tool output exceeds {MAX_OUTPUT_BYTES} bytes."
        )
    runtime = chat.runtime
    return await run_detached(
        chat,
        user_id,
        chat_id,
        lambda session: plan_completion(session, runtime.tools, call_id, result),
        wait=wait,
        api_path=api_path,
    )


async def run_detached(
    chat: ChatEndpoint,
    user_id: str,
    chat_id: str,
    plan_for: Callable[[Session | None], TurnPlan],
    *,
    wait: bool = False,
    api_path: str | None = None,
) -> str:
    """Run a turn nobody reads as it runs (recorded for ``resumeStream``), planned from the
    chat's session under its turn lock; returns its assistant message id once it started
    (``wait``: once it ended); ``api_path``: where the app is mounted (default: where it
    was last reached). Raises ``RequestError`` as ``plan_for`` does, 404
    ``chat_not_found`` (not ``user_id``'s chat) and 503."""
    if chat.draining:
        raise shutting_down()
    await chat.runtime.startup()
    try:
        owner = await chat.store.owner(chat_id) if valid_chat_id(chat_id) else None
    except StoreUnavailable as exc:
        report_outage(Outage("streams", None, chat_id, exc))
        raise store_unavailable() from None
    if owner != user_id:
        raise chat_not_found()
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    where = chat.api_path if api_path is None else api_path
    task = asyncio.create_task(
        _run(chat, user_id, chat_id, plan_for, started, where), name="adk-asgi-detached-turn"
    )
    try:
        message_id = await asyncio.shield(started)
    except BaseException:
        if not started.done():  # cancelled while waiting for the lock: nothing started
            task.cancel()
        raise
    if wait:
        await task
    return message_id


async def _run(
    chat: ChatEndpoint,
    user_id: str,
    chat_id: str,
    plan_for: Callable[[Session | None], TurnPlan],
    started: asyncio.Future[str],
    api_path: str,
) -> None:
    try:
        await _locked_run(chat, user_id, chat_id, plan_for, started, api_path)
    except StoreUnavailable as exc:
        if started.done():
            raise
        report_outage(Outage("streams", None, chat_id, exc))
        started.set_exception(store_unavailable())


async def _locked_run(
    chat: ChatEndpoint,
    user_id: str,
    chat_id: str,
    plan_for: Callable[[Session | None], TurnPlan],
    started: asyncio.Future[str],
    api_path: str,
) -> None:
    runtime = chat.runtime
    async with chat.store.lock(chat_id):
        try:
            session = await runtime.session_service.get_session(
                app_name=runtime.app_name, user_id=user_id, session_id=chat_id
            )
            plan = plan_for(session)
        except RequestError as error:
            started.set_exception(error)
            return
        except Exception as exc:
            report_outage(Outage("sessions", None, chat_id, exc))
            started.set_exception(session_unavailable())
            return
        if plan.continues:  # before this turn's recording replaces it
            plan.previous = await previous_recording(chat.store, chat_id, plan.message_id)
        recorder = await chat.store.record(chat_id)
        started.set_result(plan.message_id)
        stream = TurnStream(
            runtime,
            chat.store,
            chat.settings,
            plan,
            chat.translators.turn(plan.message_id, plan.message_context()),
            user_id,
            chat_id,
            detached=True,
            api_path=api_path,
        )
        await chat.run_turn(stream, _discard, _never, recorder)


async def _discard(message: Message) -> None:
    return None


async def _never() -> Message:
    await asyncio.Event().wait()
    return {"type": "http.disconnect"}  # pragma: no cover - never reached


async def post_tool_output(chat: ChatEndpoint, scope: Scope, receive: Receive, send: Send) -> None:
    """``POST {api}/{chatId}/tool-output``: 202 ``{"messageId"}`` once the turn started."""
    user_id = await chat.authorize(scope)
    body = await read_body(scope, receive, chat.settings.limits.max_body_bytes)
    try:
        request = msgspec.json.decode(body, type=ToolOutput)
    except msgspec.ValidationError as error:
        raise RequestError(422, "invalid_tool_output", f"Invalid tool output: {error}") from None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        raise RequestError(400, "invalid_json", "The body is not valid JSON.") from None
    check_storable(body)
    check_depth(request.output, where="The output")
    message_id = await complete_tool_call(
        chat,
        user_id,
        scope["path_params"]["chat_id"],
        request.tool_call_id,
        request.result(),
        api_path=scope.get("root_path", ""),
    )
    await send_json(send, 202, msgspec.json.encode({"messageId": message_id}))
