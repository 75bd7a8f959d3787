"""AdkApp: one ASGI callable that routes by scope type.

    http       POST   /                     -> chat stream (SSE, UI message stream v1)
               GET    /{chatId}/stream      -> resume the chat's active stream (204: none)
               DELETE /{chatId}/stream      -> stop the chat's running turn
               POST   /{chatId}/tool-output -> complete a long-running call (202)
               GET    /oauth2/callback      -> an OAuth2 sign-in's return (http/oauth.py)
               GET    /{chatId}/artifacts   -> the chat's artifacts and their versions
               GET    /{chatId}/artifacts/{name}?version=N -> one artifact (ranges, ETag)
               GET    /                     -> the user's chats, newest first (a page)
               GET    /{chatId}             -> the chat's history (UIMessage[])
               DELETE /{chatId}             -> delete the chat (204)
               GET    /healthz, /readyz     -> liveness / readiness (http/health.py)
               anything else                -> JSON 404 / 405 (http/routes.py)
               (handlers raise; http/errors.py answers: JSON error, log line, metric)
    websocket  /                            -> live mode (Runner.run_live; see live/)
    lifespan                                -> build the runner + warm ADK up / close it

Paths are relative to where the app is mounted (``root_path``), so it works at
``/`` or under any prefix. The options are set once, here, into the records of
``options.py``; both endpoints read them from there.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Final

from google.adk.agents import RunConfig
from google.adk.apps import App
from google.adk.artifacts import BaseArtifactService
from google.adk.auth.credential_service.base_credential_service import BaseCredentialService
from google.adk.memory import BaseMemoryService
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService
from google.adk.workflow import BaseNode
from starlette.routing import Router

from .adk.runtime import AgentRuntime, Served, Services
from .http.artifacts import ArtifactRoutes
from .http.chats import UserChats
from .http.completion import complete_tool_call, post_tool_output
from .http.endpoint import ChatEndpoint
from .http.health import Health
from .http.history import ChatHistory
from .http.oauth import oauth_callback
from .http.openapi import OpenApi
from .http.routes import MethodTable, api_router, route_methods
from .live.endpoint import LiveEndpoint
from .options import (
    Authenticate,
    ChatListOptions,
    GcTuning,
    Limits,
    LiveOptions,
    PauseOptions,
    Settings,
    StorageOptions,
    StreamingOptions,
    SurfaceOptions,
    anonymous,
)
from .stores import MemoryStreamStore, StreamStore
from .translate.factory import Translators
from .translate.translator import EventTranslator
from .transport.asgi import ASGIApp, Receive, Scope, Send, route_path
from .transport.origin import OriginPolicy
from .wire.errors import DescribeError, describe_error_generic

__all__ = ("AdkApp",)

# Keywords of earlier releases, and where each option is set now.
_MOVED: Final = {
    **dict.fromkeys(
        ("resume_grace", "ping_interval", "send_timeout", "shutdown_grace"),
        "streaming=StreamingOptions",
    ),
    **dict.fromkeys(("confirmation_style", "client_completes"), "pauses=PauseOptions"),
    **dict.fromkeys(
        ("step_authors", "agent_names", "state_keys", "on_event"), "surface=SurfaceOptions"
    ),
}


class AdkApp:
    """Serve an ADK agent to AI SDK ``useChat`` clients.

    >>> mount(site, "/api/chat", AdkApp(agent=root_agent))   # adk_asgi.mount

    ``mount`` routes HTTP and WebSocket at the path, with or without a trailing slash,
    and runs the app's start-up and shutdown with the site's lifespan. Mounted any other
    way (``site.mount(...)``), the app starts itself on its first request unless you pass
    ``lifespan=chat.lifespan`` to the host app.

    What to serve: exactly one of ``agent`` (an agent, or an ADK 2 ``Workflow`` or any other
    node ADK's ``Runner`` takes), ``adk_app`` (an ADK ``App``) or ``runner``.
    ADK's services as ADK's ``Runner`` takes them (``session_service``, or a
    ``session_db`` URL; ``artifact_service`` and ``memory_service``, each a service or a
    URI as ADK's CLI takes it, in memory by default; ``credential_service``, where the
    credentials users give tools are kept, ADK's in-memory one by default); a ``Runner``
    brings its own. How the chat behaves: the option records ``streaming``, ``pauses``,
    ``surface``, ``storage``, ``live_options``, ``chats`` and ``limits``
    (``adk_asgi.options``); each option is set in one of them.
    """

    def __init__(
        self,
        agent: BaseNode | None = None,
        *,
        adk_app: App | None = None,
        runner: Runner | None = None,
        session_service: BaseSessionService | None = None,
        session_db: str | None = None,
        credential_service: BaseCredentialService | None = None,
        artifact_service: BaseArtifactService | str | None = None,
        memory_service: BaseMemoryService | str | None = None,
        app_name: str | None = None,
        run_config: RunConfig | None = None,
        authenticate: Authenticate = anonymous,
        allowed_origins: Iterable[str] | None = None,
        stream_store: StreamStore | None = None,
        limits: Limits | None = None,
        streaming: StreamingOptions | None = None,
        pauses: PauseOptions | None = None,
        surface: SurfaceOptions | None = None,
        storage: StorageOptions | None = None,
        live_options: LiveOptions | None = None,
        chats: ChatListOptions | None = None,
        describe_error: DescribeError = describe_error_generic,
        translator: type[EventTranslator] = EventTranslator,
        body_fields: Mapping[str, Any] | None = None,
        warm_up: bool = True,
        gc_tuning: GcTuning | None = None,
        **moved: Any,
    ) -> None:
        _refuse_moved(moved)
        self.settings = Settings(
            limits=limits or Limits(),
            streaming=streaming or StreamingOptions(),
            pauses=pauses or PauseOptions(),
            surface=surface or SurfaceOptions(),
            storage=storage or StorageOptions(),
            chats=chats or ChatListOptions(),
            live=live_options or LiveOptions(),
            authenticate=authenticate,
            describe_error=describe_error,
            body_fields=dict(body_fields or {}),
            gc_tuning=gc_tuning,
        )
        """Every option the app reads (``adk_asgi.options.Settings``)."""
        self.runtime = AgentRuntime(
            Served(
                agent=agent, app=adk_app, runner=runner, app_name=app_name, run_config=run_config
            ),
            Services(
                session_service=session_service,
                session_db=session_db,
                credential_service=credential_service,
                artifact_service=artifact_service,
                memory_service=memory_service,
            ),
            self.settings,
        )
        self.store: StreamStore = stream_store or MemoryStreamStore()
        runtime = self.runtime
        self.translators = Translators(self.settings, lambda: runtime.tools, translator)
        """How the app's translators are made (``translate/factory.py``)."""
        self.chat = ChatEndpoint(self.runtime, self.settings, self.store, self.translators)
        self.live = LiveEndpoint(
            self.runtime,
            self.settings,
            store=self.store,
            origins=OriginPolicy(allowed_origins),
            translators=self.translators,
        )
        self.health = Health(
            self.runtime, self.store, lambda: self.chat.draining or self.live.draining
        )
        """The probes: ``GET {path}/healthz`` and ``GET {path}/readyz`` (no identity
        needed); ``health.checks()`` for your own."""
        self._warm_up = warm_up
        self.history = ChatHistory(self.chat)
        self.chats = UserChats(self.chat, self.settings.chats)
        self._root = MethodTable({"POST": self.chat.post, "GET": self.chats.list})
        self._router = self._routes()

    @property
    def limits(self) -> Limits:
        return self.settings.limits

    def _routes(self) -> Router:
        chat = self.chat
        artifacts = ArtifactRoutes(chat)

        async def tool_output(scope: Scope, receive: Receive, send: Send) -> None:
            await post_tool_output(chat, scope, receive, send)

        async def sign_in(scope: Scope, receive: Receive, send: Send) -> None:
            await oauth_callback(chat, scope, receive, send)

        async def probe_healthz(scope: Scope, receive: Receive, send: Send) -> None:
            await self.health("healthz", scope, send)

        async def probe_readyz(scope: Scope, receive: Receive, send: Send) -> None:
            await self.health("readyz", scope, send)

        table: list[tuple[str, Mapping[str, ASGIApp] | MethodTable]] = [
            ("/", self._root),
            ("/openapi.json", {"GET": self._openapi}),
            ("/healthz", {"GET": probe_healthz}),
            ("/readyz", {"GET": probe_readyz}),
            ("/oauth2/callback", {"GET": sign_in}),
            # scope["path"] is already percent-decoded: the id is everything between.
            ("/{chat_id:path}/stream", {"GET": chat.resume, "DELETE": chat.stop}),
            ("/{chat_id:path}/tool-output", {"POST": tool_output}),
            # Matched after the routes above, so a chat id holding "/artifacts/" still
            # reaches its stream; an artifact whose name ends in "/stream" is not served.
            ("/{chat_id:path}/artifacts", {"GET": artifacts.listing}),
            ("/{chat_id:path}/artifacts/{name:path}", {"GET": artifacts.content}),
            ("/{chat_id:path}/evalset", {"GET": self.history.evalset}),
            # Last: it matches every path the routes above match.
            ("/{chat_id:path}", {"GET": self.history.get, "DELETE": self.chats.delete}),
        ]
        router = api_router(table)
        self.openapi = OpenApi(route_methods(router))
        """``GET {path}/openapi.json``: the routes as an OpenAPI 3.1 document (public)."""
        return router

    async def _openapi(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.openapi(scope, receive, send)

    async def complete_tool_call(
        self,
        chat_id: str,
        tool_call_id: str,
        *,
        output: dict[str, Any] | None = None,
        error_text: str | None = None,
        user_id: str = "anonymous",
        wait: bool = False,
    ) -> str:
        """Complete a long-running server call (a ``LongRunningFunctionTool`` the agent
        called in ``chat_id``) with its final ``output`` (or ``error_text``). ADK resumes
        the call's invocation and the turn streams to whoever follows the chat's stream
        (``GET {api}/{chatId}/stream``). Returns the assistant message id of that turn, once
        it started (``wait``: once it ended). Raises ``RequestError``: 404
        ``chat_not_found`` (not ``user_id``'s chat), 409 ``unknown_tool_call`` (no such
        call waits), 422 ``wrong_answer_kind`` (not a long-running server call)."""
        if (output is None) == (error_text is None):
            raise TypeError("give output= or error_text=")
        result = {"error": error_text} if error_text is not None else dict(output or {})
        return await complete_tool_call(
            self.chat, user_id, chat_id, tool_call_id, result, wait=wait
        )

    async def startup(self) -> None:
        first = not self.runtime.started
        await self.runtime.startup(warm=self._warm_up)
        if first and self.settings.gc_tuning is not None:
            self.settings.gc_tuning.apply()  # after warm-up: what it loaded gets frozen

    async def drain(self, grace: float | None = None) -> None:
        """Graceful shutdown, before the server closes connections: refuse new turns and
        connections, let running turns end within ``grace`` (default ``shutdown_grace``)
        seconds, then end the rest with an ``error`` chunk. ``adk-asgi serve`` calls it
        on SIGTERM; call it from your own server's shutdown hook otherwise."""
        grace = self.settings.streaming.shutdown_grace if grace is None else grace
        await asyncio.gather(self.chat.drain(grace), self.live.drain(grace))

    async def shutdown(self) -> None:
        """Close the runner (if adk-asgi built it) and the stream store; once."""
        if not self.runtime.started:
            return
        await self.runtime.shutdown()
        await self.store.close()

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
        if route_path(scope) == "":
            # The mount's bare path ("/api/chat", what useChat posts to) is its root; the
            # scope stays as the server gave it (hooks such as `authenticate` read it).
            await self._root(scope, receive, send)
            return
        # The router writes into the scope it is given (path parameters, the route): a
        # copy, so a host app's scope stays as it was.
        await self._router(dict(scope), receive, send)

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


def _refuse_moved(moved: dict[str, Any]) -> None:
    if "app" in moved:
        raise TypeError(
            "AdkApp(app=...) is now adk_app=...: pass your ADK App as "
            "adk_app=my_app (app= would clash with the wrapped ASGI app of "
            "AdkMiddleware)"
        )
    for name in moved:
        if name in _MOVED:
            raise TypeError(
                f"AdkApp({name}=...) is now set in {_MOVED[name]}({name}=...) (adk_asgi.options)"
            )
    if moved:
        raise TypeError(f"AdkApp() got unexpected keyword arguments: {', '.join(moved)}")
