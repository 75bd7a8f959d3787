"""``GET {api}/{chatId}``: a chat's history, ``{"id", "messages": UIMessage[]}``, rebuilt
from its ADK session (``history/messages.py``) for ``useChat({id, messages})`` after a reload.
``GET {api}/{chatId}/evalset``: the chat as an ADK ``EvalSet`` (``history/evalset.py``).

Every chat route answers only the chat's owner: another user, or a chat that does not
exist, gets the same ``404 chat_not_found`` (``owned_session``).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import msgspec
from google.adk.sessions import Session

from ..history.evalset import chat_eval_set, eval_set_id
from ..history.messages import HistoryOptions, rebuild_messages
from ..transport.asgi import Receive, Scope, Send, send_json
from ..wire.errors import RequestError, chat_not_found
from .endpoint import ChatEndpoint
from .errors import failing

__all__ = ("ChatHistory", "owned_session")

logger = logging.getLogger("adk_asgi")

_encoder = msgspec.json.Encoder()


async def owned_session(
    chat: ChatEndpoint, scope: Scope, chat_id: str
) -> tuple[str, Session | None]:
    """The requesting user and their session of ``chat_id`` (None: no such session of
    theirs). Raises 401/403, 404 for another user's chat, the outages of ``chat``."""
    user_id, _ = await chat.chat_reader(scope, chat_id, "chat")
    runtime = chat.runtime
    await runtime.startup()
    with failing("chat", chat_id, "sessions"):
        session = await runtime.session_service.get_session(
            app_name=runtime.app_name, user_id=user_id, session_id=chat_id
        )
    return user_id, session


class ChatHistory:
    """``GET {api}/{chatId}``."""

    def __init__(self, chat: ChatEndpoint) -> None:
        self.chat = chat

    def options(self, user_id: str, chat_id: str, api_path: str) -> HistoryOptions:
        """How the history is read: through the app's translators, as its streams were."""
        return HistoryOptions(
            translators=self.chat.translators,
            files=self.chat.runtime.artifacts.of_chat(user_id, chat_id, api_path),
        )

    async def get(self, scope: Scope, receive: Receive, send: Send) -> None:
        chat_id = scope["path_params"]["chat_id"]
        user_id, session = await owned_session(self.chat, scope, chat_id)
        if session is None:
            raise chat_not_found()
        with failing("history", chat_id):
            follow = await self.chat.store.follow(chat_id)
        if follow is not None:
            await follow.aclose()
        try:
            # The artifacts' URLs under the path the app is mounted at, as the stream's.
            options = replace(
                self.options(user_id, chat_id, scope.get("root_path", "")), idle=follow is None
            )
            messages = await rebuild_messages(session, options)
        except Exception:
            # A session this code cannot read (an ADK change, an event of a new kind): the
            # server log says what; the client gets a JSON error, never a trace.
            logger.exception("Could not rebuild the history of chat %r", chat_id)
            raise RequestError(
                500, "history_unavailable", "The chat's history could not be read."
            ) from None
        body: dict[str, Any] = {"id": chat_id, "messages": messages}
        await send_json(send, 200, _encoder.encode(body), [(b"cache-control", b"no-store")])

    async def evalset(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``GET {api}/{chatId}/evalset``: the chat as an ADK ``EvalSet`` with one eval case,
        a download (``{chatId}.evalset.json``)."""
        chat_id = scope["path_params"]["chat_id"]
        _, session = await owned_session(self.chat, scope, chat_id)
        if session is None:
            raise chat_not_found()
        try:
            eval_set = chat_eval_set(session, getattr(self.chat.runtime.runner, "agent", None))
        except Exception:
            logger.exception("Could not convert chat %r to an eval set", chat_id)
            raise RequestError(
                500, "evalset_unavailable", "The chat could not be read as an eval set."
            ) from None
        disposition = f'attachment; filename="{eval_set_id(chat_id)}.evalset.json"'
        headers = [(b"cache-control", b"no-store"), (b"content-disposition", disposition.encode())]
        await send_json(send, 200, _encoder.encode(eval_set), headers)
