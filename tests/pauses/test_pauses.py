"""ADK's pauses over HTTP, on real servers (uvicorn on loopback, ADK's Runner): requests for
input checked against their JSON Schema, workflow tool confirmations, and credentials —
where the secrets never go.

The credential flows run on two replicas (one sqlite session file, one Redis stream store):
a user gives an API key and a bearer token to one replica and signs in with OAuth2, the
provider's redirect reaching the other. Then every byte the client received, the Redis
store holds, the session file holds, the server logged (DEBUG) and the spans recorded is
searched for the key, the token and the OAuth2 tokens the provider issued.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import msgspec
import pytest
from agents.accounts.agent import build_app as build_accounts
from agents.trips.agent import BOOKINGS
from agents.trips.agent import app as trips_app
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from redis import Redis

from adk_asgi import AdkApp, PauseOptions
from adk_asgi.pauses.signin import take_sign_in
from adk_asgi.stores.redis import RedisStreamStore

from support import LoopbackServer, parse_sse
from support.provider_server import NOTES_TOKEN, WEATHER_KEY, ProviderProcess

BUDGET = {
    "amount": 600,
    "currency": "USD",
    "flexible": True,
    "travellers": [{"name": "Ana", "age": 34}, {"name": "Rui"}],
}


def user(text: str, msg_id: str = "u1") -> dict[str, Any]:
    return {"id": msg_id, "role": "user", "parts": [{"type": "text", "text": text}]}


def continued(chunks: list[dict[str, Any]], *parts: dict[str, Any]) -> dict[str, Any]:
    return {"id": chunks[0]["messageId"], "role": "assistant", "parts": list(parts)}


def answer(call: dict[str, Any], output: Any) -> dict[str, Any]:
    return {
        "type": f"tool-{call['toolName']}",
        "toolCallId": call["toolCallId"],
        "state": "output-available",
        "input": call["input"],
        "output": output,
    }


def called(chunks: list[dict[str, Any]], tool: str) -> dict[str, Any]:
    return next(c for c in chunks if c["type"] == "tool-input-available" and c["toolName"] == tool)


async def post(
    client: httpx.AsyncClient, chat_id: str, message: dict[str, Any], **extra: Any
) -> tuple[int, Any]:
    response = await client.post("/", json={"id": chat_id, "messages": [message], **extra})
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return response.status_code, parse_sse(response.text)[:-1]  # without [DONE]
    return response.status_code, response.json()


# -- requests for input and workflow confirmations ---------------------------------------


@pytest.fixture(scope="module")
def trips() -> Iterator[str]:
    with LoopbackServer(AdkApp(adk_app=trips_app, warm_up=False)) as server:
        yield server.url


async def test_a_request_for_input_is_a_client_call_checked_against_its_schema(trips: str) -> None:
    async with httpx.AsyncClient(base_url=trips, timeout=30) as client:
        status, asked = await post(client, "input", user("plan a trip"))
        assert status == 200
        call = called(asked, "adk_request_input")
        assert "providerExecuted" not in call and call["toolCallId"] == "ask_budget"
        assert call["input"]["message"] == "How much may we spend on the Lisbon trip?"
        assert call["input"]["payload"] == {"destination": "Lisbon", "nights": 3}
        assert call["input"]["responseSchema"]["required"] == ["amount"]
        assert asked[-1] == {**asked[-1], "type": "finish", "finishReason": "tool-calls"}
        wrong = {
            "$.amount: must be integer": {"amount": "lots"},
            "$: is missing 'amount'": {"currency": "EUR"},
            "$.currency: must be one of": {"amount": 100, "currency": "GBP"},
            "$.amount: must be >= 50": {"amount": 10},
            "$.travellers[1].name: must have at least 1 characters": {
                "amount": 100,
                "travellers": [{"name": "Ana"}, {"name": ""}],
            },
            "$.travellers[0]: is missing 'name'": {"amount": 100, "travellers": [{}]},
        }
        for expected, value in wrong.items():
            status, body = await post(client, "input", continued(asked, answer(call, value)))
            assert status == 422 and body["error"]["code"] == "invalid_input", body
            assert f"at {expected}" in body["error"]["message"], body
        status, body = await post(
            client,
            "input",
            continued(asked, {**answer(call, {}), "state": "output-error", "errorText": "no idea"}),
        )
        assert (status, body["error"]["code"]) == (422, "invalid_input")
        # A valid answer resumes the workflow once: the tool node now waits for approval.
        status, resumed = await post(client, "input", continued(asked, answer(call, BUDGET)))
        assert status == 200, resumed
        assert resumed[0] == {"type": "start", "messageId": asked[0]["messageId"]}
        approval = next(c for c in resumed if c["type"] == "tool-approval-request")
        assert approval["approvalId"] == "wf_tool_confirmation:trip_planner@1/book_hotel@1"
        booked = called(resumed, "book_hotel")
        assert booked["input"] == {
            "hotel": "Hotel Alfama",
            "nights": 3,
            "price_per_night": 160,
            "currency": "USD",
            "guests": 2,
        }
        status, body = await post(client, "input", continued(asked, answer(call, BUDGET)))
        assert (status, body["error"]["code"]) == (409, "unknown_tool_call")  # a replay


async def test_an_answer_under_another_message_id_is_refused(trips: str) -> None:
    """An answer sent in an assistant message whose id is not the paused turn's (a curl
    with a made-up id) is 409 ``wrong_message_id`` naming the expected id; nothing runs,
    the call still waits, and the history keeps one assistant message."""
    async with httpx.AsyncClient(base_url=trips, timeout=30) as client:
        status, asked = await post(client, "other-id", user("plan a trip"))
        call = called(asked, "adk_request_input")
        paused = asked[0]["messageId"]
        made_up = {**continued(asked, answer(call, BUDGET)), "id": "msg-trip"}
        status, body = await post(client, "other-id", made_up)
        assert (status, body["error"]["code"]) == (409, "wrong_message_id"), body
        assert repr(paused) in body["error"]["message"] and "'msg-trip'" in body["error"]["message"]
        status, resumed = await post(client, "other-id", continued(asked, answer(call, BUDGET)))
        assert status == 200 and resumed[0] == {"type": "start", "messageId": paused}
        history = (await client.get("/other-id")).json()["messages"]
        assert [m["role"] for m in history] == ["user", "assistant"]
        assert history[1]["id"] == paused


async def test_another_user_cannot_answer(trips: str) -> None:
    app = AdkApp(
        adk_app=trips_app,
        warm_up=False,
        authenticate=lambda scope: dict(scope["headers"]).get(b"x-user", b"").decode(),
    )
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        response = await client.post(
            "/", headers={"x-user": "ana"}, json={"id": "mine", "messages": [user("plan")]}
        )
        asked = parse_sse(response.text)[:-1]
        call = called(asked, "adk_request_input")
        response = await client.post(
            "/",
            headers={"x-user": "eve"},
            json={"id": "mine", "messages": [continued(asked, answer(call, BUDGET))]},
        )
        assert (response.status_code, response.json()["error"]["code"]) == (404, "chat_not_found")


@pytest.mark.parametrize("approved", [True, False])
async def test_a_workflow_tool_confirmation_is_an_approval(trips: str, approved: bool) -> None:
    chat = f"confirm-{approved}"
    async with httpx.AsyncClient(base_url=trips, timeout=30) as client:
        _, asked = await post(client, chat, user("plan a trip"))
        call = called(asked, "adk_request_input")
        _, resumed = await post(client, chat, continued(asked, answer(call, {"amount": 900})))
        request = next(c for c in resumed if c["type"] == "tool-approval-request")
        booked = called(resumed, "book_hotel")
        assert booked["providerExecuted"] is True
        assert resumed[-1]["finishReason"] == "tool-calls"
        before = len(BOOKINGS)
        approval: dict[str, Any] = {"id": request["approvalId"], "approved": approved}
        part: dict[str, Any] = {
            "type": "tool-book_hotel",
            "toolCallId": booked["toolCallId"],
            "state": "approval-responded",
            "input": booked["input"],
            "approval": approval,
            "providerExecuted": True,
        }
        if approved:  # the user's note travels as the approval's payload
            part["callProviderMetadata"] = {"adk": {"payload": {"note": "quiet room"}}}
        else:
            approval["reason"] = "too pricey"
        status, outcome = await post(client, chat, continued(asked, answer(call, {}), part))
        assert status == 200, outcome
        result = next(c for c in outcome if c.get("toolCallId") == booked["toolCallId"])
        if approved:
            assert result["type"] == "tool-output-available"
            assert result["output"]["note"] == "quiet room" and len(BOOKINGS) == before + 1
        else:
            assert result == {"type": "tool-output-denied", "toolCallId": booked["toolCallId"]}
            assert len(BOOKINGS) == before
        assert outcome[-1]["finishReason"] == "stop"


async def test_the_adk_tool_style_states_the_confirmation_call() -> None:
    app = AdkApp(
        adk_app=trips_app, warm_up=False, pauses=PauseOptions(confirmation_style="adk-tool")
    )
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        _, asked = await post(client, "adk", user("plan a trip"))
        call = called(asked, "adk_request_input")
        _, resumed = await post(client, "adk", continued(asked, answer(call, {"amount": 100})))
        confirm = called(resumed, "adk_request_confirmation")
        assert "providerExecuted" not in confirm
        assert confirm["input"]["originalFunctionCall"]["name"] == "book_hotel"
        assert not [c for c in resumed if c["type"] == "tool-approval-request"]
        status, done = await post(
            client,
            "adk",
            continued(asked, answer(call, {"amount": 100}), answer(confirm, {"confirmed": False})),
        )
        assert status == 200
        assert {
            "type": "tool-output-error",
            "toolCallId": "wf_tool:trip_planner@1/book_hotel@1",
            "errorText": "This tool call is rejected.",
        } in done


# -- credentials ---------------------------------------------------------------------------


class Replicas:
    """Two servers sharing one sqlite session file and one Redis stream store."""

    def __init__(self, provider: ProviderProcess, sessions: str, redis_url: str) -> None:
        self.apps = [
            AdkApp(
                adk_app=build_accounts(provider.url),
                session_db=sessions,
                stream_store=RedisStreamStore(redis_url, prefix="pauses"),
                warm_up=False,
            )
            for _ in range(2)
        ]
        self.servers = [LoopbackServer(app) for app in self.apps]

    def __enter__(self) -> list[str]:
        return [server.__enter__().url for server in self.servers]

    def __exit__(self, *exc: object) -> None:
        for server in self.servers:
            server.__exit__(*exc)


@pytest.fixture
def logs() -> Iterator[io.StringIO]:
    """Every log record of this process, at DEBUG, formatted with its traceback."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield buffer
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


async def test_credentials_never_leave_adks_credential_flow(
    tmp_path: Path,
    redis_url: str,
    logs: io.StringIO,
    spans: InMemorySpanExporter,
) -> None:
    sessions = tmp_path / "chats.db"
    seen: list[bytes] = []  # every byte a client received
    with (
        ProviderProcess() as provider,
        Replicas(provider, f"sqlite:///{sessions}", redis_url) as (one, other),
    ):
        provider.register(f"{one}/oauth2/callback")
        async with httpx.AsyncClient(timeout=30) as client:

            async def send(base: str, chat: str, message: dict[str, Any]) -> tuple[int, Any]:
                response = await client.post(f"{base}/", json={"id": chat, "messages": [message]})
                seen.append(response.content)
                body = (
                    parse_sse(response.text)[:-1]
                    if response.status_code == 200
                    else response.json()
                )
                return response.status_code, body

            for chat, text, output, secret in (
                ("key", "weather in Lisbon", "apiKey", WEATHER_KEY),
                ("token", "my notes", "token", NOTES_TOKEN),
            ):
                _, asked = await send(one, chat, user(text))
                call = called(asked, "adk_request_credential")
                assert secret not in json.dumps(call)
                # Refused answers never quote what was sent.
                for wrong in ({output: ""}, {output: secret, "extra": secret}, {"x": secret}):
                    status, body = await send(other, chat, continued(asked, answer(call, wrong)))
                    assert (status, body["error"]["code"]) == (422, "invalid_credential")
                # Not through the back office's door either.
                refused = await client.post(
                    f"{one}/{chat}/tool-output",
                    json={"toolCallId": call["toolCallId"], "output": {output: secret}},
                )
                seen.append(refused.content)
                assert refused.json()["error"]["code"] == "wrong_answer_kind"
                status, resumed = await send(
                    other, chat, continued(asked, answer(call, {output: secret}))
                )
                assert status == 200
                assert {
                    "type": "tool-output-available",
                    "toolCallId": call["toolCallId"],
                    "output": {"status": "provided"},
                } in resumed
                tool = call["input"]["functionCallId"]
                result = next(
                    c
                    for c in resumed
                    if c.get("toolCallId") == tool and c["type"] == "tool-output-available"
                )
                assert "error" not in result["output"], result
                status, again = await send(
                    other, chat, continued(asked, answer(call, {output: secret}))
                )
                assert (status, again["error"]["code"]) == (409, "unknown_tool_call")

            # ADK's request_input tool: asked on one replica, answered on the other.
            _, asked = await send(one, "input", user("ask me"))
            call = called(asked, "adk_request_input")
            status, body = await send(other, "input", continued(asked, answer(call, 40)))
            assert (status, body["error"]["code"]) == (422, "invalid_input")
            status, resumed = await send(other, "input", continued(asked, answer(call, 3)))
            assert status == 200 and "Booked 3 nights." in "".join(
                c.get("delta", "") for c in resumed
            )

            # OAuth2: asked on one replica, the provider's redirect reaches the other.
            _, asked = await send(one, "oauth", user("show my repos"))
            call = called(asked, "adk_request_credential")
            auth_uri = call["input"]["authUri"]
            query = {k: v[0] for k, v in parse_qs(urlsplit(auth_uri).query).items()}
            assert query["redirect_uri"] == f"{one}/oauth2/callback"
            consent = await client.get(auth_uri)
            assert consent.status_code == 200
            allowed = await client.post(
                f"{provider.url}/authorize", params=query, data={**query, "decision": "allow"}
            )
            location = allowed.headers["location"]
            assert location.startswith(f"{one}/oauth2/callback?code=")
            callback = await client.get(location.replace(one, other))
            seen.append(callback.content)
            assert callback.status_code == 200 and b'"ok":true' in callback.content
            assert b"adk-asgi:oauth" in callback.content
            replay = await client.get(f"{one}/oauth/stream")  # the page's resumeStream
            seen.append(replay.content)
            chunks = parse_sse(replay.text)[:-1]
            assert [c for c in chunks if c["type"] == "start"] == [
                {"type": "start", "messageId": asked[0]["messageId"]}
            ] * 2
            repos = next(
                c
                for c in chunks
                if c["type"] == "tool-output-available"
                and c["toolCallId"] == call["input"]["functionCallId"]
                and not c.get("preliminary")
            )
            assert repos["output"] == {"owner": "alice", "repos": ["adk-asgi", "lisbon-trip"]}
            used = await client.get(location.replace(one, other))
            seen.append(used.content)
            assert used.status_code == 400 and b"already used" in used.content
            # Each chat as an ADK eval set: the answered pauses, never a secret (checked
            # with every response below).
            for chat in ("key", "token", "input", "oauth"):
                eval_set = await client.get(f"{other}/{chat}/evalset")
                assert eval_set.status_code == 200, eval_set.text
                assert eval_set.json()["eval_cases"][0]["conversation"], chat
                seen.append(eval_set.content)
            state = provider.state()
        secrets = [
            WEATHER_KEY,
            NOTES_TOKEN,
            *[t[k] for t in state["issued"] for k in ("access_token", "refresh_token")],
        ]
        assert len(secrets) == 4, state["issued"]  # one sign-in: an access and a refresh token
        assert sorted(tuple(s) for s in state["seen"]) == sorted(
            [
                ("weather", WEATHER_KEY),
                ("notes", NOTES_TOKEN),
                ("repos", state["issued"][0]["access_token"]),
            ]
        )
        stored = _redis_bytes(redis_url)
    # Everything is closed: the session file is complete.
    session_bytes = _files_bytes(tmp_path, "chats.db*")
    span_bytes = json.dumps(
        [
            {
                "name": s.name,
                "attributes": dict(s.attributes or {}),
                "events": [dict(e.attributes or {}) for e in s.events],
            }
            for s in spans.get_finished_spans()
        ],
        default=str,
    ).encode()
    assert len(spans.get_finished_spans()) > 10  # ADK's spans were recorded
    log_bytes = logs.getvalue().encode()
    assert b"adk_asgi" in log_bytes and b"google_adk" in log_bytes  # DEBUG was on
    for secret in secrets:
        token = secret.encode()
        for where, data in (
            ("a response", b"".join(seen)),
            ("Redis", stored),
            ("the session file", session_bytes),
            ("the logs", log_bytes),
            ("the spans", span_bytes),
        ):
            assert token not in data, f"{secret[:6]}… is in {where}"


def _files_bytes(folder: Path, pattern: str) -> bytes:
    """The session file and its journals (-wal, -shm)."""
    return b"".join(p.read_bytes() for p in sorted(folder.glob(pattern)))


def _redis_bytes(url: str) -> bytes:
    """Every key and value the stream store wrote (strings, streams, sorted sets)."""
    redis = Redis.from_url(url)
    out = []
    for key in redis.scan_iter("pauses:*"):
        kind = redis.type(key)
        out.append(key)
        if kind == b"string":
            out.append(redis.get(key) or b"")
        elif kind == b"stream":
            out.extend(v for _, fields in redis.xrange(key) for v in fields.values())
        elif kind == b"zset":
            out.extend(redis.zrange(key, 0, -1))
    redis.close()
    return b"".join(out)


async def test_a_workflow_tool_nodes_own_credential_request_stays_a_server_call() -> None:
    """ADK reads a tool node's credential (``wf_auth:<path>``) from the resume's function
    response, where the bridge puts no secret: the page is not asked (docs: Credentials)."""
    from fastapi.openapi.models import APIKey, APIKeyIn
    from google.adk.apps import App
    from google.adk.auth import AuthConfig, AuthCredential
    from google.adk.tools.authenticated_function_tool import AuthenticatedFunctionTool
    from google.adk.workflow import Workflow

    def forecast(city: str, credential: AuthCredential) -> dict[str, Any]:
        """The forecast."""
        return {"city": city}

    tool = AuthenticatedFunctionTool(
        func=forecast,
        auth_config=AuthConfig(auth_scheme=APIKey(**{"in": APIKeyIn.header, "name": "X-Key"})),
    )

    def where(node_input: Any) -> dict[str, Any]:
        return {"city": "Porto"}

    flow = Workflow(name="forecaster", edges=[("START", where, tool)])
    app = AdkApp(adk_app=App(name="forecaster", root_agent=flow), warm_up=False)
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        _, asked = await post(client, "wf-auth", user("forecast"))
        call = called(asked, "adk_request_credential")
        assert call["toolCallId"].startswith("wf_auth:") and call["providerExecuted"] is True
        status, body = await post(
            client, "wf-auth", continued(asked, answer(call, {"apiKey": WEATHER_KEY}))
        )
        assert (status, body["error"]["code"]) == (409, "server_tool_call")


async def test_a_sign_in_ends_when_cancelled_and_expires_when_issued() -> None:
    """The callback's ticket: a cancel at the provider (or an answer without a code) ends
    it, never puts it back with a fresh timeout; its deadline is fixed when it is issued
    (``sign_in_timeout`` later), and after it the callback finds nothing (no code is
    exchanged)."""
    app = AdkApp(
        adk_app=build_accounts("http://127.0.0.1:9"),
        warm_up=False,
        pauses=PauseOptions(sign_in_timeout=1.5),
    )
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        issued = time.time()
        _, asked = await post(client, "expiring", user("show my repos"))
        call = called(asked, "adk_request_credential")
        state = parse_qs(urlsplit(call["input"]["authUri"]).query)["state"][0]
        assert call["input"]["authUri"].endswith("redirect_uri=http%3A%2F%2Ft%2Foauth2%2Fcallback")
        cancelled = await client.get(
            "/oauth2/callback", params={"error": "access_denied", "state": state}
        )
        assert cancelled.status_code == 400 and b'"ok":false' in cancelled.content
        assert b'"error":"access_denied"' in cancelled.content
        ended = await client.get("/oauth2/callback", params={"code": "c0de", "state": state})
        assert ended.status_code == 400 and b"expired" in ended.content

        # Another sign-in: its deadline was fixed when it was issued.
        _, again = await post(client, "expiring-2", user("show my repos"))
        second = called(again, "adk_request_credential")
        state = parse_qs(urlsplit(second["input"]["authUri"]).query)["state"][0]
        ticket = await take_sign_in(app.store, state)
        assert ticket is not None and ticket.call_id == second["toolCallId"]
        assert issued + 1.5 <= ticket.expires <= time.time() + 1.5
        # Put back for longer than its deadline (as a store that outlives it would keep
        # it): still over when the deadline passes.
        await app.store.put_ticket(f"oauth2:{state}", msgspec.json.encode(ticket), 60)
        await asyncio.sleep(max(0.0, ticket.expires - time.time()) + 0.05)
        expired = await client.get("/oauth2/callback", params={"code": "c0de", "state": state})
        assert expired.status_code == 400 and b"expired" in expired.content
        assert expired.headers["referrer-policy"] == "no-referrer"
        assert expired.headers["cache-control"] == "no-store"
        unknown = await client.get("/oauth2/callback", params={"code": "c0de", "state": "made-up"})
        assert unknown.status_code == 400
