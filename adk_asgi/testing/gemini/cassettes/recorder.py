"""Recording: the emulator as a proxy to the real Gemini API, writing a cassette.

Every HTTP request and every Live API connection is forwarded to the upstream (by
default ``https://generativelanguage.googleapis.com``) with the real API key in place of
the client's; the answer goes back to the client as it comes, and the exchange is written
to the cassette when it ends (cassette.py: no header is kept, secrets are redacted).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import websockets
from starlette.requests import Request as HttpRequest
from starlette.responses import Response, StreamingResponse
from starlette.websockets import WebSocket
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from ..auth import check_credentials
from ..errors import ApiError
from ..journal import Journal, Record
from ..live.socket import _summary
from ..settings import EmulatorSettings
from .cassette import CassetteWriter, monotonic_since, public_url

__all__ = ("DEFAULT_UPSTREAM", "LiveRecorder", "RestRecorder", "Upstream", "real_api_key")

logger = logging.getLogger("adk_asgi.testing.gemini")

DEFAULT_UPSTREAM = "https://generativelanguage.googleapis.com"
"""The Gemini Developer API."""

# Request headers never forwarded: hop-by-hop ones, what the proxy sets itself, and the
# client's credentials (replaced by the real key).
_DROPPED = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "upgrade",
        "accept-encoding",
        "x-goog-api-key",
        "authorization",
        "cookie",
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-extensions",
        "sec-websocket-protocol",
    }
)
_SENDABLE_CLOSE = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011})


def real_api_key() -> str | None:
    """The API key of this process's environment, as google-genai reads it
    (``GOOGLE_API_KEY``, then ``GEMINI_API_KEY``)."""
    return os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY") or None


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where a recording emulator forwards requests, and with what key.

    >>> Upstream("https://generativelanguage.googleapis.com", api_key="AIza...").url
    'https://generativelanguage.googleapis.com'
    """

    url: str = DEFAULT_UPSTREAM
    """The Gemini API's base URL (what ``GOOGLE_GEMINI_BASE_URL`` would be)."""
    api_key: str | None = None
    """The real API key; None: ``GOOGLE_API_KEY`` (or ``GEMINI_API_KEY``) of the
    environment when the emulator starts."""
    ssl_context: ssl.SSLContext | None = None
    """Trust for an ``https`` upstream; None: ``SSL_CERT_FILE`` or certifi's roots."""

    def with_key(self) -> Upstream:
        """This upstream with its key resolved from the environment when unset."""
        if self.api_key:
            return self
        key = real_api_key()
        if not key:
            raise RuntimeError(
                "recording forwards requests to the real Gemini API with your API key: set "
                "GOOGLE_API_KEY (or GEMINI_API_KEY) in the emulator's environment"
            )
        return Upstream(self.url, key, self.ssl_context)

    @property
    def key(self) -> str:
        if not self.api_key:
            raise RuntimeError("the upstream's API key is not resolved (Upstream.with_key)")
        return self.api_key

    def context(self) -> ssl.SSLContext:
        if self.ssl_context is not None:
            return self.ssl_context
        import certifi

        return ssl.create_default_context(cafile=os.environ.get("SSL_CERT_FILE") or certifi.where())

    def http_url(self, path: str, query: str) -> str:
        return self.url.rstrip("/") + path + (f"?{query}" if query else "")

    def ws_url(self, path: str, query: str) -> str:
        base = self.url.rstrip("/")
        scheme, _, rest = base.partition("://")
        ws = {"https": "wss", "http": "ws"}.get(scheme, scheme)
        return f"{ws}://{rest}{path}" + (f"?{query}" if query else "")


def untrusted_upstream(error: BaseException) -> bool:
    """Whether ``error`` (or what it came from) is the upstream's TLS certificate refused by
    the trust the recorder was given: a reachable upstream, not an unreachable one."""
    seen: BaseException | None = error
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def failure_text(where: str, error: BaseException, what: str = "upstream") -> str:
    """What a client is told when the upstream at ``where`` could not be reached."""
    if untrusted_upstream(error):
        return (
            f"The {what} {where} presented a TLS certificate this emulator does not trust: "
            "give its CA with --upstream-ca FILE (pytest: --gemini-upstream-ca FILE)."
        )
    return f"The {what} {where} is unreachable."


def _forwarded_query(query: str, writer: CassetteWriter) -> str:
    """The query without credentials (``key``, ``access_token``), which become secrets."""
    from urllib.parse import parse_qsl, urlencode

    kept = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name in ("key", "access_token"):
            writer.secret(value)
        else:
            kept.append((name, value))
    return urlencode(kept)


class RestRecorder:
    """Forwards ``generateContent`` and ``streamGenerateContent``, recording each."""

    def __init__(
        self,
        settings: EmulatorSettings,
        upstream: Upstream,
        writer: CassetteWriter,
        journal: Journal,
    ) -> None:
        self._settings = settings
        self._upstream = upstream
        self._writer = writer
        self._journal = journal

    async def handle(self, http: HttpRequest) -> Response:
        version = http.path_params["version"]
        model, _, method = http.path_params["target"].partition(":")
        if client_key := http.headers.get("x-goog-api-key"):
            self._writer.secret(client_key)
        if error := check_credentials(http.headers, http.query_params, self._settings):
            return Response(error.body(), error.code, media_type="application/json")
        raw = await http.body()
        try:
            body = json.loads(raw or b"{}")
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        self._journal.add(Record("http", method, {"model": model, "body": body}))
        query = _forwarded_query(http.url.query, self._writer)
        headers = {k: v for k, v in http.headers.items() if k.lower() not in _DROPPED}
        headers["x-goog-api-key"] = self._upstream.key
        exchange: dict[str, Any] = {
            "type": "http",
            "id": self._writer.next_id(),
            "version": version,
            "model": model,
            "method": method,
            "request": body,
        }
        client = httpx.AsyncClient(
            verify=self._upstream.context(), timeout=httpx.Timeout(600, connect=30)
        )
        start = time.monotonic()
        try:
            request = client.build_request(
                "POST", self._upstream.http_url(http.url.path, query), content=raw, headers=headers
            )
            answer = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            await client.aclose()
            # The error's type only: its text may hold the URL, and the URL a token.
            where = public_url(self._upstream.url)
            failed = ApiError(503, failure_text(where, exc))
            logger.warning("recording: %s (%s)", failed.message, type(exc).__name__)
            return Response(failed.body(), failed.code, media_type="application/json")
        content_type = answer.headers.get("content-type", "application/json")
        exchange.update(status=answer.status_code, content_type=content_type)
        if answer.status_code == 200 and "text/event-stream" in content_type:
            return StreamingResponse(
                self._relay_sse(client, answer, exchange, start),
                media_type="text/event-stream",
                headers={"cache-control": "no-cache"},
            )
        try:
            data = await answer.aread()
        finally:
            await answer.aclose()
            await client.aclose()
        try:
            exchange["body"] = json.loads(data or b"null")
        except (UnicodeDecodeError, json.JSONDecodeError):
            exchange["body"] = data.decode("utf-8", errors="replace")
        self._writer.write(exchange)
        return Response(data, answer.status_code, media_type=content_type)

    async def _relay_sse(
        self,
        client: httpx.AsyncClient,
        answer: httpx.Response,
        exchange: dict[str, Any],
        start: float,
    ) -> AsyncIterator[bytes]:
        events: list[dict[str, Any]] = []
        pending = ""
        try:
            async for chunk in answer.aiter_bytes():
                yield chunk
                pending += chunk.decode("utf-8", errors="replace").replace("\r\n", "\n")
                while "\n\n" in pending:
                    event, pending = pending.split("\n\n", 1)
                    data = "\n".join(
                        line[5:].lstrip() for line in event.split("\n") if line.startswith("data:")
                    )
                    if data:
                        events.append({"t": monotonic_since(start), "data": _json(data)})
        finally:
            await answer.aclose()
            await client.aclose()
            exchange["events"] = events
            self._writer.write(exchange)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


class LiveRecorder:
    """Forwards Live API connections frame by frame, recording each session."""

    def __init__(
        self,
        settings: EmulatorSettings,
        upstream: Upstream,
        writer: CassetteWriter,
        journal: Journal,
    ) -> None:
        self._settings = settings
        self._upstream = upstream
        self._writer = writer
        self._journal = journal
        self._numbers = 0

    async def handle(self, websocket: WebSocket) -> None:
        self._numbers += 1
        number = self._numbers
        rpc = websocket.path_params["rpc"]
        method = rpc.rpartition(".")[2]
        ephemeral = method.endswith("Constrained")
        headers = {k: v for k, v in websocket.headers.items() if k.lower() not in _DROPPED}
        if client_key := websocket.headers.get("x-goog-api-key"):
            self._writer.secret(client_key)
        authorization = websocket.headers.get("authorization", "")
        self._writer.secret(authorization.removeprefix("Token ").strip())
        await websocket.accept()
        if error := check_credentials(
            websocket.headers, websocket.query_params, self._settings, ephemeral=ephemeral
        ):
            await websocket.close(error.close_code, error.close_reason)
            return
        if ephemeral:
            headers["authorization"] = authorization  # the client's token, forwarded as is
        else:
            headers["x-goog-api-key"] = self._upstream.key
        query = _forwarded_query(websocket.url.query, self._writer)
        if ephemeral and "access_token" in websocket.query_params:
            query += (
                ("&" if query else "") + "access_token=" + websocket.query_params["access_token"]
            )
        url = self._upstream.ws_url(websocket.url.path, query)
        secure = url.startswith("wss://")
        try:
            upstream = await websockets.connect(
                url,
                additional_headers=headers,
                ssl=self._upstream.context() if secure else None,
                max_size=None,
                open_timeout=30,
            )
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            status = getattr(getattr(exc, "response", None), "status_code", None)
            logger.warning(
                "recording: the upstream Live API at %s refused or failed (%s%s)",
                public_url(self._upstream.url),
                type(exc).__name__,
                f" {status}" if status else "",
            )
            reason = (
                "The upstream Live API's TLS certificate is not trusted (--upstream-ca)."
                if untrusted_upstream(exc)
                else "The upstream Live API is unreachable."
            )
            await websocket.close(1011, reason)
            return
        exchange_id = self._writer.next_id()
        session = _LiveSession(websocket, upstream, number, self._journal)
        try:
            await session.relay()
        finally:
            self._writer.write(
                {
                    "type": "live",
                    "id": exchange_id,
                    "version": rpc.split(".")[3] if rpc.count(".") >= 4 else "",
                    "method": method,
                    "model": session.model,
                    "frames": session.frames,
                    "close": session.close,
                }
            )


class _LiveSession:
    """One proxied connection: both directions relayed, every frame kept in order."""

    def __init__(
        self, client: WebSocket, upstream: ClientConnection, number: int, journal: Journal
    ) -> None:
        self._client = client
        self._upstream = upstream
        self._number = number
        self._journal = journal
        self._start = time.monotonic()
        self.frames: list[dict[str, Any]] = []
        self.close: dict[str, Any] | None = None
        self.model = ""

    async def relay(self) -> None:
        tasks = [
            asyncio.create_task(self._from_client()),
            asyncio.create_task(self._from_upstream()),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self._upstream.close()

    def _keep(self, sender: str, raw: str | bytes) -> None:
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        message = _json(text)
        self.frames.append({"t": monotonic_since(self._start), "from": sender, "message": message})
        if sender == "client" and isinstance(message, dict) and len(message) == 1:
            kind, body = next(iter(message.items()))
            if kind == "setup" and isinstance(body, dict):
                self.model = str(body.get("model") or "").removeprefix("models/")
            self._journal.add(Record("live", kind, _summary(body), self._number))

    async def _from_client(self) -> None:
        while True:
            event = await self._client.receive()
            if event["type"] == "websocket.disconnect":
                code = int(event.get("code", 1000))
                if self.close is None:
                    self.close = {
                        "t": monotonic_since(self._start),
                        "by": "client",
                        "code": code,
                        "reason": str(event.get("reason") or ""),
                    }
                self._journal.add(Record("live", "disconnect", {"code": code}, self._number))
                await self._upstream.close(code if code in _SENDABLE_CLOSE else 1000)
                return
            raw = event.get("text") if event.get("text") is not None else event.get("bytes")
            if raw is None:
                continue
            self._keep("client", raw)
            await self._upstream.send(raw)

    async def _from_upstream(self) -> None:
        try:
            async for raw in self._upstream:
                self._keep("server", raw)
                if isinstance(raw, bytes):
                    await self._client.send_bytes(raw)
                else:
                    await self._client.send_text(raw)
        except ConnectionClosed:
            pass
        received = self._upstream.close_code
        code = received if received is not None else 1006
        reason = self._upstream.close_reason or ""
        if self.close is None:
            self.close = {
                "t": monotonic_since(self._start),
                "by": "server",
                "code": code,
                "reason": reason,
            }
        self._journal.add(
            Record(
                "live", "close", {"code": code, "reason": reason, "detail": reason}, self._number
            )
        )
        with contextlib.suppress(Exception):
            await self._client.close(code if code in _SENDABLE_CLOSE else 1011, reason)
