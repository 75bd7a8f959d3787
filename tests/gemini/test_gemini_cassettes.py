"""Record once, replay forever, on ADK's real ``Gemini`` class: a conversation with a
tool call and an approval, over SSE (ai@7's ``DefaultChatTransport``) and in live mode
(ai@7's ``WebSocketChatTransport`` on the Live API), recorded through a recording
emulator whose upstream is a second emulator standing in for Google (it accepts only the
"real" key), then replayed with that upstream stopped: the replay gives the same chunks
as the recording run, and the cassette holds the tool call and the approved order but
never the real key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from agents.stocks.agent import build_agent

from adk_asgi import AdkApp, LiveOptions
from adk_asgi.testing.gemini import GeminiEmulator, Upstream

from .live_helpers import drive_ws
from support import LoopbackServer
from support.aisdk_client import require_node_harness, run_chat

pytestmark = pytest.mark.node

REAL_KEY: Final = "AIza-real-key-never-in-a-cassette-0123456789"
TEXT_MODEL: Final = "gemini-2.5-flash"
LIVE_MODEL: Final = "gemini-live-2.5-flash-preview"
STEPS: Final = [
    {"action": "send", "text": "Quote: get_stock_price symbol=GOOG"},
    {"action": "send", "text": "Buy: place_order symbol=GOOG quantity=3"},
    {"action": "approve", "approved": True},
    {"action": "send", "text": "thanks"},
]
# Ids each run makes anew (message, tool call, approval and request ids, ADK's "adk-<uuid>").
_IDS: Final = ("messageId", "toolCallId", "approvalId", "id", "requestId")


def normalized(value: Any, names: dict[str, str] | None = None) -> Any:
    """``value`` with every run-specific id replaced by its order of appearance."""
    names = {} if names is None else names
    if isinstance(value, dict):
        return {
            k: (
                names.setdefault(v, f"<id{len(names)}>")
                if k in _IDS and isinstance(v, str)
                else normalized(v, names)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalized(v, names) for v in value]
    if isinstance(value, str):
        return re.sub(
            r"adk-[0-9a-f-]{36}", lambda m: names.setdefault(m[0], f"<id{len(names)}>"), value
        )
    return value


def converse(model: Any) -> dict[str, Any]:
    """The conversation over SSE and live against an app on ``model``: what each client
    received."""
    app = AdkApp(build_agent(model), live_options=LiveOptions(model=LIVE_MODEL), warm_up=False)
    with LoopbackServer(app) as server:
        sse = run_chat(
            "ai7", server.url, STEPS, chat_id="cassette-sse", auto_send="approvals", timeout=60
        )
        live = drive_ws(
            server.url.replace("http://", "ws://") + "/",
            STEPS,
            chat_id="cassette-live",
            auto="approvals",
            timeout_ms=60_000,
        )
    assert sse["ok"], (sse["error"], sse["problems"])
    return {
        "sse": [request["chunks"] for request in sse["requests"]],
        "sse_messages": sse["messages"],
        "live": live["frames"],
        "live_messages": live["messages"],
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    require_node_harness()
    cassette = tmp_path_factory.mktemp("cassettes") / "stocks.jsonl"
    with GeminiEmulator(api_key=REAL_KEY, tokens_per_chunk=8) as google:
        upstream = Upstream(google.base_url, api_key=REAL_KEY, ssl_context=google.ssl_context())
        with GeminiEmulator(record=cassette, upstream=upstream) as recorder:
            seen = converse(recorder.gemini(TEXT_MODEL))
        # The stand-in for Google got the real key, never the client's.
        assert google.journal.records("streamGenerateContent")
        assert not google.journal.records("close")  # no connection refused (a bad key)
    yield cassette, seen


def test_the_recording_ran_through_the_upstream(recorded: tuple[Path, dict[str, Any]]) -> None:
    cassette, seen = recorded
    text = cassette.read_text()
    assert REAL_KEY not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["cassette"] == "adk-asgi-gemini"
    kinds = [line.get("type") for line in lines[1:]]
    assert "http" in kinds and "live" in kinds
    # The tool call and the approved order are inside: the model's call of place_order and
    # the function response ADK sent once the user approved it.
    assert '"place_order"' in text and '"status":"placed"' in text
    for name in ("sse_messages", "live_messages"):
        quote, order, thanks = [m for m in seen[name] if m["role"] == "assistant"]
        parts = {p["type"]: p for p in order["parts"]}
        assert parts["tool-place_order"]["state"] == "output-available", name
        assert "get_stock_price returned" in json.dumps(quote), name
        assert "You said" in json.dumps(thanks), name


def test_a_replay_gives_the_same_chunks_with_the_upstream_stopped(
    recorded: tuple[Path, dict[str, Any]],
) -> None:
    cassette, seen = recorded
    with GeminiEmulator(replay=cassette) as replayer:
        again = converse(replayer.gemini(TEXT_MODEL))
        assert replayer.replay_misses == []
    assert normalized(again["sse"]) == normalized(seen["sse"])
    assert normalized(again["live"]) == normalized(seen["live"])
    assert len(again["sse"]) == 4  # quote, order (approval asked), approval, thanks
