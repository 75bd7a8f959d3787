"""The Live API: the ``BidiGenerateContent`` WebSocket endpoint and its connections.

The client's first message is ``setup``; the server answers ``setupComplete``. Then
``clientContent``, ``realtimeInput`` and ``toolResponse`` messages come in
(input.py) and ``serverContent``, ``toolCall``, ``toolCallCancellation``,
``usageMetadata``, ``goAway`` and ``sessionResumptionUpdate`` messages go out
(speaker.py; https://ai.google.dev/api/live). The rules the real service enforces
are enforced here, each where it applies, with the documentation it follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging

from google.genai import types
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..api import API_VERSIONS, not_supported
from ..auth import check_credentials
from ..errors import ApiError
from ..journal import Journal
from ..script.exchange import ScriptFn
from ..settings import EmulatorSettings
from .input import LiveInput
from .sessions import LiveSession, SessionStore
from .setup import LiveSetup, parse_setup
from .socket import Closed, LiveSocket, duration, invalid
from .speaker import Speaker
from .state import LiveState

__all__ = ("LiveEndpoint",)

logger = logging.getLogger("adk_asgi.testing.gemini")

_RPC_PREFIX = "google.ai.generativelanguage."
_METHODS = (
    "GenerativeService.BidiGenerateContent",
    "GenerativeService.BidiGenerateContentConstrained",
)
# How long a resumption waits for the connection that still holds the session to
# finish closing (its close frame may be on the way when the new setup arrives).
_RELEASE_GRACE = 2.0


class LiveEndpoint:
    """Accepts Live API connections; sessions outlive them (resumption)."""

    def __init__(self, settings: EmulatorSettings, script: ScriptFn, journal: Journal) -> None:
        self._settings = settings
        self._script = script
        self._journal = journal
        self._store = SessionStore(settings.handle_ttl)
        self._numbers = itertools.count(1)

    async def handle(self, websocket: WebSocket) -> None:
        rpc = websocket.path_params["rpc"]
        version, _, method = rpc.removeprefix(_RPC_PREFIX).partition(".")
        await websocket.accept()
        socket = LiveSocket(websocket, next(self._numbers), self._journal)
        connection = _Connection(LiveState(socket, self._settings, self._script, self._store))
        if not rpc.startswith(_RPC_PREFIX) or version not in API_VERSIONS or method not in _METHODS:
            await socket.close(Closed.of(ApiError(404, f"Method not found: {rpc}")))
            return
        await connection.run(version, ephemeral=method.endswith("Constrained"))


class _Connection:
    """One connection: its setup, the session it holds, its lifetime, and the input and
    speaker that serve it."""

    def __init__(self, state: LiveState) -> None:
        self._state = state
        self._socket = state.socket
        self._settings = state.settings
        self._store = state.store
        self._tasks: list[asyncio.Task[None]] = []
        self._input: LiveInput | None = None

    async def run(self, version: str, *, ephemeral: bool) -> None:
        # The lifetime counts from the connection, setup or not.
        self._tasks.append(asyncio.create_task(self._lifetime(), name="gemini-emulator-lifetime"))
        try:
            await self._serve(version, ephemeral)
        except Closed as closing:
            await self._socket.close(closing)
        except WebSocketDisconnect as disconnect:
            self._socket.disconnected(disconnect.code)
        except Exception:
            logger.exception("the emulated Live API connection failed")
            await self._socket.close(Closed.of(ApiError(500, "Internal error encountered.")))
        finally:
            self._socket.closed = True
            for task in self._tasks:
                task.cancel()
            if self._input is not None:
                self._input.cancel()
            if self._state.current_session is not None:
                self._state.current_session.release(self)

    async def _serve(self, version: str, ephemeral: bool) -> None:
        ws = self._socket.ws
        if error := check_credentials(
            ws.headers, ws.query_params, self._settings, ephemeral=ephemeral
        ):
            # The service's close for a refused key is not documented; the HTTP
            # status's close code and text are this emulator's choice (1008 for 403,
            # 1007 for 400 "API key not valid").
            raise Closed.of(error)
        message = await self._socket.receive()
        kind, body = message
        # "setup: Session configuration sent only in the first client message"
        # (BidiGenerateContentClientMessage, https://ai.google.dev/api/live).
        if kind != "setup":
            raise invalid("The first message must be setup.")
        try:
            setup = parse_setup(body, self._settings)
        except ApiError as error:
            raise invalid(error.message) from None
        if not self._settings.is_live_model(setup.model):
            # A model without the Live API: 1008 and "models/... is not found for API
            # version v1alpha, or is not supported for bidiGenerateContent"
            # (google/adk-samples#23, googleapis/python-genai#362).
            raise Closed.of(not_supported(setup.model, version, "bidiGenerateContent"))
        if setup.text_only and self._settings.is_audio_only(setup.model):
            # Native-audio and Gemini 3 Live models answer only with audio: TEXT alone is
            # refused with 1007 (seen on the service: googleapis/python-genai#1780,
            # pydantic/pydantic-ai#7269, kizuna-ai-lab/sokuji#93). Text comes as the
            # transcript of the audio (outputAudioTranscription).
            raise Closed(
                1007,
                "The requested combination of response modalities (TEXT) is not supported "
                "by the model.",
            )
        self._state.current_setup = setup
        self._state.current_session = await self._open_session(setup)
        speaker = Speaker(self._state)
        self._input = LiveInput(self._state, speaker)
        await self._socket.send(
            types.LiveServerMessage(setup_complete=types.LiveServerSetupComplete())
        )
        if setup.resumption:
            await speaker.offer_handle()
        self._tasks.append(asyncio.create_task(speaker.run(), name="gemini-emulator-speaker"))
        while True:
            kind, body = await self._socket.receive()
            await self._input.handle(kind, body)

    async def _open_session(self, setup: LiveSetup) -> LiveSession:
        if setup.handle is None:
            fresh = LiveSession()
            fresh.hold(self)
            return fresh
        session = self._store.find(setup.handle)
        if session is None:
            # An unknown or expired handle (valid "2 hours after the last session
            # termination", https://ai.google.dev/gemini-api/docs/live-api/session-management).
            # The service's answer is not documented: NOT_FOUND (1008) is this
            # emulator's choice.
            raise Closed.of(ApiError(404, "Session resumption handle not found or expired."))
        if session.holder is not None and self._settings.reject_concurrent_resume:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(session.released.wait(), _RELEASE_GRACE)
            if session.holder is not None:
                # Resuming while another connection still holds the session: refused
                # with 1011, as observed on the service (aicc2025/sip-to-ai#14).
                raise Closed(1011, "The session is still held by another connection.")
        self._store.restore(setup.handle)
        session.hold(self)
        return session

    async def _lifetime(self) -> None:
        # "The lifetime of a connection is limited ... to around 10 minutes ... You'll
        # also receive a GoAway message before the connection ends"; "about 60 seconds
        # before" (https://ai.google.dev/gemini-api/docs/live-api/session-management,
        # https://firebase.google.com/docs/ai-logic/live-api/limits-and-specs). The close
        # itself is 1011 "Deadline expired before operation could complete."
        # (google/adk-python#4140, kizuna-ai-lab/sokuji#179).
        settings = self._settings
        await asyncio.sleep(settings.connection_lifetime - settings.go_away_lead)
        await self._socket.send(
            types.LiveServerMessage(
                go_away=types.LiveServerGoAway(time_left=duration(settings.go_away_lead))
            )
        )
        await asyncio.sleep(settings.go_away_lead)
        await self._socket.close(Closed(1011, ApiError(504).message))
