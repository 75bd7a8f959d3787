"""One page of a user's chats from the session store: a keyset query on the SQL services,
ADK's ``list_sessions`` elsewhere.

ADK's ``list_sessions`` reads every session of the user (with its state, without its
events), so a page costs as much as all the user's chats. ADK's sqlite and SQL database
services keep sessions in a ``sessions`` table keyed by app, user and id, with the update
time: there a page is one indexed query for ``limit + 1`` rows after the cursor's position.
The query reads ADK's own tables through ADK's own handles (its connection and its schema
classes); should ADK's service change shape, the page falls back to ``list_sessions``.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

from google.adk.sessions import BaseSessionService

from .chats import ChatSummary, chat_page, cursor_position, summary_of

__all__ = ("list_page",)

logger = logging.getLogger("adk_asgi")

_DRIFT = (AttributeError, TypeError, ImportError)


async def list_page(
    service: BaseSessionService, app_name: str, user_id: str, limit: int, cursor: str | None
) -> tuple[list[ChatSummary], str | None]:
    """Up to ``limit`` chats after ``cursor``, newest first; the next page's cursor."""
    after = cursor_position(cursor) if cursor else None
    try:
        rows = await _keyset(service, app_name, user_id, limit + 1, after)
    except _DRIFT as exc:  # ADK changed its service: the generic way
        logger.warning("Listing chats the slow way (%s: %s)", type(exc).__name__, exc)
        rows = None
    if rows is None:
        listed = await service.list_sessions(app_name=app_name, user_id=user_id)
        return chat_page(listed.sessions, limit, cursor)
    return chat_page(rows, limit, None)


async def _keyset(
    service: BaseSessionService,
    app_name: str,
    user_id: str,
    count: int,
    after: tuple[float, str] | None,
) -> list[ChatSummary] | None:
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    if isinstance(service, SqliteSessionService):
        return await _sqlite(service, app_name, user_id, count, after)
    try:
        from google.adk.sessions import DatabaseSessionService
    except ImportError:
        return None
    if isinstance(service, DatabaseSessionService):
        return await _database(service, app_name, user_id, count, after)
    return None


async def _sqlite(
    service: Any, app_name: str, user_id: str, count: int, after: tuple[float, str] | None
) -> list[ChatSummary]:
    query = "SELECT id, state, update_time FROM sessions WHERE app_name=? AND user_id=?"
    params: list[Any] = [app_name, user_id]
    if after is not None:
        query += " AND (update_time < ? OR (update_time = ? AND id < ?))"
        params += [after[0], after[0], after[1]]
    query += " ORDER BY update_time DESC, id DESC LIMIT ?"
    params.append(count)
    async with service._get_db_connection() as db:
        rows = await db.execute_fetchall(query, params)
    return [
        summary_of(row["id"], json.loads(row["state"] or "{}"), float(row["update_time"]))
        for row in rows
    ]


async def _database(
    service: Any, app_name: str, user_id: str, count: int, after: tuple[float, str] | None
) -> list[ChatSummary]:
    from sqlalchemy import and_, or_, select

    await service.prepare_tables()
    table = service._get_schema_classes().StorageSession
    statement = select(table).where(table.app_name == app_name, table.user_id == user_id)
    if after is not None:
        # Stored as naive UTC; compared at the microsecond the cursor carries.
        moment = dt.datetime.fromtimestamp(after[0], dt.UTC).replace(tzinfo=None)
        statement = statement.where(
            or_(table.update_time < moment, and_(table.update_time == moment, table.id < after[1]))
        )
    statement = statement.order_by(table.update_time.desc(), table.id.desc()).limit(count)
    async with service._rollback_on_exception_session(read_only=True) as db:
        rows = (await db.execute(statement)).scalars().all()
    return [summary_of(row.id, dict(row.state or {}), row.get_update_timestamp()) for row in rows]
