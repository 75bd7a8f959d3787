"""Persistent sessions: ``session_db`` / ``--session-db`` with ADK's sqlite service
(always tested) and ADK's ``DatabaseSessionService`` on PostgreSQL (tested when the
machine has PostgreSQL's server binaries: a throwaway server is started for the
session; ``scripts/test`` installs Debian's ``postgresql`` when they are missing).

Every app instance here is a separate ``AdkApp`` served by its own uvicorn on its
own event loop, sharing nothing with the others but the database: what one
instance wrote, the next one ("the process after a restart") must find there.
"""

from __future__ import annotations

import asyncio
import importlib.util
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.adk.sessions import BaseSessionService, InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService

from adk_asgi import AdkApp
from adk_asgi.adk.runtime import app_name_of
from adk_asgi.adk.sessions import session_service_from_url
from adk_asgi.cli.build import build_app
from adk_asgi.cli.flags import parser
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.middleware import AdkMiddleware

from support import Chat, LoopbackServer, Serve, parse_sse, text_of, user_message
from support.pg_server import PostgresServer

HAS_DB_EXTRA = all(importlib.util.find_spec(m) for m in ("sqlalchemy", "asyncpg"))
NO_DB_EXTRA = "needs the postgres extra: pip install -e '.[postgres]' (google-adk[db], asyncpg)"
# The throwaway PostgreSQL server: the `postgres` fixture (conftest.py).


@pytest.fixture(params=["sqlite", "postgresql"])
def session_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store of each kind: its URL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.db'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database(f"t_{uuid.uuid4().hex[:12]}")


def _app(session_db: str) -> AdkApp:
    return AdkApp(build_demo_agent(token_delay=0), session_db=session_db, warm_up=False)


def _post(url: str, body: dict[str, Any], status: int = 200) -> list[Any]:
    response = httpx.post(url, json=body, timeout=30)
    assert response.status_code == status, response.text
    return parse_sse(response.text) if status == 200 else [response.json()]


DEMO_APP = app_name_of(build_demo_agent())
"""The app name the demo agent's chats are stored under (its root agent's name)."""


def _usage(chunks: list[Any]) -> dict[str, Any]:
    finish = next(c for c in chunks if isinstance(c, dict) and c["type"] == "finish")
    return dict(finish["messageMetadata"]["usage"])


async def _read_session(session_db: str, chat_id: str) -> Any:
    """The session as a third, independent service sees it in the database."""
    service = session_service_from_url(session_db)
    try:
        return await service.get_session(app_name=DEMO_APP, user_id="anonymous", session_id=chat_id)
    finally:
        close = getattr(service, "close", None)
        if close is not None:
            await close()


# -- session_service_from_url / --session-db -------------------------------------------


def test_session_service_from_url_kinds(tmp_path: Path) -> None:
    assert isinstance(session_service_from_url(None), InMemorySessionService)
    assert isinstance(session_service_from_url("memory://"), InMemorySessionService)
    for url in (f"sqlite:///{tmp_path / 'a.db'}", f"sqlite+aiosqlite:///{tmp_path / 'b.db'}"):
        assert isinstance(session_service_from_url(url), SqliteSessionService)
    if not HAS_DB_EXTRA:
        pytest.skip(NO_DB_EXTRA)
    from google.adk.sessions import DatabaseSessionService

    # Building the service opens no connection: no server is needed for this part.
    service = session_service_from_url("postgresql+asyncpg://u:p@127.0.0.1:1/db")
    assert isinstance(service, DatabaseSessionService)


def test_cli_builds_the_app_on_either_store(session_db: str) -> None:
    args = parser().parse_args(["serve", "--session-db", session_db, "--token-delay", "0"])
    app = build_app(args)
    assert isinstance(app, AdkMiddleware)
    service: BaseSessionService = app.adk.runtime.session_service
    # sqlite: ADK's service, hardened by a subclass (adk_asgi/core/sqlite.py).
    expected = (
        "SqliteSessionService" if session_db.startswith("sqlite") else "DatabaseSessionService"
    )
    assert expected in {cls.__name__ for cls in type(service).__mro__}


def test_cli_serve_persists_to_either_store(session_db: str) -> None:
    """``adk-asgi serve --session-db URL`` in a real process: a turn lands in the store,
    where a service of our own finds it after the process is gone."""
    server = Serve("--session-db", session_db, token_delay=0, log_level="warning")
    with server:
        chunks = _post(server.url, {"id": "cli-chat", "messages": [user_message("hello", "u-cli")]})
        assert chunks[-1] == "[DONE]" and text_of(chunks)
    session = asyncio.run(_read_session(session_db, "cli-chat"))
    assert session is not None, server.output()
    authors = [e.author for e in session.events]
    assert authors[0] == "user" and set(authors[1:]) == {"assistant"}, authors
    assert session.events[0].content.parts[0].text == "hello"


# -- through the app: history and approvals outlive the process ------------------------


def test_history_persists_across_app_instances(session_db: str) -> None:
    """Turn 1 on instance 1; instance 1 goes away; turn 2 on instance 2 carries only the
    new message, and the model still sees turn 1 (the demo model's input-token count
    covers the whole history it is given)."""
    chat_id = "persist"
    with LoopbackServer(_app(session_db)) as first:
        turn1 = _post(
            first.url,
            {
                "id": chat_id,
                "message": user_message(
                    "My favourite colour is ultramarine blue, remember it.", "u1"
                ),
            },
        )
    assert turn1[-2]["type"] == "finish"
    with LoopbackServer(_app(session_db)) as second:
        turn2 = _post(second.url, {"id": chat_id, "message": user_message("And now?", "u2")})
        fresh = _post(second.url, {"id": "fresh", "message": user_message("And now?", "u3")})
    # The same new message, with and without the stored history in front of it.
    assert _usage(turn2)["inputTokens"] > _usage(fresh)["inputTokens"] + 10

    session = asyncio.run(_read_session(session_db, chat_id))
    assert session is not None
    users = [e for e in session.events if e.author == "user"]
    assert [e.content.parts[0].text for e in users] == [
        "My favourite colour is ultramarine blue, remember it.",
        "And now?",
    ]
    assert [e.custom_metadata["adk_asgi"]["userMessageId"] for e in users] == ["u1", "u2"]
    answers = [e for e in session.events if e.author == "assistant"]
    assert "".join(p.text or "" for p in answers[0].content.parts) == text_of(turn1)
    assert len({e.invocation_id for e in session.events}) == 2


@pytest.mark.parametrize("mode", ["restart", "second-instance"])
def test_approval_on_another_instance(session_db: str, mode: str) -> None:
    """Mirrors tests/pauses/test_hitl.py's sqlite process tests, on both stores: the approval
    requested by instance 1 is answered on instance 2 (after instance 1 stopped, or
    while it still runs); the payment runs exactly once, and replaying the approval on
    instance 1 executes nothing."""
    recipient = f"Pg{mode.title().replace('-', '')}"
    PAYMENT_LOG.clear()
    first = LoopbackServer(_app(session_db)).__enter__()
    second: LoopbackServer | None = None
    try:
        chat = Chat(httpx.Client(), f"approve-{mode}")
        chat.messages.append(user_message(f"Send 50 dollars to {recipient}", "u0"))
        head = _post(first.url, chat.body())
        chat.absorb(head)
        assert head[-2]["type"] == "finish" and head[-2]["finishReason"] == "tool-calls"
        assert not PAYMENT_LOG  # nothing runs before the answer
        chat.approve(0, True)
        if mode == "restart":
            first.__exit__(None, None, None)  # stopping twice is harmless
        second = LoopbackServer(_app(session_db)).__enter__()
        rest = _post(second.url, chat.body())
        assert rest[0] == {"type": "start", "messageId": chat.messages[-1]["id"]}
        output = next(c for c in rest if c["type"] == "tool-output-available")
        assert output["output"]["status"] == "success"
        assert f"Sent 50 USD to {recipient}" in text_of(rest)
        assert [p["recipient"] for p in PAYMENT_LOG] == [recipient]
        if mode == "second-instance":
            replay = _post(first.url, chat.body(), status=409)
            assert replay[0]["error"]["code"] == "unknown_tool_call"
            assert len(PAYMENT_LOG) == 1
    finally:
        first.__exit__(None, None, None)
        if second is not None:
            second.__exit__(None, None, None)


def test_denial_on_another_instance_runs_nothing(session_db: str) -> None:
    PAYMENT_LOG.clear()
    chat = Chat(httpx.Client(), "deny")
    chat.messages.append(user_message("Send 20 dollars to PgDenied", "u0"))
    with LoopbackServer(_app(session_db)) as first:
        chat.absorb(_post(first.url, chat.body()))
    chat.approve(0, False)
    with LoopbackServer(_app(session_db)) as second:
        rest = _post(second.url, chat.body())
    assert any(c["type"] == "tool-output-denied" for c in rest if isinstance(c, dict))
    assert PAYMENT_LOG == []
