"""The emulator's ASGI application: the Gemini API's HTTP and Live API routes."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from .journal import Journal
from .live import LiveEndpoint
from .rest import RestEndpoint
from .script import ScriptFn
from .settings import EmulatorSettings

__all__ = ("build_app",)


def build_app(settings: EmulatorSettings, script: ScriptFn, journal: Journal) -> ASGIApp:
    """The Starlette app serving ``/{version}/models/{model}:{method}`` (HTTP) and
    ``/ws/google.ai.generativelanguage.{version}.GenerativeService.{method}`` (Live)."""
    app = Starlette(
        routes=[
            Route(
                "/{version}/models/{target}",
                RestEndpoint(settings, script, journal).handle,
                methods=["POST"],
            ),
            WebSocketRoute("/ws/{rpc}", LiveEndpoint(settings, script, journal).handle),
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
