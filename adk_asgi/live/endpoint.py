"""LiveEndpoint: the WebSocket side of the app — the handshake (origin, identity, chat
owner), one ``Connection`` per accepted socket, and the drain at shutdown.

frames -> commands -> LiveRequestQueue -> Runner.run_live -> ADK events -> LiveTranslator
-> UI chunks -> frames (protocol A or B; see ``connection.py``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from urllib.parse import parse_qs

from google.adk.agents import RunConfig
from google.genai import types

from ..core.asgi import Receive, Scope, Send
from ..core.auth import Authenticate, AuthError, resolve_user
from ..core.errors import CHAT_NOT_FOUND
from ..core.limits import Limits
from ..core.message import ConfirmationStyle, DescribeError, describe_error_generic
from ..core.origin import OriginPolicy
from ..core.request import valid_chat_id
from ..core.runtime import AgentRuntime
from ..core.sessions import META_KEY
from ..observability.logs import log_context
from ..observability.metrics import METRICS
from ..observability.tracing import LIVE_CONNECTION, current, end_span, start_span
from ..stores import StoreUnavailable, StreamStore
from .connection import Connection
from .gate import PLUGIN_NAME, LiveGatePlugin
from .socket import (
    CLOSE_ERROR,
    CLOSE_GOING_AWAY,
    CLOSE_POLICY,
    CLOSE_RESTART,
    CLOSE_TOO_BIG,
    CLOSE_TRY_AGAIN,
    UNAVAILABLE_REASON,
)

__all__ = ("LiveEndpoint", "LiveOptions")

logger = logging.getLogger("adk_asgi")

# A connection's outcome (its span), by the code it was closed with.
_CLOSED = {CLOSE_GOING_AWAY: "idle", CLOSE_POLICY: "policy", CLOSE_TOO_BIG: "too_big",
           CLOSE_ERROR: "error", CLOSE_RESTART: "shutdown", CLOSE_TRY_AGAIN: "unavailable"}


@dataclass(frozen=True, slots=True)
class LiveOptions:
    confirmation_style: ConfirmationStyle = "native"
    wait_timeout: float | None = 300.0
    """How long an approval or a browser tool may wait for the client (then: denied)."""
    idle_timeout: float | None = 300.0
    """Close a connection whose client sent nothing for this long while no turn runs."""
    send_timeout: float | None = 60.0
    """A client that does not take a frame for this long is dropped (half-open socket)."""
    inbox_size: int = 32
    """Items buffered between the run and the socket: a slow socket then holds ADK back."""
    run_config: RunConfig | None = None
    """Live RunConfig; default: the app's, with TEXT (or AUDIO with ``?modality=audio``)."""
    describe_error: DescribeError = describe_error_generic


class LiveEndpoint:
    """The WebSocket side of the app: one instance serves every connection."""

    def __init__(self, runtime: AgentRuntime, options: LiveOptions, *,
                 authenticate: Authenticate, store: StreamStore, limits: Limits,
                 origins: OriginPolicy) -> None:
        self.runtime = runtime
        self.options = options
        self.authenticate = authenticate
        self.store = store
        self.limits = limits
        self.origins = origins
        self.connections: set[Connection] = set()
        self.draining = False
        self._plugin: LiveGatePlugin | None = None

    @property
    def plugin(self) -> LiveGatePlugin:
        """The gate plugin, registered once on the runner (also on a user-given runner)."""
        if self._plugin is None:
            manager = self.runtime.runner.plugin_manager
            existing = manager.get_plugin(PLUGIN_NAME)
            if isinstance(existing, LiveGatePlugin):
                self._plugin = existing
            else:
                self._plugin = LiveGatePlugin()
                manager.register_plugin(self._plugin)
        return self._plugin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        chat_id = query.get("chatId", [None])[0]
        refusal = await self._refusal(scope, chat_id)
        if isinstance(refusal, tuple):
            # Accept, then close: browsers see close codes and reasons, not the status of
            # a refused handshake.
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": refusal[0],
                        "reason": refusal[1][:120]})
            return
        audio = query.get("modality", ["text"])[0].lower() == "audio"
        await send({"type": "websocket.accept"})
        connection = Connection(self, receive, send, user_id=refusal, audio=audio,
                                chat_id=chat_id)
        self.connections.add(connection)
        METRICS.connection_opened()
        # The connection's span is current in its tasks: run_live's spans become children.
        span = start_span(LIVE_CONNECTION, "websocket", chat_id, refusal)
        try:
            with log_context(chat_id, refusal), current(span):
                await connection.serve()
        finally:
            self.connections.discard(connection)
            METRICS.connection_closed()
            end_span(span, _CLOSED.get(connection.socket.close_code, "closed"),
                     connection.run.chat_id)

    async def _refusal(self, scope: Scope, chat_id: str | None) -> tuple[int, str] | str:
        """The user id of an acceptable connection, else the close code and reason."""
        if self.draining:
            return CLOSE_RESTART, "The server is restarting."
        if not self.origins.allows(scope):
            return CLOSE_POLICY, "Origin not allowed."
        try:
            user_id = await resolve_user(self.authenticate, scope)
        except AuthError as error:
            return CLOSE_POLICY, error.message
        await self.runtime.startup()
        if chat_id is not None:
            if not valid_chat_id(chat_id):
                return CLOSE_POLICY, "Invalid chat id (1-256 printable characters)."
            try:
                claimed = await self.store.claim(chat_id, user_id)
            except StoreUnavailable as exc:
                logger.error("Stream store unavailable for chat %r: %s", chat_id, exc)
                METRICS.store_error("streams", "connect")
                return CLOSE_TRY_AGAIN, UNAVAILABLE_REASON
            if not claimed:
                return CLOSE_POLICY, CHAT_NOT_FOUND
        return user_id

    async def drain(self, grace: float) -> None:
        """Refuse new connections (close 1012); let running turns end within ``grace``,
        then end them with an ``error`` chunk; close every connection with 1012."""
        self.draining = True
        connections = list(self.connections)
        if connections:
            await asyncio.gather(*(c.drain(grace) for c in connections),
                                 return_exceptions=True)

    def live_run_config(self, audio: bool) -> RunConfig:
        base = self.options.run_config or self.runtime.run_config
        modality = types.Modality.AUDIO if audio else types.Modality.TEXT
        custom = dict(base.custom_metadata or {})
        custom[META_KEY] = {"live": True}
        return base.model_copy(update={"response_modalities": [modality],
                                       "custom_metadata": custom})
