"""In-process ASGI harnesses for the fuzz tests: HTTP exchanges with raw ASGI
messages, a WebSocket driver, and the checks every example must pass
(no 5xx, well-formed endings, no task left behind)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .chat import parse_sse

EXAMPLE_TIMEOUT = 30.0  # no example may take longer (a hang fails the test)
SETTLE = 1.0  # how long tasks may take to finish after an exchange
# Loop-wide helpers that are not per request (none today; a library that starts one
# per event loop would be listed here).
PER_LOOP_TASKS: frozenset[str] = frozenset()


def _per_loop(task: asyncio.Task[Any]) -> bool:
    return getattr(task.get_coro(), "__qualname__", "") in PER_LOOP_TASKS


async def bounded(coro: Awaitable[Any], within: float = EXAMPLE_TIMEOUT) -> Any:
    """``coro`` with a time limit, in the caller's task (``wait_for`` would add one)."""
    async with asyncio.timeout(within):
        return await coro


async def assert_no_other_tasks(within: float = SETTLE) -> None:
    """Every task but the caller's ends within ``within`` seconds (nothing leaked)."""
    me = asyncio.current_task()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        others = {
            t for t in asyncio.all_tasks() if t is not me and not t.done() and not _per_loop(t)
        }
        if not others:
            return
        if loop.time() > deadline:
            raise AssertionError(f"tasks left behind: {sorted(map(repr, others))}")
        await asyncio.sleep(0.01)


class ErrorLog(logging.Handler):
    """Collects ERROR records of the server's loggers during an example."""

    NAMES = ("adk_asgi", "uvicorn.error", "google_adk", "google.adk")

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not _deliberate(record):
            self.records.append(record)

    def __enter__(self) -> ErrorLog:
        for name in self.NAMES:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for name in self.NAMES:
            logging.getLogger(name).removeHandler(self)

    def messages(self) -> list[str]:
        return [
            f"{r.name}: {r.getMessage()} {r.exc_info[1]!r}"
            if r.exc_info
            else f"{r.name}: {r.getMessage()}"
            for r in self.records
        ]


DEMO_ERROR_CODE = "DEMO_ERROR"  # the demo model's error_code for "please fail"


def _deliberate(record: logging.LogRecord) -> bool:
    """The demo model's on-purpose failures are logged as they should be: "please raise"
    (an exception) and "please fail" (an error response, logged without a traceback)."""
    if isinstance(record.args, tuple) and DEMO_ERROR_CODE in record.args:
        return True
    exc = record.exc_info[1] if record.exc_info else None
    while exc is not None:
        if type(exc).__name__ == "DemoModelError":
            return True
        exc = exc.__cause__ or exc.__context__
    return False


# -- HTTP -----------------------------------------------------------------------------


def http_scope(
    headers: list[tuple[bytes, bytes]], path: str = "/", method: str = "POST"
) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }


class HttpResult:
    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: dict[bytes, bytes] = {}
        self.body = b""
        self.complete = False


async def asgi_post(
    app: Any,
    body_chunks: list[bytes],
    headers: list[tuple[bytes, bytes]],
    disconnect_after: int | None = None,
    leave_mid_stream: bool = False,
) -> HttpResult:
    """One request as raw ASGI messages: ``body_chunks`` as separate ``http.request``
    messages; ``disconnect_after``: the client goes away after that many of them.
    After the body the client waits (as a real one does) until the response is done,
    or, with ``leave_mid_stream``, until the first piece of the body arrives."""
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": chunk, "more_body": i < len(body_chunks) - 1}
        for i, chunk in enumerate(body_chunks or [b""])
    ]
    if disconnect_after is not None:
        messages = [*messages[:disconnect_after], {"type": "http.disconnect"}]
    done = asyncio.Event()
    first_body = asyncio.Event()
    result = HttpResult()

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await (first_body if leave_mid_stream else done).wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        assert not result.complete, f"sent after the response ended: {message}"
        if message["type"] == "http.response.start":
            assert result.status is None, "two response starts"
            result.status = message["status"]
            result.headers = dict(message.get("headers", []))
        elif message["type"] == "http.response.body":
            assert result.status is not None, "body before start"
            result.body += message.get("body", b"")
            first_body.set()
            if not message.get("more_body", False):
                result.complete = True
                done.set()

    try:
        await asyncio.wait_for(app(http_scope(headers), receive, send), EXAMPLE_TIMEOUT)
    finally:
        done.set()
        first_body.set()
    return result


def check_http(status: int, headers: dict[str, str], body: bytes) -> str:
    """The endpoint's contract for any request: a 2xx SSE stream ending with
    ``[DONE]`` after exactly one terminal chunk, or a 4xx ``{"error": {code, message}}``.
    Returns ``"stream"`` or the error code."""
    assert status < 500, f"{status}: {body[:500]!r}"
    if 200 <= status < 300:
        assert headers["content-type"].startswith("text/event-stream"), headers
        text = body.decode()
        assert text.endswith("data: [DONE]\n\n"), text[-300:]
        chunks = parse_sse(text)
        assert chunks[-1] == "[DONE]" and "[DONE]" not in chunks[:-1]
        assert isinstance(chunks[0], dict) and chunks[0]["type"] == "start", chunks[:2]
        terminal = [c for c in chunks[:-1] if c["type"] in ("finish", "error")]
        assert len(terminal) == 1 and terminal[0] is chunks[-2], [c["type"] for c in chunks[-4:]]
        return "stream"
    assert 400 <= status < 500, status
    assert headers["content-type"] == "application/json", headers
    assert int(headers["content-length"]) == len(body)
    value = json.loads(body)
    assert set(value) == {"error"} and set(value["error"]) == {"code", "message"}, value
    assert isinstance(value["error"]["code"], str) and isinstance(value["error"]["message"], str)
    return str(value["error"]["code"])


# -- WebSocket --------------------------------------------------------------------------


class WsHarness:
    """Drives the app's WebSocket side in process: frames in, sent messages recorded."""

    def __init__(self, app: Any, query: bytes = b"") -> None:
        self.app = app
        self.query = query
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> WsHarness:
        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "scheme": "ws",
            "path": "/",
            "raw_path": b"/",
            "query_string": self.query,
            "root_path": "",
            "headers": [],
            "subprotocols": [],
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 80),
        }
        self.task = asyncio.create_task(self.app(scope, self.inbox.get, self._send))
        await self.inbox.put({"type": "websocket.connect"})
        await self.wait(lambda: any(m["type"] == "websocket.accept" for m in self.sent))
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.task is not None
        if not self.task.done():
            await self.inbox.put({"type": "websocket.disconnect", "code": 1000})
        for _ in range(10):
            done, _pending = await asyncio.wait([self.task], timeout=1)
            if done:
                break
        else:
            self.task.cancel()
            raise AssertionError("the connection did not end after the client left")
        self.task.result()  # the app's own exception, if any

    async def _send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.changed.set()

    async def text(self, frame: str) -> None:
        await self.inbox.put({"type": "websocket.receive", "text": frame})

    async def binary(self, frame: bytes) -> None:
        await self.inbox.put({"type": "websocket.receive", "bytes": frame})

    @property
    def frames(self) -> list[str]:
        return [m["text"] for m in self.sent if m["type"] == "websocket.send" and "text" in m]

    @property
    def close_code(self) -> int | None:
        for m in self.sent:
            if m["type"] == "websocket.close":
                return int(m.get("code", 1000))
        return None

    async def wait(self, done: Callable[[], bool], within: float = 10.0) -> None:
        assert self.task is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while not done():
            if self.task.done():
                self.task.result()  # the app's own exception, if any
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"no answer within {within} s; sent: {self.sent[-5:]}")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except TimeoutError:
                pass

    def chunks(self) -> list[Any]:
        """UI chunks from protocol A frames (``data: {json}``) and B ``chunk`` frames."""
        out: list[Any] = []
        for frame in self.frames:
            if frame.startswith("data: "):
                payload = frame[6:].strip()
                out.append(payload if payload == "[DONE]" else json.loads(payload))
            else:
                value = json.loads(frame)
                if value.get("type") == "chunk":
                    out.append(value["chunk"])
        return out

    async def probe(self, marker: str) -> None:
        """A ping every protocol answers: protocol A with a pong, protocol B with an
        error frame for the unknown type, both carrying ``marker``. The answer shows
        the connection survived everything sent before."""
        await self.text(
            json.dumps({"type": "ping", "version": "1.0", "timestamp": marker, "requestId": marker})
        )
        await self.wait(
            lambda: any(marker in f for f in self.frames) or self.close_code is not None
        )
        assert self.close_code is None, f"closed with {self.close_code}: {self.sent[-5:]}"
        assert any(marker in f for f in self.frames), self.sent[-5:]
