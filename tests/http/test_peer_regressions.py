"""The bugs our peers shipped (see the project's peer study), one test each.

- ag-ui#733, adk-python#2425: the run goes on after the client disconnects, and a
  "ghost" reply is persisted.
- ag-ui#957/#1652/#1732, adk-python#1733: session writes race the runner (two turns
  of one chat interleave, stale-session errors with a database store).
- ag-ui#1892: two terminal events (``RUN_FINISHED`` after ``RUN_ERROR``).
- ag-ui 0.6.4 (CHANGELOG 0.6.5): tool-call data leaked across users through shared
  mutable state.
- ag-ui#1581: multi-pod race — the pending tool call was written after the run
  reported it finished, so an answer arriving at another pod was lost.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_asgi import AdkApp, MemoryStreamStore, RedisStreamStore
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent

from support import Chat, LoopbackServer, chat_body, parse_sse, types_of, user_message

TERMINAL = {"finish", "error", "abort"}


async def _events(app: AdkApp, chat_id: str, user: str = "anonymous") -> list[Any]:
    session = await app.runtime.session_service.get_session(
        app_name=app.runtime.app_name, user_id=user, session_id=chat_id
    )
    assert session is not None
    return list(session.events)


def test_disconnect_stops_the_run_and_persists_no_ghost_reply() -> None:
    """ag-ui#733 / adk-python#2425."""
    app = AdkApp(build_demo_agent(token_delay=0.03), warm_up=False)
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url) as client:
        with client.stream(
            "POST", "/", json=chat_body("ghost", user_message("tell a long story"))
        ) as response:
            for line in response.iter_lines():
                if '"text-delta"' in line:
                    break
        time.sleep(2.5)  # the whole story would take ~1.8 s
        assert server.loop is not None
        events = asyncio.run_coroutine_threadsafe(_events(app, "ghost"), server.loop).result(5)
    replies = [
        e
        for e in events
        if e.author != "user"
        and e.content
        and e.content.parts
        and e.content.parts[0].text
        and not e.partial
    ]
    assert replies == []
    assert any(e.error_code == "INVOCATION_ABORTED" for e in events)


@pytest.mark.parametrize("db", [False, True])
async def test_two_tabs_on_one_chat_do_not_interleave(db: bool, tmp_path: Path) -> None:
    """ag-ui#957/#1652/#1732, adk-python#1733: one turn of a chat at a time, also with a
    database session store (no stale-session conflicts)."""
    session_db = f"sqlite:///{tmp_path / 'tabs.db'}" if db else None
    app = AdkApp(build_demo_agent(token_delay=0.005), session_db=session_db, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=30
    ) as client:
        history = [user_message("tell a long story", "u1")]
        second = [*history, user_message("What's the weather in Tokyo?", "u2")]
        first, other = await asyncio.gather(
            client.post("/", json={"id": "tabs", "messages": history}),
            client.post("/", json={"id": "tabs", "messages": second}),
        )
    assert types_of(parse_sse(first.text))[-2:] == ["finish", "[DONE]"]
    assert types_of(parse_sse(other.text))[-2:] == ["finish", "[DONE]"]
    invocations = [e.invocation_id for e in await _events(app, "tabs")]
    # Each turn's events are contiguous: A A A B B B, never A B A B.
    runs = [k for i, k in enumerate(invocations) if i == 0 or invocations[i - 1] != k]
    assert len(runs) == len(set(runs)), invocations


@pytest.mark.parametrize("text", ["please fail", "please raise", "hello", "Where am I?"])
async def test_exactly_one_terminal_chunk(text: str, client: httpx.AsyncClient) -> None:
    """ag-ui#1892: a stream ends with exactly one of finish / error / abort, last."""
    chunks = parse_sse(
        (await client.post("/", json=chat_body(f"t-{abs(hash(text))}", user_message(text)))).text
    )
    kinds = types_of(chunks)
    assert sum(k in TERMINAL for k in kinds) == 1, kinds
    assert kinds[-1] == "[DONE]" and kinds[-2] in TERMINAL


async def test_concurrent_users_never_see_each_others_tool_calls() -> None:
    """ag-ui 0.6.4: every user sees their own calls and results only."""

    def user(scope: Any) -> str:
        return str(dict(scope["headers"])[b"x-user"].decode())

    PAYMENT_LOG.clear()
    app = AdkApp(build_demo_agent(token_delay=0.001), authenticate=user, warm_up=False)
    names = [f"Person{i}" for i in range(8)]
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=30
    ) as client:

        async def pay(name: str) -> list[Any]:
            chat = Chat(client, "same-chat-id")  # every user uses the same chat id
            chat.messages.append(user_message(f"Send 5 dollars to {name}", "u1"))
            headers = {"x-user": name}
            first = parse_sse((await client.post("/", json=chat.body(), headers=headers)).text)
            message = chat.absorb(first)
            chat.approve(0, True)
            answer = await client.post(
                "/", json=chat.body(messageId=message["id"]), headers=headers
            )
            return first + parse_sse(answer.text)

        app.store = app.chat.store = app.live.store = _ForgetfulStore()
        results = await asyncio.gather(*(pay(name) for name in names))
    for name, chunks in zip(names, results, strict=True):
        inputs = [
            c["input"]
            for c in chunks
            if isinstance(c, dict) and c["type"] == "tool-input-available"
        ]
        outputs = [
            c["output"]
            for c in chunks
            if isinstance(c, dict) and c["type"] == "tool-output-available"
        ]
        assert {i["recipient"] for i in inputs} == {name}
        assert [o["recipient"] for o in outputs] == [name]
    assert sorted(p["recipient"] for p in PAYMENT_LOG) == sorted(names)


class _ForgetfulStore(MemoryStreamStore):
    """Lets every user claim every chat id: isolation must come from the sessions."""

    async def claim(self, chat_id: str, user_id: str) -> bool:
        return True


def test_an_answer_right_after_finish_reaches_another_worker(
    tmp_path: Path, redis_url: str
) -> None:
    """ag-ui#1581: by the time the client sees ``finish``, the pending call is in the
    shared session store, so an approval sent at once to another worker finds it."""
    db = f"sqlite:///{tmp_path / 'race.db'}"
    apps = [
        AdkApp(
            build_demo_agent(),
            session_db=db,
            warm_up=False,
            stream_store=RedisStreamStore(redis_url, prefix=f"race-{tmp_path.name}"),
        )
        for _ in range(2)
    ]
    PAYMENT_LOG.clear()
    with (
        LoopbackServer(apps[0]) as one,
        LoopbackServer(apps[1]) as two,
        httpx.Client(timeout=30) as client,
    ):
        chat = Chat(client, "race")
        chat.messages.append(user_message("Send 50 dollars to Hanako", "u1"))
        chunks: list[Any] = []
        with client.stream("POST", one.url + "/", json=chat.body()) as response:
            for line in response.iter_lines():
                if line.startswith("data: {"):
                    chunks.extend(parse_sse(line + "\n\n"))
                    if chunks[-1]["type"] == "finish":
                        break
            # The first stream is still open here (its [DONE] not read yet).
            message = chat.absorb(chunks)
            chat.approve(0, True)
            answer = client.post(two.url + "/", json=chat.body(messageId=message["id"]))
    assert "tool-output-available" in types_of(parse_sse(answer.text))
    assert [p["recipient"] for p in PAYMENT_LOG] == ["Hanako"]
