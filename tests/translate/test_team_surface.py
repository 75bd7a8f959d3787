"""What the team app's messages carry besides ADK's content: the agent of each step (message
metadata, and ``data-agent`` parts on request), session state (``data-state``, by key), the
application's ``on_event`` parts and metadata, and request body fields in the session state
— over SSE and live protocol B."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from agents.team.agent import build_app
from google.adk.events import Event

from adk_asgi import AdkApp, EventParts, SurfaceOptions

from support import LoopbackServer, parse_sse
from support.ws_client import DONE, LiveClient, ws_url


def user(text: str, n: int = 0) -> dict[str, Any]:
    return {"id": f"u{n}", "role": "user", "parts": [{"type": "text", "text": text}]}


def audit(event: Event, parts: EventParts) -> None:
    """The application's hook: a data part for every tool result, metadata once."""
    for response in event.get_function_responses():
        parts.data("audit", {"tool": response.name, "by": event.author}, id=response.id)
    if event.author == "billing" and event.is_final_response():
        parts.metadata({"handledBy": "billing"})


def surfaced_app() -> AdkApp:
    return AdkApp(
        adk_app=build_app(),
        surface=SurfaceOptions(
            agent_names=True, state_keys=["fact", "billing_note"], on_event=audit
        ),
        body_fields={"locale": str, "units": int},
        warm_up=False,
    )


async def post(client: httpx.AsyncClient, chat_id: str, text: str, **body: Any) -> list[Any]:
    response = await client.post("/", json={"id": chat_id, "messages": [user(text)], **body})
    assert response.status_code == 200, response.text
    return [c for c in parse_sse(response.text) if c != DONE]


async def send_b(
    client: LiveClient, chat_id: str, text: str, request_id: str, **body: Any
) -> list[Any]:
    await client.ws.send(
        json.dumps(
            {
                "type": "send",
                "requestId": request_id,
                "id": chat_id,
                "messages": [user(text)],
                **({"body": body} if body else {}),
            }
        )
    )
    chunks: list[Any] = []
    while True:
        frame = json.loads(await client.ws.recv(decode=True))
        if frame["type"] == "end":
            return chunks
        assert frame["type"] == "chunk", frame
        chunks.append(frame["chunk"])


def of_type(chunks: list[Any], kind: str) -> list[dict[str, Any]]:
    return [c for c in chunks if c["type"] == kind]


async def test_step_authors_are_message_metadata_by_default() -> None:
    app = AdkApp(adk_app=build_app(), warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        chunks = await post(client, "authors", "billing please")
    [finish] = of_type(chunks, "finish")
    assert finish["messageMetadata"]["adk"] == {
        "author": "concierge",
        "authors": {"0": "concierge", "1": "billing", "2": "concierge"},
    }
    assert not of_type(chunks, "data-agent") and not of_type(chunks, "data-state")
    quiet = AdkApp(adk_app=build_app(), surface=SurfaceOptions(step_authors=False), warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=quiet), base_url="http://t"
    ) as client:
        chunks = await post(client, "quiet", "billing please")
    assert "adk" not in of_type(chunks, "finish")[0]["messageMetadata"]


@pytest.fixture(scope="module")
def server() -> AsyncIterator[LoopbackServer]:
    with LoopbackServer(surfaced_app()) as running:
        yield running


async def test_agent_names_state_and_the_hook_over_sse_and_live(server: LoopbackServer) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        sse = [
            await post(client, "surfaced", "remember blue"),
            await post(client, "surfaced", "open a ticket please"),
        ]
    live = await LiveClient.open(ws_url(server.url, "chatId=surfaced-live"))
    try:
        ws = [
            await send_b(live, "surfaced-live", "remember blue", "r1"),
            await send_b(live, "surfaced-live", "open a ticket please", "r2"),
        ]
    finally:
        await live.close()
    for remembered, transferred in (sse, ws):
        # data-state: the allowed keys this message changed (one part per message).
        assert of_type(remembered, "data-state")[-1]["data"] == {"fact": "blue"}
        # the hook's parts and metadata
        [audited] = of_type(remembered, "data-audit")
        assert audited["data"] == {"tool": "remember", "by": "concierge"}
        # data-agent parts where the agent changes, right after the step's start
        names = of_type(transferred, "data-agent")
        assert [n["data"]["name"] for n in names] == ["concierge", "billing"]
        kinds = [c["type"] for c in transferred]
        assert [kinds[i - 1] for i, kind in enumerate(kinds) if kind == "data-agent"] == [
            "start-step",
            "start-step",
        ]
        assert {"handledBy": "billing"} in [
            m["messageMetadata"] for m in of_type(transferred, "message-metadata")
        ]
        note = of_type(transferred, "data-state")
        assert note and set(note[-1]["data"]) == {"billing_note"}


async def test_a_failing_hook_is_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    def broken(event: Event, parts: EventParts) -> None:
        parts.data("bad name!", 1)

    app = AdkApp(adk_app=build_app(), surface=SurfaceOptions(on_event=broken), warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        chunks = await post(client, "hook", "hello")
    said = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert chunks[-1]["type"] == "finish" and said == "You said: hello"
    assert any(
        r.levelno == logging.ERROR and "on_event raised" in r.getMessage() for r in caplog.records
    )


async def test_body_fields_reach_the_session_state(server: LoopbackServer) -> None:
    app = server.config.app
    assert isinstance(app, AdkApp)
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        recalled = await post(client, "body", "recall please", locale="ja", units=2, ignored="x")
        refused = await client.post(
            "/", json={"id": "body", "messages": [user("hi")], "units": "two"}
        )
    live = await LiveClient.open(ws_url(server.url, "chatId=body-live"))
    try:
        live_recalled = await send_b(live, "body-live", "recall please", "r1", locale="fr")
    finally:
        await live.close()
    said = "".join(c["delta"] for c in recalled if c["type"] == "text-delta")
    assert '"locale": "ja"' in said and '"units": 2' in said and "ignored" not in said
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "invalid_body_field")
    live_said = "".join(c["delta"] for c in live_recalled if c["type"] == "text-delta")
    assert '"locale": "fr"' in live_said


def test_body_fields_cannot_read_the_requests_own_fields() -> None:
    with pytest.raises(ValueError, match="own fields: messages"):
        AdkApp(adk_app=build_app(), body_fields={"messages": str})
    with pytest.raises(ValueError, match="plain identifiers"):
        AdkApp(adk_app=build_app(), body_fields={"user:plan": str})


async def test_a_continuation_numbers_its_steps_after_the_messages_own() -> None:
    app = AdkApp(adk_app=build_app(), warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        asked = await post(client, "steps", "refund 20 please")
        request = of_type(asked, "tool-approval-request")[0]
        steps = [{"type": "step-start"}] * len(of_type(asked, "start-step"))
        message = {
            "id": asked[0]["messageId"],
            "role": "assistant",
            "parts": [
                *steps,
                {
                    "type": "tool-refund",
                    "toolCallId": request["toolCallId"],
                    "state": "approval-responded",
                    "input": {"amount": 20},
                    "approval": {"id": request["approvalId"], "approved": True},
                },
            ],
        }
        response = await client.post(
            "/", json={"id": "steps", "messages": [user("refund 20 please"), message]}
        )
        after = [c for c in parse_sse(response.text) if c != DONE]
    assert of_type(asked, "finish")[0]["messageMetadata"]["adk"]["authors"] == {
        "0": "concierge",
        "1": "billing",
    }
    assert of_type(after, "finish")[0]["messageMetadata"]["adk"] == {
        "author": "billing",
        "authors": {"2": "billing"},
    }
