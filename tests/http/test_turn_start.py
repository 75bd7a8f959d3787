"""How a turn starts (``http/turn/queue.py``, ``endpoint.py``): under load every round
through the event loop is a round of every other stream's work, so a turn must not spend
rounds of its own before its response starts and its first token goes out. Counted in
rounds of the loop, not timed: the counts are exact on any machine. And the queued turn's
rules, which the same code keeps: a client that leaves while its turn waits gives up its
place; one that stops reading is dropped."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from google.adk.agents import RunConfig
from google.adk.agents.run_config import StreamingMode
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_asgi import AdkApp, StreamingOptions
from adk_asgi.demo import build_demo_agent

from support import chat_body, user_message


class Rounds:
    """Counts the event loop's rounds: a task that yields once per round."""

    def __init__(self) -> None:
        self.count = 0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            self.count += 1
            await asyncio.sleep(0)

    async def __aenter__(self) -> Rounds:
        self._task = asyncio.create_task(self._tick())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()


def _scope() -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
    }


class Client:
    """One POST driven straight through the ASGI callable: what it was sent, in which
    round of the loop; ``leave()`` disconnects it, ``stall()`` makes its sends block from
    then on (a client that stopped reading)."""

    def __init__(self, body: dict[str, Any], rounds: Rounds | None = None) -> None:
        self.body = json.dumps(body).encode()
        self.rounds = rounds
        self.sent: list[tuple[int, dict[str, Any]]] = []
        self.got_body = asyncio.Event()
        self._read = False
        self._left = asyncio.Event()
        self._stalled = False

    def leave(self) -> None:
        self._left.set()

    def stall(self) -> None:
        self._stalled = True

    async def receive(self) -> dict[str, Any]:
        if not self._read:
            self._read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self._left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if self._stalled and message.get("body"):
            await asyncio.Event().wait()  # never taken
        self.sent.append((self.rounds.count if self.rounds else 0, message))
        if message.get("body"):
            self.got_body.set()

    def round_of(self, needle: bytes | None = None) -> int:
        """The round of the response's start (``needle`` None) or of the first body
        holding ``needle``."""
        for count, message in self.sent:
            if needle is None and message["type"] == "http.response.start":
                return count
            if needle is not None and needle in message.get("body", b""):
                return count
        raise AssertionError(f"never sent {needle!r}")

    @property
    def text(self) -> bytes:
        return b"".join(m.get("body", b"") for _, m in self.sent)


async def _asgi_turn(app: AdkApp, rounds: Rounds, text: str) -> tuple[int, int]:
    """Rounds from the request to its response's start, and to its first text delta."""
    client = Client(chat_body(f"c-{uuid.uuid4().hex}", user_message(text)), rounds)
    start = rounds.count
    await app(_scope(), client.receive, client.send)
    return client.round_of() - start, client.round_of(b'"text-delta"') - start


async def _adk_turn(runner: Runner, rounds: Rounds, text: str) -> int:
    """Rounds from ``run_async`` to its first partial event, ADK alone."""
    session_id = uuid.uuid4().hex
    await runner.session_service.create_session(app_name="bare", user_id="u", session_id=session_id)
    start, first = rounds.count, None
    message = types.Content(role="user", parts=[types.Part(text=text)])
    config = RunConfig(streaming_mode=StreamingMode.SSE)
    async for event in runner.run_async(
        user_id="u", session_id=session_id, new_message=message, run_config=config
    ):
        if event.partial and first is None:
            first = rounds.count - start
    assert first is not None
    return first


async def test_a_turn_spends_no_round_of_the_loop_before_its_first_token() -> None:
    """The response starts in the round the request came in, and the first token goes out
    in the round ADK's own run yields it (a bare ``Runner`` on the same agent): the turn
    adds no round of its own (today's main: 3 before the response, 3 more to the token)."""
    app = AdkApp(build_demo_agent(token_delay=0), warm_up=False)
    bare = Runner(
        agent=build_demo_agent(token_delay=0),
        app_name="bare",
        session_service=InMemorySessionService(),
    )
    async with app.lifespan(), Rounds() as rounds:
        await _asgi_turn(app, rounds, "bench 3")  # first runs build what later ones reuse
        await _adk_turn(bare, rounds, "bench 3")
        to_start, to_token = await _asgi_turn(app, rounds, "bench 3")
        adk_alone = await _adk_turn(bare, rounds, "bench 3")
    assert to_start == 0
    assert to_token <= adk_alone, (to_token, adk_alone)


@pytest.fixture
async def busy() -> AsyncIterator[tuple[AdkApp, str]]:
    """An app whose chat's turn lock the test holds (another tab's turn, running)."""
    app = AdkApp(
        build_demo_agent(token_delay=0),
        warm_up=False,
        streaming=StreamingOptions(send_timeout=0.3, ping_interval=None),
    )
    async with app.lifespan():
        yield app, f"c-{uuid.uuid4().hex}"


async def _session(app: AdkApp, chat_id: str) -> Any:
    return await app.runtime.session_service.get_session(
        app_name=app.runtime.app_name, user_id="anonymous", session_id=chat_id
    )


async def test_a_queued_client_that_leaves_gives_up_its_place(
    busy: tuple[AdkApp, str],
) -> None:
    """Told it is queued, the client leaves: its request ends while the other turn still
    holds the lock, and when that ends nothing of the message runs."""
    app, chat_id = busy
    client = Client(chat_body(chat_id, user_message("bench 3")))
    async with app.store.lock(chat_id):
        turn = asyncio.create_task(app(_scope(), client.receive, client.send))
        await asyncio.wait_for(client.got_body.wait(), 10)
        assert b'"data-queued"' in client.text
        client.leave()
        await asyncio.wait_for(turn, 10)
        assert app.store.held_locks == 1  # only the test's: the request let go of its place
    assert app.store.held_locks == 0
    await asyncio.sleep(0.1)
    assert await _session(app, chat_id) is None
    assert b'"start"' not in client.text


async def test_a_queued_client_that_stops_reading_is_dropped(
    busy: tuple[AdkApp, str], caplog: pytest.LogCaptureFixture
) -> None:
    """Told it is queued, the client stops reading: once the turn starts, its blocked send
    is cut after ``send_timeout`` (the task that writes the turn, not the one that wrote
    the notice) and the turn ends."""
    app, chat_id = busy
    client = Client(chat_body(chat_id, user_message("bench 3")))
    caplog.set_level(logging.WARNING, "adk_asgi")
    async with app.store.lock(chat_id):
        turn = asyncio.create_task(app(_scope(), client.receive, client.send))
        await asyncio.wait_for(client.got_body.wait(), 10)
        client.stall()
    await asyncio.wait_for(turn, 10)
    assert "SSE client stopped reading" in caplog.text
    assert app.store.held_locks == 0
