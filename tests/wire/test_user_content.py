"""What a user wrote never reaches the server log, and text a session store cannot hold is
refused at the door (issue 24, item 6), on real servers.

- **U+0000**: PostgreSQL stores neither it in text nor ``\\u0000`` in JSON, and on main a
  NUL in a message was a 200, then an ``error`` chunk and a traceback quoting the user's
  text in the SQL parameters. One rule for every session store now: a body or frame with
  U+0000 anywhere is ``422 invalid_request`` naming where (HTTP), or the same error as a
  frame (WebSocket); tested on memory, sqlite and PostgreSQL. (Lone surrogates, the other
  characters no store holds, are invalid JSON to the parser: 400.)
- **No user content in logs**: a marker string sent through each failure path (a refused
  body, a refused frame, a failing tool given the marker as its argument) never appears in
  a log line at INFO and above, the level ``adk-asgi serve`` logs at. The database failing
  mid-turn, with the marker in the answer it could not store, is in
  ``tests/processes/test_store_outages.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from agents.team.scripted import Reply, ScriptedModel, latest
from google.adk.agents import LlmAgent
from google.adk.apps import App, ResumabilityConfig

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, chat_body, parse_sse, types_of, user_message

MARKER = "zq7-marker-user-words"
NUL_TEXT = f"{MARKER} \x00 and more"


def _log_text(caplog: pytest.LogCaptureFixture) -> str:
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return "\n".join(formatter.format(r) for r in caplog.records)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.db'}"
    server = request.getfixturevalue("postgres")
    return str(server.create_database(f"nul_{uuid.uuid4().hex[:12]}"))


def _refused(response: httpx.Response, where: str) -> None:
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert f"`{where}`" in error["message"] and "U+0000" in error["message"], error


def test_nul_is_refused_on_every_session_store(
    store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = AdkApp(build_demo_agent(token_delay=0), session_db=store_url, warm_up=False)
    caplog.set_level(logging.INFO)
    with LoopbackServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        # A text part, as the AI SDK sends it.
        _refused(
            client.post("/", json=chat_body("nul", user_message(NUL_TEXT))),
            "messages[0].parts[0].text",
        )
        # Anywhere else in the body: a data part, the transport's extra body.
        data = {
            "id": "u-1",
            "role": "user",
            "parts": [
                {"type": "text", "text": "hi"},
                {"type": "data-note", "data": {"x": NUL_TEXT}},
            ],
        }
        _refused(client.post("/", json=chat_body("nul", data)), "messages[0].parts[1].data.x")
        _refused(client.post("/", json=chat_body("nul", user_message("hi"), note=NUL_TEXT)), "note")
        # Nothing was stored: the chat starts cleanly, and a backslash-u-0000 that is
        # text (an escaped backslash) is no NUL.
        literal = "a literal \\u0000 is fine " + MARKER
        ok = client.post("/", json=chat_body("nul", user_message(literal)))
        assert ok.status_code == 200, ok.text
        assert types_of(parse_sse(ok.text))[-2:] == ["finish", "[DONE]"]
        assert "\\\\u0000" in ok.text  # the echo: the literal came back as text
        again = client.post("/", json=chat_body("nul", user_message("and again")))
        assert types_of(parse_sse(again.text))[-2:] == ["finish", "[DONE]"]
        # A server-side completion's body, too.
        _refused(
            client.post("/nul/tool-output", json={"toolCallId": "x", "output": {"note": NUL_TEXT}}),
            "output.note",
        )
    assert MARKER not in _log_text(caplog), _log_text(caplog)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_nul_in_a_live_frame_is_refused_with_an_error_frame(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Both protocols: the frame is refused (protocol B: addressed to its request), the
    connection stays usable, nothing is logged."""
    from websockets.asyncio.client import connect

    from support.ws_client import ws_url

    app = AdkApp(build_demo_agent(token_delay=0), warm_up=False)
    caplog.set_level(logging.INFO)

    async def talk(url: str) -> tuple[Any, Any, Any]:
        async with connect(ws_url(url, "chatId=live-nul")) as ws:  # protocol A
            await ws.send(
                json.dumps(
                    {
                        "type": "message",
                        "version": "1.0",
                        "data": {
                            "messages": [
                                {"role": "user", "content": [{"type": "text", "text": NUL_TEXT}]}
                            ]
                        },
                    }
                )
            )
            a = await asyncio.wait_for(ws.recv(), 10)
            await ws.send(json.dumps({"type": "ping", "version": "1.0", "data": {}}))
            pong = await asyncio.wait_for(ws.recv(), 10)
        async with connect(ws_url(url)) as ws:  # protocol B
            await ws.send(
                json.dumps(
                    {
                        "type": "send",
                        "requestId": "r1",
                        "id": "live-nul-b",
                        "messages": [user_message(NUL_TEXT)],
                    }
                )
            )
            b = await asyncio.wait_for(ws.recv(), 10)
        return a, pong, b

    with LoopbackServer(app) as server:
        a, pong, b = asyncio.run(talk(server.url))
    assert a.startswith("data: ") and json.loads(a[6:])["type"] == "error", a
    assert "`data.messages[0].content[0].text` contains U+0000" in a, a
    assert json.loads(pong)["type"] == "pong"
    frame = json.loads(b)
    assert frame["type"] == "error" and frame["requestId"] == "r1", frame
    assert "`messages[0].parts[0].text` contains U+0000" in frame["errorText"], frame
    assert MARKER not in _log_text(caplog), _log_text(caplog)


def _tool_app() -> AdkApp:
    """One agent whose tool is called with what the user wrote, and fails."""

    def file_report(note: str) -> dict[str, Any]:
        """File a report."""
        raise RuntimeError("the report service is down")

    def plan(contents: Any) -> Reply | None:
        said = latest(contents)
        if said is None or said.text is None:
            return Reply(text="done")
        return Reply(calls=(("file_report", {"note": said.text}),))

    agent = LlmAgent(
        name="reporter",
        model=ScriptedModel(planner=plan),
        instruction="File reports.",
        tools=[file_report],
    )
    return AdkApp(
        adk_app=App(
            name="reporter",
            root_agent=agent,
            resumability_config=ResumabilityConfig(is_resumable=True),
        ),
        warm_up=False,
    )


def test_a_failing_tool_never_logs_its_arguments(caplog: pytest.LogCaptureFixture) -> None:
    """The tool's exception is logged once, with its traceback (the details are the
    operator's); the arguments it was called with (the user's words) are not."""
    caplog.set_level(logging.INFO)
    with LoopbackServer(_tool_app()) as server:
        response = httpx.post(
            server.url, json=chat_body("tool", user_message(f"please file {MARKER}")), timeout=30
        )
    chunks = parse_sse(response.text)
    assert MARKER in response.text  # the call's input reached the client, as it should
    assert types_of(chunks)[-2:] == ["error", "[DONE]"], types_of(chunks)
    logged = _log_text(caplog)
    assert "the report service is down" in logged  # the failure itself is logged
    assert MARKER not in logged, logged
