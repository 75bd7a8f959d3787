"""AdkApp: one ASGI callable that routes by scope type.

    http       POST   /                  -> chat stream (SSE, UI message stream v1)
               GET    /{chatId}/stream   -> resume the chat's active stream (204: none)
               DELETE /{chatId}/stream   -> stop the chat's running turn
               POST   /{chatId}/tool-output -> complete a long-running call (202)
               GET    /healthz, /readyz  -> liveness / readiness (observability/health.py)
               anything else             -> JSON 404 / 405
    websocket  /                         -> live mode (Runner.run_live; see live/)
    lifespan                             -> build the runner + warm ADK up / close it

Paths are relative to where the app is mounted (``root_path``), so it works at
``/`` or under any prefix.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from google.adk.agents import RunConfig
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService
from google.adk.workflow import BaseNode

from .core.asgi import Receive, Scope, Send, route_path, send_error, send_json_error
from .core.auth import Authenticate, anonymous
from .core.errors import chat_not_found
from .core.gctuning import GcTuning
from .core.limits import Limits
from .core.message import ConfirmationStyle, DescribeError, describe_error_generic
from .core.origin import OriginPolicy
from .core.request import valid_chat_id
from .core.runtime import AgentRuntime
from .core.surface import OnEvent, SurfaceOptions, state_filter
from .http.completion import complete_tool_call, post_tool_output
from .http.endpoint import ChatEndpoint, ChatOptions
from .live.endpoint import LiveEndpoint, LiveOptions
from .observability.health import Health, Probe
from .stores import MemoryStreamStore, StreamStore

__all__ = ("AdkApp",)

_STREAM = "/stream"
_TOOL_OUTPUT = "/tool-output"
_PROBES: dict[str, Probe] = {"/healthz": "healthz", "/readyz": "readyz"}


class AdkApp:
    """Serve an ADK agent to AI SDK ``useChat`` clients.

    >>> mount(site, "/api/chat", AdkApp(agent=root_agent))   # adk_asgi.mount

    ``mount`` routes HTTP and WebSocket at the path, with or without a trailing slash,
    and runs the app's start-up and shutdown with the site's lifespan. Mounted any other
    way (``site.mount(...)``), the app starts itself on its first request unless you pass
    ``lifespan=chat.lifespan`` to the host app.
    """

    def __init__(
        self,
        agent: BaseNode | None = None,
        *,
        adk_app: App | None = None,
        runner: Runner | None = None,
        session_service: BaseSessionService | None = None,
        session_db: str | None = None,
        app_name: str | None = None,
        run_config: RunConfig | None = None,
        authenticate: Authenticate = anonymous,
        confirmation_style: ConfirmationStyle = "native",
        limits: Limits | None = None,
        stream_store: StreamStore | None = None,
        resume_grace: float = 0.0,
        ping_interval: float | None = 15.0,
        send_timeout: float | None = 60.0,
        shutdown_grace: float = 10.0,
        allowed_origins: Iterable[str] | None = None,
        live_options: LiveOptions | None = None,
        describe_error: DescribeError = describe_error_generic,
        client_completes: Iterable[str] = (),
        step_authors: bool = True,
        agent_names: bool = False,
        state_keys: Iterable[str] | Callable[[str], bool] | None = None,
        on_event: OnEvent | None = None,
        node_outputs: bool = True,
        body_fields: Mapping[str, Any] | None = None,
        warm_up: bool = True,
        gc_tuning: GcTuning | None = None,
        **renamed: Any,
    ) -> None:
        if "app" in renamed:
            raise TypeError("AdkApp(app=...) is now adk_app=...: pass your ADK App as "
                            "adk_app=my_app (app= would clash with the wrapped ASGI app of "
                            "AdkMiddleware)")
        if renamed:
            raise TypeError(f"AdkApp() got unexpected keyword arguments: {', '.join(renamed)}")
        if confirmation_style not in ("native", "adk-tool"):
            raise ValueError("confirmation_style is 'native' or 'adk-tool'")
        if resume_grace < 0 or shutdown_grace < 0:
            raise ValueError("resume_grace and shutdown_grace must be >= 0")
        self.runtime = AgentRuntime(agent=agent, app=adk_app, runner=runner,
                                    session_service=session_service, session_db=session_db,
                                    app_name=app_name, run_config=run_config,
                                    client_completes=client_completes,
                                    surface=SurfaceOptions(
                                        step_authors=step_authors, agent_names=agent_names,
                                        state_keys=state_filter(state_keys),
                                        on_event=on_event, node_outputs=node_outputs),
                                    body_fields=body_fields)
        self.limits = limits or Limits()
        self.store: StreamStore = stream_store or MemoryStreamStore()
        self.chat = ChatEndpoint(self.runtime, ChatOptions(
            limits=self.limits, ping_interval=ping_interval, send_timeout=send_timeout,
            confirmation_style=confirmation_style, authenticate=authenticate,
            resume_grace=resume_grace, describe_error=describe_error), self.store)
        live_options = live_options or LiveOptions(confirmation_style=confirmation_style,
                                                   send_timeout=send_timeout)
        if live_options.describe_error is describe_error_generic:
            live_options = replace(live_options, describe_error=describe_error)
        self.live = LiveEndpoint(
            self.runtime,
            live_options,
            authenticate=authenticate, store=self.store, limits=self.limits,
            origins=OriginPolicy(allowed_origins))
        self.health = Health(self.runtime, self.store,
                             lambda: self.chat.draining or self.live.draining)
        """The probes: ``GET {path}/healthz`` and ``GET {path}/readyz`` (no identity
        needed); ``health.checks()`` for your own."""
        self.shutdown_grace = shutdown_grace
        self._warm_up = warm_up
        self._gc_tuning = gc_tuning

    async def complete_tool_call(self, chat_id: str, tool_call_id: str, *,
                                 output: dict[str, Any] | None = None,
                                 error_text: str | None = None, user_id: str = "anonymous",
                                 wait: bool = False) -> str:
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
        return await complete_tool_call(self.chat, user_id, chat_id, tool_call_id, result,
                                        wait=wait)

    async def startup(self) -> None:
        first = not self.runtime.started
        await self.runtime.startup(warm=self._warm_up)
        if first and self._gc_tuning is not None:
            self._gc_tuning.apply()  # after warm-up: what it loaded gets frozen

    async def drain(self, grace: float | None = None) -> None:
        """Graceful shutdown, before the server closes connections: refuse new turns and
        connections, let running turns end within ``grace`` (default ``shutdown_grace``)
        seconds, then end the rest with an ``error`` chunk. ``adk-asgi serve`` calls it
        on SIGTERM; call it from your own server's shutdown hook otherwise."""
        grace = self.shutdown_grace if grace is None else grace
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
        if path.endswith(_TOOL_OUTPUT) and len(path) > len(_TOOL_OUTPUT) + 1:
            chat_id = path[1:-len(_TOOL_OUTPUT)] if path.startswith("/") \
                else path[:-len(_TOOL_OUTPUT)]
            if method == "POST":
                await post_tool_output(self.chat, scope, receive, send, chat_id)
            else:
                await send_json_error(send, 405, "method_not_allowed",
                                      f"{method} is not allowed here; POST a tool output.",
                                      headers=[(b"allow", b"POST")])
            return
        if path.endswith(_STREAM) and len(path) > len(_STREAM) + 1:
            # scope["path"] is already percent-decoded: the id is everything between.
            chat_id = path[1:-len(_STREAM)] if path.startswith("/") else path[:-len(_STREAM)]
            if not valid_chat_id(chat_id):
                await send_error(send, chat_not_found())
            elif method in ("GET", "HEAD"):
                await self.chat.resume(scope, receive, send, chat_id)
            elif method == "DELETE":
                await self.chat.stop(scope, receive, send, chat_id)
            else:
                await send_json_error(send, 405, "method_not_allowed",
                                      f"{method} is not allowed here.",
                                      headers=[(b"allow", b"GET, HEAD, DELETE")])
            return
        probe = _PROBES.get(path)
        if probe is not None:
            await self.health(probe, scope, send)
            return
        await send_json_error(send, 404, "not_found", f"No route for {path!r}.")

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

