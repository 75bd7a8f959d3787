"""Health and readiness probes (``/healthz``, ``/readyz``): on the chat app wherever it is
mounted and at the top of ``adk-asgi serve``, both ways — a deleted sqlite directory and a
stopped redis-server turn readiness 503 with the failing part named, and back."""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from adk_asgi import AdkApp, AdkMiddleware, AuthError, mount
from adk_asgi.cli.build import build_app
from adk_asgi.cli.flags import parser
from adk_asgi.demo import build_demo_agent

from support import chat_body, not_found_app, parse_sse, sqlite_threads_done, types_of, user_message


def _client(app: object) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),  # type: ignore[arg-type]
        base_url="http://testserver",
    )


async def test_probes_answer_json(client: httpx.AsyncClient, demo_app: AdkApp) -> None:
    health = await client.get("/healthz")
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "status": "ready",
        "checks": {"adk": "ok", "sessions": "ok", "streams": "ok"},
    }
    head = await client.head("/readyz")
    assert head.status_code == 200 and head.content == b""
    refused = await client.post("/readyz")
    assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"
    assert refused.json()["error"]["code"] == "method_not_allowed"
    # Draining: not ready (load balancers stop sending), still alive.
    await demo_app.drain(0)
    ready = await client.get("/readyz")
    assert ready.status_code == 503 and ready.headers["retry-after"] == "2"
    assert ready.json()["checks"]["adk"] == "shutting down"
    assert ready.json()["error"]["code"] == "not_ready"
    assert (await client.get("/healthz")).status_code == 200


async def test_probes_need_no_identity() -> None:
    def nobody(scope: object) -> str:
        raise AuthError(401, "Who are you?")

    app = AdkApp(build_demo_agent(token_delay=0), authenticate=nobody, warm_up=False)
    async with _client(app) as client:
        assert (await client.post("/", json=chat_body("c", user_message("hi")))).status_code == 401
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.get("/readyz")).status_code == 200
    assert await app.health.checks() == {"adk": "ok", "sessions": "ok", "streams": "ok"}


async def test_probes_wherever_the_app_is_mounted() -> None:
    site = FastAPI()
    mount(site, "/api/chat", AdkApp(build_demo_agent(token_delay=0), warm_up=False))
    wrapped = AdkMiddleware(
        not_found_app, path="/chat", agent=build_demo_agent(token_delay=0), warm_up=False
    )
    async with _client(site) as fastapi, _client(wrapped) as middleware:
        for client, prefix in ((fastapi, "/api/chat"), (middleware, "/chat")):
            assert (await client.get(f"{prefix}/healthz")).json() == {"status": "ok"}
            assert (await client.get(f"{prefix}/readyz")).json()["status"] == "ready"
            # A chat may be called "healthz": its stream route is not the probe.
            assert (await client.get(f"{prefix}/healthz/stream")).status_code == 204
        assert (await middleware.get("/healthz")).status_code == 404  # not ours


async def test_readyz_names_a_broken_session_store(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    app = AdkApp(
        build_demo_agent(token_delay=0), session_db=f"sqlite:///{folder}/chats.db", warm_up=False
    )
    async with _client(app) as client:
        reply = await client.post("/", json=chat_body("c1", user_message("hello")))
        assert types_of(parse_sse(reply.text))[-2:] == ["finish", "[DONE]"]
        assert (await client.get("/readyz")).status_code == 200
        shutil.rmtree(folder)  # the session file and its directory are gone
        with caplog.at_level(logging.INFO, logger="adk_asgi"):
            first = await client.get("/readyz")
            second = await client.get("/readyz")
        for ready in (first, second):
            assert ready.status_code == 503
            body = ready.json()
            assert body["checks"] == {
                "adk": "ok",
                "sessions": "failed (OperationalError)",
                "streams": "ok",
            }
            assert body["error"] == {"code": "not_ready", "message": "Not ready: sessions."}
            assert str(tmp_path) not in ready.text  # no paths, no exception text
        # One line when readiness changes, not one per probe.
        assert [r.getMessage() for r in caplog.records if r.name == "adk_asgi"] == [
            "Not ready: sessions failed (OperationalError)"
        ]
        assert (await client.get("/healthz")).status_code == 200
    await sqlite_threads_done()


def _redis_on(port: int, workdir: Path) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    assert binary is not None
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return process
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise
            time.sleep(0.05)


async def test_readyz_names_a_stopped_redis_through_the_cli(tmp_path: Path) -> None:
    from support.redis_server import RedisServer

    with RedisServer(tmp_path) as redis:
        args = parser().parse_args(["serve", "--redis-url", redis.url, "--token-delay", "0"])
        app = build_app(args)
        assert redis.process is not None
        async with _client(app) as client:
            for path in ("/readyz", "/api/chat/readyz"):  # top-level and under the mount
                ready = await client.get(path)
                assert ready.status_code == 200, ready.text
            assert (await client.get("/healthz")).json() == {"status": "ok"}
            redis.process.terminate()
            redis.process.wait(10)
            ready = await client.get("/readyz")
            assert ready.status_code == 503
            assert ready.json()["checks"]["streams"] == "failed (ConnectionError)"
            assert ready.json()["checks"]["sessions"] == "ok"
            assert (await client.get("/healthz")).status_code == 200
            # The same Redis back: ready again, without a restart.
            redis.process = _redis_on(redis.port, tmp_path)
            ready = await client.get("/readyz")
            assert ready.status_code == 200, ready.text
            await app.adk.shutdown()
