from __future__ import annotations

import asyncio
import copy
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from adk_asgi import AdkApp
from adk_asgi.cli.server import WS_PROTOCOL
from adk_asgi.demo import build_demo_agent

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in (
        "127.0.0.1",
        "::1",
        "localhost",
    ):
        raise OSError(f"tests are offline: refused connect to {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach the network (Gemini above all): only loopback connects."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


def user_message(text: str, msg_id: str | None = None) -> dict[str, Any]:
    return {
        "id": msg_id or f"u-{abs(hash(text)) % 10**8}",
        "role": "user",
        "parts": [{"type": "text", "text": text}],
    }


def chat_body(chat_id: str, *messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": chat_id, "messages": list(messages), "trigger": "submit-message", **extra}


def parse_sse(text: str) -> list[Any]:
    """Chunks of an SSE body (``[DONE]`` kept as the string "[DONE]")."""
    chunks: list[Any] = []
    for event in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip() for line in event.split("\n") if line.startswith("data:")]
        if not data:
            continue
        payload = "\n".join(data)
        chunks.append(payload if payload == "[DONE]" else json.loads(payload))
    return chunks


async def sqlite_threads_done(within: float = 10.0) -> None:
    """Wait for aiosqlite's worker threads (one per connection) to end: the thread of a
    failed connect reports its end to the test's loop, and raises "Event loop is closed"
    (in whichever test runs next) if that loop is gone by then."""
    deadline = time.monotonic() + within
    while any("_connection_worker_thread" in t.name for t in threading.enumerate()):
        assert time.monotonic() < deadline, "aiosqlite threads still running"
        await asyncio.sleep(0.02)


def types_of(chunks: list[Any]) -> list[str]:
    return [c if isinstance(c, str) else c["type"] for c in chunks]


def text_of(chunks: list[Any]) -> str:
    return "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")


async def not_found_app(scope: Any, receive: Any, send: Any) -> None:
    """A bare ASGI app answering JSON 404 to everything: the site tests wrap the chat
    endpoint around (``AdkMiddleware(not_found_app, path=...)``)."""
    from adk_asgi.cli.site import plain_lifespan
    from adk_asgi.transport.asgi import send_json_error

    if scope["type"] == "lifespan":
        await plain_lifespan(receive, send)
    elif scope["type"] == "http":
        await send_json_error(send, 404, "not_found", "Not found.")
    else:
        await send({"type": "websocket.close", "code": 1000})


@pytest.fixture
def demo_app() -> AdkApp:
    return AdkApp(build_demo_agent(token_delay=0), warm_up=False)


@pytest.fixture
async def client(demo_app: AdkApp) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=demo_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


class LoopbackServer:
    """A real uvicorn server on 127.0.0.1 in a thread with its own event loop,
    so tests can look at the server's tasks."""

    def __init__(self, app: Any, **config: Any) -> None:
        # The WebSocket implementation `adk-asgi serve` runs (tests see what users get).
        config.setdefault("ws", WS_PROTOCOL)
        self.config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", **config
        )
        self.server = uvicorn.Server(self.config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve())

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def tasks(self) -> set[asyncio.Task[Any]]:
        """The server loop's live tasks other than uvicorn's own serving machinery."""
        assert self.loop is not None

        async def collect() -> set[asyncio.Task[Any]]:
            me = asyncio.current_task()
            return {t for t in asyncio.all_tasks() if t is not me and not t.done()}

        return asyncio.run_coroutine_threadsafe(collect(), self.loop).result(5)


@pytest.fixture
def loopback() -> Iterator[type[LoopbackServer]]:
    yield LoopbackServer


class Chat:
    """A minimal client that keeps the history like useChat does."""

    def __init__(self, client: httpx.AsyncClient | httpx.Client, chat_id: str) -> None:
        self.client = client
        self.id = chat_id
        self.messages: list[dict[str, Any]] = []

    def absorb(self, chunks: list[Any]) -> dict[str, Any]:
        start = chunks[0]
        message = next((m for m in self.messages if m["id"] == start["messageId"]), None)
        if message is None:
            message = {"id": start["messageId"], "role": "assistant", "parts": []}
            self.messages.append(message)
        parts = message["parts"]
        for c in chunks[1:]:
            if not isinstance(c, dict):
                continue
            if c["type"] == "tool-input-available":
                part = next((p for p in parts if p.get("toolCallId") == c["toolCallId"]), None)
                if part is None:
                    parts.append(
                        {
                            "type": f"tool-{c['toolName']}",
                            "toolCallId": c["toolCallId"],
                            "state": "input-available",
                            "input": c["input"],
                        }
                    )
            elif c["type"] == "tool-approval-request":
                part = next(p for p in parts if p["toolCallId"] == c["toolCallId"])
                part.update(state="approval-requested", approval={"id": c["approvalId"]})
            elif c["type"] in ("tool-output-available", "tool-output-denied"):
                part = next(p for p in parts if p.get("toolCallId") == c["toolCallId"])
                part["state"] = (
                    "output-available" if c["type"] == "tool-output-available" else "output-denied"
                )
        return message

    def approve(self, index: int, approved: bool) -> None:
        parts = [
            p
            for p in self.messages[-1]["parts"]
            if p.get("state") == "approval-requested" or p.get("state") == "approval-responded"
        ]
        part = parts[index]
        part.update(state="approval-responded", approval={**part["approval"], "approved": approved})

    def body(self, **extra: Any) -> dict[str, Any]:
        return {
            "id": self.id,
            "messages": copy.deepcopy(self.messages),
            "trigger": "submit-message",
            **extra,
        }


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server (Debian's package, installed by scripts/test) for this run."""
    from redis_server import RedisServer

    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture(scope="session")
def gemini_emulator() -> Iterator[Any]:
    """One Gemini API emulator (``adk_asgi.testing.gemini``) for the whole run, chunking
    like Gemini (8 tokens a chunk). Agents reach it through ``gemini_emulator.gemini(name)``
    (no environment needed); its journal is shared, so tests filter it by what they sent."""
    from adk_asgi.testing.gemini import GeminiEmulator

    with GeminiEmulator(tokens_per_chunk=8) as emulator:
        yield emulator


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A throwaway PostgreSQL server for this run (tests/pg_server.py); skipped without the
    postgres extra or the server binaries."""
    import importlib.util

    from pg_server import PostgresServer, find_bindir

    if not all(importlib.util.find_spec(m) for m in ("sqlalchemy", "asyncpg")):
        pytest.skip(
            "needs the postgres extra: pip install -e '.[postgres]' (google-adk[db], asyncpg)"
        )
    bindir = find_bindir()
    if bindir is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, pg_ctl, postgres) on this machine; "
            "scripts/test installs Debian's postgresql package when it can"
        )
    server = PostgresServer(bindir).start()
    try:
        yield server
    finally:
        server.stop()
