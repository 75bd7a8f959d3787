"""LiveEndpoint: the WebSocket side of the app — the handshake (origin, identity, chat
owner), one ``Connection`` per accepted socket, and the drain at shutdown.

frames -> commands -> LiveRequestQueue -> Runner.run_live -> ADK events -> LiveTranslator
-> UI chunks -> frames (protocol A or B; see ``connection.py``).
"""

from __future__ import annotations

import asyncio
from typing import Final
from urllib.parse import parse_qs

from google.adk.agents import RunConfig
from google.adk.runners import Runner
from google.genai import types

from ..adk.outages import Outage, report_outage
from ..adk.runtime import AgentRuntime
from ..adk.sessions import META_KEY
from ..observability.logs import log_context
from ..observability.metrics import METRICS
from ..observability.tracing import LIVE_CONNECTION, current, end_span, start_span
from ..options import ActivityDetection, Settings
from ..pauses.signin import callback_url
from ..stores import StoreUnavailable, StreamStore
from ..translate.factory import Translators
from ..transport.asgi import Receive, Scope, Send
from ..transport.auth import AuthError, resolve_user
from ..transport.origin import OriginPolicy
from ..wire.errors import CHAT_NOT_FOUND
from ..wire.request import valid_chat_id
from .connection import Connection, LiveServices
from .gate.plugin import PLUGIN_NAME, LiveGatePlugin
from .protocol.socket import (
    CLOSE_ERROR,
    CLOSE_GOING_AWAY,
    CLOSE_POLICY,
    CLOSE_RESTART,
    CLOSE_TOO_BIG,
    CLOSE_TRY_AGAIN,
    UNAVAILABLE_REASON,
)
from .run.models import audio_only, first_model_name, live_runner

__all__ = ("LiveEndpoint",)

_ACTIVITY: Final = ("manual", "automatic")

# A connection's outcome (its span), by the code it was closed with.
_CLOSED = {
    CLOSE_GOING_AWAY: "idle",
    CLOSE_POLICY: "policy",
    CLOSE_TOO_BIG: "too_big",
    CLOSE_ERROR: "error",
    CLOSE_RESTART: "shutdown",
    CLOSE_TRY_AGAIN: "unavailable",
}


class LiveEndpoint:
    """The WebSocket side of the app: one instance serves every connection."""

    def __init__(
        self,
        runtime: AgentRuntime,
        settings: Settings,
        *,
        store: StreamStore,
        origins: OriginPolicy,
        translators: Translators,
    ) -> None:
        self.runtime = runtime
        self.settings = settings
        self.store = store
        self.origins = origins
        self.translators = translators
        self.connections: set[Connection] = set()
        self.draining = False
        self._plugin: LiveGatePlugin | None = None
        self._runner: Runner | None = None

    @property
    def runner(self) -> Runner:
        """The runner of live runs: the app's, its agents on their live models."""
        if self._runner is None:
            self._runner = live_runner(self.runtime.runner, self.settings.live.model)
        return self._runner

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
            await send({"type": "websocket.close", "code": refusal[0], "reason": refusal[1][:120]})
            return
        audio = query.get("modality", ["text"])[0].lower() == "audio"
        activity = query.get("activity", [self.settings.live.activity_detection])[0].lower()
        await send({"type": "websocket.accept"})
        if activity not in _ACTIVITY:
            await send(
                {
                    "type": "websocket.close",
                    "code": CLOSE_POLICY,
                    "reason": "activity is manual or automatic.",
                }
            )
            return
        services = LiveServices(
            self.runtime, self.settings, self.store, self.runner, self.plugin, self.translators
        )
        connection = Connection(
            services,
            receive,
            send,
            user_id=refusal,
            audio=audio,
            run_config=self.live_run_config(audio, activity),
            chat_id=chat_id,
            api_path=scope.get("root_path", ""),
            oauth_redirect=callback_url(scope, self.settings.pauses.oauth_redirect_uri),
        )
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
            end_span(
                span, _CLOSED.get(connection.socket.close_code, "closed"), connection.run.chat_id
            )

    async def _refusal(self, scope: Scope, chat_id: str | None) -> tuple[int, str] | str:
        """The user id of an acceptable connection, else the close code and reason."""
        if self.draining:
            return CLOSE_RESTART, "The server is restarting."
        if not self.origins.allows(scope):
            return CLOSE_POLICY, "Origin not allowed."
        try:
            user_id = await resolve_user(self.settings.authenticate, scope)
        except AuthError as error:
            return CLOSE_POLICY, error.message
        await self.runtime.startup()
        if chat_id is not None:
            if not valid_chat_id(chat_id):
                return CLOSE_POLICY, "Invalid chat id (1-256 printable characters)."
            try:
                claimed = await self.store.claim(chat_id, user_id)
            except StoreUnavailable as exc:
                report_outage(Outage("streams", "connect", chat_id, exc))
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
            await asyncio.gather(*(c.drain(grace) for c in connections), return_exceptions=True)

    def live_run_config(self, audio: bool, activity: ActivityDetection) -> RunConfig:
        """The RunConfig of one connection's run. What the app's RunConfig sets itself
        (``realtime_input_config``, ``session_resumption``, ``context_window_compression``)
        is kept; the rest comes from the options."""
        options = self.settings.live
        base = options.run_config or self.runtime.run_config
        custom = dict(base.custom_metadata or {})
        custom[META_KEY] = {"live": True}
        update: dict[str, object] = {
            "response_modalities": [
                types.Modality.AUDIO if audio or self._speaks_only() else types.Modality.TEXT
            ],
            "custom_metadata": custom,
        }
        if base.realtime_input_config is None:
            # Explicit activity signals are refused unless automatic detection is off
            # (https://ai.google.dev/api/live, activityStart / activityEnd).
            update["realtime_input_config"] = types.RealtimeInputConfig(
                automatic_activity_detection=types.AutomaticActivityDetection(
                    disabled=activity == "manual"
                )
            )
        if base.session_resumption is None and options.session_resumption:
            update["session_resumption"] = types.SessionResumptionConfig()
        if base.context_window_compression is None:
            update["context_window_compression"] = options.context_window_compression
        return base.model_copy(update=update)

    def _speaks_only(self) -> bool:
        choice = self.settings.live.text_modality
        if choice != "auto":
            return choice == "AUDIO"
        return audio_only(first_model_name(self.runner.agent))
