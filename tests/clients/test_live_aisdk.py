"""Live mode, protocol B: ai@7's own WebSocketChatTransport (Node, `ws`) drives the app.

Every chunk frame is validated by the library's ``uiMessageChunkSchema`` inside the
driver (``tests/js/drive-ws.mjs``, run in the shared Node process of
``tests/support/aisdk_client.py``); a failure, a null, a chat error or an unfinished
step makes ``ok`` false.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from adk_asgi import AdkApp
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent

from support import LoopbackServer
from support.aisdk_client import JS_DIR, run_ws_chat

pytestmark = pytest.mark.node


@pytest.fixture(autouse=True)
def _node() -> None:
    if (
        shutil.which("node") is None
        or not (JS_DIR / "node_modules" / "ai7").is_dir()
        or not (JS_DIR / "node_modules" / "ws").is_dir()
    ):
        pytest.skip("Node and tests/js/node_modules (npm ci --prefix tests/js) are required")
    PAYMENT_LOG.clear()


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(AdkApp(build_demo_agent(), warm_up=False)) as s:
        yield s


def drive(
    server: LoopbackServer,
    steps: list[dict[str, Any]],
    auto: str | None = None,
    chat_id: str = "chat-b",
) -> dict[str, Any]:
    result = run_ws_chat(
        server.url.replace("http://", "ws://") + "/",
        steps,
        chat_id=chat_id,
        auto_send=auto,
        node_timeout_ms=20000,
        timeout=60,
    )
    assert result["ok"], (result["problems"], result["chatErrors"])
    assert result["invalid"] == [] and result["nullPaths"] == []
    return result


def assistant_parts(result: dict[str, Any], index: int = -1) -> list[dict[str, Any]]:
    assistants = [m for m in result["messages"] if m["role"] == "assistant"]
    parts: list[dict[str, Any]] = assistants[index]["parts"]
    return parts


def text_of(parts: list[dict[str, Any]]) -> str:
    return "".join(p["text"] for p in parts if p["type"] == "text")


def check_sequences(result: dict[str, Any]) -> None:
    """Per request: sequence 0, 1, 2, ... then exactly one `end`."""
    per: dict[str, list[Any]] = {}
    for frame in result["frames"]:
        per.setdefault(frame["requestId"], []).append(frame)
    for frames in per.values():
        chunks = [f for f in frames if f["type"] == "chunk"]
        assert [f["sequence"] for f in chunks] == list(range(len(chunks)))
        if chunks:
            assert chunks[0]["chunk"]["type"] == "start"
        assert frames[-1]["type"] in ("end", "error", "no-active")


def test_text_turns(server: LoopbackServer) -> None:
    result = drive(
        server,
        [
            {"action": "send", "text": "hello"},
            {"action": "send", "text": "What is the weather in Paris?"},
        ],
    )
    check_sequences(result)
    assert "You said" in text_of(assistant_parts(result, 0))
    weather = assistant_parts(result, 1)
    assert any(
        p["type"] == "tool-get_weather" and p["state"] == "output-available" for p in weather
    )
    assert "Paris is cloudy" in text_of(weather)
    assert [f["finishReason"] for f in result["finishes"]] == ["stop", "stop"]


@pytest.mark.parametrize("approved", [True, False])
def test_approval(server: LoopbackServer, approved: bool) -> None:
    result = drive(
        server,
        [
            {"action": "send", "text": "Send 50 dollars to Hanako"},
            {"action": "approve", "approved": approved},
        ],
        auto="approvals",
    )
    check_sequences(result)
    sends = [f for f in result["sent"] if f["type"] == "send"]
    assert len(sends) == 2  # the approval went back as a new `send`
    parts = assistant_parts(result)
    payment = next(p for p in parts if p["type"] == "tool-process_payment")
    assert len([m for m in result["messages"] if m["role"] == "assistant"]) == 1
    if approved:
        assert payment["state"] == "output-available"
        assert payment["output"]["status"] == "success"
        assert "Sent 50 USD to Hanako" in text_of(parts)
        assert len(PAYMENT_LOG) == 1
    else:
        assert payment["state"] == "output-denied"
        assert "cancelled" in text_of(parts)
        assert PAYMENT_LOG == []


def test_two_approvals_mixed(server: LoopbackServer) -> None:
    result = drive(
        server,
        [
            {"action": "send", "text": "Send 50 dollars to Hanako and 20 dollars to Taro"},
            {"action": "approve", "approved": True},
            {"action": "approve", "approved": False},
        ],
        auto="approvals",
    )
    parts = assistant_parts(result)
    states = {
        p["input"]["recipient"]: p["state"] for p in parts if p["type"] == "tool-process_payment"
    }
    assert states == {"Hanako": "output-available", "Taro": "output-denied"}
    assert [p["recipient"] for p in PAYMENT_LOG] == ["Hanako"]


def test_browser_tools(server: LoopbackServer) -> None:
    # As in SSE: the page approves, runs the tool, and sends approval and result together.
    result = drive(
        server,
        [
            {"action": "send", "text": "where am I?"},
            {"action": "approve", "approved": True},
            {
                "action": "toolOutput",
                "tool": "get_location",
                "output": {"latitude": 35.68, "longitude": 139.76},
            },
            {"action": "send", "text": "play track 2"},
            {"action": "toolOutput", "tool": "change_bgm", "output": {"success": True, "track": 2}},
        ],
        auto="toolCalls",
    )
    check_sequences(result)
    location = assistant_parts(result, 0)
    part = next(p for p in location if p["type"] == "tool-get_location")
    assert part["state"] == "output-available" and part["output"]["latitude"] == 35.68
    assert "35.68" in text_of(location)
    bgm = assistant_parts(result, 1)
    part = next(p for p in bgm if p["type"] == "tool-change_bgm")
    assert part["state"] == "output-available" and part["input"] == {"track": 2}
    assert result["finishes"][-1]["finishReason"] == "stop"


def test_browser_tool_approval_first_result_later(server: LoopbackServer) -> None:
    result = drive(
        server,
        [
            {"action": "send", "text": "where am I?"},
            {"action": "approve", "approved": True},
            {"action": "sendEmpty"},
            {
                "action": "toolOutput",
                "tool": "get_location",
                "output": {"latitude": 1.5, "longitude": 2.5},
            },
            {"action": "sendEmpty"},
        ],
    )
    check_sequences(result)
    parts = assistant_parts(result)
    part = next(p for p in parts if p["type"] == "tool-get_location")
    assert part["state"] == "output-available" and "latitude 1.5" in text_of(parts)
    assert [f["finishReason"] for f in result["finishes"]] == ["tool-calls", "tool-calls", "stop"]


def test_resume_without_an_active_stream_is_no_active(server: LoopbackServer) -> None:
    result = drive(server, [{"action": "send", "text": "hello"}, {"action": "resume"}])
    resumes = [f for f in result["sent"] if f["type"] == "resume"]
    assert resumes
    assert {"type": "no-active", "requestId": resumes[0]["requestId"]} in result["frames"]
