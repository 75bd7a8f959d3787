"""A user's chats as a list: titles, the order, pages and their cursors.

A chat is an ADK session. Its title and creation time live in the session's state, written
with the first turn (``TITLE_KEY``, ``CREATED_KEY``), so a page of the list needs the
sessions' state only, never their events (ADK's ``list_sessions`` returns state without
events on every service adk-asgi ships: memory, sqlite, SQL databases). An app names a
chat by writing ``TITLE_KEY`` itself (a tool, a callback: ``tool_context.state[
TITLE_KEY] = ...``) or through ``ChatListOptions.title``; otherwise the title is the
first user text, shortened.

The list is newest first (the session's last update, then its id); a page's cursor is
the position of its last chat, opaque to clients, so a chat that moves to the top while a
client pages on is not listed twice.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import msgspec
from google.adk.sessions import Session
from google.genai import types

from ..options import ChatListOptions
from ..transport.params import whole_number
from ..wire.errors import RequestError
from ..wire.request import valid_chat_id

__all__ = (
    "CREATED_KEY",
    "TITLE_KEY",
    "ChatSummary",
    "chat_page",
    "chat_title",
    "cursor_position",
    "first_user_text",
    "iso_time",
    "page_limit",
    "shorten_title",
    "summary_of",
)

TITLE_KEY: Final = "adk_asgi:title"
"""The session state key of a chat's title (the app may write it)."""
CREATED_KEY: Final = "adk_asgi:created"
"""The session state key of when a chat's first turn was written (seconds since the epoch)."""


def chat_title(options: ChatListOptions, text: str) -> str:
    """A chat's title from its first user text: the app's ``title`` hook, else the text
    shortened to ``title_length``."""
    made: str | None = None
    if options.title is not None:
        made = options.title(text)
    if isinstance(made, str) and made.strip():
        return made.strip()[: options.title_length * 4]
    return shorten_title(text, options.title_length)


def shorten_title(text: str, length: int = 60) -> str:
    """The text on one line, cut at a word boundary with an ellipsis past ``length``."""
    line = " ".join(text.split())
    if len(line) <= length:
        return line
    cut = line[: length - 1]
    space = cut.rfind(" ")
    if space >= length // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + "…"


def first_user_text(contents: Iterable[types.Content | None]) -> str:
    """The text of the first content that has any (a user's message)."""
    for content in contents:
        if content is None:
            continue
        text = " ".join(p.text for p in content.parts or () if p.text and not p.thought)
        if text.strip():
            return text
    return ""


def iso_time(seconds: float) -> str:
    """Seconds since the epoch as an ISO 8601 UTC time with milliseconds (``...Z``)."""
    moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class ChatSummary:
    id: str
    title: str | None
    created: float
    updated: float

    @classmethod
    def of(cls, session: Session) -> ChatSummary:
        return summary_of(session.id, session.state or {}, float(session.last_update_time or 0.0))

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "createdAt": iso_time(self.created),
            "updatedAt": iso_time(self.updated),
        }


def summary_of(chat_id: str, state: dict[str, Any], updated: float) -> ChatSummary:
    """A chat's summary from its session's id, state and last update time."""
    title = state.get(TITLE_KEY)
    created = state.get(CREATED_KEY)
    return ChatSummary(
        chat_id,
        title if isinstance(title, str) and title else None,
        float(created) if isinstance(created, int | float) else updated,
        updated,
    )


def _cursor(summary: ChatSummary) -> str:
    raw = json.dumps([summary.updated, summary.id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


_MAX_CURSOR: Final = 1024
"""The longest cursor this server gives (a time and a chat id of at most 256 characters)."""
_LATEST: Final = dt.datetime(9999, 12, 31, tzinfo=dt.UTC).timestamp()
_position: Final = msgspec.json.Decoder(tuple[float, str])


def cursor_position(cursor: str) -> tuple[float, str]:
    """Where a page ends: the last chat's update time and id (``422 invalid_cursor``).
    Checked whole before any store is asked: a time every store can compare (finite, from
    the epoch to the year 9999), a valid chat id, nothing nested."""
    if len(cursor) <= _MAX_CURSOR:
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            updated, chat_id = _position.decode(raw)
        except (binascii.Error, ValueError, msgspec.DecodeError, RecursionError):
            pass
        else:
            if math.isfinite(updated) and 0 <= updated < _LATEST and valid_chat_id(chat_id):
                return updated, chat_id
    raise RequestError(422, "invalid_cursor", "`cursor` is not one this server gave.")


def page_limit(value: str | None, options: ChatListOptions) -> int:
    if value is None or value == "":
        return options.page_size
    limit = whole_number(value)
    if limit is None or not 0 < limit <= options.max_page_size:
        raise RequestError(
            422, "invalid_limit", f"`limit` is a whole number from 1 to {options.max_page_size}."
        )
    return limit


def chat_page(
    chats: Iterable[Session | ChatSummary], limit: int, cursor: str | None
) -> tuple[list[ChatSummary], str | None]:
    """One page of chats, newest first, after ``cursor``; and the next page's cursor."""
    summaries = sorted(
        (c if isinstance(c, ChatSummary) else ChatSummary.of(c) for c in chats),
        key=lambda c: (c.updated, c.id),
        reverse=True,
    )
    if cursor:
        after = cursor_position(cursor)
        summaries = [c for c in summaries if (c.updated, c.id) < after]
    page = summaries[:limit]
    more = len(summaries) > limit
    return page, (_cursor(page[-1]) if more and page else None)
