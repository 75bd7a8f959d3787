"""Seed-shaped message bodies (``content`` instead of ``parts``) mean the same on the HTTP
endpoint and the WebSocket: both accept a string or a list of parts, and both refuse a
message with neither, saying the same thing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, parse_sse, text_of
from support.ws_client import DONE, LiveClient, ws_url

SHAPES: dict[str, dict[str, Any]] = {
    "parts": {"parts": [{"type": "text", "text": "hello shapes"}]},
    "content-string": {"content": "hello shapes"},
    "content-parts": {"content": [{"type": "text", "text": "hello shapes"}]},
}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(AdkApp(build_demo_agent(), warm_up=False)) as running:
        yield running


async def _http(server: LoopbackServer, chat: str, message: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        return await client.post("/", json={"id": chat, "messages": [message]})


async def _ws(server: LoopbackServer, chat: str, message: dict[str, Any]) -> list[Any]:
    client = await LiveClient.open(ws_url(server.url))
    try:
        await client.send("message", id=chat, messages=[message])
        return await client.turn()
    finally:
        await client.close()


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_both_transports_accept_each_shape(server: LoopbackServer, shape: str) -> None:
    message = {"id": "u1", "role": "user", **SHAPES[shape]}
    response = await _http(server, f"http-{shape}", message)
    assert response.status_code == 200
    live = await _ws(server, f"ws-{shape}", message)
    assert live[-1] == DONE
    for chunks in (parse_sse(response.text), live):
        assert text_of(chunks).startswith('You said: "hello shapes"')


async def test_both_transports_refuse_a_message_without_either(server: LoopbackServer) -> None:
    message = {"id": "u1", "role": "user"}
    response = await _http(server, "http-none", message)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    client = await LiveClient.open(ws_url(server.url))
    try:
        await client.send("message", id="ws-none", messages=[message])
        chunk = await client.next()
    finally:
        await client.close()
    assert chunk["type"] == "error"
    for said in (error["message"], chunk["errorText"]):
        assert "a message needs `parts` (or `content`)" in said
