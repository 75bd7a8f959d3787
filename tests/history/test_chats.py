"""A user's chats: ``GET {api}`` (newest first, paginated, titled), ``GET {api}/{chatId}``
and ``DELETE {api}/{chatId}``, on every session service adk-asgi ships (memory, sqlite,
PostgreSQL), over a real server; owner-only on every chat route."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.adk.agents.callback_context import CallbackContext
from google.adk.artifacts import InMemoryArtifactService
from google.genai import types

from adk_asgi import AdkApp, AuthError, ChatListOptions, StreamingOptions, bearer_token
from adk_asgi.demo import build_demo_agent
from adk_asgi.history.chats import CREATED_KEY, TITLE_KEY, iso_time, shorten_title

from support import LoopbackServer, chat_body, parse_sse, user_message

USERS = {"token-ann": "ann", "token-bob": "bob"}
ANN = {"authorization": "Bearer token-ann"}
BOB = {"authorization": "Bearer token-bob"}


def who(scope: Any) -> str:
    user = USERS.get(bearer_token(scope) or "")
    if user is None:
        raise AuthError(401)
    return user


def name_on_request(callback_context: CallbackContext) -> types.Content | None:
    """The app names a chat itself (a callback writes the title key)."""
    said = callback_context.user_content
    text = said.parts[0].text if said is not None and said.parts else ""
    if text and text.startswith("name it "):
        callback_context.state[TITLE_KEY] = text[len("name it ") :]
    return None


@pytest.fixture(scope="module", params=["memory", "sqlite", "postgresql"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LoopbackServer]:
    session_db = None
    if request.param == "sqlite":
        session_db = f"sqlite:///{tmp_path_factory.mktemp('chats') / 'sessions.db'}"
    elif request.param == "postgresql":
        postgres = request.getfixturevalue("postgres")
        session_db = postgres.create_database(f"chats_{int(time.time() * 1000) % 10**9}")
    agent = build_demo_agent(token_delay=0.002)
    agent.before_agent_callback = name_on_request
    app = AdkApp(
        agent,
        session_db=session_db,
        authenticate=who,
        warm_up=False,
        artifact_service=InMemoryArtifactService(),
        streaming=StreamingOptions(resume_grace=30),
        chats=ChatListOptions(
            page_size=3, title=lambda text: None if "plain" in text else text.title()
        ),
    )
    with LoopbackServer(app) as running:
        running.app = app  # type: ignore[attr-defined]
        yield running


def post(
    server: LoopbackServer, chat_id: str, text: str, headers: dict[str, str] = ANN
) -> list[Any]:
    response = httpx.post(
        server.url + "/",
        headers=headers,
        timeout=30,
        json=chat_body(chat_id, user_message(text, f"u-{chat_id}-{text}")),
    )
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


def listed(server: LoopbackServer, headers: dict[str, str] = ANN, **params: Any) -> httpx.Response:
    return httpx.get(server.url + "/", headers=headers, params=params, timeout=10)


def test_list_paginate_title_delete(
    server: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = f"c{time.monotonic_ns() % 10**8}"
    ids = [f"{prefix}-{i}" for i in range(5)]
    post(server, ids[0], "hello plain words " + "very " * 20 + "long")
    for chat_id in ids[1:4]:
        post(server, chat_id, f"what about {chat_id}")
    post(server, ids[4], "name it Trip to Paris")
    post(server, ids[1], "and again")  # now the most recently updated

    seen: list[dict[str, Any]] = []
    cursor = None
    pages = 0
    while True:
        response = listed(server, **({"cursor": cursor} if cursor else {}))
        assert response.status_code == 200, response.text
        assert response.headers["cache-control"] == "no-store"
        body = response.json()
        assert len(body["chats"]) <= 3
        seen += [c for c in body["chats"] if c["id"].startswith(prefix)]
        pages += 1
        cursor = body["next"]
        if cursor is None:
            break
    assert [c["id"] for c in seen] == [ids[1], ids[4], ids[3], ids[2], ids[0]]
    assert "the slow way" not in caplog.text  # sqlite, PostgreSQL: the keyset query
    by_id = {c["id"]: c for c in seen}
    # no hook answer for "plain": the text, shortened; the hook's title; the app's own
    assert by_id[ids[0]]["title"] == shorten_title("hello plain words " + "very " * 20 + "long")
    assert by_id[ids[0]]["title"].endswith("…") and len(by_id[ids[0]]["title"]) <= 60
    assert by_id[ids[2]]["title"] == f"What About {ids[2]}".title()
    assert by_id[ids[4]]["title"] == "Trip to Paris"
    for chat in seen:
        assert chat["createdAt"].endswith("Z") and chat["updatedAt"] >= chat["createdAt"]
    assert by_id[ids[1]]["updatedAt"] > by_id[ids[1]]["createdAt"]

    # limit, bad limits and cursors
    first = listed(server, limit=1).json()
    assert len(first["chats"]) == 1 and first["next"]
    for bad in ("0", "101", "x", "-1"):
        response = listed(server, limit=bad)
        assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_limit"
    response = listed(server, cursor="not-a-cursor")
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_cursor"
    assert listed(server, headers={}).status_code == 401

    # another user sees none of them
    assert not [c for c in listed(server, BOB).json()["chats"] if c["id"].startswith(prefix)]

    # the history, then delete
    read = httpx.get(f"{server.url}/{ids[1]}", headers=ANN, timeout=10)
    assert read.headers["cache-control"] == "no-store"
    history = read.json()
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"] * 2
    deleted = httpx.delete(f"{server.url}/{ids[1]}", headers=ANN, timeout=10)
    assert deleted.status_code == 204 and deleted.content == b""
    assert httpx.get(f"{server.url}/{ids[1]}", headers=ANN, timeout=10).status_code == 404
    assert httpx.delete(f"{server.url}/{ids[1]}", headers=ANN, timeout=10).status_code == 404
    assert ids[1] not in [c["id"] for c in listed(server, limit=100).json()["chats"]]
    # the id is still Ann's: a new chat under it starts afresh, and Bob cannot take it
    response = httpx.post(
        server.url + "/", headers=BOB, timeout=10, json=chat_body(ids[1], user_message("mine now?"))
    )
    assert response.status_code == 404
    post(server, ids[1], "a fresh start")
    again = httpx.get(f"{server.url}/{ids[1]}", headers=ANN, timeout=10).json()
    assert [m["role"] for m in again["messages"]] == ["user", "assistant"]


def test_a_regenerated_first_message_keeps_its_title(server: LoopbackServer) -> None:
    """Regenerating the first answer rewinds the session to before it (its state too):
    the title is written again."""
    chat_id = f"regen-{time.monotonic_ns() % 10**8}"
    first = user_message("what about regenerating", f"u-{chat_id}")
    created = None
    for trigger in ("submit-message", "regenerate-message"):
        response = httpx.post(
            server.url + "/",
            headers=ANN,
            timeout=30,
            json=chat_body(chat_id, first, trigger=trigger),
        )
        assert response.status_code == 200 and "[DONE]" in response.text
        created = (
            created
            or next(c for c in listed(server, limit=100).json()["chats"] if c["id"] == chat_id)[
                "createdAt"
            ]
        )
    chats = listed(server, limit=100).json()["chats"]
    assert next(c for c in chats if c["id"] == chat_id)["title"] == "What About Regenerating"
    app: AdkApp = server.app  # type: ignore[attr-defined]

    async def state() -> dict[str, Any]:
        session = await app.runtime.session_service.get_session(
            app_name=app.runtime.app_name, user_id="ann", session_id=chat_id
        )
        assert session is not None
        return dict(session.state)

    kept = asyncio.run_coroutine_threadsafe(state(), server.loop).result(10)  # type: ignore[arg-type]
    assert kept[TITLE_KEY] == "What About Regenerating"  # stored, not read from the events
    assert iso_time(kept[CREATED_KEY]) == created  # and the chat is as old as it was
    history = httpx.get(f"{server.url}/{chat_id}", headers=ANN, timeout=10).json()
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]


def test_another_user_gets_404_on_every_route(server: LoopbackServer) -> None:
    chat_id = f"ann-only-{time.monotonic_ns() % 10**8}"
    post(server, chat_id, "hello")
    routes = [
        ("GET", f"/{chat_id}"),
        ("DELETE", f"/{chat_id}"),
        ("GET", f"/{chat_id}/stream"),
        ("DELETE", f"/{chat_id}/stream"),
        ("POST", f"/{chat_id}/tool-output"),
        ("GET", f"/{chat_id}/evalset"),
    ]
    for method, path in routes:
        response = httpx.request(
            method,
            server.url + path,
            headers=BOB,
            timeout=10,
            json={"toolCallId": "x", "output": {}},
        )
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["error"]["code"] == "chat_not_found"
    response = httpx.post(
        server.url + "/",
        headers=BOB,
        timeout=10,
        json=chat_body(chat_id, user_message("mine now?")),
    )
    assert response.status_code == 404
    # and an unknown chat looks the same
    assert httpx.get(f"{server.url}/nope-{chat_id}", headers=ANN, timeout=10).status_code == 404
    # Ann's chat is untouched, and hers to export
    history = httpx.get(f"{server.url}/{chat_id}", headers=ANN, timeout=10).json()
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    exported = httpx.get(f"{server.url}/{chat_id}/evalset", headers=ANN, timeout=10)
    assert exported.status_code == 200
    assert exported.json()["eval_cases"][0]["session_input"]["user_id"] == "ann"


def test_delete_stops_a_running_turn(server: LoopbackServer) -> None:
    """DELETE while a turn streams: the turn ends (abort), then the chat is gone."""
    chat_id = f"busy-{time.monotonic_ns() % 10**8}"
    got: dict[str, Any] = {"chunks": []}
    streaming = threading.Event()

    def run() -> None:
        with httpx.stream(
            "POST",
            server.url + "/",
            headers=ANN,
            timeout=60,
            json=chat_body(chat_id, user_message("bench 3000")),
        ) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    got["chunks"].append(line[6:])
                    if len(got["chunks"]) > 10:
                        streaming.set()
        streaming.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert streaming.wait(30)
    started = time.monotonic()
    deleted = httpx.delete(f"{server.url}/{chat_id}", headers=ANN, timeout=30)
    assert deleted.status_code == 204, deleted.text
    thread.join(10)
    assert not thread.is_alive()
    assert '{"type":"abort"}' in got["chunks"] and got["chunks"][-1] == "[DONE]"
    print(f"deleted {time.monotonic() - started:.2f} s after asking, mid-turn")
    assert httpx.get(f"{server.url}/{chat_id}", headers=ANN, timeout=10).status_code == 404
    assert httpx.get(f"{server.url}/{chat_id}/stream", headers=ANN, timeout=10).status_code == 204


def test_delete_removes_artifacts_and_the_recorded_stream(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """The chat's artifacts go (the user's own ``user:`` ones stay), and so does a stream
    kept for a resume (a turn whose page left)."""
    app: AdkApp = server.app  # type: ignore[attr-defined]
    service = app.runtime.artifacts.service
    assert service is not None
    chat_id = f"files-{time.monotonic_ns() % 10**8}"
    post(server, chat_id, "hello")
    # a turn whose page left mid-stream: resumable for resume_grace
    with httpx.stream(
        "POST",
        server.url + "/",
        headers=ANN,
        timeout=30,
        json=chat_body(chat_id, user_message("bench 300")),
    ) as response:
        for _line in response.iter_lines():
            break
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        resumed = httpx.get(f"{server.url}/{chat_id}/stream", headers=ANN, timeout=30)
        if resumed.status_code == 200 and "[DONE]" in resumed.text:
            break
        time.sleep(0.05)
    assert resumed.status_code == 200

    async def save() -> None:
        for name in ("chart.png", "user:avatar.png"):
            await service.save_artifact(
                app_name=app.runtime.app_name,
                user_id="ann",
                session_id=chat_id,
                filename=name,
                artifact=types.Part(text=name),
            )

    future = asyncio.run_coroutine_threadsafe(save(), server.loop)  # type: ignore[arg-type]
    future.result(10)
    assert httpx.delete(f"{server.url}/{chat_id}", headers=ANN, timeout=30).status_code == 204

    async def left() -> list[str]:
        return await service.list_artifact_keys(
            app_name=app.runtime.app_name, user_id="ann", session_id=chat_id
        )

    keys = asyncio.run_coroutine_threadsafe(left(), server.loop).result(10)  # type: ignore[arg-type]
    assert keys == ["user:avatar.png"]
    assert httpx.get(f"{server.url}/{chat_id}/stream", headers=ANN, timeout=10).status_code == 204


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_store_forgets_a_deleted_chats_streams(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """``StreamStore.forget``: a stream kept for a resume is gone (nothing to follow), the
    owner stays (the id is never handed to another user)."""
    from adk_asgi import MemoryStreamStore
    from adk_asgi.stores import StreamStore

    store: StreamStore
    if kind == "redis":
        from adk_asgi.stores.redis import RedisStreamStore

        store = RedisStreamStore(
            request.getfixturevalue("redis_url"), prefix=f"forget-{time.monotonic_ns()}"
        )
    else:
        store = MemoryStreamStore()
    try:
        assert await store.claim("gone", "ann")
        recorder = await store.record("gone")
        recorder.append(b'data: {"type":"start"}\n\n')
        await recorder.end(resumable=True)
        follow = await store.follow("gone")
        assert follow is not None
        await follow.aclose()
        await store.forget("gone")
        assert await store.follow("gone") is None
        assert await store.owner("gone") == "ann"
        assert not await store.claim("gone", "bob")
    finally:
        await store.close()
