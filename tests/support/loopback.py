"""Apps served in process: a real uvicorn on loopback, and a bare app to mount around."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import uvicorn

from adk_asgi.cli.server import WS_PROTOCOL


class LoopbackServer:
    """A real uvicorn server on 127.0.0.1 in a thread with its own event loop,
    so tests can look at the server's tasks."""

    def __init__(self, app: Any, **config: Any) -> None:
        # The WebSocket implementation `adk-asgi serve` runs (tests see what users get).
        config.setdefault("ws", WS_PROTOCOL)
        self.config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", **config
        )
        self.server = uvicorn.Server(self.config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.serve())

    def __enter__(self) -> LoopbackServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def tasks(self) -> set[asyncio.Task[Any]]:
        """The server loop's live tasks other than uvicorn's own serving machinery."""
        assert self.loop is not None

        async def collect() -> set[asyncio.Task[Any]]:
            me = asyncio.current_task()
            return {t for t in asyncio.all_tasks() if t is not me and not t.done()}

        return asyncio.run_coroutine_threadsafe(collect(), self.loop).result(5)


async def not_found_app(scope: Any, receive: Any, send: Any) -> None:
    """A bare ASGI app answering JSON 404 to everything: the site tests wrap the chat
    endpoint around (``AdkMiddleware(not_found_app, path=...)``)."""
    from adk_asgi.cli.site import plain_lifespan
    from adk_asgi.transport.asgi import send_json_error

    if scope["type"] == "lifespan":
        await plain_lifespan(receive, send)
    elif scope["type"] == "http":
        await send_json_error(send, 404, "not_found", "Not found.")
    else:
        await send({"type": "websocket.close", "code": 1000})
