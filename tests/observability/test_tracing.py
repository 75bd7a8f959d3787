"""OpenTelemetry spans, read with the SDK's in-memory exporter: one span per HTTP turn, per
live connection and per live turn, with the chat, the user, the transport and the outcome,
and ADK's own spans (invocation, agent, model calls, tools) nested under the bridge's."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent
from adk_asgi.observability.tracing import LIVE_CONNECTION, LIVE_TURN, TURN

from support import (
    LoopbackServer,
    chat_body,
    parse_sse,
    sqlite_threads_done,
    types_of,
    user_message,
)
from support.ws_client import LiveClient, kinds, ws_url


def _named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def _descendants(spans: Sequence[ReadableSpan], root: ReadableSpan) -> list[ReadableSpan]:
    by_id = {s.context.span_id: s for s in spans}
    found = []
    for span in spans:
        parent = span.parent
        while parent is not None:
            if parent.span_id == root.context.span_id:
                found.append(span)
                break
            above = by_id.get(parent.span_id)
            parent = above.parent if above is not None else None
    return found


def _app() -> AdkApp:
    return AdkApp(build_demo_agent(token_delay=0), warm_up=False)


async def test_http_turn_span_parents_adks_spans(spans: InMemorySpanExporter) -> None:
    app = _app()
    await app.runtime.startup()  # ADK's warm-up run is traced on its own, before any turn
    spans.clear()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        reply = await client.post(
            "/", json=chat_body("trace-1", user_message("What's the weather in Paris?"))
        )
        assert types_of(parse_sse(reply.text))[-2:] == ["finish", "[DONE]"]
    finished = spans.get_finished_spans()
    [turn] = _named(finished, TURN)
    assert dict(turn.attributes or {}) == {
        "adk_asgi.transport": "sse",
        "adk_asgi.user.id": "anonymous",
        "adk_asgi.chat.id": "trace-1",
        "adk_asgi.outcome": "completed",
    }
    assert turn.parent is None
    children = _descendants(finished, turn)
    names = {s.name for s in children}
    # ADK's own: the invocation, the agent, each model call, the tool.
    assert "invocation" in names or any(n.startswith("invoke_workflow") for n in names)
    assert any(n.startswith("invoke_agent") for n in names), names
    assert any(n.startswith("call_llm") or n.startswith("generate_content") for n in names)
    assert any(n.startswith("execute_tool") for n in names), names
    # Every ADK span of the request is under the turn: none started a trace of its own.
    assert {s.context.trace_id for s in finished} == {turn.context.trace_id}
    assert len(children) == len(finished) - 1


async def test_http_turn_outcomes(spans: InMemorySpanExporter) -> None:
    app = _app()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        # The payment waits for the user's approval: the turn ends "awaiting".
        reply = await client.post(
            "/", json=chat_body("trace-2", user_message("Send $50 to Hanako"))
        )
        assert "tool-approval-request" in types_of(parse_sse(reply.text))
        # The model fails (the demo's scripted failure): "error", and the span says so.
        reply = await client.post("/", json=chat_body("trace-3", user_message("please fail")))
        assert "error" in types_of(parse_sse(reply.text))
    outcomes = [
        (
            dict(s.attributes or {})["adk_asgi.chat.id"],
            dict(s.attributes or {})["adk_asgi.outcome"],
            s.status.status_code.name,
        )
        for s in _named(spans.get_finished_spans(), TURN)
    ]
    assert outcomes == [("trace-2", "awaiting", "UNSET"), ("trace-3", "error", "ERROR")]


async def test_turns_refused_before_they_ran(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    def user(scope: Any) -> str:
        return dict(scope["headers"]).get(b"x-user", b"nobody").decode()

    folder = tmp_path / "db"
    folder.mkdir()
    app = AdkApp(
        build_demo_agent(token_delay=0),
        authenticate=user,
        warm_up=False,
        session_db=f"sqlite:///{folder}/chats.db",
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        body = chat_body("mine", user_message("hello"))
        assert (await client.post("/", json=body, headers={"x-user": "a"})).status_code == 200
        assert (await client.post("/", json=body, headers={"x-user": "b"})).status_code == 404
        shutil.rmtree(folder)
        assert (
            await client.post(
                "/", json=chat_body("new", user_message("hi")), headers={"x-user": "a"}
            )
        ).status_code == 503
    await sqlite_threads_done()
    outcomes = [
        (dict(s.attributes or {})["adk_asgi.user.id"], dict(s.attributes or {})["adk_asgi.outcome"])
        for s in _named(spans.get_finished_spans(), TURN)
    ]
    assert outcomes == [("a", "completed"), ("b", "refused"), ("a", "unavailable")]


async def test_live_connection_and_turn_spans(spans: InMemorySpanExporter) -> None:
    with LoopbackServer(_app()) as server:
        client = await LiveClient.open(ws_url(server.url, "chatId=live-trace"))
        await client.say("What's the weather in Tokyo?", chat_id="live-trace")
        turn = await client.turn()
        assert kinds(turn)[-2:] == ["finish", "[DONE]"]
        await client.say("hello again", chat_id="live-trace")
        assert kinds(await client.turn())[-2:] == ["finish", "[DONE]"]
        await client.close()
        deadline = 100
        while not _named(spans.get_finished_spans(), LIVE_CONNECTION) and deadline:
            await _sleep()
            deadline -= 1
    finished = spans.get_finished_spans()
    [connection] = _named(finished, LIVE_CONNECTION)
    assert dict(connection.attributes or {}) == {
        "adk_asgi.transport": "websocket",
        "adk_asgi.user.id": "anonymous",
        "adk_asgi.chat.id": "live-trace",
        "adk_asgi.outcome": "closed",
    }
    turns = _named(finished, LIVE_TURN)
    assert [dict(t.attributes or {})["adk_asgi.outcome"] for t in turns] == [
        "completed",
        "completed",
    ]
    assert all(
        t.parent is not None and t.parent.span_id == connection.context.span_id for t in turns
    )
    children = {s.name for s in _descendants(finished, connection)}
    assert any(n.startswith("execute_tool") for n in children), children
    assert any(n.startswith("invoke_agent") for n in children), children


async def _sleep() -> None:
    import asyncio

    await asyncio.sleep(0.05)
