"""Every odd input is a 4xx: a number in a query or header that only looks like one, a
cursor or answer nested thousands deep, a cursor time no store can compare, an artifact
name no file can have — each answered JSON with a stable code before any store is asked,
with no ERROR line, no outage count and no server path in the log. And what is deleted
stays deleted: a message that waited behind a turn for a chat deleted meanwhile is
refused, and every name an agent saved can be fetched (a newline in it too).

A real uvicorn on loopback (raw header bytes reach the app as a browser's would), a real
ADK Runner on the artifacts test agent, ADK's sqlite session service and its file artifact
service."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agents.artifacts.agent import build_app
from google.genai import types

from adk_asgi import AdkApp
from adk_asgi.adk.artifacts import artifact_url
from adk_asgi.observability.metrics import METRICS

from support import LoopbackServer, chat_body, parse_sse, types_of, user_message


def _cursor(value: Any) -> str:
    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AdkApp, str, Path]]:
    root = tmp_path_factory.mktemp("odd")
    app = AdkApp(
        adk_app=build_app(),
        session_db=f"sqlite:///{root / 'chats.db'}",
        artifact_service=f"file://{root / 'files'}",
        warm_up=False,
    )
    with LoopbackServer(app) as server:
        yield app, f"http://127.0.0.1:{server.port}", root


@pytest.fixture
def watched(caplog: pytest.LogCaptureFixture) -> Iterator[list[tuple[str, str]]]:
    """The outages counted meanwhile; the log at WARNING."""
    counted: list[tuple[str, str]] = []
    original = METRICS.store_error
    METRICS.store_error = lambda store, operation: counted.append((store, operation))  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="adk_asgi"):
        yield counted
    METRICS.store_error = original  # type: ignore[method-assign]


def _refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == code


def test_odd_inputs_are_4xx_before_any_store_is_asked(
    served: tuple[AdkApp, str, Path],
    watched: list[tuple[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, base, root = served
    with httpx.Client(base_url=base, timeout=30) as client:
        reply = client.post("/", json=chat_body("odd", user_message("chart sales")))
        [file] = [c for c in parse_sse(reply.text) if isinstance(c, dict) and c["type"] == "file"]
        url = file["url"]

        # Numbers: superscript two passes str.isdigit and fails int(); 5,000 digits pass
        # both but exceed Python's conversion limit.
        for limit in ("%C2%B2", "5" * 5000, "-1", "+1", "1_0", "%201", "0"):
            _refused(client.get(f"/?limit={limit}"), 422, "invalid_limit")
        _refused(client.get(f"{url.split('?')[0]}?version=%C2%B2"), 422, "invalid_version")
        _refused(client.get(f"{url.split('?')[0]}?version={'9' * 5000}"), 422, "invalid_version")
        for bad in (b"bytes=\xb2-", b"bytes=-\xb2", b"bytes=" + b"9" * 5000 + b"-"):
            whole = client.get(url, headers={"range": bad})  # ignored: the whole artifact
            assert whole.status_code == 200 and whole.content, bad[:20]

        # Cursors: nested 5,000 deep, times no store can compare, made-up shapes.
        for cursor in (
            _cursor(b"[" * 5000 + b"]" * 5000),
            _cursor([1e20, "odd"]),
            _cursor(b'[1e999,"odd"]'),
            _cursor(b'[-1e999,"odd"]'),
            _cursor([-5, "odd"]),
            _cursor([1.0, "x" * 300]),
            _cursor([1.0, "a\nb"]),
            "x" * 5000,
        ):
            _refused(client.get("/", params={"cursor": cursor}), 422, "invalid_cursor")

        # Artifact names no file can have: nothing there.
        for name in ("bad%00name.png", "n" * 10_000, "n" * 300):
            _refused(client.get(f"/odd/artifacts/{name}"), 404, "artifact_not_found")

        # A 900-deep answer, and a tool output posted from the server's side.
        deep: Any = "x"
        for _ in range(900):
            deep = [deep]
        answer = {
            "id": "odd",
            "messages": [
                {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
                {
                    "id": "a",
                    "role": "assistant",
                    "parts": [
                        {
                            "type": "tool-ask",
                            "toolCallId": "c1",
                            "state": "output-available",
                            "input": {},
                            "output": deep,
                        }
                    ],
                },
            ],
        }
        _refused(client.post("/", json=answer), 422, "json_too_deep")
        _refused(
            client.post("/odd/tool-output", json={"toolCallId": "c1", "output": {"v": deep}}),
            422,
            "json_too_deep",
        )
    assert watched == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert str(root) not in caplog.text


def test_every_saved_name_can_be_fetched(served: tuple[AdkApp, str, Path]) -> None:
    app, base, _ = served

    async def save(name: str) -> int:
        service = app.runtime.artifacts.service
        assert service is not None
        return await service.save_artifact(
            app_name=app.runtime.app_name,
            user_id="anonymous",
            session_id="names",
            filename=name,
            artifact=types.Part.from_bytes(data=name.encode(), mime_type="text/plain"),
        )

    with httpx.Client(base_url=base, timeout=30) as client:
        reply = client.post("/", json=chat_body("names", user_message("hello")))
        assert types_of(parse_sse(reply.text))[-2:] == ["finish", "[DONE]"]
        for name in ("two\nlines.txt", "trailing\n", "tab\there.txt", "ünï cødé.txt"):
            version = asyncio.run(save(name))
            got = client.get(artifact_url("", "names", name, version))
            assert got.status_code == 200 and got.content == name.encode(), (name, got.text)


async def test_a_message_queued_for_a_chat_deleted_meanwhile_is_refused() -> None:
    """The chat's turn lock is held; a DELETE waits for it, then a message: the message
    waited for a chat that was deleted meanwhile, and is refused ``404 chat_not_found``
    (it never re-creates the chat)."""
    app = AdkApp(adk_app=build_app(), warm_up=False)
    transport = httpx.ASGITransport(app=app)
    async with app.lifespan(), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        first = await c.post("/", json=chat_body("gone", user_message("hello")))
        assert first.status_code == 200
        locks = app.store._locks._locks  # type: ignore[attr-defined]

        async def queued(count: int) -> None:
            while locks.get(("", "gone"), (None, 0))[1] < count:  # noqa: ASYNC110
                await asyncio.sleep(0.005)

        async with app.store.lock("gone"):
            deleting = asyncio.create_task(c.delete("/gone"))
            await asyncio.wait_for(queued(2), 10)
            body = chat_body("gone", user_message("hello"), user_message("again", "u2"))
            waiting = asyncio.create_task(c.post("/", json=body))
            await asyncio.wait_for(queued(3), 10)
        assert (await deleting).status_code == 204
        _refused(await waiting, 404, "chat_not_found")
        assert (await c.get("/gone")).status_code == 404
