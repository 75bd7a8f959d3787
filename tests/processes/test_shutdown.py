"""Graceful shutdown: ``AdkApp.drain`` lets running turns finish within the grace, then
ends them with an ``error`` chunk; new turns and connections are refused meanwhile."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, chat_body, parse_sse, types_of, user_message
from support.ws_client import DONE, LiveClient, dicts, kinds, ws_url


def _drain(server: LoopbackServer, app: AdkApp, grace: float) -> Future[None]:
    assert server.loop is not None
    return asyncio.run_coroutine_threadsafe(app.drain(grace), server.loop)


def _stream_in_thread(url: str, chat_id: str, text: str) -> tuple[threading.Thread, dict[str, Any]]:
    """POST in a thread; returns once the stream's first bytes arrived (the turn runs)."""
    result: dict[str, Any] = {}
    started = threading.Event()

    def run() -> None:
        with (
            httpx.Client(base_url=url, timeout=30) as client,
            client.stream("POST", "/", json=chat_body(chat_id, user_message(text))) as response,
        ):
            body = b""
            for data in response.iter_bytes():
                body += data
                started.set()
            result["text"] = body.decode()
        started.set()

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(30)
    return thread, result


def test_turns_within_the_grace_finish_normally_and_new_ones_get_503() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.02), warm_up=False)
    with LoopbackServer(app) as server:
        thread, result = _stream_in_thread(server.url, "finishing", "hello there")
        drained = _drain(server, app, grace=10)
        time.sleep(0.05)
        refused = httpx.post(server.url + "/", json=chat_body("late", user_message("hi")))
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "2"
        assert refused.json()["error"]["code"] == "shutting_down"
        thread.join(15)
        drained.result(15)
        chunks = parse_sse(result["text"])
        assert types_of(chunks)[-2:] == ["finish", "[DONE]"]


def test_turns_past_the_grace_end_with_an_error_chunk_and_stop() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.05), warm_up=False)
    with LoopbackServer(app) as server:
        baseline = {t.get_name() for t in server.tasks()}
        thread, result = _stream_in_thread(server.url, "cut-short", "tell a long story")
        started = time.monotonic()
        _drain(server, app, grace=0.3).result(10)
        thread.join(10)
        assert time.monotonic() - started < 3
        chunks = parse_sse(result["text"])
        assert types_of(chunks)[-2:] == ["error", "[DONE]"]
        assert chunks[-2]["errorText"] == (
            "The server is restarting. Please send your message again."
        )
        assert "finish" not in types_of(chunks)  # one terminal chunk
        leftover = {t.get_name() for t in server.tasks()} - baseline
        assert not {n for n in leftover if n.startswith("adk-asgi")}, leftover


async def test_live_turns_end_with_an_error_and_close_1012() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.05), warm_up=False)
    with LoopbackServer(app) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("tell a long story")
        await client.until("text-delta")
        drained = _drain(server, app, grace=0.3)
        rest = await client.turn()
        assert kinds(rest)[-2:] == ["error", DONE]
        assert dicts(rest)[-1]["errorText"].startswith("The server is restarting.")
        with pytest.raises(ConnectionClosed) as closed:
            await client.next(5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
        await asyncio.wrap_future(drained)
        # New connections are refused while draining.
        async with connect(ws_url(server.url)) as ws:
            with pytest.raises(ConnectionClosed) as refused:
                await ws.recv()
        assert refused.value.rcvd is not None and refused.value.rcvd.code == 1012
