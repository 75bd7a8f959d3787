"""A user's chats: ``GET {api}`` lists them (newest first, a page at a time) and
``DELETE {api}/{chatId}`` deletes one — its running turn stopped first, then its
artifacts, its ADK session and its recorded stream (``history/chats.py`` keeps the list's
rules).
"""

from __future__ import annotations

import logging
from urllib.parse import parse_qs

import msgspec
from google.adk.sessions import Session

from ..adk.sessions import failure
from ..history.chat_index import list_page
from ..history.chats import ChatSummary, chat_title, first_user_text, page_limit
from ..observability.metrics import METRICS
from ..options import ChatListOptions
from ..stores import StoreUnavailable
from ..transport.asgi import Receive, Scope, Send, send_error, send_json
from ..wire.errors import RequestError, chat_not_found, session_unavailable, store_unavailable
from .endpoint import ChatEndpoint
from .history import owned_session

__all__ = ("UserChats",)

logger = logging.getLogger("adk_asgi")

_encoder = msgspec.json.Encoder()


class UserChats:
    """``GET {api}`` and ``DELETE {api}/{chatId}``."""

    def __init__(self, chat: ChatEndpoint, options: ChatListOptions) -> None:
        self.chat = chat
        self.options = options

    async def list(self, scope: Scope, receive: Receive, send: Send) -> None:
        user_id = await self.chat.authorize(scope, send)
        if user_id is None:
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        try:
            limit = page_limit(query.get("limit", [None])[0], self.options)
            cursor = query.get("cursor", [None])[0]
            runtime = self.chat.runtime
            await runtime.startup()
            try:
                page, after = await list_page(
                    runtime.session_service, runtime.app_name, user_id, limit, cursor
                )
                chats = [await self._titled(summary, user_id) for summary in page]
            except RequestError:
                raise
            except Exception as exc:
                logger.error("Session store failed listing chats: %s", failure(exc))
                METRICS.store_error("sessions", "list")
                raise session_unavailable() from None
        except RequestError as error:
            await send_error(send, error)
            return
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

    async def delete(self, scope: Scope, receive: Receive, send: Send, chat_id: str) -> None:
        found = await owned_session(self.chat, scope, send, chat_id)
        if found is None:
            return
        user_id, session = found
        if session is None:
            await send_error(send, chat_not_found())
            return
        store = self.chat.store
        try:
            await store.stop(chat_id)  # a running turn, on any worker: it ends promptly
            async with store.lock(chat_id):  # ...and no new turn starts meanwhile
                await self._delete(session, user_id)
                await store.forget(chat_id)
        except StoreUnavailable as exc:
            logger.error("Stream store unavailable for chat %r: %s", chat_id, exc)
            METRICS.store_error("streams", "delete")
            await send_error(send, store_unavailable())
            return
        except Exception as exc:
            logger.error("Could not delete chat %r: %s", chat_id, failure(exc))
            METRICS.store_error("sessions", "delete")
            await send_error(send, session_unavailable())
            return
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _delete(self, session: Session, user_id: str) -> None:
        """The chat's artifacts (not the user's own, ``user:`` ones), then its session."""
        runtime = self.chat.runtime
        await runtime.artifacts.delete(user_id, session.id)
        await runtime.session_service.delete_session(
            app_name=runtime.app_name, user_id=user_id, session_id=session.id
        )
