"""Every ADK pause answered by the real AI SDK client (ai 5, 6 and 7 in Node, tests/js),
with the SDK's own addToolOutput / addToolApprovalResponse and resumeStream:

- a ``Workflow`` node asking for input with a pydantic ``response_schema`` (answered; a
  wrong answer is refused with 422), then a workflow tool node with
  ``require_confirmation=True`` (approved with a payload, denied with a reason; the
  ``adk-tool`` style for ai 5, which has no approvals);
- an API-key tool and an OAuth2 tool (the provider's consent answered, adk-asgi's callback
  continues the turn, the page follows it with resumeStream);
- a reload during each pause: the replay shows the pause again, answerable.

Each client validates every chunk with its own schema (``report["ok"]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from agents.accounts.agent import build_app as build_accounts
from agents.trips.agent import BOOKINGS
from agents.trips.agent import app as trips_app
from starlette.applications import Starlette

from adk_asgi import AdkApp, PauseOptions, mount
from adk_asgi.stores import MemoryStreamStore, StreamRecorder
from adk_asgi.transport.auth import AuthError

from support import LoopbackServer
from support.aisdk_client import NodeHarnessMissing, require_node_harness, run_chat
from support.provider_server import WEATHER_KEY, Provider

pytestmark = pytest.mark.node


@pytest.fixture(scope="module")
def provider() -> Iterator[tuple[Provider, str]]:
    provider = Provider()
    with LoopbackServer(provider.app) as server:
        yield provider, server.url


class RecordingStore(MemoryStreamStore):
    """The memory stream store, keeping a copy of every byte any stream recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.recorded: list[bytes] = []

    async def record(self, chat_id: str) -> StreamRecorder:
        recorder = await super().record(chat_id)
        append = recorder.append

        def copy(blob: bytes) -> None:
            self.recorded.append(blob)
            append(blob)

        recorder.append = copy  # type: ignore[method-assign]
        return recorder


STORE = RecordingStore()


@pytest.fixture(scope="module")
def api(provider: tuple[Provider, str]) -> Iterator[str]:
    try:
        require_node_harness()
    except NodeHarnessMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    service, provider_url = provider
    site = Starlette()
    mount(site, "/trips", AdkApp(adk_app=trips_app, warm_up=False))
    mount(
        site,
        "/trips-adk",
        AdkApp(
            adk_app=trips_app, warm_up=False, pauses=PauseOptions(confirmation_style="adk-tool")
        ),
    )
    mount(
        site,
        "/accounts",
        AdkApp(
            adk_app=build_accounts(provider_url),
            warm_up=False,
            authenticate=header_user,
            stream_store=STORE,
        ),
    )
    with LoopbackServer(site) as server:
        service.client.redirect_uris.append(f"{server.url}/accounts/oauth2/callback")
        yield server.url


def header_user(scope: Any) -> str:
    """Each conversation is its own user: ADK keeps a credential per user (and app), so a
    user who gave it once is not asked again."""
    for name, value in scope.get("headers") or ():
        if name == b"x-user":
            return str(value.decode())
    raise AuthError(401, "Who are you?")


def _runs(jobs: dict[str, tuple[str, str, list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    """Run conversations in parallel: name -> (ai, api, steps); each its own chat and user."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            name: pool.submit(
                run_chat,
                ai,
                api,
                steps,
                chat_id=f"{name}-{ai}",
                headers={"x-user": name},
                timeout=90,
            )
            for name, (ai, api, steps) in jobs.items()
        }
        return {name: future.result() for name, future in futures.items()}


def _chunks(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for r in report["requests"] for c in r["chunks"]]


def _parts(report: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    message = report["messages"][-1]
    assert message["role"] == "assistant"
    return [p for p in message["parts"] if p.get("type") == f"tool-{tool}"]


def _ok(report: dict[str, Any], name: str) -> None:
    assert report["ok"], (name, report["error"], report["problems"], report["chatErrors"])
    for request in report["requests"]:
        assert request["invalid"] == [], (name, request["invalid"])
        assert request["status"] in (200, 204), (name, request["status"], request["bodyText"])


BUDGET = {"amount": 600, "currency": "EUR", "travellers": [{"name": "Ana", "age": 34}]}


def test_workflow_input_and_confirmation(api: str) -> None:
    BOOKINGS.clear()
    approve = [
        {"action": "send", "text": "plan a trip to Lisbon"},
        {"action": "reload"},  # the question comes back
        {"action": "toolOutput", "tool": "adk_request_input", "output": BUDGET},
        {"action": "sendEmpty"},
        {"action": "reload"},  # the approval comes back
        {"action": "approve", "approved": True, "payload": {"note": "late arrival"}},
        {"action": "sendEmpty"},
    ]
    deny = [
        {"action": "send", "text": "plan a trip to Lisbon"},
        {"action": "toolOutput", "tool": "adk_request_input", "output": BUDGET},
        {"action": "sendEmpty"},
        {"action": "approve", "approved": False, "reason": "too pricey"},
        {"action": "sendEmpty"},
    ]
    adk_tool = [
        {"action": "send", "text": "plan a trip to Lisbon"},
        {"action": "toolOutput", "tool": "adk_request_input", "output": {"amount": 300}},
        {"action": "sendEmpty"},
        {"action": "reload"},
        {"action": "toolOutput", "tool": "adk_request_confirmation", "output": {"confirmed": True}},
        {"action": "sendEmpty"},
    ]
    wrong = [
        {"action": "send", "text": "plan a trip to Lisbon"},
        {
            "action": "toolOutput",
            "tool": "adk_request_input",
            "output": {"amount": "lots", "currency": "EUR"},
        },
        {"action": "sendEmpty"},
    ]
    reports = _runs(
        {
            "approve6": ("ai6", f"{api}/trips", approve),
            "approve7": ("ai7", f"{api}/trips", approve),
            "deny7": ("ai7", f"{api}/trips", deny),
            "adktool5": ("ai5", f"{api}/trips-adk", adk_tool),
            "wrong7": ("ai7", f"{api}/trips", wrong),
        }
    )
    for name in ("approve6", "approve7"):
        report = reports[name]
        _ok(report, name)
        first = report["requests"][0]["chunks"]
        asked = next(c for c in first if c["type"] == "tool-input-available")
        assert asked["toolName"] == "adk_request_input" and "providerExecuted" not in asked
        assert set(asked["input"]) == {"message", "payload", "responseSchema"}
        assert asked["input"]["responseSchema"]["title"] == "Budget"
        assert first[-1] == {**first[-1], "type": "finish", "finishReason": "tool-calls"}
        methods = [(r["method"], r["status"]) for r in report["requests"]]
        assert methods == [
            ("POST", 200),
            ("GET", 200),
            ("POST", 200),
            ("GET", 200),
            ("POST", 200),
        ], (name, methods)
        answered = _parts(report, "adk_request_input")
        assert [p["state"] for p in answered] == ["output-available"]
        assert answered[0]["output"] == BUDGET
        booked = _parts(report, "book_hotel")
        assert [p["state"] for p in booked] == ["output-available"], name
        assert booked[0]["output"]["note"] == "late arrival"  # the payload on approval
    denied = reports["deny7"]
    _ok(denied, "deny7")
    assert [p["state"] for p in _parts(denied, "book_hotel")] == ["output-denied"]
    adk_tool_report = reports["adktool5"]
    _ok(adk_tool_report, "adktool5")
    assert [p["state"] for p in _parts(adk_tool_report, "book_hotel")] == ["output-available"]
    assert [p["state"] for p in _parts(adk_tool_report, "adk_request_confirmation")] == [
        "output-available"
    ]
    refused = reports["wrong7"]["requests"][-1]
    assert refused["status"] == 422, refused
    error = json.loads(refused["bodyText"])["error"]
    assert error["code"] == "invalid_input" and "$.amount" in error["message"]
    # Two approved bookings (ai6, ai7), one in the adk-tool style; the denial booked nothing.
    assert sorted(b.get("note", "") for b in BOOKINGS) == ["", "late arrival", "late arrival"]


def test_credentials_api_key_and_oauth2(api: str, provider: tuple[Provider, str]) -> None:
    service, _ = provider
    key = [
        {"action": "send", "text": "what's the weather in Lisbon?"},
        {"action": "reload"},
        {
            "action": "toolOutput",
            "tool": "adk_request_credential",
            "output": {"apiKey": WEATHER_KEY},
        },
        {"action": "sendEmpty"},
    ]
    oauth = [
        {"action": "send", "text": "show my repos"},
        {"action": "reload"},
        {"action": "signIn", "decision": "allow"},
        {"action": "resume"},  # what the popup's message makes the page do
    ]
    jobs: dict[str, tuple[str, str, list[dict[str, Any]]]] = {}
    for ai in ("ai5", "ai6strict", "ai7"):
        jobs[f"key-{ai}"] = (ai, f"{api}/accounts", key)
        jobs[f"oauth-{ai}"] = (ai, f"{api}/accounts", oauth)
    reports = _runs(jobs)
    for name, report in reports.items():
        _ok(report, name)
        asked = next(
            c
            for c in report["requests"][0]["chunks"]
            if c.get("toolName") == "adk_request_credential" and c["type"] == "tool-input-available"
        )
        assert "providerExecuted" not in asked
        credential = _parts(report, "adk_request_credential")
        assert [p["state"] for p in credential] == ["output-available"], name
        raw = json.dumps(report["requests"]) + json.dumps(report["messages"])
        if name.startswith("key"):
            assert (
                asked["input"]["scheme"] == "apiKey" and asked["input"]["name"] == "X-Weather-Key"
            )
            # The page sent the key once; no chunk, and not the page's own copy, keeps it.
            assert WEATHER_KEY not in json.dumps([_chunks(report), report["messages"]])
            assert credential[0]["output"] == {"status": "provided"}
            assert _parts(report, "get_weather")[0]["output"]["forecast"] == "sunny, 24°C"
        else:
            assert asked["input"]["scheme"] == "oauth2"
            redirect = parse_qs(urlsplit(asked["input"]["authUri"]).query)["redirect_uri"]
            assert redirect == [f"{api}/accounts/oauth2/callback"]
            assert [c["status"] for c in report["completions"]] == [200]
            assert credential[0]["output"] == {"status": "connected"}
            repos = _parts(report, "list_repos")
            assert (
                repos[0]["state"] == "output-available" and repos[0]["output"]["owner"] == "alice"
            ), name
            for token in service.access_tokens:
                assert token not in raw
    assert service.state.seen.count(("weather", WEATHER_KEY)) == 3
    recorded = b"".join(STORE.recorded)  # every byte every stream of the app recorded
    assert b"adk_request_credential" in recorded
    for secret in [WEATHER_KEY, *service.access_tokens, *service.refresh_tokens]:
        assert secret.encode() not in recorded
