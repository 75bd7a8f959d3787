"""SECURITY.md's promise about failures, path by path, on the team app: a tool or a model
fails with a secret in its message, and the wire carries only ``describe_error``'s text
(by default generic, with the error's code), the failed server tool's part ends as
``tool-output-error``, and the server log has one record per failure, with one traceback.

Paths: SSE (a tool raising, in the root agent and in a sub-agent after a transfer; a model
raising mid-stream; a model's error response; a tool raising when a confirmed call
resumes), live protocol A (the same) and live protocol B (a tool raising; a resumed call
raising), and an application's ``describe_error`` on both transports."""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from agents.team.agent import MODEL_SECRET, TOOL_SECRET, build_app
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from websockets.asyncio.client import connect

from adk_asgi import AdkApp, ErrorInfo, describe_error_generic

from support import LoopbackServer, parse_sse

SECRETS = (TOOL_SECRET, MODEL_SECRET, "exploded", "crashed", "quota", "blocked recipient")
GENERIC = "The agent failed to answer. Please try again."


def reactor_down(error: ErrorInfo) -> str:
    if isinstance(error.exception, ValueError):
        return "The reactor is down."
    return describe_error_generic(error)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(AdkApp(adk_app=build_app(), warm_up=False)) as running:
        yield running


@pytest.fixture
async def client(server: LoopbackServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as c:
        yield c


class Records:
    """The log records of the test so far (caplog's list changes between phases)."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self.caplog = caplog

    def __iter__(self) -> Iterator[logging.LogRecord]:
        return iter(list(self.caplog.records))


@pytest.fixture
def records(caplog: pytest.LogCaptureFixture) -> Records:
    caplog.set_level(logging.DEBUG)
    return Records(caplog)


def assert_clean(raw: str) -> None:
    for secret in SECRETS:
        assert secret not in raw, f"{secret!r} reached the client: {raw}"
    assert "Traceback" not in raw


def assert_logged_once(
    records: Records, code: str, *, traceback_of: type[BaseException] | None
) -> None:
    errors = [r for r in records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [f"{r.name}: {r.getMessage()}" for r in errors]
    [record] = errors
    assert record.name == "adk_asgi" and code in record.getMessage()
    if traceback_of is None:
        assert record.exc_info is None
        return
    assert record.exc_info is not None and isinstance(record.exc_info[1], traceback_of)
    text = "".join(traceback.format_exception(record.exc_info[1]))
    assert text.count("Traceback (most recent call last)") == 1, text
    # ADK's own reports of the same exception are still there, demoted, without traceback.
    demoted = [r for r in records if r.name.startswith("google_adk") and "failed" in r.msg]
    assert demoted and all(r.levelno == logging.DEBUG and r.exc_info is None for r in demoted)


def tool_parts(chunks: list[Any]) -> dict[str, str]:
    """The last state-changing chunk type of every tool call."""
    states: dict[str, str] = {}
    for c in chunks:
        if isinstance(c, dict) and "toolCallId" in c:
            states[c["toolCallId"]] = c["type"]
    return states


def user(text: str, n: int = 0) -> dict[str, Any]:
    return {"id": f"u{n}", "role": "user", "parts": [{"type": "text", "text": text}]}


# -- SSE ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "exception"),
    [
        ("please explode", "ValueError", ValueError),
        ("billing: explode", "ValueError", ValueError),  # in the sub-agent, after a transfer
        ("crash now", "ScriptedModelError", RuntimeError),
        ("fail now", "RESOURCE_EXHAUSTED", None),
    ],
)
async def test_sse_failures_reach_the_client_as_generic_text(
    client: httpx.AsyncClient,
    records: Records,
    text: str,
    code: str,
    exception: type[BaseException] | None,
) -> None:
    response = await client.post("/", json={"id": f"sse-{text}", "messages": [user(text)]})
    assert response.status_code == 200
    assert_clean(response.text)
    chunks = parse_sse(response.text)
    errors = [c for c in chunks if isinstance(c, dict) and c["type"] == "error"]
    assert [e["errorText"] for e in errors] == [f"{GENERIC} ({code})"]
    assert chunks[-2:] == [errors[0], "[DONE]"]
    states = tool_parts(chunks)
    if "explode" in text:
        exploded = [
            c["toolCallId"]
            for c in chunks
            if isinstance(c, dict) and c.get("toolName") == "explode"
        ]
        assert exploded and states[exploded[0]] == "tool-output-error"
    assert "tool-input-available" not in states.values()  # every server call has an outcome
    assert_logged_once(records, code, traceback_of=exception)


async def test_sse_a_confirmed_call_that_raises_when_it_resumes(
    client: httpx.AsyncClient, records: Records
) -> None:
    messages = [user("send 13 to mallory")]
    first = parse_sse(
        (await client.post("/", json={"id": "sse-resume", "messages": messages})).text
    )
    request = next(c for c in first if isinstance(c, dict) and c["type"] == "tool-approval-request")
    call = request["toolCallId"]
    messages.append(
        {
            "id": first[0]["messageId"],
            "role": "assistant",
            "parts": [
                {
                    "type": "tool-send_money",
                    "toolCallId": call,
                    "state": "approval-responded",
                    "input": {"amount": 13, "to": "mallory"},
                    "approval": {"id": request["approvalId"], "approved": True},
                }
            ],
        }
    )
    response = await client.post("/", json={"id": "sse-resume", "messages": messages})
    assert_clean(response.text)
    chunks = parse_sse(response.text)
    assert tool_parts(chunks)[call] == "tool-output-error"
    assert chunks[-2] == {"type": "error", "errorText": f"{GENERIC} (PermissionError)"}
    assert_logged_once(records, "PermissionError", traceback_of=PermissionError)


# -- live ---------------------------------------------------------------------------------


class RawSocket:
    """A live client that keeps every frame as it came (the wire)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.raw: list[str] = []

    async def frame(self) -> str:
        text = await asyncio.wait_for(self.ws.recv(), 15)
        assert isinstance(text, str)
        self.raw.append(text)
        return text

    async def turn_a(self, text: str) -> list[Any]:
        """Protocol A: say ``text``, read the chunks until ``[DONE]``."""
        await self.ws.send(
            json.dumps(
                {
                    "type": "message",
                    "version": "1.0",
                    "data": {
                        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]
                    },
                }
            )
        )
        chunks: list[Any] = []
        while True:
            frame = await self.frame()
            payload = frame[6:-2]
            if payload == "[DONE]":
                return chunks
            chunks.append(json.loads(payload))

    async def send_b(self, request_id: str, messages: list[dict[str, Any]]) -> list[Any]:
        """Protocol B: one ``send``; its chunks until ``end``."""
        await self.ws.send(
            json.dumps(
                {"type": "send", "requestId": request_id, "id": "live-b", "messages": messages}
            )
        )
        chunks: list[Any] = []
        while True:
            frame = json.loads(await self.frame())
            if frame["type"] == "end":
                return chunks
            assert frame["type"] == "chunk", frame
            chunks.append(frame["chunk"])


@pytest.mark.parametrize(
    ("text", "code", "exception"),
    [
        ("please explode", "ValueError", ValueError),
        ("crash now", "ScriptedModelError", RuntimeError),
        ("fail now", "RESOURCE_EXHAUSTED", None),
    ],
)
async def test_live_failures_reach_the_client_as_generic_text(
    server: LoopbackServer,
    records: Records,
    text: str,
    code: str,
    exception: type[BaseException] | None,
) -> None:
    url = server.url.replace("http://", "ws://") + f"/?chatId=live-{text.split()[0]}"
    async with connect(url) as ws:
        socket = RawSocket(ws)
        chunks = await socket.turn_a(text)
        assert_clean("".join(socket.raw))
        assert chunks[-1] == {"type": "error", "errorText": f"{GENERIC} ({code})"}
        if "explode" in text:
            assert "tool-output-error" in tool_parts(chunks).values()
        assert "tool-input-available" not in tool_parts(chunks).values()
        after = await socket.turn_a("hello")  # the connection stays usable
        assert after[-1]["type"] == "finish"
    assert_logged_once(records, code, traceback_of=exception)


async def test_live_protocol_b_tool_and_resume_failures(
    server: LoopbackServer, records: Records
) -> None:
    url = server.url.replace("http://", "ws://") + "/?chatId=live-b"
    async with connect(url) as ws:
        socket = RawSocket(ws)
        exploded = await socket.send_b("r1", [user("please explode")])
        assert exploded[-1]["type"] == "error"
        assert "tool-output-error" in tool_parts(exploded).values()
        messages = [user("please explode"), user("send 13 to mallory", 1)]
        asked = await socket.send_b("r2", messages)
        request = next(c for c in asked if c["type"] == "tool-approval-request")
        call = request["toolCallId"]
        messages.append(
            {
                "id": asked[0]["messageId"],
                "role": "assistant",
                "parts": [
                    {
                        "type": "tool-send_money",
                        "toolCallId": call,
                        "state": "approval-responded",
                        "input": {"amount": 13, "to": "mallory"},
                        "approval": {"id": request["approvalId"], "approved": True},
                    }
                ],
            }
        )
        resumed = await socket.send_b("r3", messages)
        assert tool_parts(resumed)[call] == "tool-output-error"
        assert resumed[-1] == {"type": "error", "errorText": f"{GENERIC} (PermissionError)"}
        assert_clean("".join(socket.raw))
    errors = [r for r in records if r.levelno >= logging.ERROR]
    assert [type(r.exc_info[1]).__name__ for r in errors if r.exc_info] == [
        "ValueError",
        "PermissionError",
    ]
    assert len(errors) == 2


# -- the application's describe_error ------------------------------------------------------


async def test_describe_error_maps_exceptions_on_both_transports(records: Records) -> None:
    def broken(error: ErrorInfo) -> str:
        raise RuntimeError("describe_error itself failed")

    app = AdkApp(adk_app=build_app(), describe_error=reactor_down, warm_up=False)
    with LoopbackServer(app) as running:
        async with httpx.AsyncClient(base_url=running.url, timeout=20) as client:
            sse = parse_sse(
                (
                    await client.post(
                        "/", json={"id": "describe", "messages": [user("please explode")]}
                    )
                ).text
            )
            model = parse_sse(
                (
                    await client.post(
                        "/", json={"id": "describe-2", "messages": [user("fail now")]}
                    )
                ).text
            )
        async with connect(running.url.replace("http://", "ws://") + "/") as ws:
            live = await RawSocket(ws).turn_a("please explode")
    assert sse[-2] == {"type": "error", "errorText": "The reactor is down."}
    assert model[-2]["errorText"] == f"{GENERIC} (RESOURCE_EXHAUSTED)"
    assert live[-1] == {"type": "error", "errorText": "The reactor is down."}

    app = AdkApp(adk_app=build_app(), describe_error=broken, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        chunks = parse_sse(
            (
                await client.post("/", json={"id": "broken", "messages": [user("please explode")]})
            ).text
        )
    assert chunks[-2] == {"type": "error", "errorText": f"{GENERIC} (ValueError)"}
    assert any(r.getMessage().startswith("describe_error raised") for r in records)


async def test_adk_logs_of_runs_adk_asgi_does_not_drive_are_left_alone(records: Records) -> None:
    AdkApp(adk_app=build_app(), warm_up=False)  # installs the log filter
    runner = Runner(app=build_app(), session_service=InMemorySessionService())
    await runner.session_service.create_session(app_name="team", user_id="u", session_id="s")
    with pytest.raises(ValueError):
        async for _ in runner.run_async(
            user_id="u",
            session_id="s",
            new_message=types.Content(role="user", parts=[types.Part(text="please explode")]),
        ):
            pass
    assert any(
        r.name.startswith("google_adk") and r.levelno == logging.ERROR and r.exc_info
        for r in records
    )
