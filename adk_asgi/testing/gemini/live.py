"""The Live API: one ``BidiGenerateContent`` WebSocket connection.

The client's first message is ``setup``; the server answers ``setupComplete``. Then
``clientContent``, ``realtimeInput`` and ``toolResponse`` messages come in and
``serverContent``, ``toolCall``, ``toolCallCancellation``, ``usageMetadata``, ``goAway``
and ``sessionResumptionUpdate`` messages go out (https://ai.google.dev/api/live). The
rules the real service enforces are enforced here, each where it applies, with the
documentation it follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import logging
import secrets
import time
from typing import Any

from google.genai import types
from starlette.websockets import WebSocket, WebSocketDisconnect

from . import wire
from .api import API_VERSIONS, function_names, instruction_text, not_supported
from .audio import OUTPUT_MIME_TYPE, speech
from .auth import check_credentials
from .chunks import Chunk, ask, chunks_of
from .errors import ApiError, close_reason
from .journal import Journal, Record
from .live_setup import LiveSetup, parse_setup
from .script import Reply, Request, ScriptFn
from .sessions import Entry, LiveSession, SessionStore
from .settings import EmulatorSettings
from .tokens import FRAME_TOKENS, audio_seconds, content_tokens, pcm_rate, text_tokens
from .voice import VoiceActivity, is_voiced

__all__ = ("LiveEndpoint",)

logger = logging.getLogger("adk_asgi.testing.gemini")

_MESSAGE_FIELDS = ("setup", "client_content", "realtime_input", "tool_response", "context_update")
_RPC_PREFIX = "google.ai.generativelanguage."
_METHODS = (
    "GenerativeService.BidiGenerateContent",
    "GenerativeService.BidiGenerateContentConstrained",
)
# How long a resumption waits for the connection that still holds the session to
# finish closing (its close frame may be on the way when the new setup arrives).
_RELEASE_GRACE = 2.0
_INVALID = "Request contains an invalid argument."


class _Closed(Exception):
    """Raised inside a connection to close it with an API error. ``detail`` says more
    than the service's reason does; it goes to the journal, not on the wire."""

    def __init__(self, code: int, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.detail = detail or reason

    @classmethod
    def of(cls, error: ApiError) -> _Closed:
        return cls(error.close_code, error.close_reason)


def _invalid(detail: str = _INVALID) -> _Closed:
    # A malformed or out-of-place client message: 1007 "Request contains an invalid
    # argument." (what the service is seen to send, vercel/ai#20695,
    # strands-agents/harness-sdk#1999); the service says no more, so neither does the
    # close frame (the journal keeps the detail).
    return _Closed(1007, _INVALID, detail)


def _duration(seconds: float) -> str:
    """A google.protobuf.Duration in JSON ("59.5s")."""
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return f"{text}s"


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
        connection = _Connection(
            websocket,
            next(self._numbers),
            self._settings,
            self._script,
            self._journal,
            self._store,
        )
        if not rpc.startswith(_RPC_PREFIX) or version not in API_VERSIONS or method not in _METHODS:
            await connection.close(_Closed.of(ApiError(404, f"Method not found: {rpc}")))
            return
        await connection.run(version, ephemeral=method.endswith("Constrained"))


class _Connection:
    def __init__(
        self,
        websocket: WebSocket,
        number: int,
        settings: EmulatorSettings,
        script: ScriptFn,
        journal: Journal,
        store: SessionStore,
    ) -> None:
        self._ws = websocket
        self._number = number
        self._settings = settings
        self._script = script
        self._journal = journal
        self._store = store
        self._send_lock = asyncio.Lock()
        self._closed = False
        self._setup: LiveSetup | None = None
        self._session: LiveSession | None = None
        self._voice = VoiceActivity(settings.silence_gap)
        self._turns: asyncio.Queue[str | None] = asyncio.Queue()
        self._speaking: asyncio.Task[None] | None = None
        self._turn_calls: list[str] = []
        self._spoken: list[Chunk] = []
        self._interrupted = False
        self._recorded = False
        self._turn_open = False
        self._tasks: list[asyncio.Task[None]] = []
        self._silence_watch: asyncio.Task[None] | None = None

    # ---- lifecycle ---------------------------------------------------------------

    async def run(self, version: str, *, ephemeral: bool) -> None:
        # The lifetime counts from the connection, setup or not.
        self._tasks.append(asyncio.create_task(self._lifetime(), name="gemini-emulator-lifetime"))
        try:
            await self._serve(version, ephemeral)
        except _Closed as closing:
            await self.close(closing)
        except WebSocketDisconnect as disconnect:
            self._journal.add(Record("live", "disconnect", {"code": disconnect.code}, self._number))
        except Exception:
            logger.exception("the emulated Live API connection failed")
            await self.close(_Closed.of(ApiError(500, "Internal error encountered.")))
        finally:
            self._closed = True
            for task in [*self._tasks, self._silence_watch]:
                if task is not None:
                    task.cancel()
            if self._session is not None:
                self._session.release(self)

    async def close(self, closing: _Closed) -> None:
        async with self._send_lock:
            if self._closed:
                return
            self._closed = True
            self._journal.add(
                Record(
                    "live",
                    "close",
                    {"code": closing.code, "reason": closing.reason, "detail": closing.detail},
                    self._number,
                )
            )
            with contextlib.suppress(Exception):
                await self._ws.close(closing.code, closing.reason)

    async def _serve(self, version: str, ephemeral: bool) -> None:
        ws = self._ws
        if error := check_credentials(
            ws.headers, ws.query_params, self._settings, ephemeral=ephemeral
        ):
            # The service's close for a refused key is not documented; the HTTP
            # status's close code and text are this emulator's choice (1008 for 403,
            # 1007 for 400 "API key not valid").
            raise _Closed.of(error)
        message = await self._receive()
        kind, body = message
        # "setup: Session configuration sent only in the first client message"
        # (BidiGenerateContentClientMessage, https://ai.google.dev/api/live).
        if kind != "setup":
            raise _invalid("The first message must be setup.")
        try:
            setup = parse_setup(body, self._settings)
        except ApiError as error:
            raise _invalid(error.message) from None
        if not self._settings.is_live_model(setup.model):
            # A model without the Live API: 1008 and "models/... is not found for API
            # version v1alpha, or is not supported for bidiGenerateContent"
            # (google/adk-samples#23, googleapis/python-genai#362).
            raise _Closed.of(not_supported(setup.model, version, "bidiGenerateContent"))
        if setup.text_only and self._settings.is_audio_only(setup.model):
            # Native-audio and Gemini 3 Live models answer only with audio: TEXT alone is
            # refused with 1007 (seen on the service: googleapis/python-genai#1780,
            # pydantic/pydantic-ai#7269, kizuna-ai-lab/sokuji#93). Text comes as the
            # transcript of the audio (outputAudioTranscription).
            raise _Closed(
                1007,
                "The requested combination of response modalities (TEXT) is not supported "
                "by the model.",
            )
        self._setup = setup
        self._voice = VoiceActivity(setup.silence_gap)
        self._session = await self._open_session(setup)
        await self._send(types.LiveServerMessage(setup_complete=types.LiveServerSetupComplete()))
        if setup.resumption:
            await self._offer_handle()
        self._tasks.append(asyncio.create_task(self._speaker(), name="gemini-emulator-speaker"))
        while True:
            kind, body = await self._receive()
            await self._handle(kind, body)

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
            raise _Closed.of(ApiError(404, "Session resumption handle not found or expired."))
        if session.holder is not None and self._settings.reject_concurrent_resume:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(session.released.wait(), _RELEASE_GRACE)
            if session.holder is not None:
                # Resuming while another connection still holds the session: refused
                # with 1011, as observed on the service (aicc2025/sip-to-ai#14).
                raise _Closed(1011, "The session is still held by another connection.")
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
        await self._send(
            types.LiveServerMessage(
                go_away=types.LiveServerGoAway(time_left=_duration(settings.go_away_lead))
            )
        )
        await asyncio.sleep(settings.go_away_lead)
        await self.close(_Closed(1011, ApiError(504).message))

    # ---- receiving ---------------------------------------------------------------

    async def _receive(self) -> tuple[str, Any]:
        event = await self._ws.receive()
        if event["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(event.get("code", 1000))
        raw = event.get("text")
        if raw is None:
            raw = (event.get("bytes") or b"").decode("utf-8", errors="replace")
        try:
            message = json.loads(raw)
        except json.JSONDecodeError:
            raise _invalid("Invalid JSON payload received.") from None
        if not isinstance(message, dict) or len(message) != 1:
            raise _invalid(
                "A client message must set exactly one of setup, clientContent, "
                "realtimeInput, toolResponse."
            )
        name, body = next(iter(message.items()))
        kind = wire.snake(name)
        if kind not in _MESSAGE_FIELDS:
            raise _invalid(
                f'Invalid JSON payload received. Unknown name "{name}": Cannot find field.'
            )
        camel = {
            "client_content": "clientContent",
            "realtime_input": "realtimeInput",
            "tool_response": "toolResponse",
            "context_update": "contextUpdate",
        }
        recorded = camel.get(kind, kind)
        self._journal.add(Record("live", recorded, _summary(body), self._number))
        return kind, body

    async def _handle(self, kind: str, body: Any) -> None:
        if kind == "setup":
            # Setup comes "only in the first client message" (https://ai.google.dev/api/live).
            raise _invalid("setup may only be sent once, as the first message.")
        if not isinstance(body, dict):
            raise _invalid()
        try:
            if kind == "client_content":
                await self._client_content(body)
            elif kind == "realtime_input":
                await self._realtime_input(body)
            elif kind == "tool_response":
                await self._tool_response(body)
            elif kind == "context_update":
                self._context_update(body)
        except wire.WireError as error:
            raise _invalid(str(error)) from None

    def _context_update(self, body: dict[str, Any]) -> None:
        # "Updates to the context of the current session ... Only fields that are set
        # will be updated" (AsyncSession.send_context_update in google-genai).
        setup = self._require_setup()
        changes: dict[str, Any] = {}
        if (instruction := wire.get(body, "system_instruction")) is not None:
            changes["system_instruction"] = instruction_text(instruction)
        if (tools := wire.get(body, "tools")) is not None:
            changes["function_names"] = function_names(wire.get(tools, "tools") or ())
        self._setup = dataclasses.replace(setup, **changes)

    async def _client_content(self, body: dict[str, Any]) -> None:
        turns = wire.content_list(wire.get(body, "turns"), "clientContent.turns")
        # "A message here will interrupt any current model generation"
        # (BidiGenerateContentClientContent, https://ai.google.dev/api/live).
        self._interrupt()
        session = self._require_session()
        for turn in turns:
            role = turn.role or "user"
            content = types.Content(role=role, parts=turn.parts)
            session.entries.append(Entry(content, self._tokens(content)))
        if wire.get(body, "turn_complete"):
            self._turns.put_nowait(None)

    async def _realtime_input(self, body: dict[str, Any]) -> None:
        setup = self._require_setup()
        blobs = list(wire.get(body, "media_chunks") or ())
        for name in ("audio", "video"):
            if (blob := wire.get(body, name)) is not None:
                blobs.append(blob)
        starts = wire.get(body, "activity_start") is not None
        ends = wire.get(body, "activity_end") is not None
        if (starts or ends) and not setup.manual_activity:
            # "activityStart: ... This can only be sent if automatic (i.e. server-side)
            # activity detection is disabled." (and the same for activityEnd;
            # BidiGenerateContentRealtimeInput, https://ai.google.dev/api/live).
            raise _invalid(
                "activityStart and activityEnd can only be sent when automatic "
                "activity detection is disabled."
            )
        if starts:
            self._activity_start()
        for index, blob in enumerate(blobs):
            self._media(blob, f"realtimeInput.mediaChunks[{index}]")
        if (text := wire.get(body, "text")) is not None:
            self._interrupt_for_user()
            content = types.Content(role="user", parts=[types.Part(text=str(text))])
            self._require_session().entries.append(Entry(content, text_tokens(str(text))))
            self._turns.put_nowait(None)
        if ends:
            self._end_of_speech()
        if wire.get(body, "audio_stream_end") and not setup.manual_activity:
            # "audioStreamEnd ... should only be sent when automatic activity detection
            # is enabled" (LiveClientRealtimeInput): it ends the open voice turn. Sent
            # with manual detection it is ignored.
            self._end_of_speech()

    def _media(self, blob: Any, where: str) -> None:
        setup = self._require_setup()
        mime = str(wire.get(blob, "mime_type") or "")
        data = wire.bytes_field(wire.get(blob, "data", ""), f"{where}.data")
        if mime.lower().startswith("image/") or mime.lower().startswith("video/"):
            # Video frames fill the context (258 tokens each); they never start a turn.
            session = self._require_session()
            frame = types.Content(role="user", parts=[types.Part(text="[frame]")])
            session.entries.append(Entry(frame, FRAME_TOKENS))
            return
        rate = pcm_rate(mime)
        # "Audio data in the Live API is always raw, little-endian, 16-bit PCM ... set
        # the MIME type of each audio-containing Blob to a value like
        # audio/pcm;rate=16000" (https://ai.google.dev/gemini-api/docs/live-api/capabilities,
        # "Audio formats"). Anything else is refused.
        if not rate or len(data) % 2:
            raise _invalid(
                f"Unsupported audio input {mime or '(no mime type)'}: send raw "
                "16-bit little-endian PCM as audio/pcm;rate=16000."
            )
        now = time.monotonic()
        seconds = audio_seconds(data, mime)
        voiced = is_voiced(data, self._settings.voice_threshold)
        if setup.manual_activity:
            if self._voice.speaking:
                self._voice.audio(seconds, voiced, now)
            return
        if not self._voice.speaking:
            if not voiced:
                return
            self._voice.start(now)
            # Speech interrupts the model (activityHandling START_OF_ACTIVITY_INTERRUPTS,
            # the default: https://ai.google.dev/api/live#ActivityHandling).
            self._interrupt_for_user()
            self._watch_silence()
        if self._voice.audio(seconds, voiced, now):
            self._end_of_speech()

    def _activity_start(self) -> None:
        self._voice.start(time.monotonic())
        self._interrupt_for_user()

    def _watch_silence(self) -> None:
        if self._silence_watch is not None and not self._silence_watch.done():
            return
        self._silence_watch = asyncio.create_task(self._silence(), name="gemini-emulator-vad")

    async def _silence(self) -> None:
        while self._voice.speaking:
            wait = self._voice.last_voice + self._voice.silence_gap - time.monotonic()
            if wait <= 0:
                self._end_of_speech()
                return
            await asyncio.sleep(wait)

    def _end_of_speech(self) -> None:
        if not self._voice.speaking:
            return
        seconds = self._voice.end()
        if seconds <= 0:
            return
        heard = self._settings.heard_text
        content = types.Content(role="user", parts=[types.Part(text=heard)])
        tokens = round(seconds * self._settings.audio_tokens_per_second)
        self._require_session().entries.append(Entry(content, tokens))
        self._turns.put_nowait(heard)

    async def _tool_response(self, body: dict[str, Any]) -> None:
        session = self._require_session()
        raw = wire.get(body, "function_responses") or ()
        if not isinstance(raw, list) or not raw:
            raise _invalid()
        responses = [
            wire.parse_model(types.FunctionResponse, item, f"toolResponse.functionResponses[{i}]")
            for i, item in enumerate(raw)
        ]
        answered: list[types.FunctionResponse] = []
        for response in responses:
            if not response.id:
                raise _invalid("FunctionResponse.id is required.")
            if response.id in session.cancelled_calls:
                continue  # the call was cancelled (toolCallCancellation): ignored
            if response.id not in session.pending_calls:
                # Only answers to pending calls: a response for an id the session does
                # not know closes with 1008 "Requested entity was not found."
                # (google-gemini/deprecated-generative-ai-js#487).
                raise _Closed.of(ApiError(404))
            answered.append(response)
        for response in answered:
            call = session.pending_calls.pop(response.id or "")
            response.name = response.name or call.name
        if answered:
            content = types.Content(
                role="user", parts=[types.Part(function_response=r) for r in answered]
            )
            session.entries.append(Entry(content, self._tokens(content)))
        if answered and not session.pending_calls:
            self._turns.put_nowait(None)

    # ---- speaking ----------------------------------------------------------------

    def _interrupt_for_user(self) -> None:
        if self._require_setup().interrupts:
            self._interrupt()

    def _interrupt(self) -> None:
        """Stop the turn being generated; its spoken part stays in the history."""
        task = self._speaking
        if task is None or task.done() or self._interrupted or not self._turn_open:
            return
        self._interrupted = True
        session = self._require_session()
        said = "".join(c.text for c in self._spoken if not c.thought)
        if said and not self._recorded:
            content = types.Content(role="model", parts=[types.Part(text=said)])
            session.entries.append(Entry(content, self._output_tokens(len(self._spoken), said)))
        for call_id in self._turn_calls:
            if session.pending_calls.pop(call_id, None) is not None:
                session.cancelled_calls.add(call_id)
        task.cancel()

    async def _speaker(self) -> None:
        while True:
            heard = await self._turns.get()
            self._interrupted = False
            self._recorded = False
            self._turn_open = True
            self._spoken = []
            self._turn_calls = []
            task = asyncio.create_task(self._turn(heard), name="gemini-emulator-turn")
            self._speaking = task
            try:
                await asyncio.wait([task])
            finally:
                self._speaking = None
            if task.cancelled():
                await self._report_interruption()
            elif task.exception() is None:
                setup = self._require_setup()
                if setup.resumption and not self._require_session().pending_calls:
                    await self._offer_handle()
            elif (error := task.exception()) is not None:
                if isinstance(error, _Closed):
                    await self.close(error)
                    return
                logger.error("emulated live turn failed", exc_info=error)
                await self.close(_Closed.of(ApiError(500, "Internal error encountered.")))
                return

    async def _report_interruption(self) -> None:
        session = self._require_session()
        cancelled = [c for c in self._turn_calls if c in session.cancelled_calls]
        if cancelled:
            # "This message occurs only in cases where the clients interrupt server
            # turns" (LiveServerToolCallCancellation).
            await self._send(
                types.LiveServerMessage(
                    tool_call_cancellation=types.LiveServerToolCallCancellation(ids=cancelled)
                )
            )
        # "When model is interrupted while generating there will be no
        # generation_complete message in interrupted turn, it will go through
        # interrupted > turn_complete" (LiveServerContent.generation_complete).
        await self._send(
            types.LiveServerMessage(server_content=types.LiveServerContent(interrupted=True))
        )
        await self._send(
            types.LiveServerMessage(server_content=types.LiveServerContent(turn_complete=True))
        )

    async def _turn(self, heard: str | None) -> None:
        setup = self._require_setup()
        session = self._require_session()
        settings = self._settings
        if heard is not None and setup.transcribe_input:
            await self._send(
                types.LiveServerMessage(
                    server_content=types.LiveServerContent(
                        input_transcription=types.Transcription(text=heard, finished=True)
                    )
                )
            )
        self._fit_context()
        prompt_tokens = session.tokens + setup.instruction_tokens
        request = Request(
            model=setup.model,
            contents=session.contents(),
            system_instruction=setup.system_instruction,
            function_names=setup.function_names,
            live=True,
        )
        reply = ask(self._script, request)
        if reply.error is not None and reply.fail_after is None:
            raise _Closed.of(reply.error)
        if setup.resumption and settings.send_unresumable_updates:
            # "It might be not possible to resume session at some points. In that case
            # we send update empty new_handle and resumable=false. Example of such case
            # could be model executing function calls or just generating."
            # (LiveServerSessionResumptionUpdate.resumable)
            await self._send(
                types.LiveServerMessage(
                    session_resumption_update=types.LiveServerSessionResumptionUpdate(
                        resumable=False
                    )
                )
            )
        thoughts = setup.thoughts and not setup.audio_out
        for chunk in chunks_of(reply, settings.tokens_per_chunk, thoughts=thoughts):
            await asyncio.sleep(settings.chunk_delay)
            self._spoken.append(chunk)
            await self._say(chunk)
        if reply.fail_after is not None:
            raise _Closed.of(reply.error or ApiError(500, "Internal error encountered."))
        if reply.finish_reason != "STOP" and not reply.text and not reply.calls:
            # The Live API has no finish reasons: a failed generation ends the
            # connection (1011 with the message; the emulator's choice).
            raise _Closed(1011, close_reason(reply.finish_message or reply.finish_reason))
        # The turn enters the history before its calls go out, so a tool response
        # that comes back at once lands after it.
        calls = self._issue_calls(reply)
        said = "".join(c.text for c in self._spoken if not c.thought)
        response_tokens = self._output_tokens(len(self._spoken), said)
        parts = [types.Part(text=said)] if said else []
        call_parts = [types.Part(function_call=call) for call in calls]
        if parts or call_parts:
            calls_tokens = self._tokens(types.Content(role="model", parts=call_parts))
            content = types.Content(role="model", parts=parts + call_parts)
            session.entries.append(Entry(content, response_tokens + calls_tokens))
        self._recorded = True
        if calls:
            await self._send(
                types.LiveServerMessage(tool_call=types.LiveServerToolCall(function_calls=calls))
            )
            # Finishing the turn after a call takes a chunk's time: a client can still
            # interrupt it, which cancels the calls (toolCallCancellation).
            await asyncio.sleep(settings.chunk_delay)
        await self._send(
            types.LiveServerMessage(
                server_content=types.LiveServerContent(
                    generation_complete=True, grounding_metadata=reply.grounding
                )
            )
        )
        thought_tokens = text_tokens(reply.thought)
        # Once turnComplete is on its way the turn is over: nothing can interrupt it.
        self._turn_open = False
        await self._send(
            types.LiveServerMessage(
                server_content=types.LiveServerContent(turn_complete=True),
                usage_metadata=types.UsageMetadata(
                    prompt_token_count=prompt_tokens,
                    response_token_count=response_tokens,
                    thoughts_token_count=thought_tokens or None,
                    total_token_count=prompt_tokens + response_tokens + thought_tokens,
                ),
            )
        )

    async def _say(self, chunk: Chunk) -> None:
        setup = self._require_setup()
        if not setup.audio_out:
            part = types.Part(text=chunk.text, thought=True if chunk.thought else None)
            await self._send(
                types.LiveServerMessage(
                    server_content=types.LiveServerContent(
                        model_turn=types.Content(role="model", parts=[part])
                    )
                )
            )
            return
        audio = types.Blob(
            mime_type=OUTPUT_MIME_TYPE, data=speech(self._settings.audio_seconds_per_chunk)
        )
        await self._send(
            types.LiveServerMessage(
                server_content=types.LiveServerContent(
                    model_turn=types.Content(role="model", parts=[types.Part(inline_data=audio)])
                )
            )
        )
        if setup.transcribe_output:
            await self._send(
                types.LiveServerMessage(
                    server_content=types.LiveServerContent(
                        output_transcription=types.Transcription(text=chunk.text)
                    )
                )
            )

    def _issue_calls(self, reply: Reply) -> list[types.FunctionCall]:
        """The reply's calls with fresh ids, now pending."""
        session = self._require_session()
        calls = []
        for call in reply.calls:
            call_id = f"function-call-{secrets.randbelow(10**19):019d}"
            issued = types.FunctionCall(id=call_id, name=call.name, args=dict(call.args or {}))
            session.pending_calls[call_id] = issued
            self._turn_calls.append(call_id)
            calls.append(issued)
        return calls

    def _fit_context(self) -> None:
        setup = self._require_setup()
        session = self._require_session()
        total = session.tokens + setup.instruction_tokens
        if setup.compression:
            if total <= setup.trigger_tokens:
                return
            # The sliding window drops the oldest turns down to the target size.
            while len(session.entries) > 1 and total > setup.target_tokens:
                total -= session.entries.pop(0).tokens
            return
        if total > self._settings.context_window:
            # "Without compression, audio-only sessions are limited to 15 minutes ...
            # Exceeding these limits will terminate the session (and therefore, the
            # connection)" (https://ai.google.dev/gemini-api/docs/live-api/session-management;
            # the window is 128k tokens, https://firebase.google.com/docs/ai-logic/live-api/limits-and-specs).
            # The close code and text are not documented: 1011 is this emulator's choice.
            self._store.terminate(session)
            raise _Closed(
                1011,
                close_reason(
                    f"The session's context window is full ({total} > "
                    f"{self._settings.context_window} tokens); enable contextWindowCompression."
                ),
            )

    async def _offer_handle(self) -> None:
        handle = self._store.issue(self._require_session())
        await self._send(
            types.LiveServerMessage(
                session_resumption_update=types.LiveServerSessionResumptionUpdate(
                    new_handle=handle, resumable=True
                )
            )
        )

    # ---- helpers -----------------------------------------------------------------

    def _tokens(self, content: types.Content) -> int:
        return content_tokens([content], self._settings.audio_tokens_per_second)

    def _output_tokens(self, chunks: int, text: str) -> int:
        if self._require_setup().audio_out:
            seconds = chunks * self._settings.audio_seconds_per_chunk
            return round(seconds * self._settings.audio_tokens_per_second)
        return text_tokens(text)

    def _require_setup(self) -> LiveSetup:
        assert self._setup is not None
        return self._setup

    def _require_session(self) -> LiveSession:
        assert self._session is not None
        return self._session

    async def _send(self, message: types.LiveServerMessage) -> None:
        # Shielded: a turn cancelled mid-send still sends whole frames, in order.
        await asyncio.shield(self._write(wire.encode(message)))

    async def _write(self, text: str) -> None:
        async with self._send_lock:
            if self._closed:
                return
            try:
                await self._ws.send_text(text)
            except Exception:
                self._closed = True


def _summary(body: Any) -> dict[str, Any]:
    """The message for the journal, with audio bytes replaced by their size."""
    if not isinstance(body, dict):
        return {"value": body}

    def shrink(value: Any) -> Any:
        if isinstance(value, dict):
            if "data" in value and isinstance(value["data"], str) and len(value["data"]) > 64:
                return {**value, "data": f"<{len(value['data'])} base64 chars>"}
            return {k: shrink(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shrink(v) for v in value]
        return value

    result: dict[str, Any] = shrink(body)
    return result
