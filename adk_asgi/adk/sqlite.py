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
- ``no such table``: the schema is created again and the call retried once;
- ``transaction()``: the calls inside share one connection and commit together, or not at
  all (history restore: a session and its seeded events, ``http/turn/seed.py``).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
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
        self._batch: ContextVar[_Uncommitted | None] = ContextVar(
            "adk_asgi_sqlite_batch", default=None
        )

    @property
    def _in_memory(self) -> bool:
        return self._db_path in ("", ":memory:")

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """The calls of this task inside share one connection and one transaction:
        committed when the block ends, rolled back if it raises."""
        if self._batch.get() is not None:
            raise RuntimeError("SqliteSessions.transaction() does not nest")
        async with self._writes, self._connection() as db:
            token = self._batch.set(_Uncommitted(db))
            try:
                yield
            except BaseException:
                await db.rollback()
                raise
            else:
                await db.commit()
            finally:
                self._batch.reset(token)

    @asynccontextmanager
    async def _get_db_connection(self) -> AsyncIterator[aiosqlite.Connection]:
        batch = self._batch.get()
        if batch is not None:
            yield batch  # type: ignore[misc]  # quacks like the connection it wraps
            return
        async with self._connection() as db:
            yield db

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[aiosqlite.Connection]:
        async with super()._get_db_connection() as db:
            if not self._in_memory:
                await db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
                await db.execute("PRAGMA synchronous = NORMAL")
                if not self._wal:
                    # Persistent in the file; set again when the file was recreated.
                    await db.execute("PRAGMA journal_mode = WAL")
                    self._wal = True
            yield db

    async def _call(self, call: Callable[[], Awaitable[T]], *, write: bool) -> T:
        if self._batch.get() is not None:
            return await call()  # inside transaction(): it holds the lock, it fails whole
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
                    logger.warning(
                        "The sqlite session database %s has no tables (was it "
                        "recreated?): creating them again",
                        self._db_path,
                    )
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


class _Uncommitted:
    """A connection whose ``commit`` waits for the end of ``transaction()``."""

    __slots__ = ("_db",)

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    async def commit(self) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)
