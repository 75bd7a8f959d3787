"""SqliteSessions: ADK's sqlite session service, hardened for a server (what
``sqlite:///`` URLs get).

ADK's ``SqliteSessionService`` opens one connection per call with SQLite's defaults.
Under a server's concurrency that gave ``database is locked`` (a rollback journal, a 5 s
busy timeout, and writers of one process polling for the lock against each other), and a
database file recreated under a running server (its directory deleted and made again)
stayed without tables until a restart. Here:

- **WAL** (readers never wait for the writer) and a **busy timeout** of ``busy_timeout``
  seconds on every connection;
- the writes of one process take turns (an ``asyncio.Lock``) instead of polling SQLite's
  lock, so only other processes contend for it;
- a call that still finds the database locked is retried (``retries`` times);
- ``no such table``: the schema is created again and the call retried once.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import aiosqlite
from google.adk.events import Event
from google.adk.sessions import Session
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from typing_extensions import override

__all__ = ("SqliteSessions",)

logger = logging.getLogger("adk_asgi")

T = TypeVar("T")


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _no_tables(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "no such table" in str(exc)


class SqliteSessions(SqliteSessionService):
    """``SqliteSessionService`` with WAL, a busy timeout, turn-taking writes and retries."""

    def __init__(self, db_path: str, *, busy_timeout: float = 30.0, retries: int = 3) -> None:
        super().__init__(db_path)
        self._busy_ms = int(busy_timeout * 1000)
        self._retries = retries
        self._writes = asyncio.Lock()
        self._wal = False

    @property
    def _in_memory(self) -> bool:
        return self._db_path in ("", ":memory:")

    @asynccontextmanager
    async def _get_db_connection(self) -> AsyncIterator[aiosqlite.Connection]:
        async with super()._get_db_connection() as db:
            if not self._in_memory:
                await db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
                if not self._wal:
                    # Persistent in the file; set again when the file was recreated.
                    await db.execute("PRAGMA journal_mode = WAL")
                    self._wal = True
            yield db

    async def _call(self, call: Callable[[], Awaitable[T]], *, write: bool) -> T:
        attempt = 0
        while True:
            try:
                if write and not self._in_memory:
                    async with self._writes:
                        return await call()
                return await call()
            except sqlite3.OperationalError as exc:
                attempt += 1
                if _no_tables(exc) and attempt == 1:
                    logger.warning("The sqlite session database %s has no tables (was it "
                                   "recreated?): creating them again", self._db_path)
                    self._schema_ready = self._wal = False
                    continue
                if _locked(exc) and attempt <= self._retries:
                    await asyncio.sleep(0.05 * attempt)
                    continue
                raise

    @override
    async def create_session(self, **kwargs: Any) -> Session:
        parent = super().create_session
        return await self._call(lambda: parent(**kwargs), write=True)

    @override
    async def get_session(self, **kwargs: Any) -> Session | None:
        parent = super().get_session
        return await self._call(lambda: parent(**kwargs), write=False)

    @override
    async def delete_session(self, **kwargs: Any) -> None:
        parent = super().delete_session
        await self._call(lambda: parent(**kwargs), write=True)

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        parent = super().append_event
        return await self._call(lambda: parent(session, event), write=True)
