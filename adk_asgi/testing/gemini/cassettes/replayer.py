"""Replaying: the emulator answers from a cassette, offline.

Requests are matched to recorded exchanges by the rule cassette.py states; a request the
cassette has no recording of is answered with 404 NOT_FOUND (a Live API connection is
closed with 1008), and the explanation, which names the nearest recording and where it
differs, goes to the emulator's log and its journal (``kind="miss"``). With ``timing``
the recorded pauses are kept (between SSE events, and before each server message of a
Live session, counted from the client message it followed).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request as HttpRequest
from starlette.responses import Response, StreamingResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..auth import check_credentials
from ..errors import ApiError, close_reason
from ..journal import Journal, Record
from ..live.socket import _summary
from ..settings import EmulatorSettings
from .cassette import Cassette, LiveExchange, LiveFrame, NoMatch, canonical

__all__ = ("LiveReplayer", "RestReplayer")

logger = logging.getLogger("adk_asgi.testing.gemini")


def _miss(explanation: str) -> ApiError:
    return ApiError(404, explanation, status="NOT_FOUND")


class RestReplayer:
    """Answers ``generateContent`` and ``streamGenerateContent`` from the cassette."""

    def __init__(
        self, settings: EmulatorSettings, cassette: Cassette, journal: Journal, timing: bool
    ) -> None:
        self._settings = settings
        self._cassette = cassette
        self._journal = journal
        self._timing = timing

    async def handle(self, http: HttpRequest) -> Response:
        model, _, method = http.path_params["target"].partition(":")
        if error := check_credentials(http.headers, http.query_params, self._settings):
            return _error(error)
        try:
            body = json.loads(await http.body() or b"{}")
        except (UnicodeDecodeError, json.JSONDecodeError):
            return _error(ApiError(400, "Invalid JSON payload received. Unexpected token."))
        if not isinstance(body, dict):
            return _error(ApiError(400, "Invalid JSON payload received. Expected an object."))
        self._journal.add(Record("http", method, {"model": model, "body": body}))
        try:
            exchange = self._cassette.match_http(method, model, body)
        except NoMatch as miss:
            explanation = str(miss)
            logger.warning("replay: %s", explanation)
            self._journal.add(
                Record(
                    "http", "miss", {"model": model, "method": method, "explanation": explanation}
                )
            )
            return _error(_miss(explanation))
        if exchange.events is None:
            return Response(
                json.dumps(exchange.body, ensure_ascii=False),
                exchange.status,
                media_type=exchange.content_type,
            )
        if method == "generateContent":  # a streamed recording, asked for as one answer
            return Response(
                json.dumps(merged([data for _, data in exchange.events]), ensure_ascii=False),
                exchange.status,
                media_type="application/json",
            )
        if http.query_params.get("alt") != "sse":
            return Response(
                json.dumps([data for _, data in exchange.events]),
                exchange.status,
                media_type="application/json",
            )
        return StreamingResponse(
            self._events(exchange.events),
            exchange.status,
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    async def _events(self, events: tuple[tuple[float, Any], ...]) -> AsyncIterator[bytes]:
        start = time.monotonic()
        for t, data in events:
            if self._timing:
                await asyncio.sleep(max(0.0, start + t - time.monotonic()))
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            yield b"data: " + text.encode() + b"\r\n\r\n"


def _error(error: ApiError) -> Response:
    return Response(error.body(), error.code, media_type="application/json")


class LiveReplayer:
    """Replays recorded Live API sessions, message by message."""

    def __init__(
        self, settings: EmulatorSettings, cassette: Cassette, journal: Journal, timing: bool
    ) -> None:
        self._settings = settings
        self._cassette = cassette
        self._journal = journal
        self._timing = timing
        self._numbers = 0

    async def handle(self, websocket: WebSocket) -> None:
        self._numbers += 1
        method = websocket.path_params["rpc"].rpartition(".")[2]
        await websocket.accept()
        if error := check_credentials(
            websocket.headers,
            websocket.query_params,
            self._settings,
            ephemeral=method.endswith("Constrained"),
        ):
            await websocket.close(error.close_code, error.close_reason)
            return
        replay = _Replay(websocket, self._numbers, self._cassette, self._journal, self._timing)
        try:
            await replay.run(method)
        except WebSocketDisconnect as disconnect:
            self._journal.add(
                Record("live", "disconnect", {"code": disconnect.code}, self._numbers)
            )
        finally:
            if replay.chosen is not None:
                self._cassette.used(replay.chosen)


class _Replay:
    """One connection: the recorded sessions it may still be, narrowed by each client
    message; the server messages of the first of them."""

    def __init__(
        self, websocket: WebSocket, number: int, cassette: Cassette, journal: Journal, timing: bool
    ) -> None:
        self._ws = websocket
        self._number = number
        self._cassette = cassette
        self._journal = journal
        self._timing = timing
        self._sent: list[Any] = []
        self.chosen: LiveExchange | None = None

    async def run(self, method: str) -> None:
        setup_message = await self._receive()
        setup = setup_message.get("setup") if isinstance(setup_message, dict) else None
        candidates = self._cassette.live_candidates(method, setup or {})
        if not candidates:
            await self._refuse(self._cassette.explain_live(setup or {}, (), 0, setup_message))
            return
        index = 0
        arrived = time.monotonic()
        while True:
            self.chosen = candidates[0]
            following, after = _after(self.chosen, index)
            for frame in following:
                if self._timing:
                    pause = frame.t - (after.t if after else 0.0)
                    await asyncio.sleep(max(0.0, arrived + pause - time.monotonic()))
                await self._ws.send_text(json.dumps(frame.message, ensure_ascii=False))
                self._sent.append(frame.key)
            if len(self.chosen.client_frames) == index + 1 and self.chosen.close is not None:
                close = self.chosen.close
                if close.get("by") == "server":
                    if self._timing and after is not None:
                        pause = float(close.get("t", after.t)) - after.t
                        await asyncio.sleep(max(0.0, arrived + pause - time.monotonic()))
                    code = int(close.get("code") or 1000)
                    await self._ws.close(
                        code if code in _SENDABLE else 1011,
                        close_reason(str(close.get("reason") or "")),
                    )
                    return
            message = await self._receive()
            arrived = time.monotonic()
            index += 1
            key = canonical(message)
            narrowed = [c for c in candidates if _matches(c, index, key, self._sent)]
            if not narrowed:
                await self._refuse(
                    self._cassette.explain_live(setup or {}, candidates, index, message)
                )
                return
            candidates = narrowed

    async def _receive(self) -> Any:
        event = await self._ws.receive()
        if event["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(event.get("code", 1000))
        raw = event.get("text")
        if raw is None:
            raw = (event.get("bytes") or b"").decode("utf-8", errors="replace")
        try:
            message = json.loads(raw)
        except json.JSONDecodeError:
            message = raw
        if isinstance(message, dict) and len(message) == 1:
            kind, body = next(iter(message.items()))
            self._journal.add(Record("live", kind, _summary(body), self._number))
        return message

    async def _refuse(self, explanation: str) -> None:
        logger.warning("replay: %s", explanation)
        self._journal.add(Record("live", "miss", {"explanation": explanation}, self._number))
        self._journal.add(
            Record(
                "live",
                "close",
                {"code": 1008, "reason": "no recording", "detail": explanation},
                self._number,
            )
        )
        await self._ws.close(
            1008, close_reason("No recorded Live API session matches; the emulator's log says why.")
        )


_SENDABLE = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011})


def _after(exchange: LiveExchange, index: int) -> tuple[list[LiveFrame], LiveFrame | None]:
    """The server frames recorded after the ``index``-th client frame (up to the next
    client frame), and that client frame."""
    seen = -1
    client: LiveFrame | None = None
    following: list[LiveFrame] = []
    for frame in exchange.frames:
        if frame.sender == "client":
            seen += 1
            if seen == index:
                client = frame
            elif seen > index:
                break
        elif seen == index:
            following.append(frame)
    return following, client


def _matches(exchange: LiveExchange, index: int, key: Any, sent: list[Any]) -> bool:
    """The recorded session's ``index``-th client frame is ``key`` and it sent what was
    sent so far."""
    clients = exchange.client_frames
    if index >= len(clients) or clients[index].key != key:
        return False
    served: list[Any] = []
    seen = -1
    for frame in exchange.frames:
        if frame.sender == "client":
            seen += 1
            if seen >= index:
                break
        else:
            served.append(frame.key)
    return served == sent


def merged(chunks: list[Any]) -> Any:
    """A streamed answer as the one ``generateContent`` response it adds up to: the parts
    of every chunk in order (adjacent text of the same kind joined), the last chunk's other
    fields (finish reason, usage)."""
    if not chunks or not all(isinstance(c, dict) for c in chunks):
        return chunks[-1] if chunks else {}
    parts: list[dict[str, Any]] = []
    for chunk in chunks:
        for candidate in chunk.get("candidates", ())[:1]:
            for part in (candidate.get("content") or {}).get("parts", ()):
                last = parts[-1] if parts else None
                if (
                    last is not None
                    and set(part) <= {"text", "thought"}
                    and set(last) <= {"text", "thought"}
                    and "text" in part
                    and "text" in last
                    and part.get("thought") == last.get("thought")
                ):
                    last["text"] += part["text"]
                else:
                    parts.append(dict(part))
    answer = dict(chunks[-1])
    candidates = [dict(c) for c in answer.get("candidates", ())] or [{}]
    first = dict(candidates[0])
    first["content"] = {**(first.get("content") or {"role": "model"}), "parts": parts}
    answer["candidates"] = [first, *candidates[1:]]
    return answer
