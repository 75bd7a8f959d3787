"""Three ``adk-asgi serve`` replicas behind a real nginx that balances round robin (no
stickiness), sharing a real PostgreSQL (sessions) and a real redis-server (streams and
locks), driven by the real AI SDK client (ai 7) through nginx: a chat's turn, its approval,
its resume and its stop each reach another replica; a replica killed (``kill -9``) mid-turn
leaves the page a resume that ends with the error and ``[DONE]`` within seconds, and a chat
free for the next message."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from adk_asgi.wire.errors import INTERRUPTED_ERROR

from support import Serve, chat_body, user_message
from support.aisdk_client import require_node_harness, run_chat
from support.nginx_proxy import EXAMPLE, Nginx, nginx_binary

pytestmark = pytest.mark.slow

REPLICAS = 3


def _site(ports: list[int]) -> str:
    """examples/nginx.conf with all replicas in its upstream (round robin, nginx's
    default), each response naming the replica (``X-Upstream``), and an access log of
    which replica answered what."""
    text = EXAMPLE.read_text()
    line = re.search(r"(?m)^\s*server\s+127\.0\.0\.1:8000;.*$", text)
    assert line is not None
    others = "".join(f"\n    server 127.0.0.1:{port};" for port in ports[1:])
    text = text[: line.end()] + others + text[line.end() :]
    text = text.replace(
        "    proxy_buffering off;",
        "    proxy_buffering off;\n"
        "    add_header X-Upstream $upstream_addr always;\n"
        "    access_log replicas.log replicas;",
        1,
    )
    return "log_format replicas '$request_method $uri $status $upstream_addr';\n" + text


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, request: pytest.FixtureRequest
) -> Iterator[tuple[list[Serve], Nginx]]:
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (scripts/test installs it)")
    require_node_harness()
    postgres = request.getfixturevalue("postgres")
    db = postgres.create_database(f"replicas_{uuid.uuid4().hex[:8]}")
    shared = [
        "--session-db",
        db,
        "--redis-url",
        redis_url,
        "--token-delay",
        "0.02",
        "--resume-grace",
        "30",
    ]
    serves = [Serve(*shared) for _ in range(REPLICAS)]
    try:
        for serve in serves:
            serve.wait_ready()
        site = _site([serve.port for serve in serves])
        with Nginx(tmp_path_factory.mktemp("nginx"), serves[0].port, site) as proxy:
            yield serves, proxy
    finally:
        for serve in serves:
            serve.stop()


def _answered_by(proxy: Nginx, chat_id: str) -> list[tuple[str, str]]:
    """(method and route, replica port) of every request of the chat, as nginx logged
    them (in the order they ended)."""
    out = []
    for line in (proxy.dir / "replicas.log").read_text().splitlines():
        method, uri, _status, upstream = line.split(" ", 3)
        if chat_id in uri or uri == "/api/chat":
            route = uri.replace(chat_id, "{id}")
            out.append((f"{method} {route}", upstream.rsplit(":", 1)[-1]))
    return out


def test_one_chat_across_three_replicas(replicas: tuple[list[Serve], Nginx]) -> None:
    """Approve, resume (a page reload) and stop, each through another replica than the
    turn's, with ai 7's own Chat validating every chunk."""
    _serves, proxy = replicas
    chat_id = f"rr-{uuid.uuid4().hex[:8]}"
    (proxy.dir / "replicas.log").write_text("")
    report = run_chat(
        "ai7",
        proxy.url + "/api/chat",
        [
            {"action": "send", "text": "send 12 EUR to Alice"},
            {"action": "approve", "approved": True},
            # waitFor measures the reply to the send before it, mid-stream
            {"action": "send", "text": "bench 100", "noWait": True},  # 390 characters
            {"action": "waitFor", "textLength": 200},
            {"action": "reload"},
            {"action": "send", "text": "bench 2000", "noWait": True},
            {"action": "waitFor", "textLength": 600},
            {"action": "deleteStream"},
        ],
        chat_id=chat_id,
        auto_send="approvals",
        timeout=60,
    )
    assert report["ok"], {k: report[k] for k in ("error", "problems", "chatErrors", "stepResults")}
    requests = report["requests"]
    replica = [r["headers"].get("x-upstream", "") for r in requests]
    kinds = [(r["method"], r["chunks"][-1]["type"] if r["chunks"] else None) for r in requests]
    print("requests:", list(zip(kinds, replica, strict=True)))
    # ask -> approval requested; the approval (another replica) runs the payment
    assert kinds[0] == ("POST", "finish") and kinds[1] == ("POST", "finish")
    assert "approval" in str(requests[0]["chunks"]) and "Alice" in str(requests[1]["chunks"])
    assert replica[1] != replica[0]
    # the reload's resume (GET) follows the turn running on another replica to its end
    posts_and_gets = [(r["method"], x) for r, x in zip(requests, replica, strict=True)]
    resume = next(i for i, r in enumerate(requests) if r["method"] == "GET")
    assert requests[resume]["sawDone"] and kinds[resume][1] == "finish"
    assert replica[resume] != replica[resume - 1], posts_and_gets
    # the stop (DELETE) reached another replica than the turn's, which ended with abort
    assert kinds[-1] == ("POST", "abort") and requests[-1]["sawDone"]
    log = _answered_by(proxy, chat_id)
    deletes = [port for route, port in log if route.startswith("DELETE")]
    assert len(deletes) == 1 and not replica[-1].endswith(":" + deletes[0]), (log, replica)
    assert len({port for _route, port in log}) == REPLICAS, log


def test_a_replica_killed_mid_turn(replicas: tuple[list[Serve], Nginx]) -> None:
    """kill -9 the replica running a turn: the page's resume (through nginx, on a live
    replica) ends with the error and [DONE] within seconds, and its next message is
    answered (the dead replica's lock lapsed)."""
    serves, proxy = replicas
    chat_id = f"kill-{uuid.uuid4().hex[:8]}"
    post: dict[str, Any] = {"lines": 0}
    started = threading.Event()

    def run() -> None:
        try:
            with httpx.stream(
                "POST",
                proxy.url + "/api/chat",
                timeout=60,
                json=chat_body(chat_id, user_message("bench 3000")),
            ) as response:
                post["replica"] = response.headers["x-upstream"]
                for _line in response.iter_lines():
                    post["lines"] += 1
                    if post["lines"] >= 20:
                        started.set()
        except httpx.HTTPError as exc:
            post["error"] = type(exc).__name__
        post["ended"] = time.monotonic()
        started.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert started.wait(30) and "ended" not in post, post
    port = int(post["replica"].rsplit(":", 1)[-1])
    victim = next(serve for serve in serves if serve.port == port)
    os.kill(victim.proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    thread.join(20)
    assert "ended" in post, "the page's request hung after its replica died"
    print(
        f"the page's request ended {post['ended'] - killed:.1f} s after the kill "
        f"({post.get('error', 'cut')})"
    )

    # The page reloads: resume, then its next message, through nginx (round robin over
    # the two live replicas; nginx skips the dead one).
    report = run_chat(
        "ai7",
        proxy.url + "/api/chat",
        [
            {"action": "resume"},
            {"action": "send", "text": "hello"},
        ],
        chat_id=chat_id,
        timeout=60,
    )
    done = time.monotonic() - killed
    resume, answer = report["requests"][0], report["requests"][-1]
    assert resume["method"] == "GET" and resume["status"] == 200, resume
    assert resume["sawDone"] and not resume["invalid"], resume
    assert resume["chunks"][-1]["type"] == "error", resume["chunks"][-3:]
    assert INTERRUPTED_ERROR in resume["chunks"][-1]["errorText"]
    assert answer["method"] == "POST" and answer["status"] == 200, answer
    assert answer["chunks"][-1]["type"] == "finish" and answer["sawDone"], answer["chunks"][-3:]
    assert not answer["invalid"]
    assert not answer["headers"]["x-upstream"].endswith(f":{port}")
    print(f"resume ended and the next message was answered {done:.1f} s after the kill")
    assert done < 20, done  # the 3 s stream lease and the 5 s lock lease, with slack


def test_chats_across_replicas(replicas: tuple[list[Serve], Nginx]) -> None:
    """A user's chats through nginx: each chat written by one replica is listed, read
    back and deleted by the others; a delete stops a turn running on another replica."""
    serves, proxy = replicas
    api = proxy.url + "/api/chat"
    prefix = f"list-{uuid.uuid4().hex[:8]}"
    ids = [f"{prefix}-{i}" for i in range(3)]
    writers = []
    for chat_id in ids:
        response = httpx.post(
            api, timeout=30, json=chat_body(chat_id, user_message(f"hello from {chat_id}"))
        )
        assert response.status_code == 200 and "[DONE]" in response.text
        writers.append(response.headers["x-upstream"])
    readers = set()
    listed: list[str] = []
    cursor = None
    while True:  # a page at a time, each page from the next replica
        response = httpx.get(
            api, params={"limit": 1, **({"cursor": cursor} if cursor else {})}, timeout=10
        )
        assert response.status_code == 200, response.text
        readers.add(response.headers["x-upstream"])
        body = response.json()
        listed += [c["id"] for c in body["chats"]]
        cursor = body["next"]
        if cursor is None:
            break
    assert [c for c in listed if c.startswith(prefix)] == ids[::-1]
    live = [serve for serve in serves if serve.proc.poll() is None]  # after a kill: two
    assert len(readers) == len(live) >= 2, readers
    for chat_id in ids:
        history = httpx.get(f"{api}/{chat_id}", timeout=10).json()
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
        assert history["messages"][0]["parts"] == [
            {"type": "text", "text": f"hello from {chat_id}"}
        ]

    # a turn runs on one replica; the delete goes to another, which stops it
    busy = ids[0]
    post: dict[str, Any] = {"chunks": []}
    streaming = threading.Event()

    def run() -> None:
        with httpx.stream(
            "POST", api, timeout=60, json=chat_body(busy, user_message("bench 3000"))
        ) as response:
            post["replica"] = response.headers["x-upstream"]
            for line in response.iter_lines():
                if line.startswith("data: "):
                    post["chunks"].append(line[6:])
                    if len(post["chunks"]) > 20:
                        streaming.set()
        streaming.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert streaming.wait(30)
    other = next(s for s in live if not post["replica"].endswith(f":{s.port}"))
    deleted = httpx.delete(f"http://127.0.0.1:{other.port}/api/chat/{busy}", timeout=30)
    assert deleted.status_code == 204, deleted.text
    thread.join(20)
    assert '{"type":"abort"}' in post["chunks"] and post["chunks"][-1] == "[DONE]"
    for _ in range(REPLICAS):  # gone on every replica
        assert httpx.get(f"{api}/{busy}", timeout=10).status_code == 404
    assert busy not in [
        c["id"] for c in httpx.get(api, params={"limit": 100}, timeout=10).json()["chats"]
    ]
