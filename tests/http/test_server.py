"""A real uvicorn server on loopback: headers on the wire, streaming, disconnects, pings."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from adk_asgi import AdkApp, StreamingOptions
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, chat_body, parse_sse, types_of, user_message


def _task_names(server: LoopbackServer) -> set[str]:
    return {t.get_coro().__qualname__ for t in server.tasks()}  # type: ignore[union-attr]


def test_stream_on_the_wire() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.001))
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url) as client:
        response = client.post("/", json=chat_body("wire", user_message("hello")))
        assert response.status_code == 200
        headers = response.headers
        assert headers["content-type"].startswith("text/event-stream")
        assert headers["x-vercel-ai-ui-message-stream"] == "v1"
        assert headers["cache-control"] == "no-cache"
        assert headers["x-accel-buffering"] == "no"
        assert response.text.endswith("data: [DONE]\n\n")
        assert types_of(parse_sse(response.text))[0] == "start"


def test_chunks_arrive_while_the_model_is_still_streaming() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.05))
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url) as client:
        started = time.monotonic()
        with client.stream(
            "POST", "/", json=chat_body("inc", user_message("tell a long story"))
        ) as response:
            first_delta_at = None
            for line in response.iter_lines():
                if '"text-delta"' in line:
                    first_delta_at = time.monotonic() - started
                    break
        assert first_delta_at is not None and first_delta_at < 1.5  # the story takes ~3 s


def test_disconnect_aborts_the_run_and_leaves_no_task() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.05))
    with LoopbackServer(app) as server:
        baseline = _task_names(server)
        with (
            httpx.Client(base_url=server.url) as client,
            client.stream(
                "POST", "/", json=chat_body("gone", user_message("tell a long story"))
            ) as response,
        ):
            deltas = 0
            for line in response.iter_lines():
                deltas += '"text-delta"' in line
                if deltas == 3:
                    break
        closed_at = time.monotonic()
        leftover: set[str] = set()
        while time.monotonic() - closed_at < 1.0:
            leftover = _task_names(server) - baseline
            if not leftover:
                break
            time.sleep(0.02)
        assert not leftover, f"tasks survived the disconnect: {leftover}"
        assert app.store.held_locks == 0  # type: ignore[attr-defined]

        async def events() -> list[Any]:
            session = await app.runtime.session_service.get_session(
                app_name=app.runtime.app_name, user_id="anonymous", session_id="gone"
            )
            assert session is not None
            return list(session.events)

        assert server.loop is not None
        before = asyncio.run_coroutine_threadsafe(events(), server.loop).result(5)
        time.sleep(0.3)
        after = asyncio.run_coroutine_threadsafe(events(), server.loop).result(5)
        assert len(after) == len(before)  # nothing more is produced: the run stopped
        # The aborted turn never persisted a finished answer.
        assert not any(
            e.author != "user"
            and e.content
            and not e.partial
            and e.content.parts
            and e.content.parts[0].text
            for e in after
        )


def test_keep_alive_pings_while_the_model_is_silent() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.4), streaming=StreamingOptions(ping_interval=0.1))
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url) as client:
        response = client.post("/", json=chat_body("ping", user_message("hello")))
        assert ": ping" in response.text
        chunks = parse_sse(response.text)  # comments do not disturb the chunk stream
        assert types_of(chunks)[-2:] == ["finish", "[DONE]"]


def test_many_concurrent_streams_complete() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.001))
    with LoopbackServer(app) as server:

        async def one(client: httpx.AsyncClient, i: int) -> list[str]:
            r = await client.post("/", json=chat_body(f"many{i}", user_message("hello")))
            return types_of(parse_sse(r.text))

        async def main() -> list[list[str]]:
            limits = httpx.Limits(max_connections=50)
            async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=30) as client:
                return await asyncio.gather(*[one(client, i) for i in range(50)])

        results = asyncio.run(main())
        assert all(r[-2:] == ["finish", "[DONE]"] for r in results)
        assert json.dumps(results).count("error") == 0
