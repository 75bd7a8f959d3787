"""Self-test of the AI SDK conformance harness (tests/js/drive-chat.mjs, and drive-ws.mjs's
steps).

A tiny mock SSE server replays canned chunk sequences chosen by the last user message's
text. The tests prove that the harness reports both conforming and non-conforming
streams correctly, with each real client version (`ai` 5.x, strict 6.0.230, 6.x, 7.x).
Its WebSocket route answers ai 7's ``WebSocketChatTransport`` (protocol B) the same way.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from support.aisdk_client import (
    AI_VERSIONS,
    JS_DIR,
    NodeHarnessError,
    NodeHarnessMissing,
    require_node_harness,
    run_chat,
    run_chat_versions,
    run_ws_chat,
)

pytestmark = pytest.mark.node

Chunk = dict[str, Any]

SSE_HEADERS = {
    "cache-control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}


# ---------------------------------------------------------------------------
# canned conversations


def _text_chunks(message_id: str, text: str, *, extra: Chunk | None = None) -> list[Chunk]:
    head, tail = text[: len(text) // 2], text[len(text) // 2 :]
    return [
        {"type": "start", "messageId": message_id},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": head, **(extra or {})},
        {"type": "text-delta", "id": "t1", "delta": tail},
        {"type": "text-end", "id": "t1"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
    ]


GOOD_TEXT = "Hello from the mock server."

APPROVAL_ROUND_1: list[Chunk] = [
    {"type": "start", "messageId": "msg_appr"},
    {"type": "start-step"},
    {
        "type": "tool-input-available",
        "toolCallId": "call_1",
        "toolName": "delete_file",
        "input": {"path": "notes/x.txt"},
    },
    {"type": "tool-approval-request", "approvalId": "appr_1", "toolCallId": "call_1"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]
APPROVAL_ROUND_2: list[Chunk] = [
    {"type": "start", "messageId": "msg_appr"},
    {"type": "tool-output-available", "toolCallId": "call_1", "output": {"deleted": True}},
    {"type": "finish", "finishReason": "stop"},
]

CLIENT_TOOL_ROUND_1: list[Chunk] = [
    {"type": "start", "messageId": "msg_tool"},
    {"type": "start-step"},
    {
        "type": "tool-input-available",
        "toolCallId": "call_loc",
        "toolName": "get_location",
        "input": {},
    },
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "tool-calls"},
]
CLIENT_TOOL_ROUND_2: list[Chunk] = [
    {"type": "start", "messageId": "msg_tool"},
    {"type": "start-step"},
    {"type": "text-start", "id": "t2"},
    {"type": "text-delta", "id": "t2", "delta": "It is sunny in Tokyo."},
    {"type": "text-end", "id": "t2"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]


def _sse(chunks: list[Chunk], *, done: bool = True) -> list[str]:
    events = [f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n" for chunk in chunks]
    return [*events, "data: [DONE]\n\n"] if done else events


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return "".join(
                part.get("text", "")
                for part in message.get("parts", [])
                if part.get("type") == "text"
            )
    return ""


def _pick_events(body: dict[str, Any]) -> list[str] | Response:
    messages: list[dict[str, Any]] = body.get("messages", [])
    scenario = _last_user_text(messages)
    continuation = bool(messages) and messages[-1].get("role") == "assistant"
    if scenario == "good":
        return _sse(_text_chunks("msg_good", GOOD_TEXT))
    if scenario == "null":
        return _sse([{"type": "start", "messageId": None}, *_text_chunks("msg_n", "x")[1:]])
    if scenario == "extra":
        return _sse(_text_chunks("msg_extra", GOOD_TEXT, extra={"futureField": 1}))
    if scenario == "approval":
        return _sse(APPROVAL_ROUND_2 if continuation else APPROVAL_ROUND_1)
    if scenario == "client-tool":
        return _sse(CLIENT_TOOL_ROUND_2 if continuation else CLIENT_TOOL_ROUND_1)
    if scenario == "sse-variants":
        # what sse-starlette and other servers legitimately produce
        lines = [json.dumps(c) for c in _text_chunks("msg_v", GOOD_TEXT)]
        return [
            ": stream-open\r\n\r\n",
            f"event: message\r\nid: 1\r\ndata:{lines[0]}\r\n\r\n",
            *(f"data: {line}\r\n\r\n" for line in lines[1:3]),
            # one JSON value split across two data: lines (joined with "\n")
            "data: " + lines[3].replace(", ", ",\ndata: ", 1) + "\n\n",
            *(f"data: {line}\n\n" for line in lines[4:]),
            "data: [DONE]\n\n",
        ]
    if scenario == "unterminated":
        events = _sse(_text_chunks("msg_u", "abc"), done=False)
        return [*events[:-1], events[-1].rstrip("\n")]  # last event lacks its blank line
    if scenario == "http-500":
        return PlainTextResponse("mock exploded", status_code=500)
    return PlainTextResponse(f"unknown scenario {scenario!r}", status_code=400)


async def _slow_reply(message_id: str) -> AsyncIterator[Chunk]:
    """A reply whose first chunk comes late (a slow model's time to first token), then a
    word every 20 ms until the client stops it."""
    await asyncio.sleep(0.3)
    yield {"type": "start", "messageId": message_id}
    yield {"type": "start-step"}
    yield {"type": "text-start", "id": "t1"}
    for _ in range(500):
        await asyncio.sleep(0.02)
        yield {"type": "text-delta", "id": "t1", "delta": "word "}
    yield {"type": "text-end", "id": "t1"}
    yield {"type": "finish-step"}
    yield {"type": "finish", "finishReason": "stop"}


async def _canned(chunks: list[Chunk]) -> AsyncIterator[Chunk]:
    for chunk in chunks:
        yield chunk


async def _chat(request: Request) -> Response:
    body = await request.json()
    if _last_user_text(body.get("messages", [])) == "slow":

        async def slow() -> AsyncIterator[str]:
            async for chunk in _slow_reply("msg_slow"):
                yield _sse([chunk], done=False)[0]

        return StreamingResponse(slow(), media_type="text/event-stream", headers=SSE_HEADERS)
    picked = _pick_events(body)
    if isinstance(picked, Response):
        return picked

    async def stream() -> AsyncIterator[str]:
        for event in picked:
            yield event

    return StreamingResponse(stream(), media_type="text/event-stream", headers=SSE_HEADERS)


async def _hang(request: Request) -> Response:
    await request.body()

    async def stream() -> AsyncIterator[str]:
        yield _sse([{"type": "start", "messageId": "msg_hang"}], done=False)[0]
        while True:  # never finishes; the driver must time out and still report
            await asyncio.sleep(0.05)
            yield ": keep-alive\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream", headers=SSE_HEADERS)


async def _ws(websocket: WebSocket) -> None:
    """Protocol B: ``send`` frames answered by their last user message ("good", "slow"),
    each request's chunks numbered from 0 and closed by ``end``; ``abort`` stops one."""
    await websocket.accept()
    replies: dict[str, asyncio.Task[None]] = {}

    async def reply(request_id: str, chunks: AsyncIterator[Chunk]) -> None:
        sequence = 0
        async for chunk in chunks:
            frame = {"type": "chunk", "requestId": request_id, "sequence": sequence}
            await websocket.send_text(json.dumps({**frame, "chunk": chunk}))
            sequence += 1
        await websocket.send_text(json.dumps({"type": "end", "requestId": request_id}))

    try:
        while True:
            frame = json.loads(await websocket.receive_text())
            request_id = frame["requestId"]
            if frame["type"] == "abort":
                if (task := replies.pop(request_id, None)) is not None:
                    task.cancel()
            elif _last_user_text(frame["messages"]) == "slow":
                replies[request_id] = asyncio.create_task(
                    reply(request_id, _slow_reply("msg_slow"))
                )
            else:
                chunks = _canned(_text_chunks("msg_good", GOOD_TEXT))
                replies[request_id] = asyncio.create_task(reply(request_id, chunks))
    except WebSocketDisconnect:
        pass
    finally:
        for task in replies.values():
            task.cancel()


MOCK_APP = Starlette(
    routes=[
        Route("/api/chat", _chat, methods=["POST"]),
        Route("/api/hang", _hang, methods=["POST"]),
        WebSocketRoute("/ws", _ws),
    ]
)


# ---------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module", autouse=True)
def _node_harness() -> None:
    try:
        require_node_harness()
    except NodeHarnessMissing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="module")
def mock_base_url() -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        MOCK_APP, log_level="warning", lifespan="off", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("mock SSE server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()


@pytest.fixture(scope="module")
def api(mock_base_url: str) -> str:
    return f"{mock_base_url}/api/chat"


# ---------------------------------------------------------------------------
# helpers


def _assistant(report: dict[str, Any]) -> dict[str, Any]:
    assistants = [m for m in report["messages"] if m["role"] == "assistant"]
    assert len(assistants) == 1, report["messages"]
    message: dict[str, Any] = assistants[0]
    return message


def _text_of(message: dict[str, Any]) -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")


def _tool_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"].startswith("tool-")]


def _invalid(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [bad for request in report["requests"] for bad in request["invalid"]]


# ---------------------------------------------------------------------------
# tests


def test_installed_versions_are_the_pinned_ones(api: str) -> None:
    reports = run_chat_versions(api, [])
    versions = {alias: report["version"] for alias, report in reports.items()}
    assert versions["ai5"].startswith("5.")
    assert versions["ai6strict"] == "6.0.230"
    assert versions["ai6"].startswith("6.")
    assert versions["ai7"].startswith("7.")
    for report in reports.values():
        assert report["ok"] is True
        assert report["requests"] == []


def test_good_stream_passes_everywhere(api: str) -> None:
    reports = run_chat_versions(
        api,
        [{"action": "send", "text": "good"}],
        chat_id="c-good",
        headers={"x-test": "1"},
        body={"extra": "yes"},
    )
    for alias, report in reports.items():
        assert report["ok"] is True, (alias, report["problems"])
        assert report["status"] == "ready"
        assert report["error"] is None
        message = _assistant(report)
        assert message["id"] == "msg_good"
        assert _text_of(message) == GOOD_TEXT
        [request] = report["requests"]
        assert request["status"] == 200
        assert request["headers"]["content-type"].startswith("text/event-stream")
        assert request["headers"]["x-vercel-ai-ui-message-stream"] == "v1"
        assert request["requestHeaders"]["x-test"] == "1"
        assert request["sawDone"] is True
        assert request["invalid"] == []
        assert request["nullPaths"] == []
        assert len(request["chunks"]) == 8
        assert request["rawEvents"][-1] == "[DONE]"
        sent = request["body"]
        assert sent["id"] == f"c-good-{alias}"
        assert sent["trigger"] == "submit-message"
        assert "messageId" not in sent
        assert sent["extra"] == "yes"
        assert _last_user_text(sent["messages"]) == "good"
        assert report["finishes"] == [
            {"isAbort": False, "isDisconnect": False, "isError": False, "finishReason": "stop"}
        ]


def test_null_optional_field_is_invalid_everywhere(api: str) -> None:
    reports = run_chat_versions(api, [{"action": "send", "text": "null"}])
    for alias, report in reports.items():
        assert report["ok"] is False, alias
        assert report["status"] == "error"
        [request] = report["requests"]
        assert [bad["index"] for bad in request["invalid"]] == [0], alias
        assert request["invalid"][0]["chunk"] == {"type": "start", "messageId": None}
        assert request["nullPaths"] == ["chunks[0].messageId"]
        # the recorder keeps reading after the client gave up
        assert len(request["chunks"]) == 8
        assert request["sawDone"] is True


def test_extra_key_rejected_only_by_strict_schema(api: str) -> None:
    reports = run_chat_versions(api, [{"action": "send", "text": "extra"}])
    # ai@6.0.230 uses z.strictObject; latest 5.x (>= 5.0.217), 6.x and 7.x are loose.
    strict = reports.pop("ai6strict")
    assert strict["ok"] is False
    assert strict["status"] == "error"
    assert [bad["index"] for bad in _invalid(strict)] == [3]
    assert "futureField" in (strict["error"] or "")
    for alias, report in reports.items():
        assert report["ok"] is True, (alias, report["problems"])
        assert _text_of(_assistant(report)) == GOOD_TEXT


@pytest.mark.parametrize("continue_with", ["autoSend", "sendEmpty"])
def test_approval_round_trip(api: str, continue_with: str) -> None:
    steps: list[dict[str, Any]] = [
        {"action": "send", "text": "approval"},
        {"action": "approve", "approved": True, "reason": "fine"},
    ]
    if continue_with == "sendEmpty":
        steps.append({"action": "sendEmpty"})
    reports = run_chat_versions(
        api,
        steps,
        auto_send="approvals" if continue_with == "autoSend" else None,
        versions=("ai6strict", "ai6", "ai7"),
    )
    for alias, report in reports.items():
        assert report["ok"] is True, (alias, report["problems"])
        first, second = report["requests"]
        assert first["invalid"] == [] and second["invalid"] == []
        # the approve step found the approval and the continuation carries the answer
        sent = second["body"]
        assert sent["trigger"] == "submit-message"
        assert sent["messageId"] == "msg_appr"
        echoed = sent["messages"][-1]
        assert echoed["id"] == "msg_appr" and echoed["role"] == "assistant"
        [part] = _tool_parts(echoed)
        assert part["type"] == "tool-delete_file"
        assert part["state"] == "approval-responded"
        assert part["approval"] == {"id": "appr_1", "approved": True, "reason": "fine"}
        # the continuation updates the same assistant message
        assert len(report["messages"]) == 2
        [final] = _tool_parts(_assistant(report))
        assert final["state"] == "output-available"
        assert final["output"] == {"deleted": True}
        assert final["approval"]["approved"] is True


def test_approval_request_state_and_v5_rejection(api: str) -> None:
    reports = run_chat_versions(api, [{"action": "send", "text": "approval"}])
    v5 = reports.pop("ai5")
    assert v5["ok"] is False
    assert v5["status"] == "error"
    assert [(bad["index"], bad["chunk"]["type"]) for bad in _invalid(v5)] == [
        (3, "tool-approval-request")
    ]
    for alias, report in reports.items():
        assert report["ok"] is True, (alias, report["problems"])
        [part] = _tool_parts(_assistant(report))
        assert part["state"] == "approval-requested"
        assert part["approval"]["id"] == "appr_1"
    # the approve step itself fails cleanly on v5 (no approval part, no API)
    v5_approve = run_chat(
        "ai5",
        api,
        [{"action": "send", "text": "approval"}, {"action": "approve", "approved": True}],
    )
    assert v5_approve["ok"] is False
    assert v5_approve["stepResults"][1]["stepError"]
    assert len(v5_approve["requests"]) == 1


def test_client_tool_output_auto_send(api: str) -> None:
    reports = run_chat_versions(
        api,
        [
            {"action": "send", "text": "client-tool"},
            {"action": "toolOutput", "tool": "get_location", "output": {"city": "Tokyo"}},
        ],
        auto_send="toolCalls",
    )
    for alias, report in reports.items():
        assert report["ok"] is True, (alias, report["problems"])
        _, second = report["requests"]
        assert second["body"]["messageId"] == "msg_tool"
        [part] = _tool_parts(second["body"]["messages"][-1])
        assert part["state"] == "output-available"
        assert part["toolCallId"] == "call_loc"
        assert part["output"] == {"city": "Tokyo"}
        message = _assistant(report)
        assert message["id"] == "msg_tool"
        assert _text_of(message) == "It is sunny in Tokyo."


def test_client_tool_output_error_and_regenerate(api: str) -> None:
    report = run_chat(
        "ai6",
        api,
        [
            {"action": "send", "text": "client-tool"},
            {"action": "toolOutput", "tool": "get_location", "errorText": "denied by user"},
            {"action": "sendEmpty"},
            {"action": "regenerate"},
        ],
    )
    assert report["ok"] is True, report["problems"]
    _, second, third = report["requests"]
    [part] = _tool_parts(second["body"]["messages"][-1])
    assert part["state"] == "output-error"
    assert part["errorText"] == "denied by user"
    assert third["body"]["trigger"] == "regenerate-message"
    assert [m["role"] for m in third["body"]["messages"]] == ["user"]
    # regenerate replays round 1 of the scenario
    [regenerated] = _tool_parts(_assistant(report))
    assert regenerated["state"] == "input-available"


def test_sse_framing_variants_parse_like_the_client(api: str) -> None:
    reports = run_chat_versions(api, [{"action": "send", "text": "sse-variants"}])
    for alias, report in reports.items():
        assert report["ok"] is True, (alias, report["problems"])
        [request] = report["requests"]
        assert request["chunks"] == _text_chunks("msg_v", GOOD_TEXT)
        assert request["sawDone"] is True
        assert _text_of(_assistant(report)) == GOOD_TEXT


def test_unterminated_final_event_is_reported(api: str) -> None:
    report = run_chat("ai7", api, [{"action": "send", "text": "unterminated"}])
    [request] = report["requests"]
    assert request["sawDone"] is False
    assert request["unterminated"] == 'data: {"type":"finish","finishReason":"stop"}'
    assert len(request["chunks"]) == 7  # the client silently drops the last one too


def test_http_error_is_reported(api: str) -> None:
    report = run_chat("ai6", api, [{"action": "send", "text": "http-500"}])
    assert report["ok"] is False
    assert report["status"] == "error"
    assert report["error"] == "mock exploded"
    [request] = report["requests"]
    assert request["status"] == 500
    assert request["bodyText"] == "mock exploded"


def test_hanging_server_times_out_with_a_report(mock_base_url: str) -> None:
    started = time.monotonic()
    report = run_chat(
        "ai6",
        f"{mock_base_url}/api/hang",
        [{"action": "send", "text": "hang"}],
        node_timeout_ms=1500,
        timeout=15,
    )
    assert time.monotonic() - started < 10
    assert report["ok"] is False
    assert report["timedOut"] is True
    assert "timeout" in report["error"]
    [request] = report["requests"]
    assert request["chunks"] == [{"type": "start", "messageId": "msg_hang"}]


# A send, then one whose reply starts late: waitFor measures that reply, not the one before
# (27 characters), so the stop lands inside it.
STOP_IN_THE_NEW_REPLY = [
    {"action": "send", "text": "good"},
    {"action": "send", "text": "slow", "noWait": True},
    {"action": "waitFor", "textLength": 20},
    {"action": "stop"},
]


@pytest.mark.parametrize("driver", ["drive-chat", "drive-ws"])
def test_wait_for_measures_the_reply_to_the_last_send(mock_base_url: str, driver: str) -> None:
    if driver == "drive-chat":
        report = run_chat("ai7", f"{mock_base_url}/api/chat", STOP_IN_THE_NEW_REPLY)
    else:
        url = mock_base_url.replace("http://", "ws://") + "/ws"
        report = run_ws_chat(url, STOP_IN_THE_NEW_REPLY, chat_id="c-stop", timeout=30)
    assert report["ok"] is True, report["problems"]
    good, slow = [m for m in report["messages"] if m["role"] == "assistant"]
    assert _text_of(good) == GOOD_TEXT
    said = _text_of(slow)
    assert slow["id"] == "msg_slow" and len(said) >= 20 and said.endswith("word ")
    assert report["finishes"][-1]["isAbort"] is True


def test_all_versions_listed() -> None:
    assert AI_VERSIONS == ("ai5", "ai6strict", "ai6", "ai7")


# -- the shared driver process (tests/js/drive-serve.mjs) --------------------------------


def test_a_conversation_the_driver_rejects_is_a_harness_error_and_the_driver_goes_on(
    api: str,
) -> None:
    """drive-chat's own refusal (what exits 2 from a one-shot drive-chat) fails that call
    alone; the shared process answers the next conversation."""
    with pytest.raises(NodeHarnessError, match=r"crashed:[\s\S]*unknown autoSend"):
        run_chat("ai7", api, [{"action": "send", "text": "good"}], auto_send="sometimes")  # type: ignore[arg-type]
    assert run_chat("ai7", api, [{"action": "send", "text": "good"}])["ok"] is True


def test_a_driver_that_dies_fails_what_ran_and_the_next_call_starts_another(
    mock_base_url: str, api: str
) -> None:
    """The process dying mid-conversation (here: killed) fails the running call with its
    exit status, as a one-shot drive-chat's crash did, instead of waiting out its timeout."""
    from support.aisdk_client import _DRIVER as driver

    run_chat("ai7", api, [{"action": "send", "text": "good"}])  # the process is up

    def kill() -> None:
        assert driver._proc is not None
        driver._proc.kill()

    threading.Timer(1.0, kill).start()
    started = time.monotonic()
    with pytest.raises(NodeHarnessError, match="exited with -9"):
        run_chat(
            "ai7", f"{mock_base_url}/api/hang", [{"action": "send", "text": "hang"}], timeout=30
        )
    assert time.monotonic() - started < 10
    assert run_chat("ai7", api, [{"action": "send", "text": "good"}])["ok"] is True


def test_a_ws_conversation_in_the_shared_process_reports_as_the_one_shot_driver(
    mock_base_url: str,
) -> None:
    """drive-ws's conversations run in the shared process too ("driver": "ws"): two side by
    side there report what ``node drive-ws.mjs`` reports on its own, each only its own."""
    url = mock_base_url.replace("http://", "ws://") + "/ws"
    steps = [{"action": "send", "text": "good"}]
    payload = {"ai": "ai7", "url": url, "chatId": "c-once", "steps": steps, "timeoutMs": 20000}
    done = subprocess.run(
        ["node", str(JS_DIR / "drive-ws.mjs")],
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        timeout=60,
        check=False,
        cwd=JS_DIR,
    )
    assert done.returncode == 0, done.stderr
    once = json.loads(done.stdout)
    with ThreadPoolExecutor(max_workers=2) as pool:
        shared = list(
            pool.map(
                lambda chat_id: run_ws_chat(
                    url, steps, chat_id=chat_id, node_timeout_ms=20000, timeout=60
                ),
                ["c-shared-1", "c-shared-2"],
            )
        )

    def seen(report: dict[str, Any]) -> tuple[Any, ...]:
        return (
            report["ok"],
            report["version"],
            [(m["role"], _text_of(m)) for m in report["messages"]],
            [(f["type"], f.get("sequence")) for f in report["frames"]],
            [f["type"] for f in report["sent"]],
            report["finishes"],
            report["problems"],
        )

    assert once["ok"] is True, once["problems"]
    assert [_text_of(m) for m in once["messages"] if m["role"] == "assistant"] == [GOOD_TEXT]
    for report in shared:
        assert seen(report) == seen(once)
        assert len({f["requestId"] for f in report["frames"]}) == 1  # its own request only
    requests = [{f["requestId"] for f in report["frames"]} for report in shared]
    assert not requests[0] & requests[1]
