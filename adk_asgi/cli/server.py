"""Serving under uvicorn: a server that drains the app before it closes connections, and
``--workers N``: N such servers on one listening socket (our own small supervisor:
uvicorn's builds plain servers that would skip the drain)."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import multiprocessing
import os
import select
import signal
import socket
from collections.abc import Callable
from typing import Any

import uvicorn

__all__ = (
    "SERVED",
    "WS_CHOICES",
    "DrainingServer",
    "WorkerMain",
    "supervise",
    "uvicorn_config",
    "ws_missing",
    "ws_protocol",
)

logger = logging.getLogger("adk_asgi")
# The AdkApps this process serves: drained before uvicorn closes connections.
SERVED: list[Any] = []

WS_PROTOCOL = "websockets-sansio"
"""uvicorn's WebSocket implementation for ``adk-asgi serve``: the sans-I/O one costs ~10 %
less server CPU per live token than its ``auto`` choice (the legacy ``websockets`` one,
deprecated in uvicorn), measured side by side in benchmarks."""
WS_CHOICES: dict[str, str] = {
    "websockets-sansio": "websockets",
    "websockets": "websockets",
    "wsproto": "wsproto",
}
"""``--ws`` choices: uvicorn's WebSocket implementations, and the package each needs."""


def ws_missing(choice: str) -> str | None:
    """The package ``--ws choice`` needs and this installation lacks, else None."""
    package = WS_CHOICES[choice]
    try:
        found = importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a broken or blocked installation
        found = False
    return None if found else package


def ws_protocol(choice: str) -> Any:
    """What uvicorn is given for ``--ws choice``: its name, or (wsproto) uvicorn's protocol
    sending the close code of a frame it could not parse (see ``_wsproto_protocol``)."""
    return _wsproto_protocol() if choice == "wsproto" else choice


def _wsproto_protocol() -> type:
    """uvicorn's wsproto protocol, closing a connection whose frame wsproto could not parse
    (invalid UTF-8, a protocol violation) with the close frame and its code (1007, 1002):
    uvicorn closes the socket without one, so the client sees 1006, not why."""
    from uvicorn.protocols.websockets.wsproto_impl import WSProtocol
    from wsproto.connection import ConnectionState
    from wsproto.events import CloseConnection

    class WsprotoProtocol(WSProtocol):
        def handle_close(self, event: CloseConnection) -> None:
            # A parse failure arrives as a CloseConnection while the connection is OPEN
            # (a peer's close would have made it REMOTE_CLOSING).
            if not self.close_sent and self.conn.state == ConnectionState.OPEN:
                self.transport.write(self.conn.send(CloseConnection(code=event.code)))
            super().handle_close(event)  # tells the app, closes the socket

    return WsprotoProtocol


class DrainingServer(uvicorn.Server):
    """uvicorn's server, draining the served AdkApps before it closes connections.

    Alone on its socket it stops accepting first: new connections are refused by the
    kernel. On a socket shared by ``--workers`` that would not refuse anything (the
    socket stays open in the other processes, and the kernel queues connections nobody
    will accept, then resets them): there it keeps accepting while it drains, so each new
    request is answered ``503 shutting_down`` (WebSocket: close 1012), and the socket
    closes with the last worker."""

    shared_socket = False

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if not self.shared_socket:
            for server in self.servers:
                server.close()  # stop accepting first
        if SERVED:
            await asyncio.gather(*(app.drain() for app in SERVED), return_exceptions=True)
        if self.shared_socket:
            await self._take_backlog()
        for server in self.servers:
            server.close()
        await self._read_requests()
        await super().shutdown(sockets)

    async def _take_backlog(self) -> None:
        """Accept (and so answer) what the kernel queued on the socket before closing it:
        if this is the last worker, closing resets those connections."""
        fds = [s.fileno() for server in self.servers for s in server.sockets]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 1.0
        # Polling: once per worker, at shutdown only.
        while fds and loop.time() < deadline and select.select(fds, [], [], 0)[0]:  # noqa: ASYNC110
            await asyncio.sleep(0.01)

    async def _read_requests(self) -> None:
        """Give connections accepted a moment ago the time to deliver their request (the
        app answers it 503 while draining): uvicorn's shutdown closes a connection whose
        request it has not read yet, and its client sees a dropped connection."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 1.0
        while loop.time() < deadline and any(  # noqa: ASYNC110 (at shutdown only)
            getattr(c, "cycle", True) is None for c in self.server_state.connections
        ):
            await asyncio.sleep(0.01)


def uvicorn_config(args: argparse.Namespace, app: Any) -> uvicorn.Config:
    from ..observability.logs import json_log_config

    log_config = (
        json_log_config(args.log_level)
        if args.log_format == "json"
        else uvicorn.config.LOGGING_CONFIG
    )
    return uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        log_config=log_config,
        ws=ws_protocol(args.ws),
        ws_per_message_deflate=args.ws_compression,
        # What drain leaves (a stuck client) is cut after this.
        timeout_graceful_shutdown=5,
    )


WorkerMain = Callable[[list[str], socket.socket, int], None]
"""``(argv, socket, index)``: what a spawned worker runs (``cli/main.py``'s ``serve_worker``:
build the app from the same arguments and serve it on the shared socket)."""


def supervise(argv: list[str], args: argparse.Namespace, worker_main: WorkerMain) -> int:
    """Run ``args.workers`` workers on one listening socket, restarting any that dies, until
    SIGTERM/SIGINT (forwarded to each: they drain, then exit)."""
    sock = uvicorn_config(args, None).bind_socket()
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=worker_main, args=(argv, sock, i), daemon=False)
        for i in range(args.workers)
    ]
    stopping = False

    def forward(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for worker in workers:
            if worker.pid is not None and worker.is_alive():
                os.kill(worker.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for worker in workers:
        worker.start()
    while True:
        if stopping and sock.fileno() != -1:
            sock.close()  # the socket closes with the last draining worker (see above)
        for i, worker in enumerate(workers):
            worker.join(0.5)
            if not worker.is_alive() and not stopping:
                logger.warning(
                    "Worker %s exited with %s; starting a new one", worker.pid, worker.exitcode
                )
                workers[i] = context.Process(target=worker_main, args=(argv, sock, i))
                workers[i].start()
        if stopping and not any(w.is_alive() for w in workers):
            return 0
