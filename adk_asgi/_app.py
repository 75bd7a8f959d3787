"""AdkApp: one ASGI callable that routes by scope type.

    http       POST /                 -> chat stream (SSE, UI message stream v1)
               GET  /{chatId}/stream  -> stream resume (204: nothing to resume)
               anything else          -> JSON 404 / 405
    websocket  /                      -> live mode (Runner.run_live; see _live.py)
    lifespan                          -> build the runner + warm ADK up / close it

Paths are relative to where the app is mounted (``root_path``), so it works at
``/`` or under any prefix.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import unquote

from google.adk.agents import BaseAgent, RunConfig
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService

from ._chat import ChatEndpoint, ChatOptions, anonymous_user
from ._http import send_json_error
from ._live import LiveEndpoint, LiveOptions
from ._runtime import AgentRuntime
from ._translator import ConfirmationStyle
from ._types import Receive, Scope, Send, UserIdResolver

__all__ = ("AdkApp",)


class AdkApp:
    """Serve an ADK agent to AI SDK ``useChat`` clients.

    >>> site.mount("/api/chat", AdkApp(agent=root_agent))

    Starlette and FastAPI do not run the lifespan of mounted apps; the app then
    starts itself on its first request. To warm up at process start instead,
    pass ``lifespan=adk_app.lifespan`` to the host app (or use ``AdkMiddleware``).
    """

    def __init__(
        self,
        agent: BaseAgent | None = None,
        *,
        app: App | None = None,
        runner: Runner | None = None,
        session_service: BaseSessionService | None = None,
        session_db: str | None = None,
        app_name: str | None = None,
        run_config: RunConfig | None = None,
        user_id: UserIdResolver = anonymous_user,
        confirmation_style: ConfirmationStyle = "native",
        max_body_bytes: int = 16 * 1024 * 1024,
        ping_interval: float = 15.0,
        send_timeout: float | None = 60.0,
        warm_up: bool = True,
        live_options: LiveOptions | None = None,
    ) -> None:
        if confirmation_style not in ("native", "adk-tool"):
            raise ValueError("confirmation_style is 'native' or 'adk-tool'")
        self.runtime = AgentRuntime(agent=agent, app=app, runner=runner,
                                    session_service=session_service, session_db=session_db,
                                    app_name=app_name, run_config=run_config)
        self.chat = ChatEndpoint(self.runtime, ChatOptions(
            max_body_bytes=max_body_bytes, ping_interval=ping_interval,
            send_timeout=send_timeout, confirmation_style=confirmation_style, user_id=user_id))
        self._warm_up = warm_up
        self.live = LiveEndpoint(self.runtime, live_options or LiveOptions(
            confirmation_style=confirmation_style, send_timeout=send_timeout),
            self.chat.resolve_user)

    async def startup(self) -> None:
        await self.runtime.startup(warm=self._warm_up)

    async def shutdown(self) -> None:
        await self.runtime.shutdown()

    @asynccontextmanager
    async def lifespan(self, _app: Any = None) -> AsyncIterator[None]:
        """A lifespan context for a host app: ``FastAPI(lifespan=adk_app.lifespan)``."""
        await self.startup()
        try:
            yield
        finally:
            await self.shutdown()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "websocket":
            await self.live(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = route_path(scope)
        method = scope["method"]
        if path in ("", "/"):
            if method == "POST":
                await self.chat.post(scope, receive, send)
            else:
                await send_json_error(send, 405, "method_not_allowed",
                                      f"{method} is not allowed here; POST a chat request.",
                                      headers=[(b"allow", b"POST")])
            return
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[1] == "stream" and parts[0]:
            if method in ("GET", "HEAD"):
                await self.chat.no_active_stream(scope, receive, send)
            else:
                await send_json_error(send, 405, "method_not_allowed",
                                      f"{method} is not allowed here.",
                                      headers=[(b"allow", b"GET")])
            return
        await send_json_error(send, 404, "not_found", f"No route for {unquote(path)!r}.")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.startup()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


def route_path(scope: Scope) -> str:
    """The request path relative to the mount point (``root_path``)."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    return path
