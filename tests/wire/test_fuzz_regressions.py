"""Bugs the fuzz tests found, pinned as plain examples."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from adk_asgi import AdkApp, RequestError
from adk_asgi.demo import build_demo_agent
from adk_asgi.live.protocol.commands import parse_json
from adk_asgi.wire.request import decode_chat_request

from support.fuzz_harness import WsHarness

DEEP = b"[" * 5000 + b"]" * 5000
# Invalid UTF-8 inside a JSON string: msgspec raises UnicodeDecodeError, not DecodeError.
BAD_UTF8 = b'{"id":"c\xff","messages":[]}'
DEEP_BODY = (
    b'{"id":"c","messages":[{"role":"user","parts":[{"type":"text","text":"x",'
    b'"input":' + DEEP + b"}]}]}"
)


@pytest.mark.parametrize(
    "body", [b'{"id":"c","extra":' + DEEP + b"}", DEEP_BODY, BAD_UTF8, b'{"id":"\xed\xa0\x80"}']
)
def test_decode_refuses_deep_nesting_and_broken_utf8(body: bytes) -> None:
    with pytest.raises(RequestError) as caught:
        decode_chat_request(body)
    assert (caught.value.status, caught.value.code) == (400, "invalid_json")


@pytest.mark.parametrize("body", [DEEP_BODY, BAD_UTF8])
async def test_endpoint_answers_400_not_500(client: httpx.AsyncClient, body: bytes) -> None:
    response = await client.post("/", content=body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json"


@pytest.mark.parametrize(
    "frame",
    [
        '{"type":"ping","timestamp":' + "[" * 5000 + "]" * 5000 + "}",
        b'{"type":"ping\xff"}',
        '{"type":"\ud800"}',
    ],
)
def test_parse_json_refuses_deep_nesting_and_broken_utf8(frame: str | bytes) -> None:
    with pytest.raises(RequestError) as caught:
        parse_json(frame)
    assert (caught.value.status, caught.value.code) == (400, "invalid_frame")


async def test_deep_frame_gets_an_error_chunk_and_the_connection_lives() -> None:
    app = AdkApp(build_demo_agent(token_delay=0), warm_up=False)
    async with WsHarness(app) as ws:
        await ws.text('{"type":"ping","timestamp":' + "[" * 5000 + "]" * 5000 + "}")
        await ws.probe("still-here")
        assert ws.frames[0] == (
            'data: {"type":"error","errorText":"A frame is nested too deeply."}\n\n'
        )


class _LeavingClient(WsHarness):
    """A live client that goes away the moment a frame containing ``leave_on`` arrives."""

    leave_on = ""

    async def _send(self, message: dict[str, Any]) -> None:
        await super()._send(message)
        if self.leave_on and self.leave_on in message.get("text", ""):
            self.leave_on = ""
            self.inbox.put_nowait({"type": "websocket.disconnect", "code": 1001})


@pytest.mark.parametrize(
    ("prompt", "leave_on"), [("hello", '"type":"finish"'), ("please fail", '"type":"error"')]
)
async def test_client_leaving_as_a_turn_ends(prompt: str, leave_on: str) -> None:
    app = AdkApp(build_demo_agent(token_delay=0), warm_up=False)
    client = _LeavingClient(app)
    client.leave_on = leave_on
    await client.__aenter__()
    await client.text(
        json.dumps(
            {
                "type": "message",
                "data": {"id": "c", "messages": [{"role": "user", "content": prompt}]},
            }
        )
    )
    assert client.task is not None
    try:
        await asyncio.wait_for(asyncio.shield(client.task), 3)
    except TimeoutError:
        for task in asyncio.all_tasks():
            if task.get_name() == "adk-asgi-live-downstream":
                task.cancel()  # let the stuck connection go, then report
        await asyncio.wait_for(client.task, 5)
        raise AssertionError("the connection never ended after its client left") from None
