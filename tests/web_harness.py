"""Helpers for the chat page's and the npm client's tests: a real `adk-asgi serve`
subprocess, and where their Node tooling (examples/web, clients/js) and Debian's
Chromium are."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import httpx

ROOT: Final = Path(__file__).resolve().parent.parent
WEB_DIR: Final = ROOT / "examples" / "web"
CLIENT_DIR: Final = ROOT / "clients" / "js"
CHROMIUM: Final = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))

_INSTALL: Final = (
    "run scripts/test (it installs them), or by hand: apt-get install -y chromium; "
    "npm ci --prefix clients/js; npm ci --prefix examples/web"
)


def web_tooling_problem(*, browser: bool = False) -> str | None:
    """Why the page's Node tooling (or Chromium) cannot run, or None."""
    if shutil.which("node") is None:
        return f"`node` is not on PATH (Node >= 20.19); {_INSTALL}"
    if not (WEB_DIR / "node_modules" / ".bin" / "vite").exists():
        return f"examples/web/node_modules is missing; {_INSTALL}"
    if not (CLIENT_DIR / "node_modules" / ".bin" / "tsup").exists():
        # the page's build builds the npm client it depends on (file:../../clients/js)
        return f"clients/js/node_modules is missing; {_INSTALL}"
    if browser and not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (Debian's chromium package); {_INSTALL}"
    return None


@contextmanager
def client_build_lock() -> Iterator[None]:
    """Held while a test runs Node builds that write clients/js/dist (the page's build
    builds the npm client first; `npm pack` builds it too; tsup empties dist first): the
    suite runs in two processes, and one build must not read what the other is rewriting."""
    lock = CLIENT_DIR / "node_modules" / ".adk-asgi-tests.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(
    *args: str,
    token_delay: float = 0.01,
    env: dict[str, str] | None = None,
    output: list[str] | None = None,
) -> Iterator[str]:
    """Run `adk-asgi serve` (the offline demo agent) on a free loopback port; yields
    its base URL. Never with a Gemini key: GOOGLE_* variables are dropped, and only
    ``env`` (e.g. the Gemini emulator's, ``GeminiEmulator.env``) is added. ``output``
    gets everything the server printed (its logs), once it stopped."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOOGLE_")} | (env or {})
    # Logs to a file when they are wanted: a verbose server must never block on a pipe.
    log = tempfile.TemporaryFile("w+") if output is not None else None
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "adk_asgi",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--token-delay",
            str(token_delay),
            "--log-level",
            "warning",
            *args,
        ],
        cwd=ROOT,
        env=env,
        stdout=log or subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/", timeout=5).status_code in (200, 404):
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read() if proc.stdout else ""
                if log is not None:
                    log.seek(0)
                    out = log.read()
                raise RuntimeError(f"adk-asgi serve did not start:\n{out}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        if log is not None and output is not None:
            log.seek(0)
            output.append(log.read())
            log.close()
