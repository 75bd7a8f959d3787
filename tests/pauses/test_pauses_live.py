"""ADK's pauses in live mode (``run_live``, through the live gate): a tool's credential
request and ADK's ``request_input`` tool, over protocol A (``tool_result`` frames) and
protocol B (ai@7's ``WebSocketChatTransport``, in Node); an OAuth2 sign-in whose callback
reaches the process holding the socket. ADK's live flow never emits
``adk_request_credential`` itself: without the gate the model would get the tool's
"pending" placeholder forever.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from agents.accounts.agent import build_app as build_accounts

from adk_asgi import AdkApp

from support import LoopbackServer
from support.aisdk_client import NodeHarnessMissing, require_node_harness, run_ws_chat
from support.provider_server import NOTES_TOKEN, WEATHER_KEY, Provider
from support.ws_client import DONE, LiveClient, dicts, ws_url


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[str, Provider, str]]:
    provider = Provider()
    with (
        LoopbackServer(provider.app) as service,
        LoopbackServer(AdkApp(adk_app=build_accounts(service.url), warm_up=False)) as srv,
    ):
        provider.client.redirect_uris.append(f"{srv.url}/oauth2/callback")
        yield srv.url, provider, service.url


async def _asked(client: LiveClient, tool: str) -> dict[str, Any]:
    """The turn's chunks up to the client call ``tool`` (the page's question)."""
    while True:
        chunk = await client.next(20)
        assert chunk != DONE, f"the turn ended before {tool} was asked"
        if chunk["type"] == "tool-input-available" and chunk["toolName"] == tool:
            assert "providerExecuted" not in chunk
            return dict(chunk)


async def test_protocol_a_api_key_sign_in_and_input(servers: tuple[str, Provider, str]) -> None:
    url, provider, service = servers
    client = await LiveClient.open(ws_url(url, "chatId=live-a"))
    try:
        await client.say("weather in Lisbon")
        asked = await _asked(client, "adk_request_credential")
        assert asked["input"]["scheme"] == "apiKey"
        await client.send(
            "tool_result",
            toolCallId=asked["toolCallId"],
            result={"apiKey": WEATHER_KEY, "extra": WEATHER_KEY},
        )
        refused = await client.next(10)  # nothing ran: the call still waits
        assert refused["type"] == "error" and WEATHER_KEY not in json.dumps(refused)
        await client.send(
            "tool_result", toolCallId=asked["toolCallId"], result={"apiKey": WEATHER_KEY}
        )
        rest = dicts(await client.turn(20))
        assert {
            "type": "tool-output-available",
            "toolCallId": asked["toolCallId"],
            "output": {"status": "provided"},
        } in rest
        weather = next(
            c
            for c in rest
            if c["type"] == "tool-output-available"
            and c["toolCallId"] == asked["input"]["functionCallId"]
        )
        assert weather["output"] == {"city": "Lisbon", "forecast": "sunny, 24°C"}
        assert WEATHER_KEY not in json.dumps(rest)

        await client.say("show my repos")
        asked = await _asked(client, "adk_request_credential")
        auth_uri = asked["input"]["authUri"]
        query = {k: v[0] for k, v in parse_qs(urlsplit(auth_uri).query).items()}
        assert query["redirect_uri"] == f"{url}/oauth2/callback"
        async with httpx.AsyncClient() as http:
            allowed = await http.post(
                f"{service}/authorize", params=query, data={**query, "decision": "allow"}
            )
            callback = await http.get(allowed.headers["location"])
        assert callback.status_code == 200 and b'"ok":true' in callback.content
        rest = dicts(await client.turn(20))
        assert {
            "type": "tool-output-available",
            "toolCallId": asked["toolCallId"],
            "output": {"status": "connected"},
        } in rest
        repos = next(
            c
            for c in rest
            if c["type"] == "tool-output-available"
            and c["toolCallId"] == asked["input"]["functionCallId"]
        )
        assert repos["output"]["owner"] == "alice"
        for token in provider.access_tokens + provider.refresh_tokens:
            assert token not in json.dumps(rest)

        await client.say("ask me")
        asked = await _asked(client, "adk_request_input")
        assert asked["input"] == {
            "message": "How many nights?",
            "payload": None,
            "responseSchema": {"type": "integer", "minimum": 1, "maximum": 14},
        }
        await client.send("tool_result", toolCallId=asked["toolCallId"], result=40)
        refused = await client.next(10)
        assert refused["type"] == "error" and "must be <= 14" in refused["errorText"]
        await client.send("tool_result", toolCallId=asked["toolCallId"], result=3)
        rest = dicts(await client.turn(20))
        assert {
            "type": "tool-output-available",
            "toolCallId": asked["toolCallId"],
            "output": 3,
        } in rest
        assert "Booked 3 nights." in "".join(c.get("delta", "") for c in rest)
    finally:
        await client.close()


def test_protocol_b_with_ai7(servers: tuple[str, Provider, str]) -> None:
    try:
        require_node_harness()
    except NodeHarnessMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    url, provider, _ = servers
    steps = [
        {"action": "send", "text": "my notes"},
        {
            "action": "toolOutput",
            "tool": "adk_request_credential",
            "output": {"token": NOTES_TOKEN},
        },
        {"action": "sendEmpty"},
        {"action": "send", "text": "ask me"},
        {"action": "toolOutput", "tool": "adk_request_input", "output": 2},
        {"action": "sendEmpty"},
    ]
    report = run_ws_chat(
        url.replace("http://", "ws://") + "/",
        steps,
        chat_id="live-b",
        api=url,
        node_timeout_ms=40000,
        timeout=90,
    )
    assert report["ok"], (report["problems"], report["chatErrors"])
    assert report["invalid"] == [] and report["nullPaths"] == []
    messages = [m for m in report["messages"] if m["role"] == "assistant"]
    notes = [p for p in messages[0]["parts"] if p["type"] == "tool-list_notes"]
    assert notes[-1]["state"] == "output-available"
    assert notes[-1]["output"] == {"notes": ["Pack sunscreen", "Book the tram tour"]}
    credential = [p for p in messages[0]["parts"] if p["type"] == "tool-adk_request_credential"]
    assert credential[0]["output"] == {"status": "provided"}  # the page's copy is replaced
    assert NOTES_TOKEN not in json.dumps(report["frames"])
    text = "".join(p.get("text", "") for p in messages[1]["parts"] if p["type"] == "text")
    assert "Booked 2 nights." in text
    assert ("notes", NOTES_TOKEN) in provider.state.seen


async def test_a_workflows_own_pause_ends_a_live_turn_with_an_error() -> None:
    """ADK's run_live runs a workflow once and ends it at its first interrupt, with no way
    to resume it: the page gets a clear error, not a question it could never answer."""
    from agents.trips.agent import app as trips

    with LoopbackServer(AdkApp(adk_app=trips, warm_up=False)) as server:
        client = await LiveClient.open(ws_url(server.url, "chatId=wf-live"))
        try:
            await client.say("plan a trip")
            chunks = [await client.next(20) for _ in range(3)]
        finally:
            await client.close()
    assert [c["type"] for c in chunks] == ["start", "start-step", "error"]
    assert chunks[-1]["errorText"].endswith("(workflow_pause_in_live_mode)")
