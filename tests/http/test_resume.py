"""Stream resume (``GET {api}/{chatId}/stream``), detached runs and explicit stop,
on a real uvicorn with the real ADK runner, and with the real AI SDK client."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from adk_asgi import AdkApp, AdkMiddleware, StreamingOptions
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, chat_body, parse_sse, text_of, types_of, user_message
from support.aisdk_client import run_chat_versions


def _server(**options: Any) -> LoopbackServer:
    return LoopbackServer(
        AdkApp(build_demo_agent(token_delay=options.pop("delay", 0.02)), warm_up=False, **options)
    )


def _events(server: LoopbackServer, app: AdkApp, chat_id: str) -> list[Any]:
    async def events() -> list[Any]:
        session = await app.runtime.session_service.get_session(
            app_name=app.runtime.app_name, user_id="anonymous", session_id=chat_id
        )
        return list(session.events) if session else []

    assert server.loop is not None
    return asyncio.run_coroutine_threadsafe(events(), server.loop).result(5)


def _final_answers(events: list[Any]) -> list[str]:
    return [
        e.content.parts[0].text
        for e in events
        if e.author != "user"
        and e.content
        and e.content.parts
        and not e.partial
        and e.content.parts[0].text
    ]


def _wait(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


def test_no_active_stream_is_204() -> None:
    with _server() as server, httpx.Client(base_url=server.url) as client:
        assert client.get("/never-seen/stream").status_code == 204
        client.post("/", json=chat_body("done", user_message("hello")))
        # Delivered to the end: nothing left to resume.
        assert client.get("/done/stream").status_code == 204
        assert client.head("/done/stream").status_code == 204


def test_resume_replays_from_the_start_and_follows_to_the_end() -> None:
    with _server() as server, httpx.Client(base_url=server.url, timeout=30) as client:
        original: list[str] = []
        resumed: dict[str, Any] = {}

        def resume() -> None:
            with httpx.Client(base_url=server.url, timeout=30) as other:
                response = other.get("/live-one/stream")
                resumed["status"] = response.status_code
                resumed["body"] = response.text
                resumed["headers"] = response.headers

        with client.stream(
            "POST", "/", json=chat_body("live-one", user_message("tell a long story"))
        ) as response:
            lines = response.iter_lines()
            for line in lines:
                original.append(line)
                if line.count('"text-delta"') and sum('"text-delta"' in x for x in original) == 5:
                    break
            follower = threading.Thread(target=resume)
            follower.start()
            original.extend(lines)
        follower.join(30)
        assert resumed["status"] == 200
        assert resumed["headers"]["x-vercel-ai-ui-message-stream"] == "v1"
        first = parse_sse("\n".join(original) + "\n\n")
        again = parse_sse(resumed["body"])
        # The same stream, byte for byte in content: replayed, then followed to its end.
        assert again == first
        assert types_of(again)[-2:] == ["finish", "[DONE]"]
        assert again[0]["messageId"] == first[0]["messageId"]


def test_without_grace_a_disconnect_aborts_and_nothing_is_resumable() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.02), warm_up=False)
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url) as client:
        with client.stream(
            "POST", "/", json=chat_body("cut", user_message("tell a long story"))
        ) as response:
            for line in response.iter_lines():
                if '"text-delta"' in line:
                    break
        assert _wait(lambda: client.get("/cut/stream").status_code == 204)
        time.sleep(0.3)
        assert not _final_answers(_events(server, app, "cut"))  # the run was aborted


def test_with_grace_a_dropped_connection_loses_no_reply() -> None:
    app = AdkApp(
        build_demo_agent(token_delay=0.02),
        warm_up=False,
        streaming=StreamingOptions(resume_grace=5),
    )
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        seen = []
        with client.stream(
            "POST", "/", json=chat_body("drop", user_message("tell a long story"))
        ) as response:
            for line in response.iter_lines():
                seen.append(line)
                if sum('"text-delta"' in x for x in seen) == 3:
                    break
        # The client is gone; the turn runs on detached. A reload resumes it.
        resumed = client.get("/drop/stream")
        assert resumed.status_code == 200
        chunks = parse_sse(resumed.text)
        assert types_of(chunks)[-2:] == ["finish", "[DONE]"]
        assert parse_sse("\n".join(seen) + "\n\n")[:3] == chunks[:3]  # same start
        story = text_of(chunks)
        assert len(story.split()) > 40
        # The session holds the whole answer (the run completed), once.
        assert _final_answers(_events(server, app, "drop"))[-1].strip() == story.strip()
        # Nobody received its end over the original request: it stays resumable.
        assert client.get("/drop/stream").status_code == 200


def test_with_grace_an_unclaimed_detached_run_is_aborted_after_the_grace() -> None:
    app = AdkApp(
        build_demo_agent(token_delay=0.05),
        warm_up=False,
        streaming=StreamingOptions(resume_grace=0.3),
    )
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url) as client:
        baseline = {t.get_coro().__qualname__ for t in server.tasks()}  # type: ignore[union-attr]
        with client.stream(
            "POST", "/", json=chat_body("lonely", user_message("tell a long story"))
        ) as response:
            for line in response.iter_lines():
                if '"text-delta"' in line:
                    break

        def settled() -> bool:
            names = {t.get_coro().__qualname__ for t in server.tasks()}  # type: ignore[union-attr]
            return not names - baseline

        assert _wait(settled, 3.0), "the detached run was not stopped after its grace"
        assert not _final_answers(_events(server, app, "lonely"))  # story takes ~5 s


def test_delete_stops_the_running_turn_on_request() -> None:
    app = AdkApp(
        build_demo_agent(token_delay=0.05),
        warm_up=False,
        streaming=StreamingOptions(resume_grace=30),
    )
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        body: list[str] = []
        with client.stream(
            "POST", "/", json=chat_body("halt", user_message("tell a long story"))
        ) as response:
            lines = response.iter_lines()
            for line in lines:
                body.append(line)
                if '"text-delta"' in line and len(body) > 6:
                    break
            with httpx.Client(base_url=server.url) as other:
                stopped = other.delete("/halt/stream")
            body.extend(lines)
        assert stopped.status_code == 200 and stopped.json() == {"stopped": True}
        chunks = parse_sse("\n".join(body) + "\n\n")
        assert types_of(chunks)[-3:] == ["text-end", "abort", "[DONE]"]
        assert "finish" not in types_of(chunks)
        time.sleep(0.3)
        assert not _final_answers(_events(server, app, "halt"))
        assert client.delete("/halt/stream").json() == {"stopped": False}


def test_resume_replays_a_live_turn_over_http() -> None:
    """Every stream of a chat goes to the same store: a live (WebSocket) turn can be
    followed over HTTP too."""
    from websockets.sync.client import connect

    app = AdkApp(build_demo_agent(token_delay=0.02), warm_up=False)
    with LoopbackServer(app) as server:
        ws_url = server.url.replace("http", "ws") + "/?chatId=mixed"
        with connect(ws_url) as ws, httpx.Client(base_url=server.url, timeout=30) as client:
            ws.send(
                '{"type":"message","version":"1.0","messages":[{"id":"u1","role":"user",'
                '"parts":[{"type":"text","text":"tell a long story"}]}]}'
            )
            frames = [ws.recv(timeout=10) for _ in range(6)]
            replay = parse_sse(client.get("/mixed/stream").text)
            while not frames[-1].startswith("data: [DONE]"):
                frames.append(ws.recv(timeout=10))
        assert replay == parse_sse("".join(frames))


@pytest.fixture(scope="module")
def grace_api() -> Iterator[str]:
    async def not_found(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})

    app = AdkMiddleware(
        not_found,
        path="/api/chat",
        agent=build_demo_agent(token_delay=0.02),
        streaming=StreamingOptions(resume_grace=10),
        warm_up=False,
    )
    with LoopbackServer(app) as server:
        yield f"{server.url}/api/chat"


def test_real_client_reloads_mid_reply_and_gets_the_whole_reply(grace_api: str) -> None:
    reports = run_chat_versions(
        grace_api,
        [
            {"action": "send", "text": "tell a long story", "noWait": True},
            {"action": "waitFor", "textLength": 30},
            {"action": "reload"},
        ],
        chat_id="reload",
        timeout=60,
    )
    for version, report in reports.items():
        assert report["ok"], (version, report["problems"])
        post, resume = report["requests"][0], report["requests"][-1]
        assert resume["method"] == "GET" and resume["url"].endswith(
            "/reload-" + version + "/stream"
        ), version
        assert resume["status"] == 200 and resume["sawDone"], version
        assert not resume["invalid"] and not post["invalid"], version
        messages = report["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"], version
        text = "".join(p["text"] for p in messages[1]["parts"] if p["type"] == "text")
        assert len(text.split()) > 40, version  # the whole story, not the part seen
        assert messages[1]["id"] == resume["chunks"][0]["messageId"], version


def test_real_clients_accept_a_stopped_turn(grace_api: str) -> None:
    """``DELETE`` mid-reply: every client version validates the closing ``abort`` chunk and
    keeps the partial answer."""
    versions = ("ai5", "ai6strict", "ai6", "ai7")
    reports = run_chat_versions(
        grace_api,
        [
            {"action": "send", "text": "tell a long story", "noWait": True},
            {"action": "waitFor", "textLength": 30},
            {"action": "deleteStream"},
        ],
        chat_id="stopped",
        versions=versions,
        timeout=60,
    )
    for version, report in reports.items():
        assert report["ok"], (version, report["problems"])
        chunks = report["requests"][0]["chunks"]
        assert [c["type"] for c in chunks][-1] == "abort", version
        assert not report["requests"][0]["invalid"], version
        text = "".join(p["text"] for p in report["messages"][-1]["parts"] if p["type"] == "text")
        assert 0 < len(text.split()) < 60, version  # the part before the stop
