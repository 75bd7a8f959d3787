"""The team app (tests/agents/team: sub-agents, an AgentTool, confirmations, long-running
tools, state, callbacks) through every transport: SSE, live protocol A and protocol B."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from agents.team.agent import build_app

from adk_asgi import AdkApp, PauseOptions

from support import LoopbackServer, parse_sse
from support.ws_client import DONE, LiveClient, kinds, text, ws_url


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(AdkApp(adk_app=build_app(), warm_up=False)) as running:
        yield running


def user(text: str, n: int = 0) -> dict[str, Any]:
    return {"id": f"u{n}", "role": "user", "parts": [{"type": "text", "text": text}]}


def tools_called(chunks: list[Any]) -> list[str]:
    return [
        c["toolName"] for c in chunks if isinstance(c, dict) and c["type"] == "tool-input-available"
    ]


async def test_transfers_continue_the_message_and_end_the_turn(server: LoopbackServer) -> None:
    """Concierge -> billing -> back to the concierge, in one message, over SSE and live."""
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        sse = parse_sse(
            (
                await client.post(
                    "/", json={"id": "transfer-sse", "messages": [user("billing please")]}
                )
            ).text
        )
    live = await LiveClient.open(ws_url(server.url, "chatId=transfer-live"))
    try:
        await live.say("billing please")
        chunks = await live.turn(wait=15)
        await live.say("hello")  # the next turn is answered: nothing hangs
        after = await live.turn(wait=15)
    finally:
        await live.close()
    for got in (sse, chunks):
        assert tools_called(got) == ["transfer_to_agent", "transfer_to_agent"]
        assert kinds(got)[-2:] == ["finish", DONE]
        assert json.dumps(got).count('"type": "start"') == 1  # one message
    assert text(after) == "You said: hello"


# -- approvals: payloads and reasons --------------------------------------------------------


def answered(
    chunks: list[Any], *, approved: bool, reason: str | None = None, payload: Any = None
) -> dict[str, Any]:
    """The assistant message a client sends back after answering the approval request."""
    request = next(c for c in chunks if c["type"] == "tool-approval-request")
    restated = [
        c
        for c in chunks
        if c["type"] == "tool-input-available" and c["toolCallId"] == request["toolCallId"]
    ][-1]
    approval: dict[str, Any] = {"id": request["approvalId"], "approved": approved}
    if reason is not None:
        approval["reason"] = reason
    part: dict[str, Any] = {
        "type": f"tool-{restated['toolName']}",
        "toolCallId": request["toolCallId"],
        "state": "approval-responded",
        "input": restated["input"],
        "approval": approval,
    }
    if payload is not None:
        part["callProviderMetadata"] = {
            "adk": {**restated["providerMetadata"]["adk"], "payload": payload}
        }
    return {"id": chunks[0]["messageId"], "role": "assistant", "parts": [part]}


class SSEChat:
    def __init__(self, client: httpx.AsyncClient, chat_id: str) -> None:
        self.client, self.chat_id, self.messages = client, chat_id, list[dict[str, Any]]()

    async def post(self) -> list[Any]:
        response = await self.client.post("/", json={"id": self.chat_id, "messages": self.messages})
        assert response.status_code == 200, response.text
        return [c for c in parse_sse(response.text) if c != DONE]

    async def say(self, said: str) -> list[Any]:
        self.messages.append(user(said, len(self.messages)))
        return await self.post()

    async def answer(self, message: dict[str, Any]) -> list[Any]:
        self.messages.append(message)
        return await self.post()


class LiveBChat:
    """Protocol B, as the AI SDK v7 WebSocketChatTransport speaks it."""

    def __init__(self, client: LiveClient, chat_id: str) -> None:
        self.client, self.chat_id, self.messages = client, chat_id, list[dict[str, Any]]()
        self.sent = 0

    async def post(self) -> list[Any]:
        self.sent += 1
        request_id = f"r{self.sent}"
        await self.client.ws.send(
            json.dumps(
                {
                    "type": "send",
                    "requestId": request_id,
                    "id": self.chat_id,
                    "messages": self.messages,
                }
            )
        )
        chunks: list[Any] = []
        while True:
            raw = await self.client.ws.recv(decode=True)
            frame = json.loads(raw)
            if frame.get("requestId") != request_id:
                continue
            if frame["type"] == "end":
                return chunks
            assert frame["type"] == "chunk", frame
            chunks.append(frame["chunk"])

    async def say(self, said: str) -> list[Any]:
        self.messages.append(user(said, len(self.messages)))
        return await self.post()

    async def answer(self, message: dict[str, Any]) -> list[Any]:
        self.messages.append(message)
        return await self.post()


@pytest.fixture(params=["sse", "live-b"])
async def chat(request: pytest.FixtureRequest, server: LoopbackServer) -> Any:
    chat_id = f"{request.node.name}"
    if request.param == "sse":
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
            yield SSEChat(client, chat_id)
        return
    client = await LiveClient.open(ws_url(server.url, f"chatId={chat_id}"))
    try:
        yield LiveBChat(client, chat_id)
    finally:
        await client.close()


def said(chunks: list[Any]) -> str:
    return text(chunks)


async def test_a_denial_reason_reaches_the_model(chat: SSEChat | LiveBChat) -> None:
    asked = await chat.say("refund 20 please")
    after = await chat.answer(answered(asked, approved=False, reason="too much"))
    assert "tool-output-denied" in kinds(after)
    assert '"reason": "too much"' in said(after)
    assert "This tool call is rejected." in said(after)
    # A tool that asked itself reads its denied confirmation; the reason is added.
    asked = await chat.say("send 5 to bob")
    after = await chat.answer(answered(asked, approved=False, reason="wrong person"))
    assert '"reason": "wrong person"' in said(after) and '"status": "cancelled"' in said(after)


async def test_a_dynamic_confirmation_returns_its_payload(chat: SSEChat | LiveBChat) -> None:
    """send_money asks with a payload; the tool pays what the (edited) payload says."""
    asked = await chat.say("send 30 to alice")
    request = next(
        c for c in asked if c["type"] == "tool-input-available" and "providerMetadata" in c
    )
    assert request["providerMetadata"]["adk"]["payload"] == {"amount": 30, "to": "alice"}
    assert request["providerMetadata"]["adk"]["hint"] == "Send 30 to alice?"
    after = await chat.answer(answered(asked, approved=True, payload={"amount": 25, "to": "alice"}))
    assert '"status": "sent"' in said(after) and '"amount": 25' in said(after)


# -- one turn at a time per chat, over any transport ----------------------------------------


async def test_turns_of_one_chat_never_interleave_across_sockets_and_posts() -> None:
    """Two live sockets and a POST on one chat at once: each turn holds the chat's turn
    lock, so the session reads question, answer, question, answer."""
    app = AdkApp(adk_app=build_app(delay=0.03), warm_up=False)
    words = " ".join(f"w{i}" for i in range(12))
    with LoopbackServer(app) as running:
        first = await LiveClient.open(ws_url(running.url, "chatId=shared"))
        second = await LiveClient.open(ws_url(running.url, "chatId=shared"))
        try:
            async with httpx.AsyncClient(base_url=running.url, timeout=30) as client:
                await first.say(f"one {words}")
                await second.say(f"two {words}")
                posted, a, b = await asyncio.gather(
                    client.post("/", json={"id": "shared", "messages": [user(f"three {words}")]}),
                    first.turn(wait=20),
                    second.turn(wait=20),
                )
        finally:
            await first.close()
            await second.close()
        assert posted.status_code == 200
        runtime = app.runtime
        session = await runtime.session_service.get_session(
            app_name=runtime.app_name, user_id="anonymous", session_id="shared"
        )
    assert session is not None
    spoken = [
        (e.author, (e.content.parts[0].text or "").split(" ")[0:3])
        for e in session.events
        if e.content and e.content.parts and e.content.parts[0].text and not e.partial
    ]
    questions = [s for s in spoken if s[0] == "user"]
    assert len(questions) == 3
    for index in range(0, len(spoken), 2):  # each question is followed by its answer
        (asker, question), (answerer, answer) = spoken[index], spoken[index + 1]
        assert asker == "user" and answerer == "concierge", spoken
        assert answer == ["You", "said:", question[0]], spoken
    assert text(a).endswith(words) and text(b).endswith(words)


# -- long-running tools ------------------------------------------------------------------------


def preliminary(chunks: list[Any], name: str) -> tuple[str, Any]:
    """The call id and interim output of the long-running call to ``name``."""
    [call] = [c for c in chunks if c["type"] == "tool-input-available" and c["toolName"] == name]
    assert call["providerExecuted"] is True  # a server tool: the page's onToolCall stays out
    [interim] = [
        c
        for c in chunks
        if c["type"] == "tool-output-available" and c["toolCallId"] == call["toolCallId"]
    ]
    assert interim["preliminary"] is True
    return call["toolCallId"], interim["output"]


def as_message(chunks: list[Any], call_id: str, name: str, output: Any) -> dict[str, Any]:
    return {
        "id": chunks[0]["messageId"],
        "role": "assistant",
        "parts": [
            {
                "type": f"tool-{name}",
                "toolCallId": call_id,
                "state": "output-available",
                "input": {},
                "output": output,
                "providerExecuted": True,
                "preliminary": True,
            }
        ],
    }


async def test_a_long_running_server_call_is_completed_by_the_server(
    server: LoopbackServer,
) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        chat = SSEChat(client, "ticket")
        asked = await chat.say("open a ticket please")
        call_id, interim = preliminary(asked, "open_ticket")
        assert interim["status"] == "pending" and asked[-1]["finishReason"] == "stop"
        # The page re-sends the message with the interim result: an echo, not an answer;
        # a different result from the page is refused (not one of client_completes).
        echo = as_message(asked, call_id, "open_ticket", interim)
        response = await client.post("/", json={"id": "ticket", "messages": [*chat.messages, echo]})
        assert response.json()["error"]["code"] == "nothing_to_continue"
        forged = as_message(asked, call_id, "open_ticket", {"status": "resolved"})
        response = await client.post(
            "/", json={"id": "ticket", "messages": [*chat.messages, forged]}
        )
        assert (response.status_code, response.json()["error"]["code"]) == (409, "server_tool_call")
        # The back-office completes it: a new message, resumable, that states the call again
        # (a resumed stream is replayed from its start into a fresh message).
        done = await client.post(
            "/ticket/tool-output",
            json={"toolCallId": call_id, "output": {"status": "resolved", "ticket": "T-1"}},
        )
        assert done.status_code == 202
        message_id = done.json()["messageId"]
        assert message_id != asked[0]["messageId"]
        resumed = await client.get("/ticket/stream")
        chunks = [c for c in parse_sse(resumed.text) if c != DONE]
        assert chunks[0] == {"type": "start", "messageId": message_id}
        assert [c["type"] for c in chunks[1:4]] == [
            "start-step",
            "tool-input-start",
            "tool-input-available",
        ]
        assert chunks[3]["providerExecuted"] is True and chunks[3]["toolCallId"] == call_id
        assert chunks[4] == {
            "type": "tool-output-available",
            "toolCallId": call_id,
            "output": {"status": "resolved", "ticket": "T-1"},
        }
        assert said(chunks) == ('open_ticket returned {"status": "resolved", "ticket": "T-1"}.')
        again = await client.post(
            "/ticket/tool-output", json={"toolCallId": call_id, "errorText": "twice"}
        )
        assert (again.status_code, again.json()["error"]["code"]) == (409, "unknown_tool_call")
        for body, status, code in (
            ({"toolCallId": "nope", "output": {}}, 409, "unknown_tool_call"),
            ({"toolCallId": call_id}, 422, "invalid_tool_output"),
            ({"toolCallId": call_id, "output": [1]}, 422, "invalid_tool_output"),
        ):
            refused = await client.post("/ticket/tool-output", json=body)
            assert (refused.status_code, refused.json()["error"]["code"]) == (status, code)
        other = await client.post(
            "/no-such-chat/tool-output", json={"toolCallId": call_id, "output": {}}
        )
        assert (other.status_code, other.json()["error"]["code"]) == (404, "chat_not_found")


async def test_a_completion_from_python_after_later_turns(server: LoopbackServer) -> None:
    app = server.config.app
    assert isinstance(app, AdkApp)
    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        chat = SSEChat(client, "ticket-later")
        asked = await chat.say("open a ticket please")
        call_id, _ = preliminary(asked, "open_ticket")
        await chat.say("hello")
        message_id = await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(
                app.complete_tool_call(
                    "ticket-later", call_id, error_text="no agent free", wait=True
                ),
                server.loop,
            )
        )
        chunks = [
            c for c in parse_sse((await client.get("/ticket-later/stream")).text) if c != DONE
        ]
    assert message_id != asked[0]["messageId"] and chunks[0]["messageId"] == message_id
    assert [c["type"] for c in chunks[1:5]] == [
        "start-step",
        "tool-input-start",
        "tool-input-available",
        "tool-output-error",
    ]
    assert chunks[3]["toolCallId"] == call_id and chunks[3]["providerExecuted"] is True
    assert chunks[4]["errorText"] == "no agent free"


async def test_the_page_completes_the_long_running_calls_the_app_lets_it() -> None:
    app = AdkApp(
        adk_app=build_app(), pauses=PauseOptions(client_completes=["book_trip"]), warm_up=False
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        chat = SSEChat(client, "trip")
        asked = await chat.say("book a trip to Paris")
        call_id, interim = preliminary(asked, "book_trip")
        assert interim == {"status": "pending", "city": "Paris"}
        after = await chat.answer(
            as_message(asked, call_id, "book_trip", {"status": "booked", "city": "Paris"})
        )
    assert after[0] == {"type": "start", "messageId": asked[0]["messageId"]}
    assert after[1] == {
        "type": "tool-output-available",
        "toolCallId": call_id,
        "output": {"status": "booked", "city": "Paris"},
    }
    assert said(after) == 'book_trip returned {"city": "Paris", "status": "booked"}.'
    with pytest.raises(ValueError, match="not long-running server tools of the agent: refund"):
        await AdkApp(
            adk_app=build_app(), pauses=PauseOptions(client_completes=["refund"]), warm_up=False
        ).startup()


async def test_only_the_chats_owner_completes_its_calls() -> None:
    def header_user(scope: Any) -> str:
        return dict(scope["headers"]).get(b"x-user", b"nobody").decode()

    app = AdkApp(adk_app=build_app(), authenticate=header_user, warm_up=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        client.headers["x-user"] = "alice"
        asked = await SSEChat(client, "owned").say("open a ticket please")
        call_id, _ = preliminary(asked, "open_ticket")
        body = {"toolCallId": call_id, "output": {"status": "resolved"}}
        bob = await client.post("/owned/tool-output", json=body, headers={"x-user": "bob"})
        assert (bob.status_code, bob.json()["error"]["code"]) == (404, "chat_not_found")
        alice = await client.post("/owned/tool-output", json=body)
        assert alice.status_code == 202
