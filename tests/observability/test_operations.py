"""What an operator sees of a real ``adk-asgi serve`` process: every ``adk_asgi_*`` metric
read from its Prometheus endpoint (``--metrics-port``) after real turns over SSE and live,
its JSON log lines (``--log-format json``), and its spans exported over OTLP/HTTP to a
collector on loopback (``OTEL_EXPORTER_OTLP_ENDPOINT``)."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from prometheus_client.parser import text_string_to_metric_families

from support import Chat, Serve, chat_body, free_port, parse_sse, types_of, user_message
from support.ws_client import LiveClient, kinds, ws_url

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


class Collector:
    """An OTLP/HTTP trace collector on loopback: keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        collector.spans.extend(scope.spans)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def named(self, name: str) -> list[Any]:
        return [s for s in self.spans if s.name == name]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Served:
    def __init__(self, server: Serve, metrics_port: int, db: Path) -> None:
        self.server = server
        self.url = server.base
        self.metrics_url = f"http://127.0.0.1:{metrics_port}/metrics"
        self.db = db

    def scrape(self) -> Samples:
        text = httpx.get(self.metrics_url, timeout=10).text
        samples: Samples = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                labels = frozenset(
                    (k, v) for k, v in sample.labels.items() if not k.startswith("otel_scope_")
                )
                samples[(sample.name, labels)] = sample.value
        return samples


@pytest.fixture(scope="module")
def collector() -> Iterator[Collector]:
    collector = Collector()
    yield collector
    collector.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, collector: Collector) -> Iterator[Served]:
    workdir = tmp_path_factory.mktemp("ops")
    folder = workdir / "db"
    folder.mkdir()
    metrics_port = free_port()
    # --log-format json: the server's log (stderr) alone, every line one JSON object.
    server = Serve(
        "--metrics-port",
        str(metrics_port),
        "--log-format",
        "json",
        "--session-db",
        f"sqlite:///{folder}/chats.db",
        token_delay=0,
        env={"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "OTEL_BSP_SCHEDULE_DELAY": "100"},
        drop_env=("GOOGLE_", "OTEL_"),
        stdout=False,
    )
    with server:
        yield Served(server, metrics_port, folder)


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_every_metric_after_real_turns(served: Served, collector: Collector) -> None:
    async with httpx.AsyncClient(base_url=served.url + "/api/chat", timeout=30) as client:
        reply = await client.post(
            "", json=chat_body("sse-1", user_message("What's the weather in Paris?"))
        )
        assert types_of(parse_sse(reply.text))[-2:] == ["finish", "[DONE]"]
        # An approval over HTTP: the turn ends awaiting it; the answer continues it.
        chat = Chat(client, "sse-2")
        chat.messages.append(user_message("Send $50 to Hanako", "u1"))
        first = parse_sse((await client.post("", json=chat.body())).text)
        assert "tool-approval-request" in types_of(first)
        chat.absorb(first)
        chat.approve(0, True)
        second = parse_sse((await client.post("", json=chat.body())).text)
        assert "tool-output-available" in types_of(second)
        assert (await client.get("/sse-1/stream")).status_code == 204  # nothing to resume
        # The model raises mid-answer: an error turn, logged with its traceback.
        crash = await client.post("", json=chat_body("crash", user_message("please raise")))
        assert types_of(parse_sse(crash.text))[-2:] == ["error", "[DONE]"]

    live = await LiveClient.open(ws_url(served.url + "/api/chat", "chatId=live-1"))
    await live.say("What's the weather in Tokyo?", chat_id="live-1")
    assert kinds(await live.turn())[-2:] == ["finish", "[DONE]"]
    await live.say("Send $20 to Taro", chat_id="live-1")
    head = await live.until("tool-approval-request")
    during = served.scrape()
    await live.send("tool_result", toolCallId=head[-1]["approvalId"], result={"confirmed": True})
    assert kinds(await live.turn())[-2:] == ["finish", "[DONE]"]
    after_live = served.scrape()
    await live.close()

    # While the live approval waited: one open connection, one open turn, one approval.
    assert value(during, "adk_asgi_active_connections") == 1
    assert value(during, "adk_asgi_active_streams", transport="websocket") == 1
    assert value(during, "adk_asgi_approvals_pending", transport="websocket") == 1
    assert value(during, "adk_asgi_approval_oldest_pending_age_seconds", transport="websocket") > 0
    assert value(after_live, "adk_asgi_approvals_pending", transport="websocket") == 0

    deadline = time.monotonic() + 10
    while value(samples := served.scrape(), "adk_asgi_active_connections") != 0:
        assert time.monotonic() < deadline, "the live connection never closed"
        await asyncio.sleep(0.1)
    for transport in ("sse", "websocket"):
        assert value(samples, "adk_asgi_active_streams", transport=transport) == 0
        assert (
            value(samples, "adk_asgi_time_to_first_token_seconds_count", transport=transport) >= 2
        )
        assert value(samples, "adk_asgi_time_to_first_token_seconds_sum", transport=transport) > 0
        assert value(samples, "adk_asgi_tokens_streamed_total", transport=transport) > 0
        assert value(samples, "adk_asgi_approvals_requested_total", transport=transport) == 1
        assert (
            value(
                samples,
                "adk_asgi_approval_age_seconds_count",
                transport=transport,
                decision="approved",
            )
            == 1
        )
    assert value(samples, "adk_asgi_turns_total", transport="sse", outcome="completed") == 2
    assert value(samples, "adk_asgi_turns_total", transport="sse", outcome="awaiting") == 1
    assert value(samples, "adk_asgi_turns_total", transport="websocket", outcome="completed") == 2
    assert (
        value(samples, "adk_asgi_turn_duration_seconds_count", transport="sse", outcome="completed")
        == 2
    )
    assert value(samples, "adk_asgi_turns_total", transport="sse", outcome="error") == 1
    assert value(samples, "adk_asgi_resumes_total", transport="sse", result="none") == 1
    # The same endpoint: the process's metrics, who it is, and ADK's own (gen_ai_*).
    names = {name for name, _ in samples}
    assert "process_cpu_seconds_total" in names and "python_gc_collections_total" in names
    assert any(
        name == "target_info" and ("service_name", "adk-asgi") in labels for name, labels in samples
    )
    assert any(name.startswith("gen_ai_") for name in names), sorted(names)

    # The session store breaks: the request gets 503, the error is counted and logged.
    shutil.rmtree(served.db)
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as client:
        refused = await client.post("/api/chat", json=chat_body("broken", user_message("hi")))
        assert refused.status_code == 503
        assert (await client.get("/readyz")).json()["checks"]["sessions"].startswith("failed")
    samples = served.scrape()
    assert value(samples, "adk_asgi_store_errors_total", store="sessions", operation="prepare") == 1

    # Spans reached the collector: each turn's, with ADK's under it.
    deadline = time.monotonic() + 15
    while len(collector.named("adk_asgi.turn")) < 5 or not collector.named(
        "adk_asgi.live.connection"
    ):
        assert time.monotonic() < deadline, [s.name for s in collector.spans]
        await asyncio.sleep(0.1)
    turn = next(
        s
        for s in collector.named("adk_asgi.turn")
        if any(
            a.key == "adk_asgi.chat.id" and a.value.string_value == "sse-1" for a in s.attributes
        )
    )
    under = [s for s in collector.spans if s.trace_id == turn.trace_id and s is not turn]
    assert any(s.name.startswith("execute_tool") for s in under)
    assert all(s.parent_span_id for s in under)
    connection = collector.named("adk_asgi.live.connection")[0]
    assert any(
        s.name.startswith("execute_tool")
        for s in collector.spans
        if s.trace_id == connection.trace_id
    )

    # --log-format json: every line of the server's log is one JSON object.
    served.server.stop()
    lines = [json.loads(line) for line in served.server.output().splitlines() if line.strip()]
    assert lines and all({"time", "level", "logger", "message"} <= set(line) for line in lines)
    access = [
        line
        for line in lines
        if line["logger"] == "uvicorn.access" and "POST /api/chat" in line["message"]
    ]
    assert access and access[0]["chat_id"] == "sse-1" and access[0]["user_id"] == "anonymous"
    [failure] = [
        line
        for line in lines
        if line["message"].startswith("Session store failed for chat 'broken'")
    ]
    assert failure["level"] == "ERROR" and failure["chat_id"] == "broken"
    assert "OperationalError" in failure["message"]
    assert len(failure["trace_id"]) == 32 and len(failure["span_id"]) == 16
    # A failure with a traceback carries it in "exception" (one JSON line all the same).
    [crash] = [line for line in lines if line["message"].startswith("ADK run failed")]
    assert crash["chat_id"] == "crash" and "Traceback" in crash["exception"]
