"""AdkMiddleware: the chat endpoint in front of any ASGI app, at one path.

Requests to ``path`` (and below it) go to an ``AdkApp``; every other path and
scope type passes through untouched. The lifespan is shared: the agent starts
before the wrapped app reports start-up complete and stops after its shutdown.
"""

from __future__ import annotations

from typing import Any

from .app import AdkApp
from .transport.asgi import ASGIApp, Message, Receive, Scope, Send, route_path

__all__ = ("AdkMiddleware",)


class AdkMiddleware:
    """``AdkMiddleware(app, path="/api/chat", **options)``: ``app`` is the ASGI app to wrap;
    ``options`` are ``AdkApp``'s (``agent=``, ``adk_app=`` or ``runner=``, ...).

    >>> app = AdkMiddleware(site, path="/api/chat", agent=root_agent)
    >>> site.add_middleware(AdkMiddleware, path="/api/chat", agent=root_agent)  # FastAPI
    """

    def __init__(self, app: ASGIApp, /, path: str = "/api/chat", **options: Any) -> None:
        if not path.startswith("/"):
            raise ValueError("path must start with '/'")
        self.app = app
        self.path = path.rstrip("/") or "/"
        self.adk = AdkApp(**options)
        self.adk.chat.api_path = "" if self.path == "/" else self.path

    def _relative(self, scope: Scope) -> str | None:
        """The path below the mount point, if this request is ours."""
        path = route_path(scope)
        if self.path == "/":
            return path
        if path == self.path or path.startswith(self.path + "/"):
            return path[len(self.path) :]
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self.app(scope, self._lifespan_receive(receive), self._lifespan_send(send))
            return
        relative = self._relative(scope) if kind in ("http", "websocket") else None
        if relative is None:
            await self.app(scope, receive, send)
            return
        # As Starlette's Mount does: the prefix moves into root_path, path stays full.
        root = scope.get("root_path", "") + (self.path if self.path != "/" else "")
        await self.adk({**scope, "root_path": root, "path": root + relative}, receive, send)

    def _lifespan_receive(self, receive: Receive) -> Receive:
        async def wrapped() -> Message:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.adk.startup()
            return message

        return wrapped

    def _lifespan_send(self, send: Send) -> Send:
        async def wrapped(message: Message) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                await self.adk.shutdown()
            await send(message)

        return wrapped
