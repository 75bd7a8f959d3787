"""Bounded memory in the defaults: in-memory sessions are evicted (least recently used
first, and after an idle time), ended streams held for resumes are bounded in bytes, and a
live turn's translator keeps nothing per streamed token."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from google.adk.events import Event
from google.genai import types

from adk_asgi import AdkApp, MemoryStreamStore
from adk_asgi.adk.memory_sessions import BoundedMemorySessions
from adk_asgi.adk.sessions import event_meta, session_service_from_url
from adk_asgi.chunks import TextDelta
from adk_asgi.demo import build_demo_agent
from adk_asgi.translate.lanes import TEXT
from adk_asgi.translate.live import LiveTranslator
from adk_asgi.translate.translator import EventTranslator

from support import chat_body, parse_sse, text_of, user_message


def test_memory_urls_are_bounded() -> None:
    default = session_service_from_url(None)
    assert isinstance(default, BoundedMemorySessions)
    assert (default.max_sessions, default.idle_ttl) == (10_000, 6 * 3600)
    tuned = session_service_from_url("memory://?max_sessions=5&idle_ttl=60")
    assert isinstance(tuned, BoundedMemorySessions)
    assert (tuned.max_sessions, tuned.idle_ttl) == (5, 60)
    for bad in ("memory://?max=5", "memory://?max_sessions=lots", "memory://?max_sessions=0"):
        with pytest.raises(ValueError):
            session_service_from_url(bad)


async def _user_event(
    service: BoundedMemorySessions, session_id: str, text: str, user: str = "u"
) -> None:
    session = await service.get_session(app_name="a", user_id=user, session_id=session_id)
    assert session is not None
    await service.append_event(
        session,
        Event(
            invocation_id="i",
            author="user",
            content=types.Content(role="user", parts=[types.Part(text=text)]),
            actions={"state_delta": {"user:seen": True}},
        ),
    )  # type: ignore[arg-type]


async def test_least_recently_used_sessions_go_first() -> None:
    service = BoundedMemorySessions(max_sessions=3)
    for i in range(3):
        await service.create_session(app_name="a", user_id="u", session_id=f"s{i}")
    await _user_event(service, "s0", "still here")  # s0 is used again: s1 is the oldest
    await service.create_session(app_name="a", user_id="u", session_id="s3")
    kept = {
        s
        for s in ("s0", "s1", "s2", "s3")
        if await service.get_session(app_name="a", user_id="u", session_id=s)
    }
    assert kept == {"s0", "s2", "s3"} and len(service) == 3


async def test_idle_sessions_and_their_users_go() -> None:
    service = BoundedMemorySessions(idle_ttl=0.2)
    await service.create_session(app_name="a", user_id="gone", session_id="old")
    await _user_event(service, "old", "hi", user="gone")
    assert service.user_state["a"]["gone"] == {"seen": True}
    await asyncio.sleep(0.3)
    await service.create_session(app_name="a", user_id="other", session_id="new")
    assert await service.get_session(app_name="a", user_id="gone", session_id="old") is None
    assert "gone" not in service.sessions["a"] and "gone" not in service.user_state["a"]
    assert len(service) == 1


async def test_an_evicted_chat_comes_back_through_history_restore() -> None:
    app = AdkApp(
        build_demo_agent(token_delay=0), session_db="memory://?max_sessions=2", warm_up=False
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        first = parse_sse(
            (
                await client.post("/", json=chat_body("c1", user_message("My name is Ada.", "u1")))
            ).text
        )
        for other in ("c2", "c3"):  # two newer chats: c1's session is dropped
            await client.post("/", json=chat_body(other, user_message("hi")))
        service = app.runtime.session_service
        assert (
            await service.get_session(
                app_name=app.runtime.app_name, user_id="anonymous", session_id="c1"
            )
            is None
        )
        answer = {
            "id": first[0]["messageId"],
            "role": "assistant",
            "parts": [{"type": "text", "text": text_of(first)}],
        }
        again = await client.post(
            "/",
            json=chat_body(
                "c1",
                user_message("My name is Ada.", "u1"),
                answer,
                user_message("What is my name?", "u2"),
            ),
        )
        assert again.status_code == 200
    session = await service.get_session(
        app_name=app.runtime.app_name, user_id="anonymous", session_id="c1"
    )
    assert session is not None
    seeded = [e for e in session.events if event_meta(e).get("seeded")]
    assert [e.content.parts[0].text for e in seeded if e.content and e.content.parts] == [
        "My name is Ada.",
        text_of(first),
    ]


async def test_ended_streams_held_for_resumes_are_bounded_in_bytes() -> None:
    store = MemoryStreamStore(max_held_bytes=1000)
    for i in range(4):
        recorder = await store.record(f"c{i}")
        recorder.append(b"x" * 400)
        await recorder.end(resumable=True)  # nobody received its end: kept for a resume
    held = [i for i in range(4) if await store.follow(f"c{i}") is not None]
    assert held == [2, 3] and store.streams == 2
    running = await store.record("c2")  # a new turn of c2 replaces what c2 held
    running.append(b"y" * 900)
    await running.end(resumable=True)
    assert [i for i in range(4) if await store.follow(f"c{i}") is not None] == [2]


def _partial(text: str) -> Event:
    return Event(
        invocation_id="i",
        author="model",
        partial=True,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


def test_a_live_turn_keeps_nothing_per_streamed_token() -> None:
    translator = LiveTranslator("m")
    out: list[Any] = []
    for i in range(1000):
        out.extend(translator.translate(_partial(f"w{i} ")))  # each live event has a fresh id
    # One lane, whose "streamed" state is a few bits: nothing kept per token or per id
    # (an id per token was kept until the turn ended, once).
    [lane] = list(translator.lanes)
    assert lane.streamed == TEXT


def test_an_sse_response_forgets_its_id_once_final() -> None:
    translator = EventTranslator("m")
    out: list[Any] = []
    event = _partial("hello ")
    for _ in range(3):  # SSE partials share their final event's id
        out.extend(translator.translate(event))
    # ADK's final event repeats the joined partials (docs/your-own-agents.md: a final that
    # differs replaces them, which is not what this test is about).
    final = event.model_copy(
        update={
            "partial": False,
            "content": types.Content(role="model", parts=[types.Part(text="hello " * 3)]),
        }
    )
    out.extend(translator.translate(final))
    assert [c.delta for c in out if isinstance(c, TextDelta)] == ["hello "] * 3  # no repeat
    [lane] = list(translator.lanes)
    assert lane.streamed == 0  # what the final event repeated is forgotten
