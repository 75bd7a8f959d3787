"""A turn queued behind another on the same chat is visible at once (issue 28, item 9): two
tabs on one chat take turns (the chat's turn lock), and the waiting tab's response starts
at once with a transient ``data-queued`` chunk, then streams its own answer when the first
turn ends. Through the real AI SDK clients (ai 5, 6 and 7, every chunk validated by that
version's schema) on a real uvicorn; the history holds both turns in order. Before: 200 and
not one byte until the first turn ended.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import httpx
import pytest

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer, chat_body, parse_sse, user_message
from support.aisdk_client import run_chat

pytestmark = pytest.mark.node

VERSIONS: Final = ("ai5", "ai6", "ai7")
# 200 tokens, 0.03 s apart: the first tab's turn runs ~6 s, while Node starts.
LONG: Final = "bench 200"


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    app = AdkApp(build_demo_agent(token_delay=0.03), warm_up=False)
    with LoopbackServer(app) as running:
        yield running


class FirstTab:
    """The tab whose turn runs: a raw stream read in a thread, its times kept."""

    def __init__(self, url: str, chat_id: str) -> None:
        self.started = threading.Event()
        self.ended = 0.0
        self.body = ""
        self._thread = threading.Thread(target=self._read, args=(url, chat_id), daemon=True)
        self._thread.start()
        assert self.started.wait(30)

    def _read(self, url: str, chat_id: str) -> None:
        body = chat_body(chat_id, user_message(LONG, "u-long"))
        with httpx.stream("POST", url, json=body, timeout=60) as response:
            for text in response.iter_text():
                self.body += text
                self.started.set()
        self.ended = time.monotonic()

    def join(self) -> list[Any]:
        self._thread.join(60)
        return parse_sse(self.body)


def second_tab(ai: str, url: str) -> tuple[FirstTab, dict[str, Any], dict[str, Any]]:
    chat_id = f"busy-{ai}"
    first = FirstTab(url, chat_id)
    report = run_chat(ai, url, [{"action": "send", "text": "hello"}], chat_id=chat_id)
    first.join()
    history = httpx.get(f"{url}/{chat_id}", timeout=10).json()
    return first, report, history


def raw_tab(url: str) -> tuple[FirstTab, str, float]:
    """The second tab read raw: its first line and when it came."""
    first = FirstTab(url, "busy-raw")
    body = chat_body("busy-raw", user_message("hello", "u-hello"))
    with httpx.stream("POST", url, json=body, timeout=60) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        notice = next(line for line in lines if line)
        told = time.monotonic()
        rest = "\n".join(lines)
    first.join()
    return first, notice + "\n" + rest, told


def refused_tab(url: str) -> tuple[FirstTab, list[Any]]:
    """A second tab's request refused once its turn could start: an answer to a call
    nobody made (409 ``unknown_tool_call`` on a free chat)."""
    first = FirstTab(url, "busy-refused")
    answer = {
        "id": "a-9",
        "role": "assistant",
        "parts": [
            {
                "type": "tool-foo",
                "toolCallId": "c-9",
                "state": "output-available",
                "input": {},
                "output": {"a": 1},
            }
        ],
    }
    body = chat_body("busy-refused", user_message("hello", "u-hello"), answer)
    response = httpx.post(url, json=body, timeout=60)
    assert response.status_code == 200
    first.join()
    return first, parse_sse(response.text)


@pytest.fixture(scope="module")
def tabs(server: LoopbackServer) -> dict[str, Any]:
    """Every case at once (each on its own chat): the cost is one first turn."""
    with ThreadPoolExecutor(len(VERSIONS) + 2) as pool:
        done = {ai: pool.submit(second_tab, ai, server.url) for ai in VERSIONS}
        done["raw"] = pool.submit(raw_tab, server.url)
        done["refused"] = pool.submit(refused_tab, server.url)
        return {ai: future.result() for ai, future in done.items()}


@pytest.mark.parametrize("ai", VERSIONS)
def test_the_waiting_tab_is_told_then_answered(ai: str, tabs: dict[str, Any]) -> None:
    first, report, history = tabs[ai]
    assert report["ok"], report["problems"]
    (request,) = report["requests"]
    chunks = request["chunks"]
    assert chunks[0] == {"type": "data-queued", "data": {"reason": "chat-busy"}, "transient": True}
    assert [c["type"] for c in chunks[1:3]] == ["start", "start-step"]
    assert chunks[-1]["type"] == "finish" and request["sawDone"]
    # The first tab's turn ran whole, then the second's: both in the history, in order.
    assert parse_sse(first.body)[-1] == "[DONE]"
    messages = history["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1]["id"] == parse_sse(first.body)[0]["messageId"]
    shown = report["messages"][-1]
    assert shown["role"] == "assistant" and messages[-1] == shown
    assert not [p for p in shown["parts"] if p["type"] == "data-queued"]  # transient


def test_the_notice_comes_before_the_first_turn_ends(tabs: dict[str, Any]) -> None:
    first, body, told = tabs["raw"]
    notice, rest = body.split("\n", 1)
    assert notice == 'data: {"type":"data-queued","data":{"reason":"chat-busy"},"transient":true}'
    assert told < first.ended, "told only once the first turn had ended"
    assert rest.rstrip().endswith("data: [DONE]")


def test_a_refusal_once_its_turn_could_start_ends_its_stream(tabs: dict[str, Any]) -> None:
    """Its response started with the notice: the 409 is its ``error`` chunk, code included."""
    first, chunks = tabs["refused"]
    assert chunks == [
        {"type": "data-queued", "data": {"reason": "chat-busy"}, "transient": True},
        {
            "type": "error",
            "errorText": "No call 'c-9' is waiting for an answer. (unknown_tool_call)",
        },
        "[DONE]",
    ]
    assert parse_sse(first.body)[-1] == "[DONE]"
