"""Helpers for the chat page's and the npm client's tests: where their Node tooling
(examples/web, clients/js) and Debian's Chromium are (the server they test: `support.serve`)."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from .paths import ROOT

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
