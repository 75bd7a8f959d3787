"""The emulator's app served by uvicorn on loopback, in a thread of its own, with a
throwaway TLS authority when asked."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from .tls import TlsMaterial

__all__ = ("EmulatorServer",)

_STARTUP_TIMEOUT = 30.0


class _Server(uvicorn.Server):
    """Stops at once: idle keep-alive TLS connections would otherwise hold a graceful
    shutdown for its whole timeout (the TLS close waits for clients that are not reading)."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            with contextlib.suppress(Exception):
                connection.shutdown()
        await asyncio.sleep(0.05)
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.abort()
        try:
            await asyncio.wait_for(
                self._wait_tasks_to_complete(), timeout=self.config.timeout_graceful_shutdown
            )
        except TimeoutError:
            for task in self.server_state.tasks:
                task.cancel()
        await self.lifespan.shutdown()


class EmulatorServer:
    """Runs one ASGI app on ``host:port`` (0: a free port) until `stop()`. With ``tls``
    it writes a CA, a certificate and a CA bundle into ``cert_dir`` (by default a
    temporary directory, removed by `stop()`) and serves HTTPS and WSS."""

    def __init__(
        self, app: ASGIApp, host: str, port: int, *, tls: bool, cert_dir: Path | None
    ) -> None:
        self._app = app
        self._host = host
        self._requested_port = port
        self._tls_enabled = tls
        self._cert_dir = cert_dir
        self._own_cert_dir = False
        self.tls: TlsMaterial | None = None
        """The TLS material in use (None without TLS or once stopped)."""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        """The port it listens on (once started)."""

    def start(self) -> None:
        """Start serving; returns once the server listens."""
        server = self._build_server()
        self._server = server
        self._thread = threading.Thread(target=self._run, name="gemini-emulator", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _STARTUP_TIMEOUT
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Gemini emulator did not start on {self._host}")
            time.sleep(0.01)
        self.port = server.servers[0].sockets[0].getsockname()[1]

    def stop(self) -> None:
        """Stop serving (closing open connections) and remove temporary files."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=15)
        self._server = self._thread = None
        if self._own_cert_dir and self._cert_dir is not None:
            shutil.rmtree(self._cert_dir, ignore_errors=True)
            self._cert_dir = None
            self._own_cert_dir = False
        self.tls = None

    def _build_server(self) -> uvicorn.Server:
        tls: dict[str, Any] = {}
        if self._tls_enabled:
            if self._cert_dir is None:
                self._cert_dir = Path(tempfile.mkdtemp(prefix="gemini-emulator-"))
                self._own_cert_dir = True
            hosts = () if self._host in ("0.0.0.0", "::", "") else (self._host,)
            self.tls = TlsMaterial(self._cert_dir, hosts)
            tls = {"ssl_certfile": str(self.tls.cert_file)}
        config = uvicorn.Config(
            self._app,
            host=self._host,
            port=self._requested_port,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=2,
            **tls,
        )
        return _Server(config)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        assert self._server is not None
        try:
            loop.run_until_complete(self._server.serve())
        finally:
            loop.close()
