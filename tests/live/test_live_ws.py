"""Live mode, protocol A (the seeds' envelope), on a real uvicorn server on loopback."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from google.adk.events import Event
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from adk_asgi import AdkApp, EventParts, EventTranslator, LiveOptions, PauseOptions, SurfaceOptions
from adk_asgi.adk.sessions import LIVE_MESSAGE_KEY, event_meta
from adk_asgi.demo import PAYMENT_LOG, build_demo_agent
from adk_asgi.translate.lanes import Lane
from adk_asgi.translate.translator import Chunks

from support import LoopbackServer
from support.ws_client import DONE, LiveClient, dicts, kinds, text, ws_url


def _app(token_delay: float = 0.0, **live: Any) -> AdkApp:
    return AdkApp(
        build_demo_agent(token_delay=token_delay), warm_up=False, live_options=LiveOptions(**live)
    )


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(_app()) as s:
        yield s


@pytest.fixture(autouse=True)
def clear_payments() -> None:
    PAYMENT_LOG.clear()


def _live_tasks(server: LoopbackServer) -> set[str]:
    names = set()
    for task in server.tasks():
        name = task.get_name()
        qual = task.get_coro().__qualname__  # type: ignore[union-attr]
        if (
            name.startswith("adk-asgi-live")
            or "run_live" in qual
            or "demo" in name
            or "_Connection" in qual
            or "LiveGate" in qual
            or "Runner" in qual
        ):
            names.add(f"{name}:{qual}")
    return names


async def _wait_clean(server: LoopbackServer, app: AdkApp, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not app.live.connections and not _live_tasks(server):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(
        f"left over: {len(app.live.connections)} connections, tasks {_live_tasks(server)}"
    )


async def test_seed_003_flow_approve(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url))
    await client.say("花子さんに50ドル送金してください")
    head = await client.until("tool-approval-request")
    assert kinds(head)[:4] == ["start", "start-step", "tool-input-start", "tool-input-available"]
    call = head[3]
    assert call["toolName"] == "process_payment" and call["input"]["amount"] == 50
    request = head[-1]
    assert request["toolCallId"] == call["toolCallId"]
    assert head[-2]["providerMetadata"]["adk"]["approvalId"] == request["approvalId"]
    assert PAYMENT_LOG == []  # nothing runs before the answer
    await client.send("tool_result", toolCallId=request["approvalId"], result={"confirmed": True})
    rest = await client.turn()
    output = rest[0]
    assert output["type"] == "tool-output-available"
    assert output["toolCallId"] == call["toolCallId"] and output["output"]["status"] == "success"
    assert kinds(rest)[-2:] == ["finish", DONE]
    assert "50 USD" in text(rest)
    assert [p["recipient"] for p in PAYMENT_LOG] == ["花子"]
    await client.close()


async def test_deny_flow_runs_nothing_and_tells_the_model(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url))
    await client.say("Send 50 dollars to Hanako")
    request = (await client.until("tool-approval-request"))[-1]
    # flat fields (no `data`) are accepted too
    await client.send(
        "tool_result", nested=False, toolCallId=request["approvalId"], result={"confirmed": False}
    )
    rest = await client.turn()
    assert rest[0] == {"type": "tool-output-denied", "toolCallId": request["toolCallId"]}
    assert "cancelled" in text(rest)
    assert PAYMENT_LOG == []
    await client.close()


async def test_two_payments_mixed_answers(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url))
    await client.say("Send 50 dollars to Hanako and 20 dollars to Taro")
    head = await client.until("tool-approval-request")
    head += await client.until("tool-approval-request")
    requests = [c for c in head if c["type"] == "tool-approval-request"]
    assert len(requests) == 2  # both pending at once
    calls = {
        c["toolCallId"]: c["input"]["recipient"]
        for c in head
        if c["type"] == "tool-input-start"
        or (c["type"] == "tool-input-available" and "providerMetadata" not in c)
        if "input" in c
    }
    by_name = {calls[r["toolCallId"]]: r for r in requests}
    # answered out of order
    await client.send(
        "tool_result", toolCallId=by_name["Taro"]["approvalId"], result={"confirmed": False}
    )
    await client.send(
        "tool_result", toolCallId=by_name["Hanako"]["approvalId"], result={"confirmed": True}
    )
    rest = await client.turn()
    outcome = {
        c["toolCallId"]: c["type"] for c in dicts(rest) if c["type"].startswith("tool-output")
    }
    assert outcome == {
        by_name["Hanako"]["toolCallId"]: "tool-output-available",
        by_name["Taro"]["toolCallId"]: "tool-output-denied",
    }
    assert [p["recipient"] for p in PAYMENT_LOG] == ["Hanako"]
    assert "Sent 50 USD to Hanako" in text(rest) and "Taro was cancelled" in text(rest)
    await client.close()


async def test_get_location_and_change_bgm(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url))
    await client.say("where am I?")
    head = await client.until("tool-approval-request")
    request = head[-1]
    assert head[3]["toolName"] == "get_location"
    await client.send("tool_result", toolCallId=request["approvalId"], result={"confirmed": True})
    await asyncio.sleep(0.2)  # the tool now waits for the browser
    await client.send(
        "tool_result",
        toolCallId=request["toolCallId"],
        toolName="get_location",
        result={"latitude": 35.68, "longitude": 139.76},
    )
    rest = await client.turn()
    assert rest[0] == {
        "type": "tool-output-available",
        "toolCallId": request["toolCallId"],
        "output": {"latitude": 35.68, "longitude": 139.76},
    }
    assert "35.68" in text(rest) and kinds(rest)[-2:] == ["finish", DONE]

    await client.say("play track 3")
    chunks: list[Any] = []
    while not any(c["type"] == "tool-input-available" for c in chunks if isinstance(c, dict)):
        chunks.append(await client.next())
    call = chunks[-1]
    assert call["toolName"] == "change_bgm" and call["input"] == {"track": 3}
    await client.send(
        "tool_result", toolCallId=call["toolCallId"], result={"success": True, "track": 3}
    )
    rest = await client.turn()
    assert rest[0]["type"] == "tool-output-available" and rest[0]["output"]["track"] == 3
    assert kinds(rest)[-2:] == ["finish", DONE]
    await client.close()


async def test_browser_tool_approval_and_result_in_one_message(server: LoopbackServer) -> None:
    """The page approves get_location and sends its result in the same part (state
    output-available with the approval), as useChat's message does: nothing is dropped."""
    client = await LiveClient.open(ws_url(server.url, "chatId=loc-one"))
    await client.say("where am I?", chat_id="loc-one")
    head = await client.until("tool-approval-request")
    request = head[-1]
    part = {
        "type": "tool-get_location",
        "toolCallId": request["toolCallId"],
        "state": "output-available",
        "input": {},
        "output": {"latitude": 35.68, "longitude": 139.76},
        "approval": {"id": request["approvalId"], "approved": True},
    }
    await client.send(
        "message",
        id="loc-one",
        messages=[
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "where am I?"}]},
            {"id": "a1", "role": "assistant", "parts": [part]},
        ],
    )
    rest = await client.turn(wait=5)
    assert {
        "type": "tool-output-available",
        "toolCallId": request["toolCallId"],
        "output": {"latitude": 35.68, "longitude": 139.76},
    } in rest
    assert "35.68" in text(rest) and kinds(rest)[-2:] == ["finish", DONE]
    await client.close()


async def test_browser_result_sent_before_the_wait_is_not_lost(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url))
    await client.say("where am I?")
    request = (await client.until("tool-approval-request"))[-1]
    # Approval and result in one go: the result arrives before the tool waits for it.
    await client.send("tool_result", toolCallId=request["approvalId"], result={"confirmed": True})
    await client.send("tool_result", toolCallId=request["toolCallId"], result={"latitude": 1})
    rest = await client.turn()
    assert rest[0]["output"] == {"latitude": 1}
    await client.close()


async def test_three_turns_on_one_socket_each_with_its_start(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url))
    ids = []
    for prompt in ("hello", "What is the weather in Paris?", "thanks"):
        await client.say(prompt)
        chunks = await client.turn()
        assert chunks[0]["type"] == "start" and kinds(chunks)[-2:] == ["finish", DONE]
        assert kinds(chunks).count("start") == 1
        ids.append(chunks[0]["messageId"])
        if "weather" in prompt:
            outputs = [c for c in dicts(chunks) if c["type"] == "tool-output-available"]
            assert outputs and outputs[0]["output"]["location"] == "Paris"
            assert "Paris is cloudy" in text(chunks)
    assert len(set(ids)) == 3
    await client.close()


async def test_unknown_replayed_and_foreign_ids_are_rejected(server: LoopbackServer) -> None:
    other = await LiveClient.open(ws_url(server.url))
    await other.say("Send 10 dollars to Jiro")
    foreign = (await other.until("tool-approval-request"))[-1]

    client = await LiveClient.open(ws_url(server.url))
    await client.send("tool_result", toolCallId="adk-made-up", result={"confirmed": True})
    assert (await client.next())["type"] == "error"
    # another connection's approval id is unknown here
    await client.send("tool_result", toolCallId=foreign["approvalId"], result={"confirmed": True})
    error = await client.next()
    assert error["type"] == "error" and "waiting" in error["errorText"]
    await client.say("Send 50 dollars to Hanako")
    request = (await client.until("tool-approval-request"))[-1]
    await client.send("tool_result", toolCallId=request["approvalId"], result={"confirmed": False})
    await client.turn()
    await client.send("tool_result", toolCallId=request["approvalId"], result={"confirmed": True})
    error = await client.next()
    assert error["type"] == "error" and "already answered" in error["errorText"]
    assert PAYMENT_LOG == []
    await client.say("hello")  # the connection is still usable
    assert kinds(await client.turn())[-1] == DONE
    await other.close()
    await client.close()


async def test_approval_carried_by_a_message_frame(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url))
    await client.say("Send 50 dollars to Hanako")
    head = await client.until("tool-approval-request")
    request = head[-1]
    assistant = {
        "id": head[0]["messageId"],
        "role": "assistant",
        "parts": [
            {
                "type": "tool-process_payment",
                "toolCallId": request["toolCallId"],
                "state": "approval-responded",
                "input": head[3]["input"],
                "approval": {"id": request["approvalId"], "approved": True},
            }
        ],
    }
    await client.send(
        "message",
        messages=[
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Send 50"}]},
            assistant,
        ],
    )
    rest = await client.turn()
    assert rest[0]["type"] == "tool-output-available"
    assert len(PAYMENT_LOG) == 1
    await client.close()


async def test_seed_style_confirmation() -> None:
    app = AdkApp(
        build_demo_agent(), pauses=PauseOptions(confirmation_style="adk-tool"), warm_up=False
    )
    with LoopbackServer(app) as server:
        client = await LiveClient.open(ws_url(server.url))
        for confirmed in (True, False):
            await client.say("Send 50 dollars to Hanako")
            head: list[Any] = []
            while (
                not head
                or head[-1]["type"] != "tool-input-available"
                or head[-1]["toolName"] != "adk_request_confirmation"
            ):
                head.append(await client.next())
            original = head[3]
            confirmation = head[-1]
            assert head[-2] == {
                "type": "tool-input-start",
                "toolCallId": confirmation["toolCallId"],
                "toolName": "adk_request_confirmation",
            }
            assert confirmation["input"]["originalFunctionCall"] == {
                "id": original["toolCallId"],
                "name": "process_payment",
                "args": original["input"],
            }
            assert confirmation["input"]["toolConfirmation"]["confirmed"] is False
            assert confirmation["input"]["toolConfirmation"]["hint"]
            await client.send(
                "tool_result",
                toolCallId=confirmation["toolCallId"],
                toolName="adk_request_confirmation",
                result={"confirmed": confirmed},
            )
            rest = await client.turn()
            assert rest[0] == {
                "type": "tool-output-available",
                "toolCallId": confirmation["toolCallId"],
                "output": {"confirmed": confirmed},
            }
            result = rest[1]
            assert result["toolCallId"] == original["toolCallId"]
            assert result["type"] == ("tool-output-available" if confirmed else "tool-output-error")
            assert kinds(rest)[-2:] == ["finish", DONE]
        assert len(PAYMENT_LOG) == 1
        await client.close()


async def test_approval_timeout_is_a_denial_the_model_is_told_about() -> None:
    with LoopbackServer(_app(wait_timeout=0.3)) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("Send 50 dollars to Hanako")
        request = (await client.until("tool-approval-request"))[-1]
        rest = await client.turn()
        assert rest[0]["type"] == "tool-output-error"
        assert "in time" in rest[0]["errorText"]
        assert "not made" in text(rest)  # the model was told
        await client.send(
            "tool_result", toolCallId=request["approvalId"], result={"confirmed": True}
        )
        assert (await client.next())["type"] == "error"  # too late: refused
        assert PAYMENT_LOG == []
        await client.close()


async def test_disconnect_while_an_approval_is_pending_runs_nothing_and_leaves_no_task() -> None:
    app = _app()
    with LoopbackServer(app) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("Send 50 dollars to Hanako")
        await client.until("tool-approval-request")
        assert app.live.connections
        await client.close()
        await _wait_clean(server, app)
        await asyncio.sleep(0.2)
        assert PAYMENT_LOG == []


async def test_ping_pong_and_errors_keep_the_connection(server: LoopbackServer) -> None:
    client = await LiveClient.open(ws_url(server.url))
    await client.send("ping", timestamp=123)
    raw = json.loads(await client.ws.recv())
    assert raw == {"type": "pong", "version": "1.0", "timestamp": 123}
    await client.ws.send("not json")
    assert (await client.next())["type"] == "error"
    await client.send("nope")
    assert (await client.next())["type"] == "error"
    await client.ws.send(json.dumps({"type": "ping", "version": "2.0"}))
    refused = await client.next()
    assert refused == {
        "type": "error",
        "errorText": "Protocol version '2.0' is not supported; this server speaks 1.0.",
    }
    await client.ws.send(json.dumps({"type": "ping", "version": "1.1"}))  # a minor: fine
    assert json.loads(await client.ws.recv())["type"] == "pong"
    await client.say("please fail")
    chunks = await client.turn()
    assert "error" in kinds(chunks) and chunks[-1] == DONE and "finish" not in kinds(chunks)
    await client.say("please raise")
    chunks = await client.turn()
    assert kinds(chunks)[-2:] == ["error", DONE]
    await client.say("hello")  # after a model exception, the run was restarted
    chunks = await client.turn()
    assert kinds(chunks)[-2:] == ["finish", DONE] and "You said" in text(chunks)
    await client.close()


class _BreaksOnAToken(EventTranslator):
    """An application's translator with a bug: it raises on one streamed token."""

    def on_text(self, text: str, lane: Lane, *, partial: bool, replay: bool) -> Chunks:
        if partial and "kaboom" in text:
            raise RuntimeError("a translator bug")
        return super().on_text(text, lane, partial=partial, replay=replay)


async def test_a_failure_on_a_streamed_token_ends_the_connection_not_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Streamed tokens are handled by the run's pump when nothing waits in the inbox
    # (connection.py): a failure there is the connection's, as in the downstream — closed
    # with 1011 and logged once — never a model failure the run would be restarted for.
    app = AdkApp(build_demo_agent(), warm_up=False, translator=_BreaksOnAToken)
    with LoopbackServer(app) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("hello there kaboom")
        seen: list[Any] = []
        with pytest.raises(ConnectionClosed):
            while True:
                seen.append(await client.next())
        assert kinds(seen)[:3] == ["start", "start-step", "text-start"]
        assert "kaboom" not in text(seen) and "error" not in kinds(seen) and DONE not in seen
        assert client.ws.close_code == 1011
        await _wait_clean(server, app)
    failures = [r for r in caplog.records if r.levelname == "ERROR"]
    assert [r.getMessage() for r in failures] == ["Live connection failed"]
    assert failures[0].exc_info is not None and "translator bug" in str(failures[0].exc_info[1])


async def test_stored_events_carry_the_pages_message_id_streamed_partials_do_not() -> None:
    # docs/live-mode.md: the plugin tags the events the session stores with the page's
    # message id; the streamed partials, which ADK never stores, are left as they are (no
    # copy of every token's event).
    seen: list[tuple[bool, object]] = []

    def on_event(event: Event, parts: EventParts) -> None:
        if event.author != "user":
            seen.append((bool(event.partial), event_meta(event).get(LIVE_MESSAGE_KEY)))

    app = AdkApp(build_demo_agent(), warm_up=False, surface=SurfaceOptions(on_event=on_event))
    with LoopbackServer(app) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("hello there")
        chunks = await client.turn()
        await client.close()
    message_id = chunks[0]["messageId"]
    partial = [tag for was_partial, tag in seen if was_partial]
    stored = [tag for was_partial, tag in seen if not was_partial]
    assert len(partial) > 5 and set(partial) == {None}
    assert stored and set(stored) == {message_id}


async def test_interrupt_ends_the_turn_cleanly() -> None:
    with LoopbackServer(_app(token_delay=0.02)) as server:
        client = await LiveClient.open(ws_url(server.url))
        await client.say("tell me a long story")
        seen = [await client.next() for _ in range(6)]
        assert "text-delta" in kinds(seen)
        await client.send("interrupt")
        rest = await client.turn()
        assert kinds(rest)[-2:] == ["finish", DONE]
        assert len(text(seen + rest).split()) < 40  # the 60-token story was cut short
        await client.say("hello")
        assert kinds(await client.turn())[-2:] == ["finish", DONE]
        await client.close()


async def test_audio_in_transcription_and_pcm_out() -> None:
    with LoopbackServer(_app()) as server:
        client = await LiveClient.open(ws_url(server.url, "modality=audio"))
        await client.send("audio_control", action="start")
        pcm = b"\x01\x00" * 1600
        await client.audio(pcm)
        await client.audio(pcm, binary=True)
        await client.send("audio_control", action="stop")
        chunks = await client.turn()
        assert chunks[0]["type"] == "start"
        heard = [c for c in dicts(chunks) if c["type"] == "data-transcription"]
        assert heard and heard[0]["data"] == {
            "role": "user",
            "text": "What's the weather in Tokyo?",
            "finished": True,
        }
        assert heard[0]["transient"] is True
        pcm_chunks = [c for c in dicts(chunks) if c["type"] == "data-pcm"]
        assert len(pcm_chunks) > 5
        first = pcm_chunks[0]
        assert first["transient"] is True
        assert set(first["data"]) == {"content", "sampleRate", "channels", "bitDepth"}
        assert first["data"]["sampleRate"] == 24000 and first["data"]["channels"] == 1
        assert len(base64.b64decode(first["data"]["content"])) == 480
        # the output transcription is the assistant's text, once (not twice)
        assert text(chunks) == (
            "Let me check the weather in Tokyo.The weather in Tokyo is sunny, 22°C."
        )
        assert "tool-output-available" in kinds(chunks) and kinds(chunks)[-2:] == ["finish", DONE]
        await client.close()


async def test_idle_connection_is_closed() -> None:
    app = _app(idle_timeout=0.3)
    with LoopbackServer(app) as server:
        async with connect(ws_url(server.url)) as ws:
            started = time.monotonic()
            with pytest.raises(Exception):  # noqa: B017 - any close
                await asyncio.wait_for(ws.recv(), 5)
            assert time.monotonic() - started < 3
            assert ws.close_code == 1001
        await _wait_clean(server, app)


async def test_half_open_client_is_detected_and_cleaned_up() -> None:
    app = _app()
    with LoopbackServer(app, ws_ping_interval=0.2, ws_ping_timeout=0.2) as server:
        # A raw client: handshake, one message, then silence (never answers pings).
        sock = socket.create_connection(("127.0.0.1", server.port))
        key = base64.b64encode(b"0123456789abcdef").decode()
        sock.sendall(
            (
                f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                f"Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        assert b" 101 " in sock.recv(4096)
        payload = json.dumps(
            {
                "type": "message",
                "version": "1.0",
                "data": {"messages": [{"role": "user", "content": "Send 50 dollars to Hanako"}]},
            }
        ).encode()
        mask = b"\x00\x00\x00\x00"
        header = bytes([0x81, 0x80 | 126]) + len(payload).to_bytes(2, "big") + mask
        sock.sendall(header + payload)
        for _ in range(40):  # the server thread picks the connection up
            if app.live.connections:
                break
            await asyncio.sleep(0.05)
        assert app.live.connections
        await _wait_clean(server, app, within=5)
        sock.close()
        assert PAYMENT_LOG == []


@pytest.mark.slow
async def test_200_concurrent_live_connections() -> None:
    with LoopbackServer(_app(), ws_max_queue=64) as server:
        url = ws_url(server.url)

        async def one(i: int) -> float:
            started = time.monotonic()
            client = await LiveClient.open(url)
            await client.say(f"hello {i}")
            chunks = await client.turn(wait=60)
            assert kinds(chunks)[-2:] == ["finish", DONE] and f"hello {i}" in text(chunks)
            await client.close()
            return time.monotonic() - started

        started = time.monotonic()
        durations = await asyncio.gather(*(one(i) for i in range(200)))
        total = time.monotonic() - started
        durations.sort()
        print(
            f"\n200 live connections: total {total:.2f} s, p50 {durations[100]:.2f} s, "
            f"p95 {durations[190]:.2f} s, max {durations[-1]:.2f} s"
        )


async def test_protocol_a_announces_when_the_turn_waits_for_the_page(
    server: LoopbackServer,
) -> None:
    """No guessing from silence: once every call of the step waits for the page (an approval,
    a browser tool's result), a transient `data-awaiting-client` chunk says so, once."""
    client = await LiveClient.open(ws_url(server.url, "chatId=announce"), markers=True)
    await client.say("where am I?", chat_id="announce")
    head = await client.until("data-awaiting-client")
    request = next(c for c in dicts(head) if c["type"] == "tool-approval-request")
    marker = head[-1]
    assert marker == {
        "type": "data-awaiting-client",
        "transient": True,
        "data": {"ids": [request["toolCallId"]]},
    }
    await client.send("tool_result", toolCallId=request["approvalId"], result={"confirmed": True})
    # Approved: now the browser tool itself waits for its result, announced again.
    again = await client.until("data-awaiting-client")
    assert again[-1]["data"] == {"ids": [request["toolCallId"]]}
    await client.send(
        "tool_result", toolCallId=request["toolCallId"], result={"latitude": 1, "longitude": 2}
    )
    rest = await client.turn()
    assert "data-awaiting-client" not in kinds(rest) and kinds(rest)[-2:] == ["finish", DONE]
    await client.close()
