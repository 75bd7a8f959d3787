"""``examples/nginx.conf`` in a real nginx in front of a real uvicorn.

Every test runs the shipped example (only the upstream address and listen port
are replaced, see ``nginx_proxy``), so these tests prove the example itself:
SSE passes unbuffered, live mode's WebSocket upgrades, the prefix mount routes,
large bodies pass, and idle streams outlive nginx's read timeout thanks to the
app's SSE pings and uvicorn's WebSocket pings (the slow test).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
import statistics
import time
from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.adk.models import LlmRequest, LlmResponse
from google.genai import types
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from adk_asgi import AdkMiddleware, StreamingOptions
from adk_asgi.demo import DemoModel, build_demo_agent
from adk_asgi.demo._rules import latest_user_text

from support import LoopbackServer, Serve, chat_body, parse_sse, text_of, types_of, user_message
from support.nginx_proxy import EXAMPLE, Nginx, nginx_binary, read_timeout
from support.ws_client import DONE, LiveClient, kinds, text, ws_url

SILENT = "be silent"


class SilentModel(DemoModel):
    """The demo model, except that a message starting with "be silent" gets a word,
    then ``silence`` seconds of nothing, then the rest of the answer."""

    silence: float = 0.0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if not latest_user_text(llm_request.contents).startswith(SILENT):
            async for response in super().generate_content_async(llm_request, stream):
                yield response
            return
        yield self._text("Before ", partial=True)
        await asyncio.sleep(self.silence)
        yield self._text("after.", partial=True)
        yield self._text("Before after.", partial=False)

    def _text(self, text: str, *, partial: bool) -> LlmResponse:
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text)]),
            partial=partial,
            model_version=self.model,
            finish_reason=None if partial else types.FinishReason.STOP,
        )


CHAT = "/api/chat"


def _site(token_delay: float = 0.0, **options: Any) -> AdkMiddleware:
    """A site with the chat at /api/chat (the example's first location)."""
    options.setdefault("agent", build_demo_agent(token_delay=token_delay))
    options.setdefault("warm_up", False)
    return AdkMiddleware(_not_found, path=CHAT, **options)


@contextmanager
def _proxied(
    tmp_path: Path, app: Any, name: str = "nginx", site: str | None = None, **uvicorn: Any
) -> Iterator[tuple[LoopbackServer, Nginx]]:
    with (
        LoopbackServer(app, **uvicorn) as server,
        Nginx(tmp_path / name, server.port, site=site) as proxy,
    ):
        yield server, proxy


@pytest.fixture(autouse=True)
def _nginx_installed() -> None:
    if nginx_binary() is None:
        pytest.fail("nginx is not installed: apt-get install nginx (scripts/test installs it)")


def _timed_stream(
    client: httpx.Client, url: str, body: dict[str, Any]
) -> tuple[httpx.Headers, list[tuple[float, str]], float]:
    """POST and read the SSE body line by line: (headers, [(arrival, line)], total)."""
    lines: list[tuple[float, str]] = []
    started = time.monotonic()
    with client.stream("POST", url, json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line:
                lines.append((time.monotonic() - started, line))
        headers = response.headers
    return headers, lines, time.monotonic() - started


def _deltas(lines: list[tuple[float, str]]) -> list[float]:
    return [at for at, line in lines if '"text-delta"' in line]


# -- SSE -------------------------------------------------------------------------

STORY = chat_body("story", user_message("tell a long story"))


def _stream_story(url: str) -> tuple[httpx.Headers, list[float], float]:
    with httpx.Client(timeout=30) as client:
        headers, lines, total = _timed_stream(client, url, STORY)
    assert lines[-1][1] == "data: [DONE]"
    return headers, _deltas(lines), total


def _burst_problems(deltas: list[float], total: float, direct_first: float) -> list[str]:
    """What says the tokens were held back on the way (empty: they streamed)."""
    problems = []
    if not deltas[0] < min(direct_first + 0.5, total / 4):
        problems.append(f"first text-delta at {deltas[0]:.2f} s of {total:.2f} s")
    middle = deltas[0] + (deltas[-1] - deltas[0]) / 2
    first_half = sum(at < middle for at in deltas)
    if not len(deltas) / 4 < first_half < len(deltas) * 3 / 4:
        problems.append(f"{first_half} of {len(deltas)} text-deltas in the first half")
    gaps = [b - a for a, b in itertools.pairwise(deltas)]
    if max(gaps) >= 0.5:
        problems.append(f"a {max(gaps):.2f} s gap between text-deltas")
    if statistics.median(gaps) < 0.02:
        problems.append(f"median gap {statistics.median(gaps):.3f} s: bursts")
    return problems


def test_sse_through_nginx_is_unbuffered(tmp_path: Path) -> None:
    """Each token reaches the client when the model emits it (~50 ms apart), as early
    as without nginx, not when the stream ends."""
    seen: list[dict[str, Any]] = []

    def user(scope: dict[str, Any]) -> str:
        seen.append(scope)
        return "anonymous"

    # warm_up: the direct run must not pay ADK's first-run imports either.
    with _proxied(tmp_path, _site(0.05, authenticate=user, warm_up=True)) as (server, proxy):
        _, direct, direct_total = _stream_story(server.url + CHAT)
        headers, deltas, total = _stream_story(proxy.url + CHAT)
    print(
        f"direct: first text-delta {direct[0]:.3f} s of {direct_total:.3f} s; "
        f"nginx: first text-delta {deltas[0]:.3f} s of {total:.3f} s, {len(deltas)} deltas"
    )
    assert len(deltas) == len(direct) >= 40
    assert total > 2.0  # the model streams for seconds
    assert _burst_problems(deltas, total, direct[0]) == []
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert "content-encoding" not in headers
    # What the app saw: the Host the client used (port included) and nginx's forwards.
    scope_headers = dict(seen[-1]["headers"])
    assert scope_headers[b"host"] == f"127.0.0.1:{proxy.port}".encode()
    assert scope_headers[b"x-forwarded-proto"] == b"http"
    assert scope_headers[b"x-forwarded-for"] == b"127.0.0.1"


def test_buffering_control(tmp_path: Path) -> None:
    """The measurement above does see a proxy that holds chunks back. The app's
    `X-Accel-Buffering: no` alone already keeps nginx from it (even with gzip on), so
    this variant ignores that header, buffers and gzips event streams: everything
    then arrives at the end."""
    site = EXAMPLE.read_text()
    for old, new in [
        ("proxy_buffering off;", "proxy_buffering on;"),
        (
            "gzip off;",
            "gzip on;\n    gzip_types text/event-stream;\n"
            "    proxy_ignore_headers X-Accel-Buffering;",
        ),
    ]:
        assert old in site
        site = site.replace(old, new)
    with _proxied(tmp_path, _site(0.05), site=site) as (_, proxy):
        headers, deltas, total = _stream_story(proxy.url + CHAT)
    problems = _burst_problems(deltas, total, direct_first=0.1)
    print(f"buffered: first text-delta {deltas[0]:.3f} s of {total:.3f} s: {problems}")
    assert headers["content-encoding"] == "gzip"
    assert len(problems) >= 2


def test_large_request_body_passes(tmp_path: Path) -> None:
    """client_max_body_size: a 2 MiB attachment (nginx's default limit is 1 MiB)."""
    data = b"x" * (2 * 1024 * 1024)
    message = user_message("what is in this file?")
    message["parts"].append(
        {
            "type": "file",
            "mediaType": "text/plain",
            "filename": "big.txt",
            "url": "data:text/plain;base64," + base64.b64encode(data).decode(),
        }
    )
    with _proxied(tmp_path, _site()) as (_, proxy), httpx.Client(timeout=30) as client:
        response = client.post(proxy.url + CHAT, json=chat_body("big", message))
    assert response.status_code == 200, response.text
    assert f"text/plain ({len(data)} bytes)" in text_of(parse_sse(response.text))


# -- WebSocket (live mode, protocol A) -------------------------------------------


async def _live_turn(url: str, **connect: Any) -> list[Any]:
    client = await LiveClient.open(url, **connect)
    try:
        await client.say("What's the weather in Tokyo?")
        return await client.turn()
    finally:
        await client.close()


async def test_websocket_live_turn_through_nginx(tmp_path: Path) -> None:
    with _proxied(tmp_path, _site()) as (_, proxy):
        chunks = await _live_turn(ws_url(proxy.url + CHAT))
    assert kinds(chunks)[0] == "start"
    assert "tool-output-available" in kinds(chunks)
    assert kinds(chunks)[-2:] == ["finish", DONE]
    assert "Tokyo" in text(chunks)


# -- prefix mount ----------------------------------------------------------------


async def test_prefix_mount_through_nginx(tmp_path: Path) -> None:
    """location /chat-app/ strips the prefix; uvicorn --root-path /chat-app puts it back
    into root_path. SSE, the resume probe and live mode all work at the prefixed path."""
    seen: list[dict[str, Any]] = []

    def user(scope: dict[str, Any]) -> str:
        seen.append(scope)
        return "anonymous"

    base = "/chat-app" + CHAT
    with _proxied(tmp_path, _site(authenticate=user), root_path="/chat-app") as (_, proxy):
        async with httpx.AsyncClient(base_url=proxy.url, timeout=30) as client:
            response = await client.post(base, json=chat_body("pre", user_message("hello")))
            assert response.status_code == 200, response.text
            assert types_of(parse_sse(response.text))[-2:] == ["finish", "[DONE]"]
            assert seen[-1]["root_path"] == "/chat-app/api/chat"
            assert seen[-1]["path"] == "/chat-app/api/chat"
            assert (await client.get(base + "/pre/stream")).status_code == 204
            # Outside the mount: the wrapped app answers, not the chat.
            assert (await client.post("/chat-app/other", json={})).status_code == 404
        chunks = await _live_turn(ws_url(proxy.url + base))
        assert kinds(chunks)[-2:] == ["finish", DONE]
        assert seen[-1]["type"] == "websocket" and seen[-1]["root_path"] == "/chat-app/api/chat"


# -- idle streams past nginx's read timeout (slow) -------------------------------


# The example's timeout is 60 s and the pings come every 15 s (SSE) and 20 s (uvicorn's
# WebSocket pings). Waiting out 60 s proves nothing a shorter timeout does not: the test's
# copy of the example gets a 4 s proxy_read_timeout and pings every second, the same rule
# (pings below the timeout) at a fifteenth of the cost; the defaults are checked against
# the shipped 60 s below.
SHORT_TIMEOUT = 4
PING = 1.0


def test_the_default_pings_are_below_the_example_timeout() -> None:
    """What users run: the app's SSE pings and uvicorn's WebSocket pings (``adk-asgi serve``
    keeps uvicorn's default) both come well inside the example's proxy_read_timeout."""
    from adk_asgi.cli.flags import parser
    from adk_asgi.cli.server import uvicorn_config

    timeout = read_timeout()
    assert 20 < timeout <= 70, "the example's proxy_read_timeout is meant to be nginx's 60 s"
    sse = StreamingOptions().ping_interval
    ws = uvicorn_config(parser().parse_args(["serve"]), None).ws_ping_interval
    assert sse is not None and ws is not None
    assert max(sse, ws) * 2 <= timeout, (sse, ws, timeout)


def _short_timeout_site() -> str:
    """The example, its proxy_read_timeout (every location) cut to SHORT_TIMEOUT."""
    text, n = re.subn(
        r"(?m)^(\s*proxy_read_timeout\s+)\d+s?;",
        rf"\g<1>{SHORT_TIMEOUT}s;",
        EXAMPLE.read_text(),
    )
    assert n >= 1 and read_timeout(text) == SHORT_TIMEOUT
    return text


@pytest.mark.slow
async def test_idle_streams_outlive_the_read_timeout(tmp_path: Path) -> None:
    """A model silent for longer than nginx's proxy_read_timeout and a WebSocket idle
    for as long both survive: the app's SSE pings and uvicorn's WebSocket pings are
    traffic for nginx. The control runs alongside, with the pings switched off, and
    nginx cuts both at its timeout (so the pings are what keeps the streams, not a
    lenient nginx). The example with a short timeout (see SHORT_TIMEOUT); everything
    runs in parallel: ~T + 4 s.
    """
    timeout = SHORT_TIMEOUT
    site = _short_timeout_site()
    silence = timeout + 4
    pinging = _site(
        agent=build_demo_agent(model=SilentModel(silence=silence)),
        streaming=StreamingOptions(ping_interval=PING),
    )
    silent = _site(
        agent=build_demo_agent(model=SilentModel(silence=silence)),
        streaming=StreamingOptions(ping_interval=3600),
    )
    with (
        _proxied(tmp_path, pinging, "pinging", site, ws_ping_interval=PING) as (up_on, on),
        _proxied(tmp_path, silent, "silent", site, ws_ping_interval=None) as (up_off, off),
    ):
        # A first turn on each server (not through nginx) pays ADK's lazy imports and
        # first-run costs now: on a loaded machine they can hold the loop for seconds.
        async with httpx.AsyncClient(timeout=60) as client:
            for server in (up_on, up_off):
                body = chat_body(f"warm-{server.port}", user_message("hello"))
                answer = await client.post(server.url + CHAT, json=body)
                assert answer.status_code == 200 and "[DONE]" in answer.text
        results = await asyncio.gather(
            _silent_sse(on.url + CHAT),
            _silent_sse(off.url + CHAT),
            _idle_ws(ws_url(on.url + CHAT), silence),
            _idle_ws(ws_url(off.url + CHAT), silence),
        )
    (sse_on, sse_off, ws_on, ws_off) = results
    print(f"read timeout {timeout:.0f} s, silence {silence:.0f} s: {results}")

    # With pings: the SSE stream waits out the silence and completes.
    assert sse_on["text"] == "Before after." and sse_on["done"]
    assert sse_on["pings"] >= int(silence // PING) // 2  # about one a second
    assert sse_on["elapsed"] > silence
    # Without: nginx ends it at its read timeout, before the model speaks again.
    assert sse_off["text"] == "Before " and not sse_off["done"] and sse_off["pings"] == 0
    assert timeout - 1 < sse_off["elapsed"] < silence

    # With pings: the idle WebSocket is still open after the silence and works.
    assert ws_on["closed_at"] is None and "Tokyo" in ws_on["text"]
    # Without: nginx closes it at its read timeout.
    assert ws_off["closed_at"] is not None and timeout - 1 < ws_off["closed_at"] < silence

    # It was nginx that cut them, at its read timeout, and only the unpinged ones.
    assert "upstream timed out" not in on.log()
    assert "upstream timed out (110: Connection timed out) while reading upstream" in off.log()
    assert "upstream timed out (110: Connection timed out) while proxying upgraded" in off.log()


async def _silent_sse(url: str) -> dict[str, Any]:
    result: dict[str, Any] = {"text": "", "done": False, "pings": 0, "error": None}
    started = time.monotonic()
    body = chat_body(f"silent-{url.rsplit(':', 1)[-1]}", user_message(SILENT))
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=120)) as client:
        try:
            async with client.stream("POST", url, json=body) as response:
                assert response.status_code == 200
                async for line in response.aiter_lines():
                    if line == ": ping":
                        result["pings"] += 1
                    elif line == "data: [DONE]":
                        result["done"] = True
                    elif '"text-delta"' in line:
                        result["text"] += json.loads(line[6:])["delta"]
        except httpx.RemoteProtocolError as exc:  # nginx cut the chunked body
            result["error"] = type(exc).__name__
    result["elapsed"] = round(time.monotonic() - started, 1)
    return result


async def _idle_ws(url: str, silence: float) -> dict[str, Any]:
    """Open a live socket, say nothing for ``silence`` s, then take a turn.
    The client sends no pings of its own (ping_interval=None)."""
    result: dict[str, Any] = {"closed_at": None, "text": ""}
    started = time.monotonic()
    async with connect(url, ping_interval=None) as ws:
        try:
            await asyncio.wait_for(ws.wait_closed(), silence)
            result["closed_at"] = round(time.monotonic() - started, 1)
            return result
        except TimeoutError:
            pass
        client = LiveClient(ws)
        try:
            await client.say("What's the weather in Tokyo?")
            result["text"] = text(await client.turn())
        except ConnectionClosed:
            result["closed_at"] = round(time.monotonic() - started, 1)
    return result


async def _not_found(scope: Any, receive: Any, send: Any) -> None:
    """The wrapped site behind AdkMiddleware: 404 for everything else."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
    elif scope["type"] == "http":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"not found"})
    else:
        await send({"type": "websocket.close", "code": 1000})


# -- the example as a newcomer reads and runs it ------------------------------------------

PAGE_DRIVER = Path(__file__).with_name("page_through_proxy.mjs")


def test_the_options_the_comments_name_are_the_codes() -> None:
    """Every ``Record.option`` the file's comments name is a field of that record in
    ``adk_asgi.options``, and every ``AdkApp <option>`` an ``AdkApp`` argument, so a renamed
    or removed option fails here instead of misleading a reader."""
    import dataclasses
    import inspect

    from adk_asgi import AdkApp, options

    comments = "\n".join(
        line.split("#", 1)[1] for line in EXAMPLE.read_text().splitlines() if "#" in line
    )
    named = re.findall(r"\b([A-Z]\w+)\.([a-z_]+)\b", comments)
    assert named, "the comments name no option"
    for record, field in named:
        fields = {f.name for f in dataclasses.fields(getattr(options, record))}
        assert field in fields, f"examples/nginx.conf names {record}.{field}, which is not one"
    arguments = inspect.signature(AdkApp).parameters
    for argument in re.findall(r"\bAdkApp\(?\s*([a-z_]+)", comments):
        assert argument in arguments, f"examples/nginx.conf names AdkApp {argument}"


def test_the_markdown_shows_the_file_as_it_is() -> None:
    """docs/serving/nginx.md holds the file's text (a forge shows it; an include would
    show one line)."""
    page = (EXAMPLE.parents[1] / "docs" / "serving" / "nginx.md").read_text()
    (shown,) = re.findall(r"^```nginx\n(.*?)^```", page, re.S | re.M)
    assert shown == EXAMPLE.read_text()


def test_the_page_at_the_root_and_under_the_prefix(tmp_path: Path) -> None:
    """``adk-asgi serve`` behind the example, unchanged: the page and its ``agent.json``
    at ``/`` and at ``/chat-app/``, and Chromium loading each and chatting through it, the
    prefixed page posting to ``/chat-app/api/chat`` by itself."""
    import subprocess

    with (
        Serve(token_delay=0, log_level="warning") as server,
        Nginx(tmp_path / "nginx", server.port) as proxy,
    ):
        for prefix in ("", "/chat-app"):
            page = httpx.get(f"{proxy.url}{prefix}/", timeout=30)
            assert page.status_code == 200 and '<div id="root"></div>' in page.text, prefix
            info = httpx.get(f"{proxy.url}{prefix}/agent.json", timeout=30).json()
            assert info["api"] == "api/chat" and "demo" in info["title"], prefix
        done = subprocess.run(
            ["node", str(PAGE_DRIVER), f"{proxy.url}/", f"{proxy.url}/chat-app/"],
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    root, prefixed = json.loads(done.stdout.strip().splitlines()[-1])["pages"]
    for shown in (root, prefixed):
        assert shown["title"] == info["title"], shown
    assert 'You said: "hello from /"' in root["answer"], root
    assert 'You said: "hello from /chat-app/"' in prefixed["answer"], prefixed
    assert root["posted"] == ["/api/chat"] and prefixed["posted"] == ["/chat-app/api/chat"]
