"""Memory: with ``StorageOptions(remember_sessions=True)`` a chat's conversation is added to
the memory service when a turn ends, and ADK's ``load_memory`` and ``preload_memory`` recall
it in the user's next chats, over SSE and over the live WebSocket (a real ADK Runner and the
memory test agent, tests/agents/memory)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from agents.memory.agent import build_app
from google.adk.memory import InMemoryMemoryService
from google.adk.sessions import Session

from adk_asgi import AdkApp, StorageOptions
from adk_asgi.adk.remember import conversation

from support import LoopbackServer, chat_body, parse_sse, user_message
from support.aisdk_client import run_ws_chat
from support.ws_client import LiveClient, text, ws_url

FACT = "my favourite colour is teal"


def by_header(scope: Any) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"x-user":
            return str(value.decode())
    return "alice"


async def say(
    client: httpx.AsyncClient, chat_id: str, words: str, user: str = "alice"
) -> list[Any]:
    response = await client.post(
        "/", json=chat_body(chat_id, user_message(words)), headers={"x-user": user}
    )
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


def said(chunks: list[Any]) -> str:
    return "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")


@pytest.fixture
async def remembering() -> AsyncIterator[tuple[AdkApp, httpx.AsyncClient]]:
    app = AdkApp(
        adk_app=build_app(),
        authenticate=by_header,
        warm_up=False,
        storage=StorageOptions(remember_sessions=True),
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        yield app, client
    await app.shutdown()


async def remembered(app: AdkApp) -> None:
    memory = app.runtime.memory
    assert memory is not None
    await memory.idle()


async def test_load_memory_recalls_an_earlier_chat_over_sse(
    remembering: tuple[AdkApp, httpx.AsyncClient],
) -> None:
    app, client = remembering
    assert said(await say(client, "first", FACT)) == f"Noted: {FACT}"
    await remembered(app)
    chunks = await say(client, "second", "recall favourite colour")
    [output] = [
        c["output"] for c in chunks if isinstance(c, dict) and c["type"] == "tool-output-available"
    ]
    # load_memory's pydantic result, as JSON (what ADK stores for it): what the user and
    # the agent said in the first chat.
    memories = output["result"]["memories"]
    assert sorted((m["author"], m["content"]["role"], m["content"]["parts"]) for m in memories) == [
        ("librarian", "model", [{"text": f"Noted: {FACT}"}]),
        ("user", "user", [{"text": FACT}]),
    ]
    assert said(chunks).startswith("Memory says: ")
    assert FACT in said(chunks)
    # Memory is the user's: another user finds nothing.
    assert (
        said(await say(client, "bobs", "recall favourite colour", user="bob"))
        == "Memory says: nothing"
    )


async def test_preload_memory_puts_earlier_chats_into_the_request(
    remembering: tuple[AdkApp, httpx.AsyncClient],
) -> None:
    app, client = remembering
    await say(client, "first", FACT)
    await remembered(app)
    answer = said(await say(client, "later", "what do you know about my colour"))
    assert answer.startswith("Preloaded: ")
    assert f"user: {FACT}" in answer


async def test_only_what_was_said_is_remembered(
    remembering: tuple[AdkApp, httpx.AsyncClient],
) -> None:
    app, client = remembering
    await say(client, "first", FACT)
    await remembered(app)
    await say(client, "second", "recall favourite colour")
    await remembered(app)
    service = app.runtime.runner.memory_service
    assert service is not None
    found = await service.search_memory(
        app_name="memory", user_id="alice", query="recall favourite colour teal memories"
    )
    assert found.memories
    for entry in found.memories:
        assert entry.content.parts
        for part in entry.content.parts:
            # The load_memory call and its result (the earlier chat's text) are not
            # remembered again: only the words of the user and the agent.
            assert part.text and not part.function_call and not part.function_response
    texts = sorted({p.text for e in found.memories for p in e.content.parts or () if p.text})
    assert "recall favourite colour" in texts and FACT in texts


def test_conversation_keeps_text_only() -> None:
    from google.adk.events import Event
    from google.genai import types

    session = Session(
        id="s",
        app_name="a",
        user_id="u",
        events=[
            Event(
                author="user",
                content=types.Content(
                    role="user",
                    parts=[
                        types.Part(text="hello"),
                        types.Part.from_bytes(data=b"x", mime_type="image/png"),
                    ],
                ),
            ),
            Event(
                author="a",
                content=types.Content(
                    role="model",
                    parts=[
                        types.Part(text="hmm", thought=True),
                        types.Part(
                            function_call=types.FunctionCall(name="f", args={"k": "secret"})
                        ),
                    ],
                ),
            ),
            Event(
                author="a",
                custom_metadata={"adk_asgi": {"tag": 1}},
                content=types.Content(role="model", parts=[types.Part(text="hi there")]),
            ),
        ],
    )
    kept = conversation(session)
    assert [
        (e.author, [p.text for p in e.content.parts or ()]) for e in kept.events if e.content
    ] == [("user", ["hello"]), ("a", ["hi there"])]
    assert all(e.custom_metadata is None for e in kept.events)
    assert len(session.events) == 3  # the session itself is untouched


async def test_nothing_is_remembered_unless_asked() -> None:
    app = AdkApp(adk_app=build_app(), warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        await say(client, "first", FACT)
        assert app.runtime.memory is None
        assert (
            said(await say(client, "second", "recall favourite colour")) == "Memory says: nothing"
        )
    await app.shutdown()


class Broken(InMemoryMemoryService):
    """A memory service whose backend is down until ``fixed``."""

    def __init__(self) -> None:
        super().__init__()
        self.fixed = False

    async def add_session_to_memory(self, session: Session) -> None:
        if not self.fixed:
            raise ConnectionError("memory backend down")
        await super().add_session_to_memory(session)


async def test_a_failing_memory_service_is_logged_once_and_never_fails_a_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = Broken()
    app = AdkApp(
        adk_app=build_app(),
        memory_service=broken,
        warm_up=False,
        storage=StorageOptions(remember_sessions=True),
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        with caplog.at_level(logging.INFO, logger="adk_asgi"):
            for i in range(3):
                chunks = await say(client, f"chat{i}", FACT)
                assert chunks[-2]["type"] == "finish" and said(chunks) == f"Noted: {FACT}"
                await remembered(app)
            failures = [
                r
                for r in caplog.records
                if "Memory service" in r.getMessage() and r.levelno >= logging.WARNING
            ]
            assert len(failures) == 1 and "memory backend down" in failures[0].getMessage()
            broken.fixed = True
            await say(client, "chat3", FACT)
            await remembered(app)
        assert "Memory service works again" in caplog.text
        assert said(await say(client, "chat4", "recall favourite colour")).count(FACT) >= 1
    await app.shutdown()


async def test_turns_ending_while_a_session_is_added_coalesce() -> None:
    adding, release = asyncio.Event(), asyncio.Event()

    class Slow(InMemoryMemoryService):
        adds = 0

        async def add_session_to_memory(self, session: Session) -> None:
            Slow.adds += 1
            adding.set()
            await release.wait()
            await super().add_session_to_memory(session)

    app = AdkApp(
        adk_app=build_app(),
        memory_service=Slow(),
        warm_up=False,
        storage=StorageOptions(remember_sessions=True),
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        await say(client, "busy", "one")
    await adding.wait()  # the first add runs
    runtime = app.runtime
    for _ in range(5):  # five more turns end meanwhile
        runtime.turn_ended("anonymous", "busy")
    assert runtime.memory is not None and runtime.memory.pending == 1
    release.set()
    await remembered(app)
    assert Slow.adds == 2  # the first one, then one for everything after it
    await app.shutdown()


# -- live -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_server() -> Iterator[tuple[AdkApp, LoopbackServer]]:
    app = AdkApp(adk_app=build_app(), warm_up=False, storage=StorageOptions(remember_sessions=True))
    with LoopbackServer(app) as server:
        yield app, server


def live_remembered(app: AdkApp, server: LoopbackServer) -> None:
    assert server.loop is not None
    memory = app.runtime.memory
    assert memory is not None
    asyncio.run_coroutine_threadsafe(memory.idle(), server.loop).result(10)


async def live_turn(server: LoopbackServer, chat_id: str, words: str) -> list[Any]:
    client = await LiveClient.open(ws_url(server.url, f"chatId={chat_id}"))
    try:
        await client.say(words)
        return await client.turn(wait=20)
    finally:
        await client.close()


async def test_memory_over_the_live_websocket(live_server: tuple[AdkApp, LoopbackServer]) -> None:
    app, server = live_server
    assert text(await live_turn(server, "live-first", FACT)) == f"Noted: {FACT}"
    await asyncio.to_thread(live_remembered, app, server)
    recalled = await live_turn(server, "live-second", "recall favourite colour")
    [output] = [
        c["output"]
        for c in recalled
        if isinstance(c, dict) and c["type"] == "tool-output-available"
    ]
    assert sorted(m["content"]["parts"][0]["text"] for m in output["result"]["memories"]) == sorted(
        [FACT, f"Noted: {FACT}"]
    )
    assert text(recalled).startswith("Memory says: ") and FACT in text(recalled)
    preloaded = text(await live_turn(server, "live-third", "what do you know about my colour"))
    assert preloaded.startswith("Preloaded: ") and f"user: {FACT}" in preloaded
    # The model read the preloaded memory in that turn; the session did not keep it.
    assert server.loop is not None
    runtime = app.runtime
    session = asyncio.run_coroutine_threadsafe(
        runtime.session_service.get_session(
            app_name=runtime.app_name, user_id="anonymous", session_id="live-third"
        ),
        server.loop,
    ).result(10)
    assert session is not None
    stored = [p.text for e in session.events if e.content for p in e.content.parts or () if p.text]
    assert stored[0] == "what do you know about my colour"
    assert not any("PAST_CONVERSATIONS" in t for t in stored)


async def test_remembered_over_sse_recalled_live(
    live_server: tuple[AdkApp, LoopbackServer],
) -> None:
    app, server = live_server
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        response = await client.post(
            "/",
            json=chat_body("sse-first", user_message("remember the password hint is lighthouse")),
        )
        assert response.status_code == 200
    await asyncio.to_thread(live_remembered, app, server)
    recalled = await live_turn(server, "live-after-sse", "recall password hint")
    assert "lighthouse" in text(recalled)


@pytest.mark.node
def test_memory_over_protocol_b(live_server: tuple[AdkApp, LoopbackServer]) -> None:
    """ai 7's own WebSocketChatTransport: remembered in one chat, recalled in the next."""
    app, server = live_server

    def chat(chat_id: str, words: str) -> dict[str, Any]:
        report = run_ws_chat(
            server.url.replace("http://", "ws://") + "/",
            [{"action": "send", "text": words}],
            chat_id=chat_id,
            node_timeout_ms=30000,
            timeout=60,
        )
        assert report["ok"] and report["invalid"] == [], report["problems"]
        return report

    chat("b-first", "remember my bicycle is green")
    live_remembered(app, server)
    [_, answer] = chat("b-second", "recall bicycle")["messages"]
    [tool] = [p for p in answer["parts"] if p["type"] == "tool-load_memory"]
    assert tool["state"] == "output-available"
    assert "my bicycle is green" in json.dumps(tool["output"])
    assert any(
        "my bicycle is green" in p.get("text", "") for p in answer["parts"] if p["type"] == "text"
    )
