"""The emulator's ASGI application: the Gemini API's HTTP and Live API routes, answered
from a script, forwarded to the real service while recording a cassette, or replayed
from one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from .cassettes.cassette import Cassette, CassetteWriter
from .cassettes.recorder import LiveRecorder, RestRecorder, Upstream
from .cassettes.replayer import LiveReplayer, RestReplayer
from .journal import Journal
from .live.endpoint import LiveEndpoint
from .rest.generate import RestEndpoint
from .script.exchange import ScriptFn
from .settings import EmulatorSettings

__all__ = ("Recording", "Replaying", "build_app")


@dataclass(frozen=True, slots=True)
class Recording:
    """Forward every request to ``upstream`` and write the exchanges to ``path``."""

    path: Path
    upstream: Upstream


@dataclass(frozen=True, slots=True)
class Replaying:
    """Answer from the cassette; ``timing`` keeps its recorded pauses."""

    cassette: Cassette
    timing: bool = False


Mode = ScriptFn | Recording | Replaying


def build_app(settings: EmulatorSettings, mode: Mode, journal: Journal) -> ASGIApp:
    """The Starlette app serving ``/{version}/models/{model}:{method}`` (HTTP) and
    ``/ws/google.ai.generativelanguage.{version}.GenerativeService.{method}`` (Live)."""
    rest: Callable[[Request], Awaitable[Response]]
    live: Callable[[WebSocket], Awaitable[None]]
    if isinstance(mode, Recording):
        writer = CassetteWriter(mode.path, mode.upstream.url, secrets=(mode.upstream.key,))
        rest = RestRecorder(settings, mode.upstream, writer, journal).handle
        live = LiveRecorder(settings, mode.upstream, writer, journal).handle
    elif isinstance(mode, Replaying):
        rest = RestReplayer(settings, mode.cassette, journal, mode.timing).handle
        live = LiveReplayer(settings, mode.cassette, journal, mode.timing).handle
    else:
        rest = RestEndpoint(settings, mode, journal).handle
        live = LiveEndpoint(settings, mode, journal).handle
    app = Starlette(
        routes=[
            Route("/{version}/models/{target}", rest, methods=["POST"]),
            WebSocketRoute("/ws/{rpc}", live),
        ]
    )
    return _CollapseSlashes(app)


class _CollapseSlashes:
    """``//ws/...`` -> ``/ws/...``: google-genai appends ``/ws/...`` and ``/v1beta/...``
    to the base URL as given, so a base URL ending in ``/`` doubles the slash."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and "//" in scope["path"]:
            path = scope["path"]
            while "//" in path:
                path = path.replace("//", "/")
            scope = {**scope, "path": path, "raw_path": path.encode()}
        await self._app(scope, receive, send)
