"""Fixtures only; the helpers tests import are in tests/support/."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent

from support import LoopbackServer
from support.schedule import slowest_files_first

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in (
        "127.0.0.1",
        "::1",
        "localhost",
    ):
        raise OSError(f"tests are offline: refused connect to {address!r}")
    return _real_connect(self, address)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first, for xdist's workers (see support/schedule.py)."""
    items[:] = [items[i] for i in slowest_files_first(items)]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach the network (Gemini above all): only loopback connects."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


@pytest.fixture
def demo_app() -> AdkApp:
    return AdkApp(build_demo_agent(token_delay=0), warm_up=False)


@pytest.fixture
async def client(demo_app: AdkApp) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=demo_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest.fixture
def loopback() -> Iterator[type[LoopbackServer]]:
    yield LoopbackServer


@pytest.fixture
def spans() -> Iterator[Any]:
    """OpenTelemetry spans finished during the test (an in-memory exporter; the process's
    one ``TracerProvider`` records only while a test listens)."""
    from support.tracing import recorded_spans

    with recorded_spans() as exporter:
        yield exporter


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server (Debian's package, installed by scripts/test) for this run."""
    from support.redis_server import RedisServer

    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture(scope="session")
def gemini_emulator() -> Iterator[Any]:
    """One Gemini API emulator (``adk_asgi.testing.gemini``) for the whole run, chunking
    like Gemini (8 tokens a chunk). Agents reach it through ``gemini_emulator.gemini(name)``
    (no environment needed); its journal is shared, so tests filter it by what they sent."""
    from adk_asgi.testing.gemini import GeminiEmulator

    with GeminiEmulator(tokens_per_chunk=8) as emulator:
        yield emulator


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A throwaway PostgreSQL server for this run (tests/support/pg_server.py); skipped without the
    postgres extra or the server binaries."""
    import importlib.util

    from support.pg_server import PostgresServer, find_bindir

    if not all(importlib.util.find_spec(m) for m in ("sqlalchemy", "asyncpg")):
        pytest.skip(
            "needs the postgres extra: pip install -e '.[postgres]' (google-adk[db], asyncpg)"
        )
    bindir = find_bindir()
    if bindir is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, pg_ctl, postgres) on this machine; "
            "scripts/test installs Debian's postgresql package when it can"
        )
    server = PostgresServer(bindir).start()
    try:
        yield server
    finally:
        server.stop()
