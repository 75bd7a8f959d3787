"""The WebSocket Origin allowlist: same-origin by default, configurable, 1008 otherwise."""

from __future__ import annotations

from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent
from adk_asgi.transport.origin import OriginPolicy

from support import LoopbackServer
from support.ws_client import ws_url


def scope(
    origin: str | None, host: str = "chat.example.com", forwarded: str | None = None
) -> dict[str, Any]:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if forwarded is not None:
        headers.append((b"x-forwarded-host", forwarded.encode()))
    return {"headers": headers}


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # not a browser
        ("https://chat.example.com", True),
        ("http://chat.example.com/", True),
        ("https://evil.example", False),
        ("https://chat.example.com.evil.example", False),
        ("null", False),
    ],
)
def test_same_origin_by_default(origin: str | None, allowed: bool) -> None:
    assert OriginPolicy().allows(scope(origin)) is allowed


def test_behind_a_proxy_the_forwarded_host_counts() -> None:
    policy = OriginPolicy()
    assert policy.allows(
        scope("https://public.example", host="127.0.0.1:8000", forwarded="public.example")
    )
    assert not policy.allows(scope("https://public.example", host="127.0.0.1:8000"))


def test_configured_origins_and_wildcard() -> None:
    policy = OriginPolicy(["https://app.example"])
    assert policy.allows(scope("https://app.example"))
    assert policy.allows(scope("https://chat.example.com"))  # its own origin still passes
    assert not policy.allows(scope("https://other.example"))
    assert OriginPolicy(["*"]).allows(scope("https://anything.example"))


async def test_a_foreign_origin_is_closed_with_1008() -> None:
    app = AdkApp(build_demo_agent(), warm_up=False, allowed_origins=["https://app.example"])
    with LoopbackServer(app) as server:
        async with connect(ws_url(server.url), origin="https://evil.example") as ws:  # type: ignore[arg-type]
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1008, "Origin not allowed.")
        for origin in ("https://app.example", f"http://127.0.0.1:{server.port}"):
            async with connect(ws_url(server.url), origin=origin) as ws:  # type: ignore[arg-type]
                await ws.send('{"type":"ping","version":"1.0"}')
                assert "pong" in await ws.recv()
