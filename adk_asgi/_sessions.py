"""Session services from a URL, and per-session turn serialization."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from google.adk.sessions import BaseSessionService, InMemorySessionService

__all__ = ("SessionLocks", "session_service_from_url")


def session_service_from_url(url: str | None) -> BaseSessionService:
    """``None``/``memory://`` -> in memory; ``sqlite:///path`` -> ADK's sqlite service
    (aiosqlite, no SQLAlchemy); any other SQLAlchemy async URL (``postgresql+asyncpg://``)
    -> ADK's ``DatabaseSessionService`` (needs ``google-adk[db]``)."""
    if not url or url.startswith("memory:"):
        return InMemorySessionService()
    if url.startswith(("sqlite:", "sqlite+aiosqlite:")):
        from google.adk.sessions.sqlite_session_service import SqliteSessionService

        # SQLAlchemy convention, parsed by ADK: sqlite:///relative.db, sqlite:////abs.db
        return SqliteSessionService(url)
    from google.adk.sessions import DatabaseSessionService

    return DatabaseSessionService(db_url=url)


class SessionLocks:
    """One lock per (user, session): ADK interleaves the events of concurrent runs
    on one session, so turns of one chat run one after another. Entries are
    dropped when no request holds or waits for them."""

    __slots__ = ("_locks",)

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, user_id: str, session_id: str) -> AsyncIterator[None]:
        key = (user_id, session_id)
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock_, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock_, users - 1)

    def __len__(self) -> int:
        return len(self._locks)
