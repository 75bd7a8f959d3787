"""A user's chats: ``GET {api}`` lists them (newest first, a page at a time) and
``DELETE {api}/{chatId}`` deletes one — its running turn stopped first, then its
artifacts, its ADK session and its recorded stream (``history/chats.py`` keeps the list's
rules).
"""

from __future__ import annotations

import msgspec
from google.adk.sessions import Session

from ..history.chat_index import list_page
from ..history.chats import (
    ChatSummary,
    chat_title,
    cursor_position,
    first_user_text,
    page_limit,
)
from ..options import ChatListOptions
from ..transport.asgi import Receive, Scope, Send, send_json
from ..transport.params import query as query_of
from ..wire.errors import chat_not_found
from .endpoint import ChatEndpoint
from .errors import failing
from .history import owned_session

__all__ = ("UserChats",)

_encoder = msgspec.json.Encoder()


class UserChats:
    """``GET {api}`` and ``DELETE {api}/{chatId}``."""

    def __init__(self, chat: ChatEndpoint, options: ChatListOptions) -> None:
        self.chat = chat
        self.options = options

    async def list(self, scope: Scope, receive: Receive, send: Send) -> None:
        user_id = await self.chat.authorize(scope)
        query = query_of(scope)
        limit = page_limit(query.get("limit", [None])[0], self.options)
        cursor = query.get("cursor", [None])[0] or None
        if cursor is not None:
            cursor_position(cursor)  # a bad one is refused before the store is asked
        runtime = self.chat.runtime
        await runtime.startup()
        with failing("list", None, "sessions"):
            page, after = await list_page(
                runtime.session_service, runtime.app_name, user_id, limit, cursor
            )
            chats = [await self._titled(summary, user_id) for summary in page]
        body = {"chats": [c.wire() for c in chats], "next": after}
        await send_json(send, 200, _encoder.encode(body), [(b"cache-control", b"no-store")])

    async def _titled(self, summary: ChatSummary, user_id: str) -> ChatSummary:
        """A chat without a stored title (one from before titles were stored, or a live
        chat): its first user text, read from its events (a page holds few of them)."""
        if summary.title is not None:
            return summary
        runtime = self.chat.runtime
        session = await runtime.session_service.get_session(
            app_name=runtime.app_name, user_id=user_id, session_id=summary.id
        )
        if session is None:
            return summary
        text = first_user_text(e.content for e in session.events if e.author == "user")
        title = chat_title(self.options, text) if text else None
        return ChatSummary(summary.id, title, summary.created, summary.updated)

    async def delete(self, scope: Scope, receive: Receive, send: Send) -> None:
        chat_id = scope["path_params"]["chat_id"]
        user_id, session = await owned_session(self.chat, scope, chat_id)
        if session is None:
            raise chat_not_found()
        store = self.chat.store
        with failing("delete", chat_id, "sessions"):
            await store.stop(chat_id)  # a running turn, on any worker: it ends promptly
            async with store.lock(chat_id):  # ...and no new turn starts meanwhile
                await self._delete(session, user_id)
                await store.forget(chat_id)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _delete(self, session: Session, user_id: str) -> None:
        """The chat's artifacts (not the user's own, ``user:`` ones), then its session."""
        runtime = self.chat.runtime
        await runtime.artifacts.delete(user_id, session.id)
        await runtime.session_service.delete_session(
            app_name=runtime.app_name, user_id=user_id, session_id=session.id
        )
