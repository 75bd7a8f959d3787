"""Identity and ownership: the ``authenticate`` hook on HTTP and WebSocket, and a chat
belonging to the user who created it (everyone else gets 404, as for a chat that
does not exist)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from adk_asgi import AdkApp, AuthError, MemoryStreamStore, bearer_token
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent

from support import Chat, LoopbackServer, chat_body, parse_sse, types_of, user_message
from support.ws_client import LiveClient, kinds, ws_url

USERS = {"token-alice": "alice", "token-bob": "bob", "token-mallory": "mallory"}


def authenticate(scope: Any) -> str:
    token = bearer_token(scope)
    if token is None:  # browsers cannot set WebSocket headers: a query parameter then
        query = scope.get("query_string", b"").decode()
        token = dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("token")
    if token is None:
        raise AuthError(401, "Sign in first.")
    if token not in USERS:
        raise AuthError(403, "Unknown token.")
    return USERS[token]


def _app(**options: Any) -> AdkApp:
    return AdkApp(
        build_demo_agent(token_delay=0), authenticate=authenticate, warm_up=False, **options
    )


def as_(user: str) -> dict[str, str]:
    return {"authorization": f"Bearer token-{user}"}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(_app()) as s:
        yield s


async def test_http_refusals_are_401_and_403_json() -> None:
    app = _app()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        body = chat_body("c", user_message("hi"))
        response = await client.post("/", json=body)
        assert response.status_code == 401
        assert response.json()["error"] == {"code": "unauthorized", "message": "Sign in first."}
        response = await client.post("/", json=body, headers={"authorization": "Bearer nope"})
        assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
        assert (await client.get("/c/stream")).status_code == 401
        assert (await client.delete("/c/stream")).status_code == 401
        response = await client.post("/", json=body, headers=as_("alice"))
        assert response.status_code == 200 and types_of(parse_sse(response.text))[-1] == "[DONE]"


async def test_async_hook_and_a_bad_user_id_is_a_refusal() -> None:
    async def hook(scope: Any) -> str:
        return ""  # a bug in the hook must not become an ADK user id

    app = AdkApp(build_demo_agent(), authenticate=hook, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        response = await client.post("/", json=chat_body("c", user_message("hi")))
    assert response.status_code == 403


async def test_websocket_refusal_closes_with_1008(server: LoopbackServer) -> None:
    for query, reason in (("", "Sign in first."), ("token=nope", "Unknown token.")):
        async with connect(ws_url(server.url, query)) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, reason)
    client = await LiveClient.open(ws_url(server.url, "token=token-alice"))
    await client.say("hello", chat_id="ws-ok")
    assert kinds(await client.turn())[-2:] == ["finish", "[DONE]"]
    await client.close()


def test_another_users_chat_is_not_found_everywhere(server: LoopbackServer) -> None:
    PAYMENT_LOG.clear()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        alice = Chat(client, "alice-chat")
        alice.messages.append(user_message("Send 50 dollars to Hanako", "u1"))
        first = parse_sse(client.post("/", json=alice.body(), headers=as_("alice")).text)
        message = alice.absorb(first)
        assert "tool-approval-request" in types_of(first)

        # Bob knows the chat id. Streaming, resuming, stopping, approving: all 404.
        post = client.post(
            "/", json=chat_body("alice-chat", user_message("hi")), headers=as_("bob")
        )
        assert post.status_code == 404
        assert post.json()["error"] == {"code": "chat_not_found", "message": "No such chat."}
        assert client.get("/alice-chat/stream", headers=as_("bob")).status_code == 404
        assert client.delete("/alice-chat/stream", headers=as_("bob")).status_code == 404
        alice.approve(0, True)
        forged = client.post("/", json=alice.body(messageId=message["id"]), headers=as_("bob"))
        assert forged.status_code == 404
        assert PAYMENT_LOG == []  # nothing ran

        # The same answers as for a chat nobody has: no existence leak beyond 404.
        assert client.delete("/nobody-chat/stream", headers=as_("bob")).status_code == 404

        # Alice's own approval still works, exactly once.
        answer = client.post("/", json=alice.body(messageId=message["id"]), headers=as_("alice"))
        assert "tool-output-available" in types_of(parse_sse(answer.text))
        assert len(PAYMENT_LOG) == 1
        assert client.get("/alice-chat/stream", headers=as_("alice")).status_code == 204


async def test_another_users_chat_over_websocket(server: LoopbackServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as client:
        await client.post("/", json=chat_body("alice-ws", user_message("hi")), headers=as_("alice"))
    # Protocol A: the chat named at the handshake.
    async with connect(ws_url(server.url, "token=token-bob&chatId=alice-ws")) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "No such chat.")
    # Protocol A: the chat named in a message frame.
    bob = await LiveClient.open(ws_url(server.url, "token=token-bob"))
    await bob.say("hi", chat_id="alice-ws")
    error = await bob.next()
    assert error == {"type": "error", "errorText": "No such chat."}
    await bob.close()
    # Protocol B: send and resume get error / no-active frames for that request.
    async with connect(ws_url(server.url, "token=token-bob")) as ws:
        await ws.send(
            json.dumps(
                {
                    "type": "send",
                    "requestId": "r1",
                    "id": "alice-ws",
                    "trigger": "submit-message",
                    "messages": [user_message("hi")],
                }
            )
        )
        assert json.loads(await ws.recv()) == {
            "type": "error",
            "errorText": "No such chat.",
            "requestId": "r1",
        }
        await ws.send(json.dumps({"type": "resume", "requestId": "r2", "id": "alice-ws"}))
        assert json.loads(await ws.recv()) == {"type": "no-active", "requestId": "r2"}


async def test_sessions_stay_per_user_even_when_the_store_forgets() -> None:
    """Ownership is enforced by the stream store; isolation does not depend on it:
    sessions are keyed by user, so after a restart of an in-memory store another user
    gets a chat of their own under the same id, never the first user's."""
    app = _app()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        await client.post(
            "/", json=chat_body("shared-id", user_message("secret plan")), headers=as_("alice")
        )
        app.chat.store = app.live.store = app.store = MemoryStreamStore()  # a restart
        response = await client.post(
            "/", json=chat_body("shared-id", user_message("hi")), headers=as_("mallory")
        )
        assert response.status_code == 200
    service = app.runtime.session_service
    mallory = await service.get_session(
        app_name=app.runtime.app_name, user_id="mallory", session_id="shared-id"
    )
    assert mallory is not None
    texts = [p.text for e in mallory.events if e.content for p in e.content.parts or () if p.text]
    assert not any("secret" in t for t in texts)


def test_bearer_token() -> None:
    assert bearer_token({"headers": [(b"authorization", b"Bearer abc ")]}) == "abc"
    assert bearer_token({"headers": [(b"authorization", b"Basic abc")]}) is None
    assert bearer_token({"headers": []}) is None
    with pytest.raises(ValueError):
        AuthError(500, "no")
