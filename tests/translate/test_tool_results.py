"""Tool results, state values and data parts that are not plain JSON
(tests/agents/results): a pydantic model, a dataclass, a datetime, bytes, a set, an enum,
ADK's own ``load_memory`` (a pydantic ``LoadMemoryResponse``), and an object with no JSON
form. Each reaches the client converted as ADK converts function responses; the last one
ends its call as ``tool-output-error`` with the generic text and one log line, and the turn
goes on. A datetime in the state (``data-state``) and a dataclass in an ``on_event`` part
are converted too.

One conversation per client: ai 5, 6 and 7 over SSE, ai 7 over protocol B, protocol A
(assembled as the AI SDK would: ``ws_client.assemble``); then one test per type, for each.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Iterator
from typing import Any, Final

import pytest
from agents.results import agent as results
from google.adk.events import Event

from adk_asgi import AdkApp, EventParts, SurfaceOptions

from support import LoopbackServer
from support.aisdk_client import run_chat_versions, run_ws_chat
from support.logs import kept_records
from support.ws_client import LiveClient, assemble, ws_url

pytestmark = pytest.mark.node

ASKED: Final = ("quote", "shipment", "time", "thumbnail", "tags", "status", "remember", "handle")
TRANSPORTS: Final = ("ai5", "ai6", "ai7", "protocol-b", "protocol-a")
CHECKED_AT: Final = "2031-05-06T07:08:09Z"
SHIPMENT: Final = {
    "id": "S-1",
    "items": ["box", "tape"],
    "shipped_on": "2031-05-06",
    "status": "shipped",
}


def on_event(event: Event, parts: EventParts) -> None:
    """The application shows the shipment as a data part of its own (a dataclass)."""
    for response in event.get_function_responses():
        if response.name == "get_shipment":
            parts.data("shipment", results.get_shipment(), id=response.id)


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    chat = AdkApp(
        agent=results.build_root_agent(),
        app_name=results.APP_NAME,
        memory_service=asyncio.run(results.remembered()),
        surface=SurfaceOptions(state_keys=["checked_at"], on_event=on_event),
        warm_up=False,
    )
    with LoopbackServer(chat) as running:
        yield running


@pytest.fixture(scope="module")
def logged() -> Iterator[list[logging.LogRecord]]:
    with kept_records(logging.ERROR) as records:
        yield records


@pytest.fixture(scope="module")
def messages(
    server: LoopbackServer, logged: list[logging.LogRecord]
) -> dict[str, list[dict[str, Any]]]:
    """Every transport's assistant messages, one per question in ``ASKED``."""
    steps = [{"action": "send", "text": f"the {word} please"} for word in ASKED]
    chats: dict[str, list[dict[str, Any]]] = {}
    for version, report in run_chat_versions(
        server.url, steps, versions=TRANSPORTS[:3], chat_id="results", timeout=90
    ).items():
        assert not any(r["invalid"] for r in report["requests"]), report["problems"]
        assert [r["status"] for r in report["stepResults"]] == ["ready"] * len(ASKED), report[
            "problems"
        ]
        chats[version] = report["messages"]
    report = run_ws_chat(ws_url(server.url), steps, chat_id="results-b")
    assert report["invalid"] == [] and report["nullPaths"] == [], report["problems"]
    assert [r["status"] for r in report["stepResults"]] == ["ready"] * len(ASKED)
    chats["protocol-b"] = report["messages"]

    async def protocol_a() -> list[dict[str, Any]]:
        client = await LiveClient.open(ws_url(server.url, "chatId=results-a"))
        try:
            said = []
            for word in ASKED:
                await client.say(f"the {word} please")
                turn = await client.turn(wait=30)
                assert turn[-2]["type"] == "finish", turn
                said.append(assemble(turn))
            return said
        finally:
            await client.close()

    chats["protocol-a"] = asyncio.run(protocol_a())
    return {name: [m for m in chat if m["role"] == "assistant"] for name, chat in chats.items()}


def answer(messages: dict[str, list[dict[str, Any]]], transport: str, word: str) -> dict[str, Any]:
    message = messages[transport][ASKED.index(word)]
    kinds = [p["type"] for p in message["parts"]]
    assert kinds[:2] == ["step-start", f"tool-{results._TOOLS[word]}"], kinds
    assert "text" in kinds and kinds.count("step-start") == 2, kinds  # the model went on
    return message


def output(message: dict[str, Any]) -> Any:
    tool = message["parts"][1]
    assert tool["state"] == "output-available", tool
    return tool["output"]["result"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_pydantic_model(messages: dict[str, list[dict[str, Any]]], transport: str) -> None:
    assert output(answer(messages, transport, "quote")) == {
        "item": "archive box",
        "total": "12.50",
        "valid_until": CHECKED_AT,
        "status": "shipped",
        "tags": ["fragile"],
    }


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_dataclass_also_in_an_on_event_part(
    messages: dict[str, list[dict[str, Any]]], transport: str
) -> None:
    message = answer(messages, transport, "shipment")
    assert output(message) == SHIPMENT
    assert [p["data"] for p in message["parts"] if p["type"] == "data-shipment"] == [SHIPMENT]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_datetime_also_in_the_state(
    messages: dict[str, list[dict[str, Any]]], transport: str
) -> None:
    message = answer(messages, transport, "time")
    assert output(message) == CHECKED_AT
    assert [p["data"] for p in message["parts"] if p["type"] == "data-state"] == [
        {"checked_at": CHECKED_AT}
    ]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_bytes_in_base64(messages: dict[str, list[dict[str, Any]]], transport: str) -> None:
    encoded = output(answer(messages, transport, "thumbnail"))
    assert base64.b64decode(encoded) == results.THUMBNAIL


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_set(messages: dict[str, list[dict[str, Any]]], transport: str) -> None:
    assert sorted(output(answer(messages, transport, "tags"))) == ["archive", "paper"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_enum(messages: dict[str, list[dict[str, Any]]], transport: str) -> None:
    assert output(answer(messages, transport, "status")) == "shipped"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_load_memory(messages: dict[str, list[dict[str, Any]]], transport: str) -> None:
    [memory] = output(answer(messages, transport, "remember"))["memories"]
    assert memory["content"] == {"parts": [{"text": results.MEMORY}], "role": "user"}
    assert memory["author"] == "user" and memory["id"] == "m1"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_no_json_form_is_a_tool_error_not_a_dead_turn(
    messages: dict[str, list[dict[str, Any]]], logged: list[logging.LogRecord], transport: str
) -> None:
    message = answer(messages, transport, "handle")
    tool = message["parts"][1]
    assert (tool["state"], tool["errorText"]) == ("output-error", "The tool failed.")
    assert message["parts"][-1]["text"].startswith("Noted. get_handle returned")
    lines = [r for r in logged if "cannot be sent" in r.getMessage()]
    assert len(lines) == len(TRANSPORTS)  # one per turn that met it
    assert all(r.exc_info is None for r in lines)
