"""docs/human-in-the-loop.md's curl examples, posted as they are written: each answer body
(a workflow confirmation, a request for input, a credential) resumes a real paused run. The
id ADK makes up at random for a credential request and the API key are put in for the
example's stand-ins. (The tool confirmation's shell example is run by
tests/docs/test_docs_examples.py.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from agents.accounts.agent import build_app as build_accounts
from agents.trips.agent import app as trips_app

from adk_asgi import AdkApp

from support import ROOT, LoopbackServer, parse_sse
from support.provider_server import WEATHER_KEY, Provider

PAGE = ROOT / "docs" / "human-in-the-loop.md"
CURL = re.compile(
    r"```bash\ncurl -N localhost:8000/api/chat -H 'content-type: "
    r"application/json' -d '(.*?)'\n```",
    re.S,
)


def bodies() -> list[dict[str, Any]]:
    found = [json.loads(body) for body in CURL.findall(PAGE.read_text())]
    assert len(found) == 3, "one curl example per kind of pause besides tool confirmations"
    return found


def by_tool(tool: str) -> dict[str, Any]:
    return next(b for b in bodies() if b["message"]["parts"][0]["type"] == f"tool-{tool}")


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    provider = Provider()
    with (
        LoopbackServer(provider.app) as service,
        LoopbackServer(AdkApp(adk_app=trips_app, warm_up=False)) as trips,
        LoopbackServer(AdkApp(adk_app=build_accounts(service.url), warm_up=False)) as accounts,
    ):
        yield {"trips": trips.url, "accounts": accounts.url}


async def start(client: httpx.AsyncClient, url: str, chat: str, text: str) -> list[dict[str, Any]]:
    response = await client.post(
        f"{url}/",
        json={
            "id": chat,
            "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}],
        },
    )
    chunks: list[dict[str, Any]] = parse_sse(response.text)[:-1]
    assert chunks[-1]["finishReason"] == "tool-calls"
    return chunks


async def documented(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], replace: dict[str, str]
) -> list[dict[str, Any]]:
    text = json.dumps(body)
    for stand_in, real in replace.items():
        assert stand_in in text
        text = text.replace(stand_in, real)
    response = await client.post(
        f"{url}/", content=text, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200, response.text
    chunks: list[dict[str, Any]] = parse_sse(response.text)[:-1]
    return chunks


async def test_every_documented_answer_resumes_its_pause(servers: dict[str, str]) -> None:
    async with httpx.AsyncClient(timeout=30) as client:
        # A request for input, then the workflow's confirmation.
        await start(client, servers["trips"], "trip-1", "plan a trip")
        done = await documented(client, servers["trips"], by_tool("adk_request_input"), {})
        assert any(c["type"] == "tool-approval-request" for c in done)
        done = await documented(client, servers["trips"], by_tool("book_hotel"), {})
        booked = next(
            c for c in done if c.get("toolCallId") == "wf_tool:trip_planner@1/book_hotel@1"
        )
        assert booked["type"] == "tool-output-available" and booked["output"]["hotel"]

        # An API key.
        asked = await start(client, servers["accounts"], "weather-1", "weather in Lisbon")
        call = next(
            c
            for c in asked
            if c.get("toolName") == "adk_request_credential" and c["type"] == "tool-input-available"
        )
        done = await documented(
            client,
            servers["accounts"],
            by_tool("adk_request_credential"),
            {"adk-5f0c2d9e-credential": call["toolCallId"], "wk-live-...": WEATHER_KEY},
        )
        weather = next(c for c in done if c.get("toolCallId") == call["input"]["functionCallId"])
        assert weather["output"]["forecast"] == "sunny, 24°C"
