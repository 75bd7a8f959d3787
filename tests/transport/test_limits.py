"""Every limit gives a clear 4xx (HTTP) or close code / error (WebSocket), never a 500."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from adk_asgi import AdkApp, Limits
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent

from support import LoopbackServer, chat_body, parse_sse, types_of, user_message
from support.ws_client import LiveClient, dicts, ws_url


def _app(**limits: Any) -> AdkApp:
    return AdkApp(build_demo_agent(token_delay=0), limits=Limits(**limits), warm_up=False)


async def _post(app: AdkApp, body: Any) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        return await client.post("/", json=body)


def _file(data: bytes, *, base64_: bool = True) -> dict[str, Any]:
    payload = (
        f";base64,{base64.b64encode(data).decode()}"
        if base64_
        else f",{quote(data.decode('latin-1'), safe='')}"
    )
    return {"type": "file", "mediaType": "text/plain", "url": f"data:text/plain{payload}"}


def _with_file(part: dict[str, Any]) -> dict[str, Any]:
    return {"id": "u", "role": "user", "parts": [part, {"type": "text", "text": "see file"}]}


@pytest.mark.parametrize(
    ("limits", "body", "code"),
    [
        (
            {"max_messages": 3},
            chat_body("c", *[user_message(f"m{i}", f"u{i}") for i in range(4)]),
            "too_many_messages",
        ),
        (
            {"max_parts_per_message": 2},
            chat_body(
                "c", {"id": "u", "role": "user", "parts": [{"type": "text", "text": "x"}] * 3}
            ),
            "too_many_parts",
        ),
        (
            {"max_file_bytes": 1000},
            chat_body("c", _with_file(_file(b"a" * 5000))),
            "file_too_large",
        ),
        # Percent-encoded data: URLs are checked on their decoded size as well.
        (
            {"max_file_bytes": 1000},
            chat_body("c", _with_file(_file(b"a" * 1200, base64_=False))),
            "file_too_large",
        ),
    ],
)
async def test_http_limits_are_413(limits: dict[str, Any], body: Any, code: str) -> None:
    response = await _post(_app(**limits), body)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == code


async def test_under_the_limits_is_served() -> None:
    app = _app(max_messages=3, max_parts_per_message=2, max_file_bytes=1000)
    response = await _post(app, chat_body("c", _with_file(_file(b"a" * 900))))
    assert response.status_code == 200
    assert types_of(parse_sse(response.text))[-2:] == ["finish", "[DONE]"]


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        Limits(max_messages=0)
    with pytest.raises(ValueError):
        Limits(frames_per_second=0)


async def _closed(ws: Any) -> tuple[int, str]:
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await asyncio.wait_for(ws.recv(), 5)
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code, closed.value.rcvd.reason


async def test_websocket_frame_too_big_closes_with_1009() -> None:
    with LoopbackServer(_app(max_frame_bytes=1000)) as server:
        async with connect(ws_url(server.url), max_size=None) as ws:
            await ws.send(json.dumps({"type": "ping", "version": "1.0", "pad": "x" * 2000}))
            assert await _closed(ws) == (1009, "Frames are limited to 1000 bytes.")
        async with connect(ws_url(server.url), max_size=None) as ws:
            await ws.send(b"\x00" * 1001)  # binary audio counts too
            assert (await _closed(ws))[0] == 1009


async def test_websocket_frame_rate_limit_closes_with_1008() -> None:
    with LoopbackServer(_app(frames_per_second=5, frame_burst=10)) as server:
        async with connect(ws_url(server.url)) as ws:
            for _ in range(10):  # the burst is allowed
                await ws.send('{"type":"ping","version":"1.0"}')
            for _ in range(10):
                assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "pong"
            for _ in range(20):
                await ws.send('{"type":"ping","version":"1.0"}')
            assert await _closed(ws) == (1008, "Too many frames; slow down.")


async def test_websocket_pending_approvals_are_capped() -> None:
    PAYMENT_LOG.clear()
    with LoopbackServer(_app(max_pending_approvals=1)) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("Send 30 dollars to Alice and 40 dollars to Bob")
        chunks = await client.until("tool-approval-request")
        calls = [c for c in dicts(chunks) if c["type"] == "tool-input-available"]
        names = {c["toolCallId"]: c["input"]["recipient"] for c in calls}
        request = dicts(chunks)[-1]
        assert (
            len(names) == 2
            and [c["type"] for c in dicts(chunks)].count("tool-approval-request") == 1
        )  # the second call was not put to the user
        await client.send(
            "tool_result", toolCallId=request["approvalId"], result={"confirmed": True}
        )
        tail = dicts(await client.turn())
        outputs = {
            c["toolCallId"]: c
            for c in tail
            if c["type"] in ("tool-output-available", "tool-output-error")
        }
        allowed = request["toolCallId"]
        refused = next(call for call in names if call != allowed)
        assert outputs[allowed]["type"] == "tool-output-available"
        assert outputs[refused]["type"] == "tool-output-error"
        assert "Too many tool calls" in outputs[refused]["errorText"]
        await client.close()
    assert [p["recipient"] for p in PAYMENT_LOG] == [names[allowed]]
