"""Property-based tests of the live WebSocket side: both frame parsers (protocol A,
the seeds' envelope, and protocol B, ai@7 ``WebSocketChatTransport``) and whole
connections, in process and over a real uvicorn on loopback.

Arbitrary text and binary frames and hostile-but-valid frames never crash a
connection: errors come back as error chunks or, for refused audio and image frames,
``error`` control frames (A) or error frames (B), the
connection keeps answering, nothing is logged as an error, and once the client
leaves the connection ends and leaves no task behind.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from hypothesis import given
from hypothesis import strategies as st
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from adk_asgi import AdkApp, RequestError
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.live.protocol.commands import Audio, Image, Messages, detect, parse_json
from adk_asgi.live.protocol.protocol_a import ProtocolA
from adk_asgi.live.protocol.protocol_b import ProtocolB
from adk_asgi.wire.request import valid_chat_id

from support import LoopbackServer
from support.fuzz_harness import (
    EXAMPLE_TIMEOUT,
    ErrorLog,
    WsHarness,
    assert_no_other_tasks,
    bounded,
)
from support.fuzz_strategies import (
    ROLES,
    TOOL_STATES,
    anything,
    approvals,
    encode,
    fuzz_settings,
    ids,
    mutated,
    parts,
    text,
    tool_part,
    valid_or,
)

# -- frame strategies ------------------------------------------------------------------

seed_messages = st.one_of(
    st.fixed_dictionaries(
        {
            "role": valid_or(st.sampled_from(ROLES)),
            "content": valid_or(st.one_of(text, st.lists(parts, max_size=3))),
        },
        optional={"id": ids},
    ),
    st.fixed_dictionaries(
        {"role": valid_or(st.sampled_from(ROLES)), "parts": valid_or(st.lists(parts, max_size=3))},
        optional={"id": ids, "content": anything, "metadata": anything},
    ),
)
said = st.builds(
    lambda t: [{"role": "user", "content": t}],
    st.sampled_from(
        [
            "hello",
            "Send 5 dollars to Fz",
            "Where am I?",
            "Play track 2",
            "please fail",
            "think about it",
            "x",
        ]
    ),
)
message_lists = st.one_of(said, said, valid_or(st.lists(seed_messages, max_size=3)))
b64 = st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode())
sample_rates = st.one_of(st.sampled_from([16_000, 8_000, 0, -1, 2**40, 10**30]), anything)
images = st.one_of(
    b64,
    st.sampled_from([b"\xff\xd8\xff\xe0", b"\x89PNG\r\n\x1a\n\x00"]).map(
        lambda b: base64.b64encode(b).decode()
    ),
)
image_types = st.one_of(
    st.sampled_from(["image/jpeg", "image/png", "IMAGE/PNG", "image/gif"]), anything
)


def _a(kind: st.SearchStrategy[Any], **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A protocol A frame, its fields flat or nested under ``data`` (either works)."""
    body = st.fixed_dictionaries({}, optional={k: valid_or(v) for k, v in fields.items()})
    return st.builds(
        lambda k, b, nested, version: (
            {"type": k, "version": version, "data": b}
            if nested
            else {"type": k, "version": version, **b}
        ),
        kind,
        body,
        st.booleans(),
        valid_or(st.just("1.0")),
    )


a_frames = st.one_of(
    _a(st.just("message"), messages=message_lists, id=ids, chatId=ids),
    _a(st.just("message"), messages=message_lists, id=ids, chatId=ids),
    _a(st.just("tool_result"), toolCallId=ids, result=anything, toolName=text),
    _a(st.just("audio_chunk"), chunk=b64, audio=b64, sampleRate=sample_rates),
    _a(st.just("image_frame"), chunk=images, mimeType=image_types),
    _a(st.just("audio_control"), action=st.sampled_from(["start", "stop"])),
    _a(st.just("interrupt")),
    _a(st.just("ping"), timestamp=anything),
    _a(st.one_of(text, st.sampled_from(["send", "resume", "abort", "pong", "chunk"]))),
)
b_frames = st.fixed_dictionaries(
    {"type": valid_or(st.sampled_from(["send", "send", "resume", "abort"]))},
    optional={
        "requestId": valid_or(ids),
        "id": valid_or(ids),
        "messages": message_lists,
        "messageId": valid_or(ids),
        "trigger": valid_or(st.just("submit-message")),
        "headers": anything,
        "body": anything,
    },
)
json_frames = st.one_of(a_frames, b_frames, st.dictionaries(text, anything, max_size=3))
text_frames = st.one_of(
    json_frames.map(encode),
    json_frames.map(encode),
    text,
    mutated(json_frames).map(lambda b: b.decode("utf-8", "replace")),
)
PROMPTS = {
    "approval": "Send 5 dollars to Fz",
    "browser": "Play track 2",
    "browser-approval": "Where am I?",
}


def _open_turn(protocol: str, prompt: str, chat_id: str = "fz") -> str:
    """A well-formed first message of either protocol."""
    if protocol == "A":
        return json.dumps(
            {
                "type": "message",
                "version": "1.0",
                "data": {"id": chat_id, "messages": [{"role": "user", "content": prompt}]},
            }
        )
    return json.dumps(
        {
            "type": "send",
            "requestId": "r0",
            "id": chat_id,
            "trigger": "submit-message",
            "messages": [{"id": "u0", "role": "user", "parts": [{"type": "text", "text": prompt}]}],
        }
    )


turn_openers = st.builds(
    _open_turn,
    st.sampled_from(["A", "B"]),
    st.sampled_from(
        [
            *PROMPTS.values(),
            "hello",
            "please fail",
            "please raise",
            "think about it",
            "tell a long story",
        ]
    ),
    st.sampled_from(["fz", "fz2"]),
)
Frame = str | bytes
frames = st.one_of(text_frames, text_frames, turn_openers, st.binary(max_size=2048))
queries = st.one_of(
    st.sampled_from(
        [
            b"",
            b"modality=audio",
            b"chatId=fz",
            b"modality=%ff",
            b"chatId=&chatId=y",
            b"modality=AUDIO&chatId=" + b"x" * 300,
        ]
    ),
    st.binary(max_size=24),
)


# -- the parsers alone --------------------------------------------------------------


def _parse(raw: str | bytes) -> dict[str, Any] | None:
    try:
        frame = parse_json(raw)
    except RequestError as error:
        assert (error.status, error.code) == (400, "invalid_frame")
        return None
    assert isinstance(frame, dict) and isinstance(frame["type"], str)
    return frame


@fuzz_settings(400)
@given(
    st.one_of(
        text, st.binary(max_size=512), text_frames, mutated(json_frames), json_frames.map(encode)
    )
)
def test_parse_json_arbitrary_frames(raw: str | bytes) -> None:
    _parse(raw)


@fuzz_settings(300)
@given(json_frames)
def test_decode_both_protocols(frame: Any) -> None:
    """Whatever object with a string ``type`` arrives, both decoders either give a
    command or refuse it with a 4xx RequestError; ``detect`` always picks one."""
    parsed = _parse(encode(frame))
    if parsed is None:
        return
    assert detect(parsed) in ("A", "B")
    for decode in (ProtocolA.decode, ProtocolB.decode):
        try:
            command = decode(parsed)
        except RequestError as error:
            assert 400 <= error.status < 500
            continue
        if isinstance(command, Messages):
            assert command.messages
        if isinstance(command, Audio):
            assert command.mime_type.startswith("audio/pcm;rate=")
        if isinstance(command, Image):
            assert command.mime_type == command.mime_type.lower()


# -- whole connections, in process --------------------------------------------------


class Live:
    """The demo app and one event loop for a whole test's examples."""

    def __init__(self) -> None:
        self.app = AdkApp(build_demo_agent(token_delay=0), warm_up=False)
        self.runner = asyncio.Runner()
        self.errors = ErrorLog()
        self.outcomes: collections.Counter[str] = collections.Counter()

    def run(self, coro: Any) -> Any:
        return self.runner.run(bounded(coro))

    def close(self) -> None:
        self.runner.run(self.app.shutdown())
        self.runner.close()


@pytest.fixture
def live() -> Iterator[Live]:
    s = Live()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(autouse=True)
def clear_payments() -> None:
    PAYMENT_LOG.clear()


async def _send(ws: WsHarness, frame: Frame) -> None:
    if isinstance(frame, bytes):
        await ws.binary(frame)
    else:
        await ws.text(frame)


def _tally(live: Live, ws: WsHarness) -> None:
    kinds = [c["type"] for c in ws.chunks() if isinstance(c, dict)]
    live.outcomes["error chunks/frames"] += sum(
        1 for f in ws.frames if '"type":"error"' in f.replace(" ", "")
    )
    live.outcomes["turns"] += kinds.count("start")
    live.outcomes["connections"] += 1


async def _after(live: Live) -> None:
    await assert_no_other_tasks()
    assert not live.app.live.connections, "a connection outlived its socket"


def test_connection_survives_arbitrary_frames(live: Live) -> None:
    async def exchange(query: bytes, sent: list[Frame]) -> None:
        chat_id = parse_qs(query.decode("latin-1")).get("chatId", [None])[0]
        with live.errors:
            async with WsHarness(live.app, query) as ws:
                if chat_id is not None and not valid_chat_id(chat_id):
                    # Refused at the handshake, with a reason, before any frame.
                    await ws.wait(lambda: ws.close_code is not None)
                    assert ws.close_code == 1008
                    live.outcomes["invalid chat id refused"] += 1
                else:
                    for frame in sent:
                        await _send(ws, frame)
                    await ws.probe(f"probe-{uuid.uuid4().hex}")
            _tally(live, ws)
            await _after(live)

    @fuzz_settings(150)
    @given(
        queries,
        st.builds(
            lambda first, rest: [first, *rest],
            st.one_of(turn_openers, frames),
            st.lists(frames, max_size=4),
        ),
    )
    def run(query: bytes, sent: list[Frame]) -> None:
        live.run(exchange(query, sent))

    run()
    print(live.outcomes)
    assert live.errors.records == [], live.errors.messages()
    assert live.outcomes["turns"] > 0 and live.outcomes["error chunks/frames"] > 0


@st.composite
def hostile_answer_frames(
    draw: st.DrawFn, protocol: str, call: dict[str, Any], approval_id: str | None, chat_id: str
) -> list[str]:
    """Answers to a call that really waits, as a client of ``protocol`` would send
    them, with forged ids, wrong kinds, malformed results, repeats and strangers."""
    real = [call["toolCallId"]] + ([approval_id] if approval_id else [])
    some_id = st.one_of(st.sampled_from(real), ids)
    out: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        if protocol == "A" and draw(st.booleans()):
            out.append(
                encode(
                    {
                        "type": "tool_result",
                        "version": "1.0",
                        "data": {
                            "toolCallId": draw(valid_or(some_id)),
                            "result": draw(
                                st.one_of(
                                    st.just({"confirmed": True}),
                                    st.just({"confirmed": False}),
                                    anything,
                                )
                            ),
                        },
                    }
                )
            )
            continue
        part: dict[str, Any] = {
            "type": draw(
                st.sampled_from(
                    ["tool-" + call["toolName"], "dynamic-tool", "tool-adk_request_confirmation"]
                )
            ),
            "toolCallId": draw(some_id),
            "toolName": call["toolName"],
            "state": draw(valid_or(st.sampled_from(TOOL_STATES))),
            "input": call["input"],
        }
        if draw(st.booleans()):
            part["approval"] = draw(
                st.one_of(
                    st.fixed_dictionaries(
                        {"id": some_id}, optional={"approved": valid_or(st.booleans())}
                    ),
                    approvals,
                )
            )
        if draw(st.booleans()):
            part["output"] = draw(anything)
        message_parts = [part, *draw(st.lists(tool_part, max_size=1))]
        messages = [
            {"role": "user", "content": "x"},
            {"id": "m", "role": draw(valid_or(st.just("assistant"))), "parts": message_parts},
        ]
        if protocol == "A":
            out.append(
                encode({"type": "message", "version": "1.0", "data": {"messages": messages}})
            )
        else:
            out.append(
                encode(
                    {
                        "type": "send",
                        "requestId": draw(valid_or(ids)),
                        "id": chat_id,
                        "trigger": "submit-message",
                        "messages": messages,
                    }
                )
            )
    return out


@pytest.mark.parametrize("protocol", ["A", "B"])
def test_hostile_answers_to_a_waiting_call(live: Live, protocol: str) -> None:
    """A call really waits (an approval, a browser tool, a browser tool with approval);
    the client answers with forged ids, wrong kinds, garbage results and repeats. The
    connection keeps answering, a payment runs at most once, and leaving ends it all."""

    async def exchange(data: st.DataObject, what: str) -> None:
        PAYMENT_LOG.clear()
        with live.errors:
            chat_id = f"fz-{uuid.uuid4().hex}"
            async with WsHarness(live.app) as ws:
                await ws.text(_open_turn(protocol, PROMPTS[what], chat_id))
                wanted = "tool-approval-request" if what != "browser" else "tool-input-available"
                await ws.wait(
                    lambda: any(isinstance(c, dict) and c["type"] == wanted for c in ws.chunks())
                )
                chunks = [c for c in ws.chunks() if isinstance(c, dict)]
                call = next(c for c in chunks if c["type"] == "tool-input-available")
                request = next((c for c in chunks if c["type"] == "tool-approval-request"), None)
                approval_id = request["approvalId"] if request else None
                for frame in data.draw(hostile_answer_frames(protocol, call, approval_id, chat_id)):
                    await ws.text(frame)
                await ws.probe(f"probe-{uuid.uuid4().hex}")
            _tally(live, ws)
            await _after(live)
        assert len(PAYMENT_LOG) <= 1

    @fuzz_settings(40)
    @given(st.data(), st.sampled_from(sorted(PROMPTS)))
    def run(data: st.DataObject, what: str) -> None:
        live.run(exchange(data, what))

    run()
    print(live.outcomes)
    assert live.errors.records == [], live.errors.messages()


# -- a real server: uvicorn's WebSocket stack on loopback ------------------------------


def _live_tasks(server: LoopbackServer) -> list[str]:
    out = []
    for task in server.tasks():
        qual = getattr(task.get_coro(), "__qualname__", "")
        if (
            task.get_name().startswith("adk-asgi-live")
            or "_Connection" in qual
            or "run_live" in qual
            or "LiveGate" in qual
            or "Demo" in qual
        ):
            out.append(f"{task.get_name()}:{qual}")
    return out


class Big:
    """A frame of ``size`` bytes (built when sent, so failures print small)."""

    def __init__(self, kind: str, size: int) -> None:
        self.kind = kind
        self.size = size

    def __repr__(self) -> str:
        return f"Big({self.kind!r}, {self.size})"

    def payload(self) -> str | bytes:
        if self.kind == "binary":
            return b"\x01" * self.size
        return json.dumps({"type": "ping", "timestamp": "x" * (self.size - 26)})


def test_real_server_arbitrary_frames() -> None:
    """Over uvicorn: arbitrary text and binary frames, some over the server's frame
    size limit (closed by uvicorn with 1009). Either the connection keeps answering,
    or it was closed with 1009 for the oversized frame; never 1011 (server error),
    and nothing of the connection stays on the server loop."""
    app = AdkApp(build_demo_agent(token_delay=0), warm_up=False)
    errors = ErrorLog()
    codes: collections.Counter[str] = collections.Counter()
    limit = 64 * 1024

    async def exchange(url: str, server: LoopbackServer, sent: list[Frame | Big]) -> None:
        marker = f"probe-{uuid.uuid4().hex}"
        probe = json.dumps(
            {"type": "ping", "version": "1.0", "timestamp": marker, "requestId": marker}
        )
        payloads = [f.payload() if isinstance(f, Big) else f for f in sent]
        oversized = any(len(f if isinstance(f, bytes) else f.encode()) > limit for f in payloads)
        async with connect(url, max_size=None, open_timeout=10) as ws:
            try:
                for frame in payloads:
                    await ws.send(frame)
                await ws.send(probe)
                while marker not in (reply := await asyncio.wait_for(ws.recv(), 10)):
                    assert isinstance(reply, str)
            except ConnectionClosed as closed:
                # 1009 from uvicorn; or no close frame at all when the server dropped
                # the connection while this client was still writing.
                code = closed.rcvd.code if closed.rcvd else None
                codes[f"closed {code}"] += 1
                assert oversized and code in (1009, None), f"closed with {code}"
            else:
                codes["answered"] += 1
        deadline = time.monotonic() + 5
        while app.live.connections or _live_tasks(server):
            assert time.monotonic() < deadline, (len(app.live.connections), _live_tasks(server))
            await asyncio.sleep(0.05)

    big = st.builds(
        Big, st.sampled_from(["text", "binary"]), st.sampled_from([limit - 100, limit + 1])
    )
    with LoopbackServer(app, ws_max_size=limit) as server, errors:
        url = server.url.replace("http://", "ws://") + "/"

        @fuzz_settings(30)
        @given(st.lists(st.one_of(frames, frames, big), min_size=1, max_size=4))
        def run(sent: list[Frame | Big]) -> None:
            asyncio.run(asyncio.wait_for(exchange(url, server, sent), EXAMPLE_TIMEOUT))

        run()
    print(codes)
    assert errors.records == [], errors.messages()
    assert codes["answered"] > 0
