"""Property-based tests of the chat request path: the body parser, the bounded body
reader and the whole HTTP endpoint (real ADK Runner, offline demo agent).

For arbitrary bytes and for structurally valid but hostile JSON the endpoint answers
either a 2xx SSE stream that ends with ``data: [DONE]`` or a 4xx JSON error, never
a 5xx; every example is bounded in time, and no task outlives its request.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adk_asgi import AdkApp, Limits, RequestError
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.http.turn.plan import plan_turn
from adk_asgi.wire.request import ChatRequest, decode_chat_request

from support import parse_sse, user_message
from support.fuzz_harness import (
    EXAMPLE_TIMEOUT,
    ErrorLog,
    asgi_post,
    assert_no_other_tasks,
    check_http,
)
from support.fuzz_strategies import (
    TOOL_STATES,
    anything,
    approvals,
    fuzz_settings,
    ids,
    json_documents,
    mutated,
    plain_bodies,
    request_bodies,
    to_bytes,
    tool_part,
    twisted,
    valid_or,
)


class Server:
    """The demo app and one event loop for a whole test's examples."""

    def __init__(self) -> None:
        self.app = AdkApp(
            build_demo_agent(token_delay=0),
            warm_up=False,
            limits=Limits(max_body_bytes=4 * 1024 * 1024),
        )
        self.runner = asyncio.Runner()
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.errors = ErrorLog()

    def run(self, coro: Any) -> Any:
        return self.runner.run(coro)

    def close(self) -> None:
        self.runner.run(self.app.shutdown())
        self.runner.close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    try:
        yield s
    finally:
        s.close()


async def post(server: Server, body: bytes) -> str:
    """POST ``body`` through httpx's ASGI transport; check the answer and the aftermath."""
    transport = httpx.ASGITransport(app=server.app)
    with server.errors:
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await asyncio.wait_for(
                client.post("/", content=body, headers={"content-type": "application/json"}),
                EXAMPLE_TIMEOUT,
            )
        outcome = check_http(response.status_code, dict(response.headers), response.content)
        await assert_no_other_tasks()
    assert server.app.store.held_locks == 0  # type: ignore[attr-defined], "a chat lock outlived its request"
    server.outcomes[outcome] += 1
    return outcome


# -- the parser alone ---------------------------------------------------------------


def _decode(body: bytes) -> ChatRequest | None:
    try:
        request = decode_chat_request(body)
    except RequestError as error:
        # 413: the message/part/file limits (Limits) apply at decoding.
        assert error.status in (400, 413, 422), error.status
        return None
    assert request.id and request.history
    return request


@fuzz_settings(400)
@given(st.one_of(st.binary(max_size=2048), mutated(json_documents)))
def test_decode_arbitrary_bytes(body: bytes) -> None:
    _decode(body)


@fuzz_settings(300)
@given(st.one_of(json_documents, twisted(plain_bodies)))
def test_decode_and_plan_hostile_json(document: Any) -> None:
    """Decoding, then planning the turn of a new chat (the parts become ADK content:
    data: URLs decoded, file references built): only RequestError ever escapes."""
    request = _decode(to_bytes(document))
    if request is None:
        return
    try:
        turn = plan_turn(request, None)
    except RequestError as error:
        assert 400 <= error.status < 500
        return
    assert turn.new_message is None or turn.new_message.parts


# -- the whole endpoint -------------------------------------------------------------


def test_endpoint_arbitrary_bytes(server: Server) -> None:
    @fuzz_settings(40)
    @given(st.one_of(st.binary(max_size=4096), mutated(request_bodies)))
    def run(body: bytes) -> None:
        server.run(post(server, body))

    run()
    assert server.errors.records == []


def test_endpoint_hostile_json(server: Server) -> None:
    @fuzz_settings(100)
    @given(st.one_of(plain_bodies, twisted(plain_bodies), request_bodies))
    def run(document: Any) -> None:
        server.run(post(server, to_bytes(document)))

    run()
    assert server.errors.records == [], server.errors.messages()
    # not vacuous: hostile bodies reach the model as well as the error paths
    print(server.outcomes)
    assert server.outcomes["stream"] > 0 and len(server.outcomes) > 2, server.outcomes


# -- the body reader: Content-Length, chunking, disconnects ------------------------

content_lengths = st.one_of(
    st.none(),
    st.just("exact"),
    st.sampled_from(
        [
            b"",
            b"0",
            b"-1",
            b" 12 ",
            b"1_0",
            b"0x10",
            b"1e3",
            b"+5",
            b"99999999999999999999999",
            b"\xd9\xa1",
            b"\xff",
            b"5, 5",
        ]
    ),
    st.binary(max_size=8),
)


RawRequest = tuple[list[bytes], list[tuple[bytes, bytes]], int | None, bool]


@st.composite
def raw_requests(draw: st.DrawFn) -> RawRequest:
    body = draw(
        st.one_of(plain_bodies.map(to_bytes), request_bodies.map(to_bytes), st.binary(max_size=512))
    )
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=4)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    headers: list[tuple[bytes, bytes]] = []
    for _ in range(draw(st.integers(0, 2))):
        value = draw(content_lengths)
        if value is not None:
            headers.append(
                (b"content-length", str(len(body)).encode() if value == "exact" else value)
            )
    headers += draw(
        st.lists(
            st.tuples(st.sampled_from([b"content-type", b"x-y", b""]), st.binary(max_size=20)),
            max_size=2,
        )
    )
    disconnect = draw(st.one_of(st.none(), st.integers(0, len(chunks))))
    return chunks, headers, disconnect, draw(st.booleans())


def test_body_reader_raw_asgi(server: Server) -> None:
    """Bodies split across ASGI messages, bogus or repeated Content-Length headers,
    clients that leave mid-body or mid-stream: a well-formed answer or, for a client
    that left, nothing more; never a task left behind."""

    async def exchange(
        chunks: list[bytes],
        headers: list[tuple[bytes, bytes]],
        disconnect: int | None,
        leave_mid_stream: bool,
    ) -> None:
        with server.errors:
            result = await asgi_post(server.app, chunks, headers, disconnect, leave_mid_stream)
            await assert_no_other_tasks()
        assert server.app.store.held_locks == 0  # type: ignore[attr-defined], "a chat lock outlived its request"
        if result.status is None:
            assert disconnect is not None, "no answer to a client that stayed"
            server.outcomes["gone"] += 1
            return
        if not result.complete and (leave_mid_stream or disconnect is not None):
            assert result.status == 200  # errors are sent whole, streams cut short
            server.outcomes["left mid-stream"] += 1
            return
        assert result.complete, "the response never ended"
        headers_ = {k.decode(): v.decode() for k, v in result.headers.items()}
        server.outcomes[check_http(result.status, headers_, result.body)] += 1

    @fuzz_settings(80)
    @given(raw_requests())
    def run(request: RawRequest) -> None:
        server.run(exchange(*request))

    run()
    print(server.outcomes)
    assert server.errors.records == [], server.errors.messages()
    assert len(server.outcomes) > 2, server.outcomes


# -- answers for a turn that really waits ------------------------------------------


async def _pending_payment(server: Server, chat_id: str) -> list[dict[str, Any]]:
    """Turn 1 of a chat: a payment that waits for approval. The client's history."""
    transport = httpx.ASGITransport(app=server.app)
    first = user_message("Send 30 dollars to Fuzz1 and 40 dollars to Fuzz2", "u0")
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.post("/", json={"id": chat_id, "messages": [first]})
    chunks = parse_sse(response.text)
    parts: list[dict[str, Any]] = []
    for c in chunks:
        if isinstance(c, dict) and c["type"] == "tool-approval-request":
            parts.append(
                {
                    "type": "tool-process_payment",
                    "toolCallId": c["toolCallId"],
                    "state": "approval-requested",
                    "input": {},
                    "approval": {"id": c["approvalId"]},
                }
            )
    assert len(parts) == 2, chunks
    return [first, {"id": chunks[0]["messageId"], "role": "assistant", "parts": parts}]


@st.composite
def hostile_answers(draw: st.DrawFn, real: list[dict[str, Any]]) -> list[Any]:
    """The assistant message's parts: the real pending parts answered, mostly as a
    client would, with forged states, ids, approvals and outputs, echoes, duplicates
    and strangers mixed in."""
    real_ids = [p["toolCallId"] for p in real] + [p["approval"]["id"] for p in real]
    some_id = st.one_of(st.sampled_from(real_ids), ids)
    out: list[Any] = []
    for original in real:
        part = {
            **original,
            "state": "approval-responded",
            "approval": {**original["approval"], "approved": draw(st.booleans())},
        }
        for change in draw(
            st.lists(
                st.sampled_from(
                    ["state", "approval", "approval-id", "call-id", "output", "type", "drop"]
                ),
                max_size=2,
                unique=True,
            )
        ):
            if change == "state":
                part["state"] = draw(valid_or(st.sampled_from(TOOL_STATES)))
            elif change == "approval":
                part["approval"] = draw(
                    st.one_of(
                        st.fixed_dictionaries(
                            {"id": some_id},
                            optional={
                                "approved": valid_or(st.booleans()),
                                "reason": valid_or(st.text(max_size=5)),
                            },
                        ),
                        approvals,
                    )
                )
            elif change == "approval-id":
                part["approval"] = {**part["approval"], "id": draw(some_id)}
            elif change == "call-id":
                part["toolCallId"] = draw(some_id)
            elif change == "output":
                part["state"] = draw(st.sampled_from(["output-available", "output-error"]))
                part["output"] = draw(anything)
                part["errorText"] = draw(st.text(max_size=5))
            elif change == "type":
                part["type"] = draw(
                    st.sampled_from(
                        [
                            "dynamic-tool",
                            "tool-adk_request_confirmation",
                            "tool-get_location",
                            "tool-get_weather",
                        ]
                    )
                )
            else:
                break  # the answer is missing altogether
        else:
            out.append(part)
    if draw(st.integers(0, 3)) == 0:
        out += draw(st.lists(tool_part, min_size=1, max_size=2))
    if draw(st.integers(0, 3)) == 0:
        out = out + out  # the same answers twice
    return draw(st.permutations(out))


def test_continuation_hostile_answers(server: Server) -> None:
    """A chat really waits for two approvals; the next request's assistant message
    carries forged, mixed, repeated or malformed answers. The contract holds, and no
    payment ever runs twice."""
    counter = iter(range(10**9))

    async def exchange(data: st.DataObject) -> None:
        chat_id = f"cont-{next(counter)}"
        PAYMENT_LOG.clear()
        history = await _pending_payment(server, chat_id)
        parts = data.draw(hostile_answers(history[1]["parts"]))
        body = {"id": chat_id, "messages": [history[0], {**history[1], "parts": parts}]}
        await post(server, to_bytes(body))
        assert sorted(p["recipient"] for p in PAYMENT_LOG) in (
            [],
            ["Fuzz1"],
            ["Fuzz2"],
            ["Fuzz1", "Fuzz2"],
        )

    @fuzz_settings(60)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        server.run(exchange(data))

    run()
    print(server.outcomes)
    assert server.errors.records == [], server.errors.messages()
    assert server.outcomes["stream"] > 0 and len(server.outcomes) > 1, server.outcomes
