"""A page of chats from the SQL services' keyset query is the page ADK's ``list_sessions``
gives (the generic way), ties in the update time included."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from google.adk.sessions import InMemorySessionService

from adk_asgi.adk.sessions import session_service_from_url
from adk_asgi.history.chat_index import list_page
from adk_asgi.history.chats import TITLE_KEY, chat_page

from support import sqlite_threads_done


async def pages(service: object, limit: int) -> list[list[tuple[str, str | None]]]:
    out: list[list[tuple[str, str | None]]] = []
    cursor = None
    while True:
        page, cursor = await list_page(service, "a", "u", limit, cursor)  # type: ignore[arg-type]
        out.append([(c.id, c.title) for c in page])
        if cursor is None:
            return out


async def test_keyset_pages_equal_the_generic_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "chats.db"
    service = session_service_from_url(f"sqlite:///{path}")
    for i in range(23):
        await service.create_session(
            app_name="a", user_id="u", session_id=f"c{i:02d}", state={TITLE_KEY: f"chat {i}"}
        )
    await service.create_session(app_name="a", user_id="other", session_id="theirs")
    with sqlite3.connect(path) as db:  # ties: several chats updated at the same instant
        db.execute(
            "UPDATE sessions SET update_time = 1700000000.25 "
            "WHERE id IN ('c03', 'c07', 'c11', 'c12', 'c19')"
        )
    listed = await service.list_sessions(app_name="a", user_id="u")
    generic: list[list[tuple[str, str | None]]] = []
    cursor = None
    while True:
        page, cursor = chat_page(listed.sessions, 4, cursor)
        generic.append([(c.id, c.title) for c in page])
        if cursor is None:
            break
    fast = await pages(service, 4)
    assert "the slow way" not in caplog.text  # the keyset query ran    assert fast == generic
    assert sum(len(p) for p in fast) == 23 and len(fast) == 6
    assert [c for p in fast for c, _ in p][-5:] == ["c19", "c12", "c11", "c07", "c03"]
    await sqlite_threads_done()


async def test_other_services_list_the_generic_way() -> None:
    service = InMemorySessionService()
    for i in range(5):
        await service.create_session(app_name="a", user_id="u", session_id=f"m{i}")
    assert [len(p) for p in await pages(service, 2)] == [2, 2, 1]
