"""The HTTP side's one error path (``http/errors.py``): handlers raise, one place answers.

Every route's outage reaches the answer, the log line and the ``operation`` label it had
before the handlers raised (operators alert on them), and nothing is ever answered twice:
a failure after the response started is the stream's business.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx
import pytest
from google.adk.artifacts import InMemoryArtifactService
from google.adk.sessions import InMemorySessionService

from adk_asgi import AdkApp, MemoryStreamStore
from adk_asgi.adk.outages import Outage
from adk_asgi.demo import build_demo_agent
from adk_asgi.http.errors import answer
from adk_asgi.observability.metrics import METRICS
from adk_asgi.stores import StoreUnavailable
from adk_asgi.transport.asgi import Message, Receive, Scope, Send
from adk_asgi.transport.auth import AuthError
from adk_asgi.wire.errors import RequestError

_DOWN = "Redis: ConnectionError: Connection refused"


class FlakyStore(MemoryStreamStore):
    """A memory store whose named calls fail as a Redis store's do when Redis is down."""

    def __init__(self) -> None:
        super().__init__()
        self.down: set[str] = set()

    def _check(self, name: str) -> None:
        if name in self.down:
            raise StoreUnavailable(_DOWN)

    async def claim(self, chat_id: str, user_id: str) -> bool:
        self._check("claim")
        return await super().claim(chat_id, user_id)

    async def owner(self, chat_id: str) -> str | None:
        self._check("owner")
        return await super().owner(chat_id)

    async def follow(self, chat_id: str) -> AsyncGenerator[bytes, None] | None:
        self._check("follow")
        return await super().follow(chat_id)

    async def stop(self, chat_id: str) -> bool:
        self._check("stop")
        return await super().stop(chat_id)


class FlakySessions(InMemorySessionService):
    """Sessions whose named calls fail as a locked database does."""

    def __init__(self) -> None:
        super().__init__()
        self.down: set[str] = set()

    def _check(self, name: str) -> None:
        if name in self.down:
            raise sqlite3.OperationalError("database is locked")

    async def get_session(self, **kwargs: Any) -> Any:
        self._check("get_session")
        return await super().get_session(**kwargs)

    async def list_sessions(self, **kwargs: Any) -> Any:
        self._check("list_sessions")
        return await super().list_sessions(**kwargs)

    async def delete_session(self, **kwargs: Any) -> None:
        self._check("delete_session")
        await super().delete_session(**kwargs)


class FlakyArtifacts(InMemoryArtifactService):
    down: bool = False

    async def list_artifact_keys(self, **kwargs: Any) -> list[str]:
        if self.down:
            raise OSError("artifact bucket unreachable")
        return await super().list_artifact_keys(**kwargs)


class Counted:
    """``METRICS.store_error``'s calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def store_error(self, store: str, operation: str) -> None:
        self.calls.append((store, operation))


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counted:
    counted = Counted()
    monkeypatch.setattr(METRICS, "store_error", counted.store_error)
    return counted


@pytest.fixture
async def served() -> AsyncIterator[tuple[httpx.AsyncClient, AdkApp]]:
    app = AdkApp(
        build_demo_agent(token_delay=0),
        warm_up=False,
        stream_store=FlakyStore(),
        session_service=FlakySessions(),
        artifact_service=FlakyArtifacts(),
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        turn = await client.post("/", json=_body("c1"))
        assert turn.status_code == 200
        yield client, app


def _body(chat_id: str) -> dict[str, Any]:
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    return {"id": chat_id, "messages": [message], "trigger": "submit-message"}


def _unavailable(response: httpx.Response, code: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == "2"
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == code


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


# What each route asks the stream store first, the labels and log line of its outage.
STREAM_ROUTES = [
    ("POST", "/", "claim", ("streams", "turn")),
    ("GET", "/c1/stream", "owner", ("streams", "resume")),
    ("GET", "/c1/stream", "follow", ("streams", "resume")),
    ("DELETE", "/c1/stream", "owner", ("streams", "stop")),
    ("DELETE", "/c1/stream", "stop", ("streams", "stop")),
    ("GET", "/c1", "owner", ("streams", "chat")),
    ("DELETE", "/c1", "owner", ("streams", "chat")),
    ("DELETE", "/c1", "stop", ("streams", "delete")),
    ("GET", "/c1/artifacts", "owner", ("streams", "artifacts")),
    ("GET", "/c1/artifacts/a.txt", "owner", ("streams", "artifacts")),
]


@pytest.mark.parametrize(("method", "path", "call", "label"), STREAM_ROUTES)
async def test_stream_store_outages_keep_their_labels(
    served: tuple[httpx.AsyncClient, AdkApp],
    counted: Counted,
    caplog: pytest.LogCaptureFixture,
    method: str,
    path: str,
    call: str,
    label: tuple[str, str],
) -> None:
    client, app = served
    assert isinstance(app.store, FlakyStore)
    app.store.down.add(call)
    caplog.clear()
    body = _body("c1") if method == "POST" else None
    _unavailable(await client.request(method, path, json=body), "store_unavailable")
    assert counted.calls == [label]
    assert _errors(caplog) == [f"Stream store unavailable for chat 'c1': {_DOWN}"]


SESSION_ROUTES = [
    ("POST", "/", "get_session", ("sessions", "prepare"), "Session store failed for chat 'c2'"),
    ("GET", "/c1", "get_session", ("sessions", "chat"), "Session store failed for chat 'c1'"),
    ("DELETE", "/c1", "get_session", ("sessions", "chat"), "Session store failed for chat 'c1'"),
    ("DELETE", "/c1", "delete_session", ("sessions", "delete"), "Could not delete chat 'c1'"),
    ("GET", "/", "list_sessions", ("sessions", "list"), "Session store failed listing chats"),
]


@pytest.mark.parametrize(("method", "path", "call", "label", "line"), SESSION_ROUTES)
async def test_session_outages_keep_their_labels(
    served: tuple[httpx.AsyncClient, AdkApp],
    counted: Counted,
    caplog: pytest.LogCaptureFixture,
    method: str,
    path: str,
    call: str,
    label: tuple[str, str],
    line: str,
) -> None:
    client, app = served
    sessions = app.runtime.session_service
    assert isinstance(sessions, FlakySessions)
    sessions.down.add(call)
    caplog.clear()
    body = _body("c2") if method == "POST" else None
    _unavailable(await client.request(method, path, json=body), "session_unavailable")
    assert counted.calls == [label]
    assert _errors(caplog) == [f"{line}: OperationalError: database is locked"]


async def test_artifact_outage_is_logged_not_counted(
    served: tuple[httpx.AsyncClient, AdkApp],
    counted: Counted,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client, app = served
    service = app.runtime.artifacts.service
    assert isinstance(service, FlakyArtifacts)
    service.down = True
    caplog.clear()
    _unavailable(await client.get("/c1/artifacts"), "artifact_unavailable")
    assert counted.calls == []
    assert _errors(caplog) == [
        "Artifact service failed for chat 'c1': OSError: artifact bucket unreachable"
    ]


async def test_tool_output_outage_is_logged_not_counted(
    served: tuple[httpx.AsyncClient, AdkApp],
    counted: Counted,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client, app = served
    assert isinstance(app.store, FlakyStore)
    app.store.down.add("owner")
    caplog.clear()
    response = await client.post("/c1/tool-output", json={"toolCallId": "x", "output": {}})
    _unavailable(response, "store_unavailable")
    assert counted.calls == []
    assert _errors(caplog) == [f"Stream store unavailable for chat 'c1': {_DOWN}"]


async def test_refusals_are_json() -> None:
    def refuse(scope: Scope) -> str:
        raise AuthError(403, "Not yours.")

    app = AdkApp(build_demo_agent(token_delay=0), warm_up=False, authenticate=refuse)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        for method, path in (("GET", "/c1/stream"), ("DELETE", "/c1/stream"), ("GET", "/c1")):
            refused = await client.request(method, path)
            assert refused.status_code == 403
            assert refused.json() == {"error": {"code": "forbidden", "message": "Not yours."}}
        # An invalid chat id on the stream routes is no chat, answered before who asks.
        for method in ("GET", "DELETE"):
            missing = await client.request(method, "/" + "x" * 300 + "/stream")
            assert missing.status_code == 404
            assert missing.json()["error"]["code"] == "chat_not_found"


async def _run(handler: Any, scope: Scope | None = None) -> list[Message]:
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await answer(handler, scope or {"type": "http", "method": "GET"}, receive, send)
    return sent


async def test_a_failure_after_the_start_is_never_a_second_response(
    counted: Counted, caplog: pytest.LogCaptureFixture
) -> None:
    async def streams_then_refuses(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise RequestError(404, "chat_not_found", "No such chat.")

    async def streams_then_fails(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise Outage("streams", "turn", "c9", StoreUnavailable(_DOWN))

    assert [m["type"] for m in await _run(streams_then_refuses)] == ["http.response.start"]
    caplog.clear()
    assert [m["type"] for m in await _run(streams_then_fails)] == ["http.response.start"]
    # Logged and counted all the same: it happened.
    assert counted.calls == [("streams", "turn")]
    assert _errors(caplog) == [f"Stream store unavailable for chat 'c9': {_DOWN}"]


async def test_an_unnamed_store_failure_is_answered_and_not_counted(
    counted: Counted, caplog: pytest.LogCaptureFixture
) -> None:
    async def fails(scope: Scope, receive: Receive, send: Send) -> None:
        raise StoreUnavailable(_DOWN)

    scope: Scope = {"type": "http", "method": "GET", "path_params": {"chat_id": "c3"}}
    sent = await _run(fails, scope)
    assert sent[0]["status"] == 503 and (b"retry-after", b"2") in sent[0]["headers"]
    assert b"store_unavailable" in sent[1]["body"]
    assert counted.calls == []
    assert _errors(caplog) == [f"Stream store unavailable for chat 'c3': {_DOWN}"]
