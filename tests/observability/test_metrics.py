"""The metrics of turns that do not end well, read in process with the SDK's in-memory
reader (observability/test_operations.py reads the rest from a real ``adk-asgi serve``): a turn
stopped with ``DELETE``, a client that went away, a resume that replays, and live
approvals that time out or whose connection closes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader

from adk_asgi import AdkApp, LiveOptions
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, chat_body, user_message
from support.ws_client import LiveClient, ws_url

Points = dict[tuple[str, frozenset[tuple[str, Any]]], float]
_READER = InMemoryMetricReader()


def _points() -> Points:
    """Each instrument's value by attributes (a histogram's: its count)."""
    data = _READER.get_metrics_data()
    points: Points = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    value = point.count if isinstance(point, HistogramDataPoint) else point.value
                    points[(metric.name, frozenset(point.attributes.items()))] = value
    return points


class Delta:
    """What changed since it was made (the process's provider is shared by every test)."""

    def __init__(self) -> None:
        self.before = _points()

    def __call__(self, name: str, **attributes: Any) -> float:
        key = (name, frozenset(attributes.items()))
        return _points().get(key, 0.0) - self.before.get(key, 0.0)


@pytest.fixture
def delta() -> Iterator[type[Delta]]:
    provider = metrics.get_meter_provider()
    if not isinstance(provider, MeterProvider):
        metrics.set_meter_provider(MeterProvider(metric_readers=[_READER]))
    assert isinstance(metrics.get_meter_provider(), MeterProvider), "another provider is set"
    yield Delta


def _stream_in_thread(
    url: str, chat_id: str, text: str
) -> tuple[threading.Thread, threading.Event]:
    """POST and read the stream in a thread; the event is set once the answer's text
    streams."""
    started = threading.Event()

    def run() -> None:
        with httpx.stream(
            "POST", url, json=chat_body(chat_id, user_message(text)), timeout=30
        ) as response:
            seen = b""
            for data in response.iter_bytes():
                seen += data
                if b'"text-delta"' in seen:
                    started.set()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, started


async def test_stopped_abandoned_and_resumed_turns(delta: type[Delta]) -> None:
    app = AdkApp(build_demo_agent(token_delay=0.02), warm_up=False)
    with LoopbackServer(app) as server:
        changed = delta()
        # A turn stopped by its owner, resumed (replayed) by a second tab meanwhile.
        thread, started = _stream_in_thread(server.url, "stop-me", "bench 300")
        assert started.wait(20)
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            async with client.stream("GET", "/stop-me/stream") as resumed:
                assert resumed.status_code == 200
                stop = await client.delete("/stop-me/stream")
                assert stop.json() == {"stopped": True}
                body = b"".join([chunk async for chunk in resumed.aiter_bytes()])
            assert b'"type":"abort"' in body
            thread.join(20)
            # A client that goes away mid-answer: the run is aborted.
            async with client.stream(
                "POST", "/", json=chat_body("gone", user_message("bench 300"))
            ) as response:
                seen = b""
                async for data in response.aiter_bytes():
                    seen += data
                    if b'"text-delta"' in seen:
                        break
        deadline = asyncio.get_running_loop().time() + 10
        while changed("adk_asgi.turns", transport="sse", outcome="client_gone") < 1:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
    assert changed("adk_asgi.turns", transport="sse", outcome="stopped") == 1
    assert changed("adk_asgi.resumes", transport="sse", result="replayed") == 1
    assert changed("adk_asgi.active_streams", transport="sse") == 0
    assert changed("adk_asgi.time_to_first_token", transport="sse") == 2
    assert changed("adk_asgi.turn_duration", transport="sse", outcome="stopped") == 1


async def test_live_approvals_that_time_out_or_are_abandoned(delta: type[Delta]) -> None:
    app = AdkApp(
        build_demo_agent(token_delay=0), warm_up=False, live_options=LiveOptions(wait_timeout=0.3)
    )
    with LoopbackServer(app) as server:
        changed = delta()
        client = await LiveClient.open(ws_url(server.url, "chatId=slow-user"))
        await client.say("Send $5 to Jiro", chat_id="slow-user")
        await client.until("tool-approval-request")
        await client.turn()  # nobody answered: the call was not run, the turn ends
        assert changed("adk_asgi.approval_age", transport="websocket", decision="timed_out") == 1
        # Connections opened from now on wait a minute: this one is abandoned, not timed out.
        app.live.settings = replace(app.live.settings, live=LiveOptions(wait_timeout=60))
        other = await LiveClient.open(ws_url(server.url, "chatId=gone-user"))
        await other.say("Send $7 to Saburo", chat_id="gone-user")
        await other.until("tool-approval-request")
        assert changed("adk_asgi.approvals_pending", transport="websocket") == 1
        await other.close()  # the approval's connection closes: cancelled
        deadline = asyncio.get_running_loop().time() + 10
        while changed("adk_asgi.approval_age", transport="websocket", decision="cancelled") < 1:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
        await client.close()
        while changed("adk_asgi.active_connections") != 0:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
    assert changed("adk_asgi.approvals_pending", transport="websocket") == 0
    assert changed("adk_asgi.approvals_requested", transport="websocket") == 2
    assert changed("adk_asgi.turns", transport="websocket", outcome="client_gone") == 1
    assert changed("adk_asgi.active_streams", transport="websocket") == 0
