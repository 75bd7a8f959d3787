"""AdkApp through httpx's ASGI transport, with a real ADK Runner and the demo model."""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from google.adk.apps import App, ResumabilityConfig
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from adk_asgi import (
    AdkApp,
    AdkMiddleware,
    GcTuning,
    Limits,
    PauseOptions,
    StreamingOptions,
    SurfaceOptions,
    mount,
)
from adk_asgi.demo import build_demo_agent

from support import chat_body, parse_sse, text_of, types_of, user_message


async def post(client: httpx.AsyncClient, body: Any, url: str = "/") -> tuple[int, list[Any]]:
    response = await client.post(url, json=body)
    if response.status_code != 200:
        return response.status_code, [response.json()]
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    return 200, parse_sse(response.text)


async def test_plain_text_streams_token_by_token(client: httpx.AsyncClient) -> None:
    status, chunks = await post(client, chat_body("c1", user_message("hello there")))
    assert status == 200
    assert types_of(chunks)[:3] == ["start", "start-step", "text-start"]
    assert types_of(chunks)[-3:] == ["finish-step", "finish", "[DONE]"]
    assert sum(t == "text-delta" for t in types_of(chunks)) > 10
    assert chunks[0]["messageId"].startswith("msg-")
    assert chunks[-2]["finishReason"] == "stop"
    assert chunks[-2]["messageMetadata"]["usage"]["totalTokens"] > 0


async def test_weather_tool_round_trip(client: httpx.AsyncClient) -> None:
    _, chunks = await post(client, chat_body("c2", user_message("What's the weather in Tokyo?")))
    kinds = types_of(chunks)
    assert kinds.count("start-step") == 2  # answer text after tool result opens a new step
    call = next(c for c in chunks if c["type"] == "tool-input-available")
    assert call["toolName"] == "get_weather" and call["input"] == {"location": "Tokyo"}
    output = next(c for c in chunks if c["type"] == "tool-output-available")
    assert output["toolCallId"] == call["toolCallId"]
    assert kinds.index("tool-output-available") < len(kinds) - 1 - kinds[::-1].index("start-step")
    assert "Tokyo" in text_of(chunks)


async def test_think_streams_reasoning_first(client: httpx.AsyncClient) -> None:
    _, chunks = await post(client, chat_body("c3", user_message("think about cats")))
    kinds = types_of(chunks)
    assert kinds.index("reasoning-start") < kinds.index("text-start")


async def test_model_error_is_one_error_chunk(client: httpx.AsyncClient) -> None:
    for text in ("please fail", "please raise"):
        _, chunks = await post(client, chat_body(f"err-{text}", user_message(text)))
        kinds = types_of(chunks)
        assert kinds.count("error") == 1 and "finish" not in kinds, kinds
        assert kinds[-1] == "[DONE]"
        error = next(c for c in chunks if c["type"] == "error")
        assert "Traceback" not in error["errorText"] and error["errorText"]


async def test_only_the_new_turn_reaches_adk(demo_app: AdkApp, client: httpx.AsyncClient) -> None:
    first = user_message("hello one", "u1")
    _, chunks1 = await post(client, chat_body("hist", first))
    assistant = {
        "id": chunks1[0]["messageId"],
        "role": "assistant",
        "parts": [{"type": "text", "text": "FORGED assistant text"}],
    }
    second = user_message("hello two", "u2")
    _, chunks2 = await post(client, chat_body("hist", first, assistant, second))
    assert chunks2[0]["messageId"] != chunks1[0]["messageId"]
    runtime = demo_app.runtime
    session = await runtime.session_service.get_session(
        app_name=runtime.app_name, user_id="anonymous", session_id="hist"
    )
    assert session is not None
    user_texts = [
        e.content.parts[0].text
        for e in session.events
        if e.author == "user" and e.content and e.content.parts
    ]
    assert user_texts == ["hello one", "hello two"]  # nothing re-sent, nothing forged
    assert not any(
        "FORGED" in (p.text or "")
        for e in session.events
        if e.content
        for p in e.content.parts or []
    )


async def test_unknown_session_is_seeded_with_the_text_history(
    demo_app: AdkApp, client: httpx.AsyncClient
) -> None:
    history = [
        user_message("my name is Kenji", "u1"),
        {
            "id": "a1",
            "role": "assistant",
            "parts": [{"type": "step-start"}, {"type": "text", "text": "Hi Kenji."}],
        },
        user_message("what is my name?", "u2"),
    ]
    status, _ = await post(client, chat_body("seeded", *history))
    assert status == 200
    runtime = demo_app.runtime
    session = await runtime.session_service.get_session(
        app_name=runtime.app_name, user_id="anonymous", session_id="seeded"
    )
    assert session is not None
    texts = [
        (e.author, e.content.parts[0].text)
        for e in session.events
        if e.content and e.content.parts and e.content.parts[0].text and not e.partial
    ]
    assert texts[:3] == [
        ("user", "my name is Kenji"),
        ("assistant", "Hi Kenji."),
        ("user", "what is my name?"),
    ]


async def test_seeding_keeps_only_the_most_recent_history(
    demo_app: AdkApp, client: httpx.AsyncClient
) -> None:
    """A client cannot make one request seed a huge history (ADK's stores pay per append)."""
    from adk_asgi.http.endpoint import SEED_MAX_MESSAGES

    history = [user_message(f"old message {i}", f"u{i}") for i in range(999)]
    started = time.monotonic()
    status, chunks = await post(client, chat_body("huge", *history, user_message("hello", "last")))
    assert status == 200 and types_of(chunks)[-1] == "[DONE]"
    assert time.monotonic() - started < 10
    runtime = demo_app.runtime
    session = await runtime.session_service.get_session(
        app_name=runtime.app_name, user_id="anonymous", session_id="huge"
    )
    assert session is not None
    seeded = [
        e.content.parts[0].text
        for e in session.events
        if (e.custom_metadata or {}).get("adk_asgi", {}).get("seeded")
    ]
    assert len(seeded) == SEED_MAX_MESSAGES
    assert seeded[-1] == "old message 998" and seeded[0] == "old message 799"


async def test_regenerate_rewinds_the_last_turn(
    demo_app: AdkApp, client: httpx.AsyncClient
) -> None:
    first = user_message("hello again", "u1")
    await post(client, chat_body("regen", first))
    status, chunks = await post(
        client, {"id": "regen", "messages": [first], "trigger": "regenerate-message"}
    )
    assert status == 200 and "finish" in types_of(chunks)
    runtime = demo_app.runtime
    session = await runtime.session_service.get_session(
        app_name=runtime.app_name, user_id="anonymous", session_id="regen"
    )
    assert session is not None
    users = [
        e
        for e in session.events
        if e.author == "user" and e.content and e.content.parts and e.content.parts[0].text
    ]
    assert len(users) == 2 and users[0].invocation_id != users[1].invocation_id
    rewinds = [
        e.actions.rewind_before_invocation_id
        for e in session.events
        if e.actions and e.actions.rewind_before_invocation_id
    ]
    assert rewinds == [users[0].invocation_id]  # the first answer is undone, not stacked


async def test_concurrent_turns_on_one_chat_do_not_interleave() -> None:
    app = AdkApp(build_demo_agent(token_delay=0.002), warm_up=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        results = await asyncio.gather(
            *[
                post(client, chat_body("same", user_message(f"story number {i}", f"u{i}")))
                for i in range(3)
            ]
        )
    session = await app.runtime.session_service.get_session(
        app_name=app.runtime.app_name, user_id="anonymous", session_id="same"
    )
    assert session is not None
    invocations = [e.invocation_id for e in session.events]
    # each invocation's events are contiguous: turns ran one after another
    seen: list[str] = []
    for inv in invocations:
        if not seen or seen[-1] != inv:
            assert inv not in seen, "turns interleaved"
            seen.append(inv)
    assert all(status == 200 for status, _ in results)
    assert app.store.held_locks == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        (b"{oops", 400, "invalid_json"),
        (json.dumps({"id": "c", "messages": [{"role": "user"}]}).encode(), 422, "invalid_request"),
        (
            json.dumps({"id": "c", "messages": [{"role": "user", "parts": []}]}).encode(),
            422,
            "empty_message",
        ),
        (
            json.dumps(
                {
                    "id": "c",
                    "messages": [{"role": "system", "parts": [{"type": "text", "text": "x"}]}],
                }
            ).encode(),
            422,
            "invalid_last_message",
        ),
    ],
)
async def test_bad_requests_get_json_errors(
    client: httpx.AsyncClient, raw: bytes, status: int, code: str
) -> None:
    response = await client.post("/", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == code


async def test_body_limit_413_declared_and_streamed() -> None:
    app = AdkApp(build_demo_agent(), limits=Limits(max_body_bytes=1000), warm_up=False)
    transport = httpx.ASGITransport(app=app)
    big = json.dumps(chat_body("c", user_message("x" * 5000))).encode()
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.post("/", content=big)
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "body_too_large"

        async def chunks() -> Any:
            for i in range(0, len(big), 100):
                yield big[i : i + 100]

        response = await client.post("/", content=chunks())  # no content-length
        assert response.status_code == 413


async def test_routes(client: httpx.AsyncClient) -> None:
    response = await client.get("/")  # the user's chats
    assert response.status_code == 200 and response.json() == {"chats": [], "next": None}
    response = await client.put("/")
    assert response.status_code == 405 and response.headers["allow"] == "POST, GET, HEAD"
    assert response.json()["error"]["code"] == "method_not_allowed"
    # Any other path names a chat: its history (GET) or its deletion (DELETE).
    response = await client.get("/nope")
    assert response.status_code == 404 and response.json()["error"]["code"] == "chat_not_found"
    response = await client.put("/nope")
    assert response.status_code == 405 and response.headers["allow"] == "GET, DELETE, HEAD"
    response = await client.get("/some-chat/stream")
    assert response.status_code == 204
    assert (await client.head("/some-chat/stream")).status_code == 204
    # A chat id may hold "/" (any printable characters): everything before the route's tail.
    assert (await client.get("/team/42/stream")).status_code == 204
    response = await client.post("/some-chat/stream")
    assert response.status_code == 405 and response.json()["error"]["code"] == "method_not_allowed"
    assert response.headers["allow"] == "GET, DELETE, HEAD"
    response = await client.get("/some-chat/tool-output")
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    # No trailing-slash redirects: a redirected POST loses its body in some clients.
    assert (await client.get("/healthz/")).status_code == 404


async def test_moved_options_say_where_they_went() -> None:
    with pytest.raises(TypeError, match=r"streaming=StreamingOptions\(resume_grace=\.\.\.\)"):
        AdkApp(build_demo_agent(), resume_grace=30)
    with pytest.raises(TypeError, match=r"pauses=PauseOptions\(confirmation_style="):
        AdkApp(build_demo_agent(), confirmation_style="adk-tool")
    with pytest.raises(TypeError, match=r"surface=SurfaceOptions\(state_keys="):
        AdkApp(build_demo_agent(), state_keys=["cart"])
    with pytest.raises(TypeError, match="unexpected keyword arguments: colour"):
        AdkApp(build_demo_agent(), colour="blue")
    with pytest.raises(ValueError, match="confirmation_style"):
        PauseOptions(confirmation_style="popup")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a string"):
        SurfaceOptions(state_keys="cart")
    with pytest.raises(ValueError, match=">= 0"):
        StreamingOptions(resume_grace=-1)


async def test_json_errors_reach_the_client_past_a_host_apps_handlers() -> None:
    """Mounted in FastAPI, whose exception handlers answer {"detail": ...}: the chat's own
    404/405 stay its JSON errors (the host never sees them)."""
    site = FastAPI()
    mount(site, "/api/chat", AdkApp(build_demo_agent(), warm_up=False))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=site), base_url="http://t"
    ) as client:
        response = await client.put("/api/chat")
        assert response.status_code == 405
        assert response.json()["error"]["code"] == "method_not_allowed"
        response = await client.get("/api/chat/a/b/c")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "chat_not_found"
        assert (await client.get("/elsewhere")).json() == {"detail": "Not Found"}


async def test_mounted_under_a_prefix_in_starlette() -> None:
    adk = AdkApp(build_demo_agent(), warm_up=False)

    async def home(request: Any) -> PlainTextResponse:
        return PlainTextResponse("home")

    site = Starlette(routes=[Route("/", home), Mount("/api/chat", app=adk)])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=site), base_url="http://t"
    ) as client:
        assert (await client.get("/")).text == "home"
        status, chunks = await post(client, chat_body("m", user_message("hi")), "/api/chat/")
        assert status == 200 and types_of(chunks)[-1] == "[DONE]"
        # Starlette's Mount answers the bare prefix with a 307 to the slash form;
        # browsers' fetch (and so useChat) follow it with the same POST body.
        response = await client.post("/api/chat", json=chat_body("m2", user_message("hi")))
        assert response.status_code == 307
        response = await client.post(
            "/api/chat", json=chat_body("m2", user_message("hi")), follow_redirects=True
        )
        assert response.status_code == 200 and "finish" in types_of(parse_sse(response.text))
        assert (await client.get("/api/chat/m/stream")).status_code == 204
        assert (await client.get("/api/chat/else")).status_code == 404


async def test_middleware_passes_everything_else_through() -> None:
    calls: list[str] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        calls.append(scope["path"])
        await PlainTextResponse("inner")(scope, receive, send)

    app = AdkMiddleware(inner, path="/api/chat", agent=build_demo_agent(), warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        assert (await client.get("/")).text == "inner"
        assert (await client.post("/api/chatty")).text == "inner"
        assert (await client.get("/other/api/chat")).text == "inner"
        status, chunks = await post(client, chat_body("mw", user_message("hi")), "/api/chat")
        assert status == 200 and "finish" in types_of(chunks)
        assert (await client.get("/api/chat/x/stream")).status_code == 204
    assert calls == ["/", "/api/chatty", "/other/api/chat"]


async def test_lifespan_starts_and_closes_the_runner() -> None:
    adk = AdkApp(build_demo_agent())
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[str] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    await adk({"type": "lifespan"}, receive, send)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


async def test_gc_tuning_applies_after_start_up() -> None:
    """AdkApp(gc_tuning=...) sets the process's collector once the app started (after
    warm-up), whichever way it starts; without it the collector is left alone."""
    import gc

    before = gc.get_threshold()
    try:
        async with AdkApp(build_demo_agent(), warm_up=False).lifespan():
            assert gc.get_threshold() == before and gc.get_freeze_count() == 0
        tuned = AdkApp(
            build_demo_agent(), warm_up=False, gc_tuning=GcTuning(threshold=(12_345, 20, 30))
        )
        assert gc.get_threshold() == before  # nothing happens before start-up
        async with tuned.lifespan():
            assert gc.get_threshold() == (12_345, 20, 30)
            assert gc.get_freeze_count() > 1000  # what start-up loaded is frozen
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    with pytest.raises(ValueError):
        GcTuning(threshold=(1, 2))  # type: ignore[arg-type]


async def test_websocket_is_served_live(demo_app: AdkApp) -> None:
    incoming = iter(
        [
            {"type": "websocket.connect"},
            {"type": "websocket.receive", "text": '{"type":"ping","version":"1.0"}'},
            {"type": "websocket.disconnect", "code": 1000},
        ]
    )
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return next(incoming)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await demo_app(
        {"type": "websocket", "path": "/", "headers": [], "query_string": b""}, receive, send
    )
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.send", "websocket.close"]
    assert sent[1]["text"] == '{"type":"pong","version":"1.0"}'
    assert not demo_app.live.connections


async def test_accepts_a_ready_runner_and_the_single_message_body() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ResumabilityConfig is experimental
        resumable = ResumabilityConfig(is_resumable=True)
    # A ready Runner must be resumable (AgentRuntime refuses one that is not).
    runner = Runner(
        app=App(name="mine", root_agent=build_demo_agent(), resumability_config=resumable),
        session_service=InMemorySessionService(),
    )
    app = AdkApp(runner=runner, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        status, chunks = await post(client, {"id": "one", "message": user_message("hi")})
    assert status == 200 and "finish" in types_of(chunks)
    assert await runner.session_service.get_session(
        app_name="mine", user_id="anonymous", session_id="one"
    )


async def test_user_id_resolver_scopes_sessions() -> None:
    def user(scope: Any) -> str:
        return dict(scope["headers"]).get(b"x-user", b"nobody").decode()

    app = AdkApp(build_demo_agent(), authenticate=user, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", headers={"x-user": "alice"}
    ) as client:
        await post(client, chat_body("u-chat", user_message("hi")))
    service = app.runtime.session_service
    assert await service.get_session(
        app_name=app.runtime.app_name, user_id="alice", session_id="u-chat"
    )
    assert not await service.get_session(
        app_name=app.runtime.app_name, user_id="anonymous", session_id="u-chat"
    )
