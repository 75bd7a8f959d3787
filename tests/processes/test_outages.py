"""Dependency outages on a real uvicorn: a stopped redis-server, a read-only sqlite file,
a deleted and recreated sqlite directory. Every failure is a JSON 503 with
``Retry-After`` (HTTP) or close 1013 (WebSocket), one log line and no traceback; a turn
that is already streaming finishes; everything recovers without a restart."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect

from adk_asgi import AdkApp, RedisStreamStore
from adk_asgi.demo import build_demo_agent
from adk_asgi.wire.errors import STREAM_LOST_ERROR

from support import LoopbackServer, chat_body, parse_sse, types_of, user_message
from support.redis_server import RedisServer
from support.ws_client import ws_url


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own, to stop and start again."""
    with RedisServer(tmp_path) as server:
        yield server


MARKER = "zq7-marker-user-words"  # what the user wrote: never in the log


def _redis_app(redis: RedisServer, **options: Any) -> AdkApp:
    return AdkApp(
        build_demo_agent(token_delay=options.pop("token_delay", 0.0)),
        warm_up=False,
        stream_store=RedisStreamStore(redis.url, heartbeat=0.1),
        **options,
    )


def _json_503(response: httpx.Response, code: str) -> None:
    assert response.status_code == 503, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    assert response.headers["retry-after"] == "2"
    assert response.json()["error"]["code"] == code
    assert "Traceback" not in response.text


def _tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.exc_info]


async def _ws_close_code(url: str) -> tuple[int | None, str | None]:
    async with connect(url) as ws:
        try:
            await asyncio.wait_for(ws.recv(), 5)
        except Exception:
            pass
        return ws.close_code, ws.close_reason


def test_redis_down_answers_503_and_1013_then_recovers(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    app = _redis_app(redis)
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url, timeout=20) as client:
        ok = client.post("/", json=chat_body("c1", user_message("hello")))
        assert types_of(parse_sse(ok.text))[-2:] == ["finish", "[DONE]"]
        redis.stop()
        caplog.clear()
        _json_503(
            client.post("/", json=chat_body("c1", user_message("again"))), "store_unavailable"
        )
        _json_503(client.get("/c1/stream"), "store_unavailable")
        _json_503(client.delete("/c1/stream"), "store_unavailable")
        code, reason = asyncio.run(_ws_close_code(ws_url(server.url, "chatId=c1")))
        assert code == 1013 and reason and "try again" in reason.lower()
        assert not _tracebacks(caplog), _tracebacks(caplog)
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 4, [r.getMessage() for r in errors]  # one line each
        assert _on(server, app.health.checks())["streams"] != "ok"

        assert redis.start()  # the outage ends: no restart of the app needed
        back = client.post("/", json=chat_body("c2", user_message("hello")))
        assert back.status_code == 200
        assert types_of(parse_sse(back.text))[-2:] == ["finish", "[DONE]"]
        assert _on(server, app.health.checks())["streams"] == "ok"


def _on(server: LoopbackServer, coro: Any) -> Any:
    """Run ``coro`` on the server's loop (where the app's clients live)."""
    assert server.loop is not None
    return asyncio.run_coroutine_threadsafe(coro, server.loop).result(20)


def test_a_turn_streaming_when_redis_goes_down_finishes(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    app = _redis_app(redis, token_delay=0.02)
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        chunks: list[str] = []
        started = threading.Event()

        def run() -> None:
            with client.stream(
                "POST", "/", json=chat_body("story", user_message(f"tell a long story {MARKER}"))
            ) as response:
                for line in response.iter_lines():
                    chunks.append(line)
                    started.set()

        thread = threading.Thread(target=run)
        thread.start()
        assert started.wait(20)
        followed: list[str] = []
        following = threading.Event()

        def follow() -> None:  # a second tab resuming the same answer
            with client.stream("GET", "/story/stream") as response:
                assert response.status_code == 200
                for line in response.iter_lines():
                    followed.append(line)
                    following.set()

        follower = threading.Thread(target=follow)
        follower.start()
        assert following.wait(20)
        redis.stop()
        thread.join(60)
        follower.join(30)
        body = parse_sse("\n".join(chunks) + "\n\n")
        assert types_of(body)[-2:] == ["finish", "[DONE]"]
        # The follower lost the store, not the server: it is told so (main: "The server
        # stopped while answering").
        tail = parse_sse("\n".join(followed) + "\n\n")[-2:]
        assert tail == [{"type": "error", "errorText": STREAM_LOST_ERROR}, "[DONE]"], tail
        # The recorder and the lock release said so once each, without a traceback.
        assert not _tracebacks(caplog), _tracebacks(caplog)
        warnings = [
            r.getMessage()
            for r in caplog.records
            if r.name == "adk_asgi" and r.levelno >= logging.WARNING
        ]
        assert 1 <= len(warnings) <= 5, warnings
        formatter = logging.Formatter("%(message)s")
        assert not any(MARKER in formatter.format(r) for r in caplog.records)
        assert redis.start()
        again = client.post("/", json=chat_body("story", user_message("hello again")))
        assert types_of(parse_sse(again.text))[-2:] == ["finish", "[DONE]"]


def _sqlite_app(url: str) -> AdkApp:
    return AdkApp(build_demo_agent(token_delay=0), session_db=url, warm_up=False)


def test_a_read_only_session_database_answers_503(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ro.db"
    with LoopbackServer(_sqlite_app(f"sqlite:///{path}")) as server:  # creates the tables
        assert (
            httpx.post(server.url, json=chat_body("x", user_message("hi")), timeout=20).status_code
            == 200
        )
    app = _sqlite_app(f"sqlite:///{path}?mode=ro")
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url, timeout=20) as client:
        caplog.clear()
        _json_503(
            client.post("/", json=chat_body("new", user_message("hi"))), "session_unavailable"
        )
        assert not _tracebacks(caplog), _tracebacks(caplog)
        code, _ = asyncio.run(_ws_message_close_code(server.url, "new-live"))
        assert code == 1013


async def _ws_message_close_code(url: str, chat_id: str) -> tuple[int | None, str | None]:
    async with connect(ws_url(url, f"chatId={chat_id}")) as ws:
        await ws.send(
            '{"type":"message","version":"1.0","data":{"messages":'
            '[{"role":"user","content":[{"type":"text","text":"hi"}]}]}}'
        )
        try:
            while True:
                await asyncio.wait_for(ws.recv(), 10)
        except Exception:
            pass
        return ws.close_code, ws.close_reason


def test_a_deleted_and_recreated_sqlite_directory_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    app = _sqlite_app(f"sqlite:///{folder / 'chats.db'}")
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url, timeout=20) as client:
        assert client.post("/", json=chat_body("a", user_message("hi"))).status_code == 200
        shutil.rmtree(folder)
        caplog.clear()
        _json_503(client.post("/", json=chat_body("b", user_message("hi"))), "session_unavailable")
        folder.mkdir()  # an empty directory: sqlite makes a new file, without tables
        recovered = client.post("/", json=chat_body("c", user_message("hi")))
        assert recovered.status_code == 200, recovered.text
        assert types_of(parse_sse(recovered.text))[-2:] == ["finish", "[DONE]"]
        assert _on(server, app.health.checks())["sessions"] == "ok"
        shutil.rmtree(folder)
        assert _on(server, app.health.checks())["sessions"] != "ok"  # what /readyz says
        folder.mkdir()
        assert _on(server, app.health.checks())["sessions"] == "ok"
        assert not _tracebacks(caplog), _tracebacks(caplog)
    with sqlite3.connect(folder / "chats.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_every_store_failure_is_a_store_unavailable() -> None:
    """No Redis error escapes the store as anything but StoreUnavailable."""
    from redis.exceptions import RedisError

    from adk_asgi.stores import StoreUnavailable

    store = RedisStreamStore(f"redis://127.0.0.1:1/{uuid.uuid4().int % 16}")

    async def run() -> None:
        for call in (
            store.claim("c", "u"),
            store.owner("c"),
            store.follow("c"),
            store.stop("c"),
            store.record("c"),
        ):
            with pytest.raises(StoreUnavailable):
                await call
        with pytest.raises(StoreUnavailable):
            async with store.lock("c"):
                pass
        with pytest.raises(RedisError):  # the probe's own error (/readyz names its class)
            await store.ping()
        await store.close()

    asyncio.run(run())


async def _timed(call: Any) -> tuple[float, Any]:
    started = time.monotonic()
    result = await call
    return time.monotonic() - started, result


def test_a_hung_redis_answers_within_the_readiness_timeout(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    """SIGSTOP (a hung server, a partition): every request and a WebSocket handshake get
    their 503 / close 1013 within the store's ``timeout`` (2 s), as ``/readyz`` does —
    one setting for both (main: a POST waited 15 s, a 5 s socket timeout, retried)."""
    from adk_asgi.stores.redis import DEFAULT_TIMEOUT

    app = AdkApp(
        build_demo_agent(token_delay=0.0),
        warm_up=False,
        stream_store=RedisStreamStore(redis.url, heartbeat=0.2),
    )
    assert app.store.timeout == DEFAULT_TIMEOUT == 2.0
    with LoopbackServer(app) as server:
        ok = httpx.post(server.url, json=chat_body("c1", user_message("hello")), timeout=20)
        assert types_of(parse_sse(ok.text))[-2:] == ["finish", "[DONE]"]
        redis.pause()
        try:
            caplog.clear()

            async def probe() -> list[tuple[float, Any]]:
                async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                    return list(
                        await asyncio.gather(
                            _timed(client.post("/", json=chat_body("c1", user_message("again")))),
                            _timed(client.post("/", json=chat_body("c3", user_message("new")))),
                            _timed(client.get("/c1/stream")),
                            _timed(client.delete("/c1/stream")),
                            _timed(client.get("/readyz")),
                            _timed(_ws_close_code(ws_url(server.url, "chatId=c1"))),
                        )
                    )

            answers = asyncio.run(probe())
        finally:
            redis.resume()
        print("hung Redis:", [(round(t, 2), getattr(r, "status_code", r)) for t, r in answers])
        *requests, (ready_after, ready), (ws_after, (code, _reason)) = answers
        for _after, response in requests:
            _json_503(response, "store_unavailable")
        assert ready.status_code == 503
        assert ready.json()["checks"]["streams"] == "timed out after 2 s"
        assert code == 1013
        for after in [t for t, _ in requests] + [ready_after, ws_after]:
            assert after < DEFAULT_TIMEOUT + 1.0, answers
        assert not _tracebacks(caplog), _tracebacks(caplog)
        # Resumed: it answers again, without a restart.
        back = httpx.post(server.url, json=chat_body("c2", user_message("hi")), timeout=20)
        assert types_of(parse_sse(back.text))[-2:] == ["finish", "[DONE]"]
