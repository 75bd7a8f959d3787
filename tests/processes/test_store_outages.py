"""The session database failing in the middle of a turn, on real processes (issue 24):
a PostgreSQL server stopped and a sqlite file made unwritable (``chattr +i``, which holds
for root too) while the answer streams. The client gets the stream it was getting, then
one ``error`` chunk saying the answer could not be saved; the log has one line naming the
chat and the cause's class, no traceback and nothing the user wrote; while the database
is down ``POST`` answers ``503 session_unavailable`` and ``GET``/``DELETE {chatId}/stream``
answer from the stream store, as the outage table says; it recovers without a restart."""

from __future__ import annotations

import contextlib
import logging
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_asgi import AdkApp
from adk_asgi.demo import build_demo_agent
from adk_asgi.wire.errors import NOT_SAVED_ERROR

from support import LoopbackServer, chat_body, parse_sse, types_of, user_message

MARKER = "zq7-marker-user-words"


def _log_text(caplog: pytest.LogCaptureFixture) -> str:
    """Everything logged, tracebacks included, as the server's handlers would print it."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return "\n".join(formatter.format(r) for r in caplog.records)


def _stream_while(
    client: httpx.Client, chat_id: str, text: str, fault: Callable[[], None]
) -> list[Any]:
    """POST a turn; once its first text arrived, ``fault()``; the whole stream."""
    lines: list[str] = []
    with client.stream("POST", "/", json=chat_body(chat_id, user_message(text))) as response:
        assert response.status_code == 200
        faulted = 0.0
        for line in response.iter_lines():
            lines.append(line)
            if not faulted and '"text-delta"' in line:
                fault()
                faulted = time.monotonic()
    print(f"{chat_id}: the stream ended {time.monotonic() - faulted:.2f} s after the fault")
    return parse_sse("\n".join(lines) + "\n\n")


def _check_outage(
    client: httpx.Client, chat_id: str, chunks: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    kinds = types_of(chunks)
    text = "".join(c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta")
    assert MARKER in text  # the client got the answer it was getting (it echoes the user)
    assert kinds[-2:] == ["error", "[DONE]"], kinds
    assert chunks[-2]["errorText"] == NOT_SAVED_ERROR
    assert kinds.count("error") == 1
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    line = errors[0].getMessage()
    assert errors[0].name == "adk_asgi" and repr(chat_id) in line and "not saved" in line
    assert not errors[0].exc_info, "a traceback"
    # No user content at INFO and above, in any logger (SQL parameters above all).
    assert MARKER not in _log_text(caplog)
    assert "Traceback" not in _log_text(caplog)
    # While the database is down: POST is a 503; the stream routes answer from the stream
    # store (the turn is over: nothing to resume, nothing to stop).
    refused = client.post("/", json=chat_body(chat_id, user_message("again")))
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "session_unavailable"
    assert refused.headers["retry-after"] == "2"
    assert client.get(f"/{chat_id}/stream").status_code == 204
    stopped = client.delete(f"/{chat_id}/stream")
    assert (stopped.status_code, stopped.json()) == (200, {"stopped": False})
    assert MARKER not in _log_text(caplog)


def _app(url: str) -> AdkApp:
    # 0.05 s per token: the echo streams for ~2 s, time to break the database under it.
    return AdkApp(build_demo_agent(token_delay=0.05), session_db=url, warm_up=False)


def test_postgresql_stopped_mid_turn(caplog: pytest.LogCaptureFixture) -> None:
    from support.pg_server import PostgresServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries (scripts/test installs them)")
    pg = PostgresServer(bindir).start()
    try:
        url = pg.create_database("outage")
        with (
            LoopbackServer(_app(url)) as server,
            httpx.Client(base_url=server.url, timeout=60) as client,
        ):
            ok = client.post("/", json=chat_body("pg-chat", user_message("hello")))
            assert types_of(parse_sse(ok.text))[-2:] == ["finish", "[DONE]"]
            caplog.set_level(logging.INFO)
            caplog.clear()
            chunks = _stream_while(client, "pg-chat", f"{MARKER} is what I say", pg.halt)
            _check_outage(client, "pg-chat", chunks, caplog)
            pg.resume()  # the outage ends: no restart of the app
            again = client.post("/", json=chat_body("pg-chat", user_message("hi again")))
            assert types_of(parse_sse(again.text))[-2:] == ["finish", "[DONE]"], again.text
    finally:
        pg.stop()


class _Immutable:
    """``freeze()`` makes a folder and its files immutable (root included), ``thaw()``
    undoes it (also at the end of the block)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.frozen: list[Path] = []

    def freeze(self) -> None:
        for path in [*self.folder.iterdir(), self.folder]:
            subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
            self.frozen.append(path)

    def thaw(self) -> None:
        while self.frozen:
            subprocess.run(
                ["chattr", "-i", str(self.frozen.pop())], check=False, capture_output=True
            )


@contextlib.contextmanager
def _immutable(folder: Path) -> Iterator[_Immutable]:
    files = _Immutable(folder)
    try:
        yield files
    finally:
        files.thaw()


def test_sqlite_made_unwritable_mid_turn(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    if shutil.which("chattr") is None:
        pytest.skip("needs chattr (e2fsprogs)")
    folder = tmp_path / "data"
    folder.mkdir()
    probe = folder / "probe"
    probe.touch()
    if subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode != 0:
        pytest.skip(f"this file system does not take chattr +i ({tmp_path})")
    subprocess.run(["chattr", "-i", str(probe)], check=True)
    probe.unlink()
    with (
        _immutable(folder) as files,
        LoopbackServer(_app(f"sqlite:///{folder / 'c.db'}")) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        ok = client.post("/", json=chat_body("lite-chat", user_message("hello")))
        assert types_of(parse_sse(ok.text))[-2:] == ["finish", "[DONE]"]
        caplog.set_level(logging.INFO)
        caplog.clear()
        chunks = _stream_while(client, "lite-chat", f"{MARKER} is what I say", files.freeze)
        _check_outage(client, "lite-chat", chunks, caplog)
        files.thaw()  # the outage ends: no restart of the app
        again = client.post("/", json=chat_body("lite-chat", user_message("hi again")))
        assert types_of(parse_sse(again.text))[-2:] == ["finish", "[DONE]"], again.text


def test_sqlite_made_unwritable_mid_turn_on_a_live_socket(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same over a WebSocket (protocol A): the turn's chunks, one ``error`` saying the
    answer could not be saved, then close 1013 (try again later) and one log line."""
    import asyncio

    from support.ws_client import LiveClient, ws_url

    if shutil.which("chattr") is None:
        pytest.skip("needs chattr (e2fsprogs)")
    folder = tmp_path / "data"
    folder.mkdir()

    async def talk(url: str, files: _Immutable) -> tuple[list[Any], int | None]:
        client = await LiveClient.open(ws_url(url, "chatId=live-chat"))
        chunks: list[Any] = []
        await client.say(f"{MARKER} is what I say")
        try:
            while True:
                chunk = await client.next(20)
                chunks.append(chunk)
                if isinstance(chunk, dict) and chunk["type"] == "text-delta" and not files.frozen:
                    files.freeze()
        except Exception:  # the server closed the socket
            pass
        return chunks, client.ws.close_code

    with (
        _immutable(folder) as files,
        LoopbackServer(_app(f"sqlite:///{folder / 'c.db'}")) as server,
    ):
        ok = httpx.post(server.url, json=chat_body("warm", user_message("hello")), timeout=30)
        assert ok.status_code == 200
        caplog.set_level(logging.INFO)
        caplog.clear()
        chunks, code = asyncio.run(talk(server.url, files))
    kinds = types_of(chunks)
    assert MARKER in "".join(
        c["delta"] for c in chunks if isinstance(c, dict) and c["type"] == "text-delta"
    )
    errors = [c for c in chunks if isinstance(c, dict) and c["type"] == "error"]
    assert [e["errorText"] for e in errors] == [NOT_SAVED_ERROR], kinds
    assert code == 1013, (code, kinds)
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(logged) == 1 and "live-chat" in logged[0].getMessage(), [
        r.getMessage() for r in logged
    ]
    assert not logged[0].exc_info
    assert MARKER not in _log_text(caplog) and "Traceback" not in _log_text(caplog)
