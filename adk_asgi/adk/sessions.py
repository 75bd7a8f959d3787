"""ADK sessions: the service from a URL, get-or-create, the bridge's tags on session events,
and how a session service's failure is told (``failure``, ``session_failure``)."""

from __future__ import annotations

import sqlite3
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from google.adk.events import Event
from google.adk.sessions import BaseSessionService, Session

__all__ = (
    "LIVE_MESSAGE_KEY",
    "META_KEY",
    "SessionUnavailable",
    "event_meta",
    "failure",
    "get_or_create_session",
    "session_failure",
    "session_service_from_url",
)

META_KEY: Final = "adk_asgi"
"""The key of the bridge's tags in ``custom_metadata`` (runs and session events)."""
LIVE_MESSAGE_KEY: Final = "liveMessageId"
"""The page's message id of a live turn, among the tags of each of its events: the history
names the message as the page did."""


class SessionUnavailable(Exception):
    """The ADK session service failed (its database is down, locked, read-only): requests
    get ``503 session_unavailable`` with ``Retry-After``, WebSockets close 1013."""


# Exceptions whose text never quotes what a request carried: sqlite's messages name
# tables and columns, OSError's the errno and address. A database driver's or SQLAlchemy's
# text can quote the statement's parameters, the user's words: only their classes are told.
_TELLING: Final = (sqlite3.Error, OSError, SessionUnavailable)


def failure(exc: BaseException) -> str:
    """A dependency's failure in one log line: the exception's class, the class of the
    error at the root of what it wraps (a driver's inside SQLAlchemy's), and its text only
    where that text cannot carry user content (``_TELLING``)."""
    name = type(exc).__name__
    root: BaseException = exc
    for _ in range(4):  # SQLAlchemy -> its adapter -> the driver's own error
        inner = getattr(root, "orig", None) or root.__cause__
        if not isinstance(inner, BaseException) or inner is root:
            break
        root = inner
    if root is not exc:
        name = f"{name} ({type(root).__name__})"
    if not isinstance(exc, _TELLING):
        return name
    if isinstance(exc, OSError) and exc.strerror:
        # Its errno and reason, never its file names: no log line names a server path.
        return f"{name}: [Errno {exc.errno}] {exc.strerror}"
    text = " ".join(str(exc).split())
    return f"{name}: {text[:300]}" if text else name


def session_failure(exc: BaseException) -> bool:
    """``exc`` came out of a session service (its database failed under ADK's run, e.g.
    while ``append_event`` stored the answer): a frame of its traceback, or of a cause's,
    is a method of a ``BaseSessionService``."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, SessionUnavailable):
            return True
        tb = error.__traceback__
        while tb is not None:
            if isinstance(tb.tb_frame.f_locals.get("self"), BaseSessionService):
                return True
            tb = tb.tb_next
        error = error.__cause__ or error.__context__
    return False


def event_meta(event: Event) -> dict[str, Any]:
    """The bridge's tags on a session event (``custom_metadata.adk_asgi``)."""
    meta = (event.custom_metadata or {}).get(META_KEY)
    return meta if isinstance(meta, dict) else {}


def session_service_from_url(url: str | None) -> BaseSessionService:
    """``None``/``memory://`` -> in memory (bounded: ``?max_sessions=N&idle_ttl=SECONDS``,
    default 10,000 and 6 h); ``sqlite:///path`` -> ADK's sqlite service
    (aiosqlite, no SQLAlchemy; hardened: ``adk/sqlite.py``); any other SQLAlchemy async URL (``postgresql+asyncpg://``)
    -> ADK's ``DatabaseSessionService`` (needs ``google-adk[db]``)."""
    if not url or url.startswith("memory:"):
        return _memory(url or "memory://")
    if url.startswith(("sqlite:", "sqlite+aiosqlite:")):
        from .sqlite import SqliteSessions

        # SQLAlchemy convention, parsed by ADK: sqlite:///relative.db, sqlite:////abs.db
        return SqliteSessions(url)
    from google.adk.sessions import DatabaseSessionService

    # SQLAlchemy quotes a failed statement's parameters (the user's words) in its errors.
    return DatabaseSessionService(db_url=url, hide_parameters=True)


def _memory(url: str) -> BaseSessionService:
    """``memory://`` with optional ``?max_sessions=N&idle_ttl=SECONDS`` (bounded either
    way; ``adk/memory_sessions.py``)."""
    from .memory_sessions import DEFAULT_IDLE_TTL, DEFAULT_MAX_SESSIONS, BoundedMemorySessions

    query = parse_qs(urlsplit(url).query)
    unknown = set(query) - {"max_sessions", "idle_ttl"}
    if unknown:
        raise ValueError(f"memory:// takes max_sessions and idle_ttl, not {', '.join(unknown)}")
    try:
        max_sessions = int(query.get("max_sessions", [DEFAULT_MAX_SESSIONS])[0])
        idle_ttl = float(query.get("idle_ttl", [DEFAULT_IDLE_TTL])[0])
    except ValueError:
        raise ValueError(
            "memory://?max_sessions= takes a whole number and idle_ttl= seconds"
        ) from None
    return BoundedMemorySessions(max_sessions=max_sessions, idle_ttl=idle_ttl)


async def get_or_create_session(
    service: BaseSessionService, app_name: str, user_id: str, session_id: str
) -> tuple[Session, bool]:
    """The session, and whether it was created just now."""
    session = await service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
    if session is not None:
        return session, False
    session = await service.create_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    return session, True
