"""A chat's history (``GET {api}/{chatId}``) is what the page showed when its stream ended.

Every scenario the suite has is driven by the real AI SDK client (ai 5, strict 6.0.230, 6,
7: ``tests/js/drive-history.mjs``, one Node process for all of them); then the page
"reloads": the history is fetched, validated with that version's own
``validateUIMessages``, and compared with the client's final messages part by part. Some
scenarios then go on from the loaded history (``useChat({id, messages})``): answering an
approval the page had not answered before the reload.

A scenario is one entry of ``SCENARIOS`` (the app it runs on, its steps).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from agents.accounts.agent import build_app as build_accounts
from agents.artifacts.agent import build_app as build_artifacts_app
from agents.code import agent as code
from agents.fanout import agent as fanout
from agents.parallel import agent as parallel
from agents.team.agent import build_app
from agents.trips.agent import app as trips_app
from agents.workflow import agent as workflow
from starlette.applications import Starlette
from starlette.routing import Mount

from adk_asgi import AdkApp, PauseOptions, StorageOptions, SurfaceOptions
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer
from support.aisdk_client import (
    AI_VERSIONS,
    NodeHarnessMissing,
    drive_history,
    require_node_harness,
    run_ws_chat,
)
from support.provider_server import WEATHER_KEY, Provider

pytestmark = pytest.mark.node

APPROVALS = ("ai6strict", "ai6", "ai7")  # ai 5 has no approvals
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
RESOLVED = {"status": "resolved", "ticket": "T-1"}


@dataclass(frozen=True)
class Scenario:
    name: str
    app: str  # "team", "demo" or "seed" (the demo agent, ADK-tool confirmations)
    steps: list[dict[str, Any]]
    versions: tuple[str, ...] = AI_VERSIONS
    auto_send: str | None = None
    after_reload: list[dict[str, Any]] = field(default_factory=list)
    fails: bool = False  # the turn ends with an error chunk (the page shows the error)
    lost: tuple[str, ...] = ()
    """The last parts the page showed that the session does not keep (their types)."""
    own_user: bool = False
    """Each run is a user of its own (``x-user``): ADK keeps a credential per user."""
    uploads: bool = False
    """The user's files are saved as artifacts: the history shows them at their artifact
    URL (the session keeps no bytes), the page at the data: URL it sent."""


def send(text: str, **extra: Any) -> dict[str, Any]:
    return {"action": "send", "text": text, **extra}


SCENARIOS: list[Scenario] = [
    Scenario("text", "team", [send("hello", messageMetadata={"sentAt": 1, "tags": ["a"]})]),
    Scenario("reasoning", "team", [send("think about it")]),
    Scenario("agent-tool", "team", [send("research cats")]),
    Scenario("state-tool", "team", [send("remember blue"), send("recall please")]),
    Scenario("transfer", "team", [send("billing please")]),
    Scenario(
        "approval-denied",
        "team",
        [send("refund 20 please"), {"action": "approve", "approved": False, "reason": "too much"}],
        APPROVALS,
        "approvals",
    ),
    Scenario(
        "approval-edited",
        "team",
        [
            send("send 30 to alice"),
            {"action": "approve", "approved": True, "payload": {"amount": 25, "to": "alice"}},
        ],
        APPROVALS,
        "approvals",
    ),
    Scenario(
        "approval-after-reload",
        "team",
        [send("refund 20 please")],
        APPROVALS,
        "approvals",
        after_reload=[{"action": "approve", "approved": True}],
    ),
    # 6.0.230's resumeStream folds the replayed turn into the previous assistant message
    # (later versions and 5.x start a new one, as the history does).
    Scenario(
        "long-running-server",
        "team",
        [
            send("open a ticket please"),
            {"action": "completeToolCall", "tool": "open_ticket", "output": RESOLVED},
            {"action": "resume"},
        ],
        ("ai5", "ai6", "ai7"),
    ),
    Scenario(
        "long-running-page",
        "team",
        [
            send("book a trip to Paris"),
            {
                "action": "toolOutput",
                "tool": "book_trip",
                "output": {"status": "booked", "city": "Paris"},
            },
            {"action": "sendEmpty"},
        ],
    ),
    Scenario(
        "browser-tool",
        "team",
        [
            send("where am i"),
            {"action": "toolOutput", "tool": "get_location", "output": {"lat": 35.68}},
            {"action": "sendEmpty"},
        ],
    ),
    Scenario("tool-error", "team", [send("please explode")], fails=True),
    Scenario("model-error", "team", [send("please fail")], fails=True),
    # The model raised mid-answer: ADK keeps no partial response, so the text streamed
    # before the failure (and its step) is not in the history.
    Scenario(
        "model-crash",
        "team",
        [send("crash please")],
        fails=True,
        lost=("step-start", "data-agent", "text"),
    ),
    Scenario(
        "conversation",
        "team",
        [
            send("hello"),
            send("billing please"),
            send("refund 20 please"),
            {"action": "approve", "approved": False, "reason": "too much"},
            send("send 30 to alice"),
            {"action": "approve", "approved": True},
            send("where am i"),
            {"action": "toolOutput", "tool": "get_location", "output": {"lat": 1}},
            {"action": "sendEmpty"},
            send("think it over"),
        ],
        APPROVALS,
        "approvals",
    ),
    Scenario(
        "payment-approved",
        "demo",
        [send("Send 50 dollars to Ann"), {"action": "approve", "approved": True}],
        APPROVALS,
        "approvals",
    ),
    Scenario(
        "browser-approval",
        "demo",
        [
            send("Where am I?"),
            {"action": "approve", "approved": True},
            {
                "action": "toolOutput",
                "tool": "get_location",
                "output": {"latitude": 35.6, "longitude": 139.7},
            },
        ],
        APPROVALS,
        "toolCalls",
    ),
    Scenario(
        "browser-denied",
        "demo",
        [send("Where am I?"), {"action": "approve", "approved": False, "reason": "not now"}],
        APPROVALS,
        "approvals",
    ),
    Scenario(
        "browser-no-approval",
        "demo",
        [
            send("Play track 2"),
            {"action": "toolOutput", "tool": "change_bgm", "output": {"success": True}},
        ],
        auto_send="toolCalls",
    ),
    Scenario(
        "files",
        "demo",
        [
            send(
                "what is this?",
                files=[
                    {"type": "file", "mediaType": "image/png", "filename": "dot.png", "url": PNG}
                ],
            )
        ],
    ),
    Scenario("weather", "demo", [send("What's the weather in Paris?")]),
    Scenario("artifact", "artifacts", [send("chart sales")]),
    Scenario(
        "uploads",
        "uploads",
        [
            send(
                "read it",
                files=[
                    {
                        "type": "file",
                        "mediaType": "text/plain",
                        "filename": "note.txt",
                        "url": "data:text/plain;base64,aGVsbG8gdGhlcmU=",
                    }
                ],
            )
        ],
        uploads=True,
    ),
    Scenario("parallel", "parallel", [send("Tell me about ships")]),
    Scenario("workflow", "workflow", [send("2 apples please"), send("is it in stock?")]),
    Scenario("workflow-node-error", "workflow", [send("pay now")], fails=True),
    Scenario("workflow-timeout", "workflow", [send("track it")], fails=True),
    Scenario("fanout", "fanout", [send("Train or plane?")]),
    Scenario("code", "code", [send("compute 2 + 2"), send("divide 1 by 0")]),
    Scenario(
        "human-input",
        "trips",
        [
            send("plan a trip to Lisbon"),
            {
                "action": "toolOutput",
                "tool": "adk_request_input",
                "output": {
                    "amount": 600,
                    "currency": "EUR",
                    "travellers": [{"name": "Ana", "age": 34}],
                },
            },
            {"action": "sendEmpty"},
            {"action": "approve", "approved": True, "payload": {"note": "late arrival"}},
            {"action": "sendEmpty"},
        ],
        APPROVALS,
    ),
    Scenario(
        "credential",
        "accounts",
        [
            send("what's the weather in Lisbon?"),
            {
                "action": "toolOutput",
                "tool": "adk_request_credential",
                "output": {"apiKey": WEATHER_KEY},
            },
            {"action": "sendEmpty"},
        ],
        own_user=True,
    ),
    Scenario(
        "adk-tool-confirmation",
        "seed",
        [
            send("Send 80 dollars to Seed"),
            {
                "action": "toolOutput",
                "tool": "adk_request_confirmation",
                "output": {"confirmed": True},
            },
        ],
        auto_send="toolCalls",
    ),
    Scenario(
        "adk-tool-denial",
        "seed",
        [
            send("Send 90 dollars to Seed"),
            {
                "action": "toolOutput",
                "tool": "adk_request_confirmation",
                "output": {"confirmed": False},
            },
        ],
        auto_send="toolCalls",
    ),
]


def header_user(scope: Any) -> str:
    """The ``x-user`` header, else anonymous."""
    for name, value in scope.get("headers") or ():
        if name == b"x-user":
            return str(value.decode())
    return "anonymous"


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    try:
        require_node_harness()
    except NodeHarnessMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    provider_server = LoopbackServer(Provider().app).__enter__()
    provider_url = provider_server.url
    team = AdkApp(
        adk_app=build_app(),
        pauses=PauseOptions(client_completes=["book_trip"]),
        surface=SurfaceOptions(agent_names=True, state_keys=["fact"]),
        warm_up=False,
    )
    demo = AdkApp(build_demo_agent(token_delay=0), warm_up=False)
    seed = AdkApp(
        build_demo_agent(token_delay=0),
        pauses=PauseOptions(confirmation_style="adk-tool"),
        warm_up=False,
    )
    artifacts = AdkApp(adk_app=build_artifacts_app(), warm_up=False)
    uploads = AdkApp(
        adk_app=build_artifacts_app(),
        warm_up=False,
        storage=StorageOptions(uploads_as_artifacts=True),
    )
    apps = {
        "team": team,
        "demo": demo,
        "seed": seed,
        "artifacts": artifacts,
        "uploads": uploads,
        "parallel": AdkApp(
            agent=parallel.build_root_agent(),
            surface=SurfaceOptions(agent_names=True),
            warm_up=False,
        ),
        "workflow": AdkApp(agent=workflow.build_workflow(), warm_up=False),
        "fanout": AdkApp(agent=fanout.build_workflow(), warm_up=False),
        "code": AdkApp(agent=code.build_root_agent(), warm_up=False),
        "trips": AdkApp(adk_app=trips_app, warm_up=False),
        "accounts": AdkApp(
            adk_app=build_accounts(provider_url), warm_up=False, authenticate=header_user
        ),
    }

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for each in apps.values():
                await stack.enter_async_context(each.lifespan())
            yield

    site = Starlette(
        routes=[Mount(f"/{name}", app) for name, app in apps.items()], lifespan=lifespan
    )
    try:
        with LoopbackServer(site) as running:
            yield running
    finally:
        provider_server.__exit__(None, None, None)


def drive(server: LoopbackServer, scenarios: list[Scenario]) -> list[dict[str, Any]]:
    runs = [
        {
            "ai": ai,
            "api": f"{server.url}/{s.app}",
            "chatId": f"{s.name}-{ai}",
            "steps": s.steps,
            "autoSend": s.auto_send,
            "afterReload": s.after_reload or None,
            "headers": {"x-user": f"{s.name}-{ai}"} if s.own_user else None,
            "timeoutMs": 60_000,
        }
        for s in scenarios
        for ai in s.versions
    ]
    return drive_history(runs, concurrency=4, timeout=300)


def as_version_holds(ai: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history's messages in the shape ``ai`` gives its own: 6.0.230 keeps no id on a
    reasoning part (later versions, and 5.x, do); 5.x drops a file chunk's
    providerMetadata."""
    dropped = {"ai6strict": ("reasoning", "id"), "ai5": ("file", "providerMetadata")}.get(ai)
    if dropped is None:
        return messages
    kind, key = dropped
    return [
        {
            **m,
            "parts": [
                {k: v for k, v in p.items() if k != key}
                if p["type"] == kind and m["role"] == "assistant"
                else p
                for p in m["parts"]
            ],
        }
        for m in messages
    ]


def uploaded(messages: list[dict[str, Any]], api: str, chat_id: str) -> list[dict[str, Any]]:
    """The user's files without their URLs; the history's at the artifact route."""
    out = []
    for m in messages:
        parts = []
        for p in m["parts"]:
            if m["role"] == "user" and p["type"] == "file":
                url = p["url"]
                assert (
                    url.startswith("data:")
                    or url == f"{api}/{chat_id}/artifacts/{p['filename']}?version=0"
                ), url
                p = {k: v for k, v in p.items() if k not in ("url", "providerMetadata")}
            parts.append(p)
        out.append({**m, "parts": parts})
    return out


def differences(client: list[dict[str, Any]], server: list[dict[str, Any]]) -> list[str]:
    """Where the history differs from what the client holds, message by message and part
    by part."""
    found: list[str] = []
    if len(client) != len(server):
        found.append(
            f"{len(client)} messages on the page, {len(server)} in the history: "
            f"{[m['role'] for m in client]} / {[m['role'] for m in server]}"
        )
    for index, (mine, theirs) in enumerate(zip(client, server, strict=False)):
        for key in ("id", "role", "metadata"):
            if mine.get(key) != theirs.get(key):
                found.append(f"message {index} {key}: {mine.get(key)!r} != {theirs.get(key)!r}")
        parts, loaded = mine["parts"], theirs["parts"]
        if len(parts) != len(loaded):
            found.append(
                f"message {index}: parts {[p['type'] for p in parts]} != "
                f"{[p['type'] for p in loaded]}"
            )
        for number, (part, back) in enumerate(zip(parts, loaded, strict=False)):
            if part != back:
                found.append(f"message {index} part {number}: {part!r} != {back!r}")
    return found


@pytest.fixture(scope="module")
def results(server: LoopbackServer) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["chatId"].rsplit("-", 1)[0], r["ai"]): r for r in drive(server, SCENARIOS)}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_history_is_what_the_page_showed(
    scenario: Scenario, results: dict[tuple[str, str], dict[str, Any]]
) -> None:
    problems: dict[str, Any] = {}
    for ai in scenario.versions:
        result = results[(scenario.name, ai)]
        assert "crash" not in result, result.get("crash")
        report = result["report"]
        assert report["ok"] != scenario.fails, (ai, report["problems"])
        assert all(r["stepError"] is None for r in report["stepResults"]), report["problems"]
        assert report["messages"][-1]["role"] == "assistant"
        raw = json.dumps(result["history"])
        assert "SECRET-" not in raw and '"adk_asgi"' not in raw and WEATHER_KEY not in raw
        history = result["history"]
        assert history["status"] == 200, (ai, history)
        assert history["body"]["id"] == f"{scenario.name}-{ai}"
        if not result["validation"]["ok"]:
            problems[f"{ai} validateUIMessages"] = result["validation"]["error"]
        shown = report["messages"]
        if scenario.lost:
            kept = shown[-1]["parts"][: -len(scenario.lost)]
            assert [p["type"] for p in shown[-1]["parts"][len(kept) :]] == list(scenario.lost)
            shown = [*shown[:-1], {**shown[-1], "parts": kept}]
        loaded = as_version_holds(ai, history["body"]["messages"])
        if scenario.uploads:
            api = f"/{scenario.app}"
            assert [
                p["url"].split("?")[0]
                for m in loaded
                if m["role"] == "user"
                for p in m["parts"]
                if p["type"] == "file"
            ] == [f"{api}/{scenario.name}-{ai}/artifacts/note.txt"]
            shown, loaded = (
                uploaded(shown, api, f"{scenario.name}-{ai}"),
                uploaded(loaded, api, f"{scenario.name}-{ai}"),
            )
        found = differences(shown, loaded)
        if found:
            problems[ai] = found
        if scenario.after_reload:
            reloaded = result["reloaded"]
            assert reloaded["stepResults"][-1]["stepError"] is None, (ai, reloaded["problems"])
            again = differences(
                reloaded["messages"],
                as_version_holds(ai, result["reloadedHistory"]["body"]["messages"]),
            )
            if again:
                problems[f"{ai} after the reload"] = again
    assert not problems, json.dumps(problems, indent=1)[:6000]


def without_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Live turns get their message ids on the connection, which the session does not keep:
    compare everything else."""

    def part(p: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in p.items() if k != "id"} if p["type"] == "reasoning" else p

    return [
        {**{k: v for k, v in m.items() if k != "id"}, "parts": [part(p) for p in m["parts"]]}
        for m in messages
    ]


LIVE_STEPS: list[dict[str, Any]] = [
    send("hello"),
    send("think about it"),
    send("What's the weather in Paris?"),
    send("Play track 3"),
    {"action": "toolOutput", "tool": "change_bgm", "output": {"success": True}},
    {"action": "sendEmpty"},
    send("Send 40 dollars to Live"),
    {"action": "approve", "approved": True},
]


def test_live_history_is_what_the_page_showed(server: LoopbackServer) -> None:
    """ai 7's WebSocketChatTransport (live protocol B): the same chat read back over HTTP
    (ids aside: a live turn's message ids live on the connection only)."""
    chat_id = "live-b"
    report = run_ws_chat(
        server.url.replace("http://", "ws://") + "/demo/",
        LIVE_STEPS,
        chat_id=chat_id,
        api=f"{server.url}/demo",
        auto_send="approvals",
        node_timeout_ms=60000,
        timeout=90,
    )
    assert all(r["stepError"] is None for r in report["stepResults"]), report["problems"]
    history = httpx.get(f"{server.url}/demo/{chat_id}", timeout=10)
    assert history.status_code == 200
    # Live approvals are decided on the connection (live/gate/gate.py), not in the session:
    # the history has the approved call and its result, without the approval.
    shown = [
        {
            **m,
            "parts": [
                {k: v for k, v in p.items() if k not in ("approval", "callProviderMetadata")}
                for p in m["parts"]
            ],
        }
        for m in report["messages"]
    ]
    assert [
        p["approval"]["approved"] for m in report["messages"] for p in m["parts"] if "approval" in p
    ] == [True]
    found = differences(without_ids(shown), without_ids(history.json()["messages"]))
    assert not found, json.dumps(found, indent=1)[:6000]
    # listed, titled by its first message (read from its events: live turns keep no title)
    # A wait, not a speed check: under a load average of 14 this read once took over 10 s.
    listed = httpx.get(f"{server.url}/demo/", params={"limit": 100}, timeout=60).json()
    assert {"id": chat_id, "title": "hello"}.items() <= next(
        c for c in listed["chats"] if c["id"] == chat_id
    ).items()
