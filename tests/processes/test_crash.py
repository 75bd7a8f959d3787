"""A worker killed mid-turn (``kill -9``), with real ``adk-asgi serve`` processes sharing
a sqlite file and a redis-server: the turn's stream and lock are leases that lapse, so its
followers on another worker get a final ``error`` and ``[DONE]`` within seconds, a later
resume replays the stream with that ending (validated by the real AI SDK clients), and the
chat takes the next message within the lock's 5 s lease."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_asgi.wire.errors import INTERRUPTED_ERROR

from support import Serve, chat_body, parse_sse, types_of, user_message
from support.aisdk_client import drive_history, run_chat_versions

pytestmark = pytest.mark.slow


@pytest.fixture
def shared(tmp_path: Path, redis_url: str) -> list[str]:
    db = tmp_path / "shared.db"
    return [
        "--session-db",
        f"sqlite:///{db}",
        "--redis-url",
        redis_url.rsplit("/", 1)[0] + f"/{abs(hash(str(tmp_path))) % 15 + 1}",
    ]


def _read(url: str, method: str, out: dict[str, Any], **kwargs: Any) -> threading.Thread:
    """Stream a response in a thread into ``out["lines"]``; returns once bytes arrived."""
    out["lines"] = []
    started = threading.Event()

    def run() -> None:
        try:
            with httpx.stream(method, url, timeout=60, **kwargs) as response:
                out["status"] = response.status_code
                for line in response.iter_lines():
                    out["lines"].append(line)
                    started.set()
        except httpx.HTTPError as exc:
            out["error"] = exc
        out["ended"] = time.monotonic()
        started.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(30)
    return thread


def _chunks(out: dict[str, Any]) -> list[Any]:
    return parse_sse("\n".join(out["lines"]) + "\n\n")


def test_a_worker_killed_mid_turn(shared: list[str], redis_url: str) -> None:
    producer = Serve(*shared, "--token-delay", "0.05").wait_ready()
    try:
        with Serve(*shared, "--token-delay", "0") as other:
            post: dict[str, Any] = {}
            _read(producer.url, "POST", post, json=chat_body("crash", user_message("bench 400")))
            follower: dict[str, Any] = {}
            follow_thread = _read(other.url + "/crash/stream", "GET", follower)
            while len(follower["lines"]) < 20:
                time.sleep(0.05)

            os.kill(producer.proc.pid, signal.SIGKILL)
            killed = time.monotonic()
            follow_thread.join(20)
            assert "ended" in follower, "the follower never ended"
            ended_after = follower["ended"] - killed
            chunks = _chunks(follower)
            assert types_of(chunks)[0] == "start"
            assert types_of(chunks)[-2:] == ["error", "[DONE]"], types_of(chunks)[-3:]
            assert chunks[-2]["errorText"] == INTERRUPTED_ERROR
            print(f"follower ended {ended_after:.1f} s after the kill")
            assert ended_after < 8, ended_after  # the 3 s lease, a heartbeat, slack

            # A resume (a page reloading) replays it with its ending; no half answer.
            replay = parse_sse(httpx.get(other.url + "/crash/stream", timeout=20).text)
            assert replay == chunks
            # ... for the retention (5 min), not a day.
            ttl = asyncio.run(_active_ttl(shared[3], "crash"))
            assert 0 < ttl <= 300, ttl

            # The chat takes the next message once the dead worker's lock lapses (5 s).
            started = time.monotonic()
            answer = httpx.post(
                other.url, json=chat_body("crash", user_message("hello")), timeout=30
            )
            waited = time.monotonic() - started
            assert types_of(parse_sse(answer.text))[-2:] == ["finish", "[DONE]"]
            print(f"next message waited {waited:.1f} s for the lock")
            assert waited < 6, waited

            _crash_again_and_resume(shared, other)
        log = other.output()
    finally:
        producer.stop()
    lines = [line for line in log.splitlines() if "stopped mid-turn" in line]
    assert len([line for line in lines if "'crash'" in line]) == 1, lines


async def _active_ttl(redis_url: str, chat_id: str) -> int:
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    try:
        return int(await client.ttl(f"adk-asgi:active:{chat_id}"))
    finally:
        await client.aclose()


def _crash_again_and_resume(shared: list[str], other: Serve) -> None:
    """Streams cut by a crash, resumed by each AI SDK client version: every chunk
    validates with that version's own schema and the chat shows the error."""
    from support.aisdk_client import AI_VERSIONS

    producer = Serve(*shared, "--token-delay", "0.05").wait_ready()
    try:
        posts = [{} for _ in AI_VERSIONS]  # type: list[dict[str, Any]]
        for version, post in zip(AI_VERSIONS, posts, strict=True):
            _read(
                producer.url,
                "POST",
                post,
                json=chat_body(f"crashed-{version}", user_message("bench 400")),
            )
        while min(len(post["lines"]) for post in posts) < 20:
            time.sleep(0.05)
    finally:
        os.kill(producer.proc.pid, signal.SIGKILL)
        producer.stop()
    time.sleep(4)  # the leases lapse: the resumes below find the streams cut
    reports = run_chat_versions(other.url, [{"action": "resume"}], chat_id="crashed", timeout=60)
    for version, report in reports.items():
        resume = report["requests"][-1]
        assert resume["status"] == 200 and resume["sawDone"], (version, resume)
        assert not resume["invalid"], (version, resume["invalid"])
        assert resume["chunks"][-1]["type"] == "error", version
        assert any(INTERRUPTED_ERROR in str(e) for e in report["chatErrors"]), (
            version,
            report["chatErrors"],
        )


def test_a_single_worker_killed_mid_turn_shows_the_turn_interrupted(tmp_path: Path) -> None:
    """One ``adk-asgi serve`` on sqlite, ``kill -9`` mid-answer, started again: its memory
    stream store is gone (``GET {chatId}/stream`` 204), and the session holds the question
    without an answer. The history ends with that turn's message marked interrupted
    (``data-interrupted``, the documented text), valid for ai 5, 6 and 7 (their own
    ``validateUIMessages``), and a page reloaded from it goes on with the next message.
    Before: the question alone, no sign of the loss."""
    db = ["--session-db", f"sqlite:///{tmp_path / 'one.db'}"]
    versions = ("ai5", "ai6", "ai7")
    server = Serve(*db, "--token-delay", "0.05").wait_ready()
    posts: dict[str, dict[str, Any]] = {ai: {} for ai in versions}
    try:
        for ai, post in posts.items():
            body = chat_body(f"lost-{ai}", user_message("bench 400", "u-1"))
            _read(server.url, "POST", post, json=body)
        while min(len(post["lines"]) for post in posts.values()) < 20:
            time.sleep(0.05)
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(10)
    finally:
        server.stop()
    with Serve(*db, "--token-delay", "0") as again:
        assert httpx.get(f"{again.url}/lost-ai5/stream", timeout=10).status_code == 204
        runs = [
            {
                "ai": ai,
                "api": again.url,
                "chatId": f"lost-{ai}",
                "steps": [],
                "afterReload": [{"action": "send", "text": "hello"}],
                "timeoutMs": 30_000,
            }
            for ai in versions
        ]
        results = drive_history(runs, concurrency=3)
    for result in results:
        ai = result["ai"]
        assert "crash" not in result, result.get("crash")
        history = result["history"]["body"]["messages"]
        assert [m["role"] for m in history] == ["user", "assistant"], ai
        assert history[1] == {
            "id": _chunks(posts[ai])[0]["messageId"],
            "role": "assistant",
            "parts": [{"type": "data-interrupted", "data": {"errorText": INTERRUPTED_ERROR}}],
        }
        assert result["validation"]["ok"], (ai, result["validation"])
        reloaded = result["reloaded"]
        assert reloaded["ok"], (ai, reloaded["problems"])
        # The next turn answers after the lost one, which stays marked.
        after = result["reloadedHistory"]["body"]["messages"]
        assert after[:2] == history and after[-1]["role"] == "assistant", ai
        assert after[-1]["parts"][-1]["type"] == "text", ai
        assert reloaded["messages"] == after, ai
