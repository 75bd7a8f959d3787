"""Our protocol-A (live) chunk sequences against the seed app's BIDI captures
(`tests/fixtures/seed-baselines/frontend/*-bidi*.json`, real Gemini Live runs), compared
after normalisation, like the SSE ones in test_seed_baselines.py. Every transformation
below is an intended difference (docs/development/index.md lists them):

B1 steps: ours are the AI SDK's, one `start-step`/`finish-step` pair per model call; the
   seed app sent a pair only around each `tool-approval-request`, and its frontend treated
   that `finish-step` as "the turn now waits for the user". Ours says that with the
   transient `data-awaiting-client` chunk (checked below: it follows every approval
   request before any output). Steps and markers are dropped on both sides.
B2 the re-stated `tool-input-available` carrying the confirmation hint in
   `providerMetadata.adk` (the seed app did not send the hint); dropped.
B3 text and reasoning collapse to one "text" item, and the model's words before a tool
   call are dropped (the seed's Live model thought aloud between its calls, the demo
   model says "Let me check ..." before some).
B4 a denial (by the user, or an unanswered approval past `LiveOptions.wait_timeout`) is
   `tool-output-denied` / `tool-output-error`; the seed sent `tool-output-error` for
   both; compared as "tool-output-error".
B5 two payments: the seed's Live model called the tools one after the other, the demo
   model calls both in one step (a model's choice, not the bridge's): each call's chunks
   are compared as one group, in the order the calls were made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from adk_asgi import AdkApp, LiveOptions
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer
from support.seeds import seed_requests
from support.ws_client import DONE, LiveClient, ws_url

BROWSER_RESULTS = {
    "get_location": {"latitude": 35.6, "longitude": 139.7},
    "change_bgm": {"success": True, "track": 1},
}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    # The timeout case waits 1 s; the others answer at once.
    app = AdkApp(build_demo_agent(), warm_up=False, live_options=LiveOptions(wait_timeout=1.0))
    with LoopbackServer(app) as s:
        yield s


def normalize(chunks: list[Any]) -> list[str]:
    items: list[Any] = []
    chains: dict[str, list[str]] = {}
    for c in chunks:
        kind = c if isinstance(c, str) else c["type"]
        if kind in ("start-step", "finish-step", "data-awaiting-client"):
            continue  # B1
        if kind == "tool-input-available" and "providerMetadata" in c:
            continue  # B2
        if kind.startswith(("text-", "reasoning-")):
            kind = "text"  # B3
        if kind == "tool-output-denied":
            kind = "tool-output-error"  # B4
        if kind.startswith("tool-"):
            if "toolName" in c:
                kind += "/" + c["toolName"]
            call = c["toolCallId"]
            if call not in chains:  # B5: a call's chunks as one group
                chains[call] = []
                items.append(chains[call])
            chains[call].append(kind)
            continue
        items.append(kind)
    last_call = max((i for i, item in enumerate(items) if isinstance(item, list)), default=-1)
    out: list[str] = []
    for i, item in enumerate(items):
        if isinstance(item, list):
            out.extend(item)
        elif item == "text" and (i < last_call or (out and out[-1] == "text")):
            continue  # B3
        else:
            out.append(item)
    return out


async def live_turn(url: str, text: str, decisions: list[bool | None]) -> list[Any]:
    """One protocol-A turn, answering the approvals in order with ``decisions`` (None:
    leave it unanswered) and browser tools with BROWSER_RESULTS once the turn waits."""
    client = await LiveClient.open(ws_url(url), markers=True)
    await client.say(text)
    names: dict[str, str] = {}
    approvals: dict[str, str] = {}  # approval id -> call id
    answered: set[str] = set()  # browser calls answered, or denied
    chunks: list[Any] = []
    while (chunk := await client.next(15)) != DONE:
        chunks.append(chunk)
        if chunk["type"] == "tool-input-start":
            names[chunk["toolCallId"]] = chunk["toolName"]
        elif chunk["type"] == "tool-approval-request":
            approvals[chunk["approvalId"]] = chunk["toolCallId"]
            decision = decisions.pop(0)
            if not decision:
                answered.add(chunk["toolCallId"])  # a denied call never runs
            if decision is not None:
                await client.send(
                    "tool_result", toolCallId=chunk["approvalId"], result={"confirmed": decision}
                )
        elif chunk["type"] == "data-awaiting-client":
            for call in chunk["data"]["ids"]:
                call = approvals.get(call, call)
                if names.get(call) in BROWSER_RESULTS and call not in answered:
                    answered.add(call)
                    await client.send(
                        "tool_result", toolCallId=call, result=BROWSER_RESULTS[names[call]]
                    )
    await client.close()
    return [*chunks, DONE]


def every_approval_request_is_followed_by_the_wait_marker(chunks: list[Any]) -> None:
    """B1: what the seed's frontend read from the `finish-step` after an approval request."""
    for i, chunk in enumerate(chunks):
        if isinstance(chunk, dict) and chunk["type"] == "tool-approval-request":
            rest = chunks[i + 1 :]
            marker = next(j for j, c in enumerate(rest) if c["type"] == "data-awaiting-client")
            assert not any(c["type"].startswith("tool-output") for c in rest[:marker])
            assert (
                chunk["approvalId"] in rest[marker]["data"]["ids"]
                or chunk["toolCallId"] in rest[marker]["data"]["ids"]
            )


PAYMENTS = "Send 30 dollars to Alice and 40 dollars to Bob"
CASES: list[tuple[str, str, list[bool | None]]] = [
    ("process_payment-approved-bidi-baseline.json", "Send 50 dollars to Hanako", [True]),
    ("process_payment-denied-bidi-baseline.json", "Send 50 dollars to Hanako", [False]),
    ("process_payment-timeout-bidi-baseline.json", "Send 50 dollars to Hanako", [None]),
    ("multiple-payments-sequential-bidi-baseline.json", PAYMENTS, [True, True]),
    ("multiple-payments-approve-deny-bidi.json", PAYMENTS, [True, False]),
    ("multiple-payments-deny-approve-bidi.json", PAYMENTS, [False, True]),
    ("multiple-payments-deny-deny-bidi.json", PAYMENTS, [False, False]),
    ("get_location-approved-bidi-baseline.json", "Where am I?", [True]),
    ("get_location-denied-bidi-baseline.json", "Where am I?", [False]),
    ("change_bgm-bidi-baseline.json", "Play track 1", []),
    ("get_weather-bidi-baseline.json", "What's the weather in Tokyo?", []),
]


@pytest.mark.parametrize(
    ("fixture", "text", "decisions"), CASES, ids=[c[0].split("-bidi")[0] for c in CASES]
)
async def test_matches_the_seed_bidi_capture(
    server: LoopbackServer, fixture: str, text: str, decisions: list[bool | None]
) -> None:
    ours = await asyncio.wait_for(live_turn(server.url, text, list(decisions)), 30)
    every_approval_request_is_followed_by_the_wait_marker(ours)
    (seed,) = seed_requests(fixture)  # one stream, one [DONE], as ours
    assert normalize(ours) == normalize(seed)
