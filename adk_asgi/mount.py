"""``mount(site, path, chat)``: put an ``AdkApp`` into a Starlette or FastAPI site.

Starlette's own ``site.mount(path, chat)`` matches only ``{path}/...``: a ``POST {path}`` gets
a 307 to ``{path}/`` (an extra round trip), and a WebSocket to ``{path}`` — the URL the AI SDK
clients use — is refused with 403 (Starlette redirects HTTP only). ``ChatRoute`` matches
``{path}`` itself and everything below it, for HTTP and WebSocket alike, and passes the
prefix on in ``root_path`` exactly as ``Mount`` does. ``mount`` also ties the chat's start-up
and shutdown to the site's lifespan (Starlette runs no lifespan of mounted apps).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send

from .app import AdkApp
from .transport.asgi import route_path

__all__ = ("ChatRoute", "mount")


class ChatRoute(BaseRoute):
    """A route for ``path`` and everything below it, HTTP and WebSocket."""

    def __init__(self, path: str, app: AdkApp) -> None:
        if not path.startswith("/") or path == "/":
            raise ValueError("path must start with '/' and name a prefix, e.g. '/api/chat'")
        self.path = path.rstrip("/")
        self.app = app

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] not in ("http", "websocket"):
            return Match.NONE, {}
        path = route_path(scope)
        if path != self.path and not path.startswith(self.path + "/"):
            return Match.NONE, {}
        root_path = scope.get("root_path", "")
        return Match.FULL, {
            "root_path": root_path + self.path,
            "app_root_path": scope.get("app_root_path", root_path),
        }

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def mount(site: Any, path: str, chat: AdkApp) -> None:
    """Serve ``chat`` at ``path`` (HTTP and WebSocket, with or without a trailing slash) in a
    Starlette or FastAPI app (or a ``Router``), started and stopped with the site.

    >>> chat = AdkApp(agent=root_agent)
    >>> app = FastAPI()
    >>> mount(app, "/api/chat", chat)
    """
    router = getattr(site, "router", site)
    router.routes.append(ChatRoute(path, chat))
    chat.chat.api_path = path.rstrip("/")  # until a request says where the site is
    inner: Callable[[Any], AbstractAsyncContextManager[Any]] = router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with chat.lifespan(app), inner(app) as state:
            yield state

    router.lifespan_context = lifespan
