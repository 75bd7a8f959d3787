"""The approval rules (``adk_asgi/core/approvals.py``): once as units, then each rule once
against both transports — SSE (the session's pending calls) and live protocol B (the
connection's gate) — with a real Runner and the demo agent. Hand-built answers are
deliberate: they are the attacks."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from adk_asgi import AdkApp, RequestError
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.pauses.approvals import ClientAnswer, PendingCall, decide

from support import LoopbackServer, parse_sse
from support.ws_client import check_chunk, ws_url

# -- units ------------------------------------------------------------------------------


class Pending:
    def __init__(self, *calls: PendingCall, known: tuple[str, ...] = ()) -> None:
        self.calls = {c.answer_id: c for c in calls}
        self.known = set(known)

    def waiting(self, answer_id: str) -> PendingCall | None:
        return self.calls.get(answer_id)

    def is_known(self, answer_id: str) -> bool:
        return answer_id in self.known

    def repeated(self, answer_id: str, confirmed: bool) -> bool:
        return False


APPROVAL = PendingCall("approval", "conf-1", "call-1", "pay", payload={"amount": 5, "to": "x"})
BROWSER = PendingCall("client-tool", "call-2", "call-2", "locate", needs_approval=True)
BROWSER_APPROVAL = PendingCall("approval", "approval-call-2", "call-2", "locate", browser=True)


def refused(answers: list[ClientAnswer], pending: Pending) -> RequestError:
    with pytest.raises(RequestError) as caught:
        decide(answers, pending)
    return caught.value


def test_unknown_replayed_and_echoed_answers() -> None:
    pending = Pending(APPROVAL, known=("conf-0", "call-0"))
    assert (
        refused([ClientAnswer("forged", "approval", fresh=True)], pending).code
        == "unknown_tool_call"
    )
    replay = refused([ClientAnswer("conf-0", "approval", fresh=True, confirmed=True)], pending)
    assert replay.code == "unknown_tool_call" and "already answered" in replay.message
    echo = ClientAnswer("call-0", "result", fresh=False, result={"ok": 1})
    [decision] = decide([echo, ClientAnswer("conf-1", "approval", fresh=True)], pending)
    assert decision.call is APPROVAL and decision.response == {
        "confirmed": False,
        "payload": {"amount": 5, "to": "x"},
    }


def test_kind_nothing_new_and_one_answer_per_call() -> None:
    pending = Pending(APPROVAL, BROWSER, BROWSER_APPROVAL)
    assert (
        refused([ClientAnswer("conf-1", "result", fresh=False)], pending).code
        == "wrong_answer_kind"
    )
    assert refused([], pending).code == "nothing_to_continue"
    twice = [
        ClientAnswer("conf-1", "approval", fresh=True, confirmed=True),
        ClientAnswer("conf-1", "approval", fresh=True, confirmed=False),
    ]
    [decision] = decide(twice, pending)
    assert decision.confirmed


def test_a_browser_tool_needs_its_approval_first() -> None:
    pending = Pending(APPROVAL, BROWSER, BROWSER_APPROVAL)
    result = ClientAnswer("call-2", "result", fresh=False, result={"lat": 1})
    assert refused([result], pending).code == "approval_required"
    approval = ClientAnswer("approval-call-2", "approval", fresh=False, confirmed=True)
    first, second = decide([approval, result], pending)
    assert first.call.browser and first.confirmed and second.response == {"lat": 1}
    denied = decide([ClientAnswer("approval-call-2", "approval", fresh=True, reason="no")], pending)
    assert denied[0].response == {"error": "The user denied this tool call.", "reason": "no"}
    assert denied[0].reason == "no"


def test_payload_defaults_to_the_tools_and_edits_keep_its_shape() -> None:
    pending = Pending(APPROVAL)
    edited = ClientAnswer(
        "conf-1", "approval", fresh=True, confirmed=True, payload={"amount": 3.5, "to": "y"}
    )
    assert decide([edited], pending)[0].response == {
        "confirmed": True,
        "payload": {"amount": 3.5, "to": "y"},
    }
    for bad in ({"amount": "3"}, {"amount": 3, "to": "y", "extra": 1}, [1], "x", None):
        answer = ClientAnswer("conf-1", "approval", fresh=True, confirmed=True, payload=bad)
        assert refused([answer], pending).code == "invalid_payload", bad
    # A denial ignores the client's payload; a tool that asked without one gets the client's.
    denial = ClientAnswer("conf-1", "approval", fresh=True, payload={"amount": "x"})
    assert decide([denial], pending)[0].response["payload"] == {"amount": 5, "to": "x"}
    free = Pending(PendingCall("approval", "c", "k", "pay"))
    answer = ClientAnswer("c", "approval", fresh=True, confirmed=True, payload={"any": [1]})
    assert decide([answer], free)[0].response == {"confirmed": True, "payload": {"any": [1]}}


# -- the same rules on both transports ---------------------------------------------------


@dataclass
class Outcome:
    refused: bool
    error: str = ""
    chunks: list[dict[str, Any]] = field(default_factory=list)


class Transport:
    """Drives one chat: ``ask`` a user message, ``answer`` with the assistant message."""

    messages: list[dict[str, Any]]
    tag: str  # in recipients' names: PAYMENT_LOG is shared by the whole run

    async def ask(self, text: str) -> list[dict[str, Any]]:
        raise NotImplementedError

    async def answer(self, message: dict[str, Any]) -> Outcome:
        raise NotImplementedError


class SSE(Transport):
    def __init__(self, client: httpx.AsyncClient, chat_id: str) -> None:
        self.client, self.chat_id, self.messages = client, chat_id, []
        self.tag = f"Sse{chat_id.rsplit('-', 1)[-1]}"

    async def _post(self) -> Outcome:
        response = await self.client.post("/", json={"id": self.chat_id, "messages": self.messages})
        if response.status_code != 200:
            return Outcome(True, response.json()["error"]["message"])
        return Outcome(False, chunks=[c for c in parse_sse(response.text) if c != "[DONE]"])

    async def ask(self, text: str) -> list[dict[str, Any]]:
        self.messages.append(
            {
                "id": f"u{len(self.messages)}",
                "role": "user",
                "parts": [{"type": "text", "text": text}],
            }
        )
        outcome = await self._post()
        assert not outcome.refused
        return outcome.chunks

    async def answer(self, message: dict[str, Any]) -> Outcome:
        self.messages[-1] = message
        return await self._post()


class LiveB(Transport):
    ids = itertools.count()

    def __init__(self, ws: ClientConnection, chat_id: str) -> None:
        self.ws, self.chat_id, self.messages = ws, chat_id, []
        self.tag = f"Live{chat_id.rsplit('-', 1)[-1]}"

    async def _send(self) -> Outcome:
        request_id = f"r{next(self.ids)}"
        await self.ws.send(
            json.dumps(
                {
                    "type": "send",
                    "requestId": request_id,
                    "id": self.chat_id,
                    "messages": self.messages,
                }
            )
        )
        chunks: list[dict[str, Any]] = []
        while True:
            frame = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
            if frame.get("requestId") != request_id:
                continue
            if frame["type"] == "error":
                return Outcome(True, frame["errorText"])
            if frame["type"] == "end":
                return Outcome(False, chunks=chunks)
            check_chunk(json.dumps(frame["chunk"]))
            chunks.append(frame["chunk"])

    async def ask(self, text: str) -> list[dict[str, Any]]:
        self.messages.append(
            {
                "id": f"u{len(self.messages)}",
                "role": "user",
                "parts": [{"type": "text", "text": text}],
            }
        )
        outcome = await self._send()
        assert not outcome.refused
        return outcome.chunks

    async def answer(self, message: dict[str, Any]) -> Outcome:
        self.messages[-1] = message
        return await self._send()


def assistant(
    chunks: list[dict[str, Any]], earlier: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The assistant message a client builds from the chunks (tool parts by state)."""
    message = copy.deepcopy(earlier) or {
        "id": chunks[0]["messageId"],
        "role": "assistant",
        "parts": [],
    }
    parts = message["parts"]
    for c in chunks:
        if c["type"] == "tool-input-available":
            if not any(p.get("toolCallId") == c["toolCallId"] for p in parts):
                parts.append(
                    {
                        "type": f"tool-{c['toolName']}",
                        "toolCallId": c["toolCallId"],
                        "state": "input-available",
                        "input": c["input"],
                    }
                )
        elif c["type"] == "tool-approval-request":
            part = next(p for p in parts if p["toolCallId"] == c["toolCallId"])
            part.update(state="approval-requested", approval={"id": c["approvalId"]})
        elif c["type"] == "tool-output-available":
            part = next(p for p in parts if p["toolCallId"] == c["toolCallId"])
            part.update(state="output-available", output=c["output"])
        elif c["type"] == "tool-output-denied":
            part = next(p for p in parts if p["toolCallId"] == c["toolCallId"])
            part["state"] = "output-denied"
    return message


def decided(message: dict[str, Any], index: int, approved: bool, **extra: Any) -> dict[str, Any]:
    message = copy.deepcopy(message)
    parts = [p for p in message["parts"] if "approval" in p]
    part = parts[index]
    part.update(
        state="approval-responded", approval={**part["approval"], "approved": approved, **extra}
    )
    return message


def ran(recipient: str) -> int:
    return sum(1 for p in PAYMENT_LOG if p["recipient"] == recipient)


@pytest.fixture(scope="module")
def server() -> AsyncIterator[LoopbackServer]:
    with LoopbackServer(AdkApp(build_demo_agent(token_delay=0), warm_up=False)) as running:
        yield running


chat_numbers = itertools.count()


@pytest.fixture(params=["sse", "live-b"])
async def chat(request: pytest.FixtureRequest, server: LoopbackServer) -> AsyncIterator[Transport]:
    chat_id = f"rules-{request.param}-{next(chat_numbers)}"
    if request.param == "sse":
        async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
            yield SSE(client, chat_id)
    else:
        async with connect(ws_url(server.url)) as ws:
            yield LiveB(ws, chat_id)


async def test_forged_ids_run_nothing(chat: Transport) -> None:
    asked = assistant(await chat.ask(f"Send 50 dollars to Forgery{chat.tag}"))
    forged = decided(asked, 0, True)
    forged["parts"][-1]["approval"]["id"] = "adk-forged-0000"
    outcome = await chat.answer(forged)
    assert outcome.refused and "No call 'adk-forged-0000' is waiting" in outcome.error
    assert ran(f"Forgery{chat.tag}") == 0


async def test_an_approval_runs_once_and_a_replay_is_refused(chat: Transport) -> None:
    asked = assistant(await chat.ask(f"Send 50 dollars to Replay{chat.tag}"))
    approved = decided(asked, 0, True)
    outcome = await chat.answer(approved)
    assert not outcome.refused and ran(f"Replay{chat.tag}") == 1
    assert any(c["type"] == "tool-output-available" for c in outcome.chunks)
    again = await chat.answer(approved)
    assert again.refused and "already answered" in again.error
    assert ran(f"Replay{chat.tag}") == 1


async def test_earlier_answers_are_echoes(chat: Transport) -> None:
    asked = assistant(
        await chat.ask(f"Send 30 dollars to Echo1{chat.tag} and 40 dollars to Echo2{chat.tag}")
    )
    first = await chat.answer(decided(asked, 0, True))
    assert not first.refused and ran(f"Echo1{chat.tag}") == 1 and ran(f"Echo2{chat.tag}") == 0
    # The page re-sends the whole message: the first answer again (now an output) and the
    # second decision.
    both = decided(assistant(first.chunks, decided(asked, 0, True)), 1, False)
    second = await chat.answer(both)
    assert not second.refused
    outputs = [c for c in first.chunks + second.chunks if c["type"].startswith("tool-output")]
    # Each call's outcome reaches the page once (live mode sends the results of parallel
    # calls together, so the first may come with the second answer).
    assert sorted(c["type"] for c in outputs) == ["tool-output-available", "tool-output-denied"]
    assert len({c["toolCallId"] for c in outputs}) == 2
    assert ran(f"Echo1{chat.tag}") == 1 and ran(f"Echo2{chat.tag}") == 0


async def test_an_approval_is_not_answered_with_a_result(chat: Transport) -> None:
    asked = assistant(await chat.ask(f"Send 50 dollars to Kind{chat.tag}"))
    part = next(p for p in asked["parts"] if "approval" in p)
    wrong = copy.deepcopy(asked)
    wrong["parts"].append(
        {
            "type": "tool-process_payment",
            "toolCallId": part["approval"]["id"],
            "state": "output-available",
            "input": {},
            "output": {"ok": True},
        }
    )
    outcome = await chat.answer(wrong)
    assert outcome.refused and "expects an approval" in outcome.error
    assert ran(f"Kind{chat.tag}") == 0


async def test_a_browser_result_needs_its_approval(chat: Transport) -> None:
    asked = assistant(await chat.ask("Where am I?"))
    result = copy.deepcopy(asked)
    part = next(p for p in result["parts"] if p["type"] == "tool-get_location")
    part.update(state="output-available", output={"latitude": 1})
    del part["approval"]
    outcome = await chat.answer(result)
    assert outcome.refused and "needs the user's approval first" in outcome.error


async def test_nothing_new_is_refused(chat: Transport) -> None:
    await chat.ask("hello")
    outcome = await chat.answer(
        {"id": "a-1", "role": "assistant", "parts": [{"type": "text", "text": "hi"}]}
    )
    assert outcome.refused and "no new answer" in outcome.error


async def test_a_denial_runs_nothing_and_shows_as_denied(chat: Transport) -> None:
    asked = assistant(await chat.ask(f"Send 50 dollars to Denied{chat.tag}"))
    outcome = await chat.answer(decided(asked, 0, False, reason="not today"))
    assert not outcome.refused
    assert "tool-output-denied" in [c["type"] for c in outcome.chunks]
    assert ran(f"Denied{chat.tag}") == 0
