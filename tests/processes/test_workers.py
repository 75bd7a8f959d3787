"""Real ``adk-asgi serve`` processes: graceful shutdown on SIGTERM, and several workers
sharing the sqlite session store and the Redis stream store (the approval on another
worker than the request, the resume on another worker than the stream)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from support import (
    ROOT,
    Chat,
    Serve,
    chat_body,
    free_port,
    parse_sse,
    text_of,
    types_of,
    user_message,
)

pytestmark = pytest.mark.slow


def _stream(url: str, chat_id: str, text: str, out: dict[str, Any]) -> threading.Thread:
    """POST in a thread; returns once the stream's first bytes arrived (the turn runs)."""
    started = threading.Event()

    def run() -> None:
        body = b""
        with httpx.stream(
            "POST", url, json=chat_body(chat_id, user_message(text)), timeout=30
        ) as response:
            for data in response.iter_bytes():
                body += data
                started.set()
        out["text"] = body.decode()
        started.set()

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(30)
    return thread


def test_sigterm_drains_running_turns() -> None:
    serve = Serve("--token-delay", "0.1", "--shutdown-grace", "2.5").wait_ready()
    quick: dict[str, Any] = {}
    long: dict[str, Any] = {}
    try:
        t1 = _stream(serve.url, "long", "tell a long story", long)
        t2 = _stream(serve.url, "quick", "What's the weather in Tokyo?", quick)
        stopping = time.monotonic()
        os.killpg(serve.proc.pid, signal.SIGTERM)
        t1.join(15)
        t2.join(15)
        code = serve.proc.wait(15)
        took = time.monotonic() - stopping
    finally:
        serve.stop()
    # uvicorn re-raises the SIGTERM it handled once it has shut down in order.
    assert code in (0, -signal.SIGTERM) and 2.5 < took < 7, (code, took)
    long_chunks = parse_sse(long["text"])
    assert types_of(long_chunks)[-2:] == ["error", "[DONE]"]
    assert "restarting" in long_chunks[-2]["errorText"]
    assert types_of(parse_sse(quick["text"]))[-2:] == ["finish", "[DONE]"]


def test_ctrl_c_shuts_down_without_a_traceback() -> None:
    """SIGINT (Ctrl-C in a terminal) stops a single-process server in order and exits 0,
    without the KeyboardInterrupt traceback asyncio re-raises after the shutdown."""
    serve = Serve(token_delay=0).wait_ready()
    try:
        serve.signal(signal.SIGINT)
        code = serve.proc.wait(15)
    finally:
        serve.stop()
    output = serve.output()
    assert code == 0 and "Application shutdown complete" in output, (code, output[-2000:])
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output[-2000:]


@pytest.fixture
def shared(tmp_path: Path, redis_url: str) -> list[str]:
    db = tmp_path / "shared.db"
    # A database per test in Redis too: owners and streams must not leak between tests.
    return [
        "--session-db",
        f"sqlite:///{db}",
        "--redis-url",
        redis_url.rsplit("/", 1)[0] + f"/{abs(hash(str(tmp_path))) % 15 + 1}",
        "--token-delay",
        "0.02",
    ]


def test_two_workers_share_approvals_streams_owners_and_locks(shared: list[str]) -> None:
    with Serve(*shared) as a, Serve(*shared) as b, httpx.Client(timeout=30) as client:
        # The approval reaches another worker than the request: it runs, once.
        chat = Chat(client, "pay")
        chat.messages.append(user_message("Send 50 dollars to Hanako", "u1"))
        first = parse_sse(client.post(a.url, json=chat.body()).text)
        assert "tool-approval-request" in types_of(first)
        assert types_of(first)[-2:] == ["finish", "[DONE]"]
        message = chat.absorb(first)
        chat.approve(0, True)
        second = parse_sse(client.post(b.url, json=chat.body(messageId=message["id"])).text)
        assert second[0] == {"type": "start", "messageId": message["id"]}
        outputs = [
            c for c in second if isinstance(c, dict) and c["type"] == "tool-output-available"
        ]
        assert len(outputs) == 1 and outputs[0]["output"]["status"] == "success"
        # A replay of the approval on the first worker is refused: nothing runs twice.
        again = client.post(a.url, json=chat.body(messageId=message["id"]))
        assert again.status_code == 409

        # The resume is served by another worker than the stream.
        resumed: dict[str, Any] = {}
        with client.stream(
            "POST", a.url, json=chat_body("story", user_message("tell a long story"))
        ) as response:
            lines = response.iter_lines()
            head = [next(lines) for _ in range(12)]
            resumed["response"] = client.get(b.url + "/story/stream")
            tail = list(lines)
        original = parse_sse("\n".join(head + tail) + "\n\n")
        replay = parse_sse(resumed["response"].text)
        assert resumed["response"].status_code == 200
        assert replay == original and types_of(replay)[-2:] == ["finish", "[DONE]"]

        assert client.get(b.url + "/story/stream").status_code == 204  # delivered: done

        # Turns of one chat on two workers run one after the other, not interleaved.
        results: dict[str, Any] = {}
        t1 = _stream(a.url, "busy", "tell a long story", results.setdefault("a", {}))
        chat_b = {
            "id": "busy",
            "messages": [
                user_message("tell a long story", "u1"),
                user_message("hello there", "u2"),
            ],
            "trigger": "submit-message",
        }
        started = time.monotonic()
        r2 = client.post(b.url, json=chat_b)
        waited = time.monotonic() - started
        t1.join(30)
        story = text_of(parse_sse(results["a"]["text"]))
        assert len(story.split()) > 40  # not cut by the other turn
        assert r2.status_code == 200 and waited > 0.5  # it waited for the lock
        assert types_of(parse_sse(r2.text))[-2:] == ["finish", "[DONE]"]


def _free_port_pair() -> int:
    """A port P with P + 1 free too (worker i serves its metrics on P + i)."""
    for _ in range(20):
        port = free_port()
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two free ports in a row")


def _turns(metrics_url: str) -> float:
    total = 0.0
    for family in text_string_to_metric_families(httpx.get(metrics_url, timeout=10).text):
        total += sum(s.value for s in family.samples if s.name == "adk_asgi_turns_total")
    return total


def test_workers_flag_serves_and_drains(shared: list[str]) -> None:
    metrics = _free_port_pair()
    with (
        Serve(*shared, "--workers", "2", "--metrics-port", str(metrics)) as serve,
        httpx.Client(timeout=30) as client,
    ):
        for i in range(6):  # the kernel spreads these over both workers
            chat = Chat(client, f"w{i}")
            chat.messages.append(user_message(f"Send {10 + i} dollars to Worker{i}", "u1"))
            message = chat.absorb(parse_sse(client.post(serve.url, json=chat.body()).text))
            chat.approve(0, True)
            answer = parse_sse(client.post(serve.url, json=chat.body(messageId=message["id"])).text)
            assert "tool-output-available" in types_of(answer), (i, answer)
        # Each worker serves its own metrics, on --metrics-port + its index: together they
        # counted every turn (6 awaiting their approval, 6 completed).
        assert sum(_turns(f"http://127.0.0.1:{metrics + i}/metrics") for i in (0, 1)) == 12
        code = serve.stop()
    assert code == 0  # the supervisor exits normally once every worker has drained


def test_workers_need_shared_stores() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "adk_asgi", "serve", "--workers", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "--workers > 1 needs --session-db" in proc.stderr


async def test_owners_are_shared_between_workers(tmp_path: Path, redis_url: str) -> None:
    """Two app instances (as two workers) on one sqlite file and one Redis: a chat
    created through one is another user's 404 through the other."""
    from adk_asgi import AdkApp, RedisStreamStore
    from adk_asgi.demo import build_demo_agent

    def user(scope: Any) -> str:
        return str(dict(scope["headers"])[b"x-user"].decode())

    db = f"sqlite:///{tmp_path / 'owners.db'}"
    apps = [
        AdkApp(
            build_demo_agent(),
            session_db=db,
            authenticate=user,
            warm_up=False,
            stream_store=RedisStreamStore(redis_url, prefix=f"own-{tmp_path.name}"),
        )
        for _ in range(2)
    ]
    clients = [
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        for app in apps
    ]
    try:
        body = chat_body("owned", user_message("hi"))
        ok = await clients[0].post("/", json=body, headers={"x-user": "alice"})
        assert ok.status_code == 200
        assert (await clients[1].post("/", json=body, headers={"x-user": "bob"})).status_code == 404
        assert (await clients[1].get("/owned/stream", headers={"x-user": "bob"})).status_code == 404
        again = await clients[1].post("/", json=body, headers={"x-user": "alice"})
        assert again.status_code == 200
    finally:
        for client in clients:
            await client.aclose()
        for app in apps:
            await app.shutdown()


def test_connections_during_a_multi_worker_drain_are_answered_or_refused(shared: list[str]) -> None:
    """Issue 15 item 6: with --workers 2 a connection arriving during the drain was accepted
    by the kernel and reset when the workers were gone. Now each is answered
    (`503 shutting_down`) or refused at the socket, never accepted and dropped."""
    serve = Serve(*shared, "--workers", "2", "--shutdown-grace", "3").wait_ready()
    outcomes: list[str] = []
    try:
        running = [_stream(serve.url, f"long{i}", "bench 2000", {}) for i in range(2)]
        os.killpg(serve.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 12
        while time.monotonic() < deadline and serve.proc.poll() is None:
            try:  # a new connection each time (no keep-alive)
                with httpx.Client(timeout=10) as client:
                    response = client.post(
                        serve.url, json=chat_body(f"new-{len(outcomes)}", user_message("hi"))
                    )
                if response.status_code == 200:  # it came before the worker began draining
                    assert types_of(parse_sse(response.text))[-1] == "[DONE]"
                    outcomes.append("200")
                    continue
                assert response.status_code == 503, response.text
                assert response.json()["error"]["code"] == "shutting_down"
                assert response.headers["retry-after"]
                outcomes.append("503")
            except httpx.ConnectError:
                outcomes.append("refused")
            except httpx.TransportError as exc:  # accepted, then reset or closed
                outcomes.append(f"dropped: {exc!r}")
            time.sleep(0.05)
        for thread in running:
            thread.join(20)
        code = serve.proc.wait(20)
    finally:
        serve.stop()
    assert code == 0
    print("outcomes", {o: outcomes.count(o) for o in set(outcomes)})
    assert "503" in outcomes, outcomes  # the drain answered while it lasted
    assert not [o for o in outcomes if o.startswith("dropped")], outcomes
