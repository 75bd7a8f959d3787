"""The README's mounting recipe, exactly as `examples/mount_in_fastapi.py` writes it: HTTP and
WebSocket at the URL the client snippets use, with and without a trailing slash; CORS for the
page's requests (the stop request included); the chat warmed up with the site. And the
Operations page's metrics recipe, `examples/metrics_app.py`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from support import ROOT, LoopbackServer, chat_body, free_port, parse_sse, types_of, user_message
from support.ws_client import ws_url


def test_the_readme_recipe_is_the_example() -> None:
    """The README's snippet is the example's code (the test below runs the example)."""
    readme = (ROOT / "README.md").read_text()
    example = (ROOT / "examples" / "mount_in_fastapi.py").read_text()
    for line in ("chat = AdkApp(", 'mount(app, "/api/chat", chat)'):
        assert line in readme and line in example, line


async def _live_turn(url: str) -> list[str]:
    async with connect(url) as ws:
        await ws.send(
            json.dumps(
                {
                    "type": "message",
                    "version": "1.0",
                    "messages": [
                        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hello"}]}
                    ],
                }
            )
        )
        frames = []
        while not frames or frames[-1] != "data: [DONE]\n\n":
            frame = await asyncio.wait_for(ws.recv(), 20)
            assert isinstance(frame, str)
            frames.append(frame)
        return frames


def test_mount_in_fastapi_example() -> None:
    from examples.mount_in_fastapi import app, chat

    with LoopbackServer(app) as server, httpx.Client(base_url=server.url) as client:
        assert chat.runtime.started  # the site's lifespan started the chat (warm ADK)
        assert client.get("/health").json() == {"status": "ok"}
        for chat_id, path in (("ex", "/api/chat"), ("ex2", "/api/chat/")):
            response = client.post(
                path,
                json=chat_body(chat_id, user_message("hello")),
                headers={"origin": "http://localhost:3000"},
            )
            assert response.status_code == 200, path  # no redirect at either URL
            assert response.headers["access-control-allow-origin"] == "http://localhost:3000"
            assert types_of(parse_sse(response.text))[-2:] == ["finish", "[DONE]"]
            frames = asyncio.run(_live_turn(ws_url(server.url).rstrip("/") + path))
            assert frames[0].startswith('data: {"type":"start"') and len(frames) > 3, path
        preflight = client.options(
            "/api/chat",
            headers={"origin": "http://localhost:3000", "access-control-request-method": "POST"},
        )
        assert preflight.status_code == 200
        assert client.get("/api/chat/ex/stream").status_code == 204
        # The stop request of a cross-origin page is allowed (and answered) too.
        preflight = client.options(
            "/api/chat/ex/stream",
            headers={"origin": "http://localhost:3000", "access-control-request-method": "DELETE"},
        )
        assert preflight.status_code == 200
        stop = client.delete("/api/chat/ex/stream", headers={"origin": "http://localhost:3000"})
        assert stop.status_code == 200 and stop.json() == {"stopped": False}
        assert stop.headers["access-control-allow-origin"] == "http://localhost:3000"
        assert client.get("/elsewhere").status_code == 404
    assert not chat.runtime.started  # and stopped it


def test_metrics_app_example(tmp_path: Path) -> None:
    """`examples/metrics_app.py` (the Operations page's recipe), as uvicorn runs it: the chat's
    metrics on their own port after a turn."""
    port, metrics_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "OTEL_"))}
    env["METRICS_PORT"] = str(metrics_port)
    with (tmp_path / "uvicorn.log").open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "examples.metrics_app:app", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120  # a hang guard: start-up took over 30 s under load
        while True:
            try:
                response = httpx.post(
                    f"http://127.0.0.1:{port}/api/chat",
                    json=chat_body("m", user_message("hello")),
                    timeout=30,
                )
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError((tmp_path / "uvicorn.log").read_text()) from None
                time.sleep(0.2)
        assert types_of(parse_sse(response.text))[-2:] == ["finish", "[DONE]"]
        scraped = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics").text
        assert "adk_asgi_turns_total{" in scraped and 'outcome="completed"' in scraped
        assert "adk_asgi_time_to_first_token_seconds_count" in scraped
    finally:
        proc.terminate()
        proc.wait(15)
