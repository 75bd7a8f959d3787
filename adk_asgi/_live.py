"""LiveEndpoint: one WebSocket carries a whole live conversation (``Runner.run_live``).

Per connection three tasks run and end together:

    upstream    socket frames -> commands (inbox) / LiveRequestQueue (audio, activity)
    pump        run_live events -> inbox            (restarted after a model error)
    downstream  inbox -> turns, gate answers, LiveTranslator -> socket frames

The inbox is bounded: a slow socket holds the pump (and ADK) back instead of
buffering without limit. Everything that changes a turn goes through the inbox,
so the order the client sees is the order things happened: a `start` before the
model's first event, an approval request after its tool call, a denial marked
before ADK's "rejected" function response arrives.

When any task ends (client gone, idle timeout, send timeout, run ended) the
others are cancelled, every pending gate wait is cancelled (so no gated tool
runs), the LiveRequestQueue is closed (ADK closes the model connection) and the
socket is closed.

Two client protocols share the same UI chunks (see ``_live_frames``): protocol A
sends each chunk as an SSE-formatted text frame plus ``data: [DONE]`` per turn;
protocol B (AI SDK v7 ``WebSocketChatTransport``) wraps them in ``chunk`` frames
of the request that asked, ending with ``end``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qs

import msgspec
from google.adk.agents import RunConfig
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.events import Event
from google.genai import types

from ._auth import Authenticate, AuthError, resolve_user
from ._chunks import DONE_FRAME, Error, UIChunk, encode_chunk, sse_frame
from ._errors import RequestError
from ._limits import Limits
from ._live_frames import (
    AudioChunk,
    AudioControl,
    ClientFrame,
    Interrupt,
    MessageFrame,
    Ping,
    Protocol,
    SendAbort,
    SendResume,
    SendSend,
    ToolResult,
    decode_a,
    decode_b,
    detect,
    parse_json,
)
from ._live_gate import (
    PLUGIN_NAME,
    ApprovalNotice,
    GateError,
    GateNotice,
    LiveGate,
    LiveGatePlugin,
    ResolvedNotice,
    SettledNotice,
    WaitNotice,
)
from ._live_translator import LiveTranslator
from ._origin import OriginPolicy
from ._request import Approval, UIMessage, check_limits, user_content, valid_chat_id
from ._runtime import AgentRuntime
from ._streams import StreamRecorder, StreamStore, split_frames
from ._translator import ConfirmationStyle
from ._turn import _client_answer, new_message_id
from ._types import Receive, Scope, Send

__all__ = ("LiveEndpoint", "LiveOptions")

logger = logging.getLogger("adk_asgi")

GENERIC_ERROR: Final = "The agent failed to answer. Please try again."
SHUTDOWN_ERROR: Final = "The server is restarting. Please send your message again."
FAILED_ANSWER: Final = "(This answer failed with an error.)"
NOT_FOUND: Final = "No such chat."
_MAX_RESTARTS: Final = 5

# Close codes (RFC 6455 + IANA registry).
CLOSE_NORMAL: Final = 1000
CLOSE_GOING_AWAY: Final = 1001       # idle timeout
CLOSE_POLICY: Final = 1008           # not authenticated, foreign origin, chat not found, rate
CLOSE_TOO_BIG: Final = 1009          # frame over Limits.max_frame_bytes
CLOSE_ERROR: Final = 1011            # the server failed
CLOSE_RESTART: Final = 1012          # the server is shutting down


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


# -- inbox items ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Begin:
    chat_id: str


@dataclass(frozen=True, slots=True)
class _UserTurn:
    chat_id: str
    content: types.Content
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class _Answers:
    """Client answers (protocol A `message`/`tool_result`, protocol B `send`)."""

    messages: list[UIMessage] | None = None
    tool_result: ToolResult | None = None
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class _Resume:
    request_id: str
    chat_id: str


@dataclass(frozen=True, slots=True)
class _Abort:
    request_id: str


@dataclass(frozen=True, slots=True)
class _RunFailed:
    error: BaseException


class _RunEnded:
    pass


class _Shutdown:
    pass


_Item = (Event | GateNotice | _Begin | _UserTurn | _Answers | _Resume | _Abort | _RunFailed
         | _RunEnded | _Shutdown)


class _ClientGone(Exception):
    pass


# -- turns ------------------------------------------------------------------------


@dataclass(slots=True)
class _Listener:
    request_id: str
    sequence: int = 0


@dataclass(slots=True)
class _LiveTurn:
    translator: LiveTranslator
    recorder: StreamRecorder
    listeners: list[_Listener] = field(default_factory=list)
    suspended: bool = False
    deferred: list[ApprovalNotice] = field(default_factory=list)
    step_calls: set[str] = field(default_factory=set)
    waiting: set[str] = field(default_factory=set)
    settled: set[str] = field(default_factory=set)


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
        self.connections: set[_Connection] = set()
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
        refusal = await self._refusal(scope)
        if isinstance(refusal, tuple):
            # Accept, then close: browsers see close codes and reasons, not the
            # status of a refused handshake.
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": refusal[0],
                        "reason": refusal[1][:120]})
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        audio = query.get("modality", ["text"])[0].lower() == "audio"
        chat_id = query.get("chatId", [None])[0]
        await send({"type": "websocket.accept"})
        connection = _Connection(self, receive, send, user_id=refusal, audio=audio,
                                 chat_id=chat_id)
        self.connections.add(connection)
        try:
            await connection.run()
        finally:
            self.connections.discard(connection)

    async def _refusal(self, scope: Scope) -> tuple[int, str] | str:
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
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        chat_id = query.get("chatId", [None])[0]
        if chat_id is not None:
            if not valid_chat_id(chat_id):
                return CLOSE_POLICY, "Invalid chat id (1-256 printable characters)."
            if not await self.store.claim(chat_id, user_id):
                return CLOSE_POLICY, NOT_FOUND
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
        custom["adk_asgi"] = {"live": True}
        return base.model_copy(update={"response_modalities": [modality],
                                       "custom_metadata": custom})


class _Connection:
    def __init__(self, endpoint: LiveEndpoint, receive: Receive, send: Send, *,
                 user_id: str, audio: bool, chat_id: str | None) -> None:
        self.endpoint = endpoint
        self.options = endpoint.options
        self._receive = receive
        self._send = send
        self.user_id = user_id
        self.audio = audio
        self.chat_id = chat_id
        self.protocol: Protocol = "A"
        self.limits = endpoint.limits
        self.store = endpoint.store
        self.inbox: asyncio.Queue[_Item] = asyncio.Queue(self.options.inbox_size)
        self.queue = LiveRequestQueue()
        self.gate = LiveGate(self._notify, timeout=self.options.wait_timeout,
                             max_waiting=self.limits.max_pending_approvals)
        self.turn: _LiveTurn | None = None
        self.pending_turns: deque[_UserTurn] = deque()
        self._send_lock = asyncio.Lock()
        self._loop = asyncio.get_running_loop()
        self._sending_since = 0.0
        self._last_activity = self._loop.time()
        self._pump: asyncio.Task[None] | None = None
        self._followers: set[asyncio.Task[None]] = set()
        self._closed = False
        self._draining = False
        self._close_code = CLOSE_NORMAL
        self._close_reason = ""
        # Token bucket for Limits.frames_per_second / frame_burst.
        self._tokens = float(self.limits.frame_burst)
        self._refilled = asyncio.get_running_loop().time()

    # -- lifecycle --------------------------------------------------------------

    async def run(self) -> None:
        upstream = asyncio.create_task(self._upstream(), name="adk-asgi-live-upstream")
        downstream = asyncio.create_task(self._downstream(), name="adk-asgi-live-downstream")
        watchdog = asyncio.create_task(self._watchdog(), name="adk-asgi-live-watchdog")
        tasks: list[asyncio.Task[None]] = [upstream, downstream, watchdog]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if not task.cancelled() and (exc := task.exception()) is not None \
                        and not isinstance(exc, _ClientGone):
                    logger.error("Live connection failed", exc_info=exc)
                    self._close_code = CLOSE_ERROR
        finally:
            await self._teardown(tasks)

    async def _teardown(self, tasks: list[asyncio.Task[None]]) -> None:
        self._closed = True
        # Cancel the waits first: a gated call whose client is gone must not run.
        self.gate.close()
        self.queue.close()
        if self._pump is not None:
            tasks.append(self._pump)
        tasks.extend(self._followers)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.endpoint.plugin.detach(self.queue)
        if self.turn is not None:
            with contextlib.suppress(Exception):
                await self.turn.recorder.end(resumable=False)
        message: dict[str, Any] = {"type": "websocket.close", "code": self._close_code}
        if self._close_reason:
            message["reason"] = self._close_reason[:120]
        with contextlib.suppress(Exception):
            await self._send(message)

    def _close_with(self, code: int, reason: str) -> _ClientGone:
        """End the connection with ``code`` (raise the result from the upstream task)."""
        self._close_code = code
        self._close_reason = reason
        return _ClientGone()

    async def drain(self, grace: float) -> None:
        """Server shutdown: no new turns; the running one gets ``grace`` seconds."""
        self._draining = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        # Polling is fine here: it runs once per connection, at shutdown only.
        while (self.turn is not None or self.pending_turns) and not self._closed \
                and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        if not self._closed:
            with contextlib.suppress(asyncio.QueueFull):
                self.inbox.put_nowait(_Shutdown())

    async def _notify(self, notice: GateNotice) -> None:
        if not self._closed:
            await self.inbox.put(notice)

    # -- sending ------------------------------------------------------------------

    async def _send_text(self, text: str) -> None:
        if self._closed:
            raise _ClientGone
        async with self._send_lock:
            # No timeout scope per frame (a task and a timer each on Python 3.11): the
            # watchdog looks at how long the current send has been pending.
            self._sending_since = self._loop.time()
            try:
                await self._send({"type": "websocket.send", "text": text})
            except Exception as exc:  # the ASGI server reports a closed socket this way
                raise _ClientGone from exc
            finally:
                self._sending_since = 0.0

    async def _watchdog(self) -> None:
        """Ends the connection (by returning) when a send has hung for ``send_timeout``
        (a half-open or stuck client) or nothing happened for ``idle_timeout``."""
        send_timeout = self.options.send_timeout
        idle_timeout = self.options.idle_timeout
        limits = [t for t in (send_timeout, idle_timeout) if t]
        if not limits:
            await asyncio.Event().wait()
        tick = max(0.05, min(limits) / 4)
        while True:
            await asyncio.sleep(tick)
            now = self._loop.time()
            since = self._sending_since
            if send_timeout and since and now - since > send_timeout:
                logger.warning("Live client stopped reading; dropping the connection")
                return
            if idle_timeout and now - self._last_activity > idle_timeout \
                    and self.turn is None and not self.gate.waiting_calls:
                logger.info("Closing an idle live connection")
                self._close_code, self._close_reason = CLOSE_GOING_AWAY, "Idle timeout."
                return

    async def _send_json(self, frame: dict[str, Any]) -> None:
        await self._send_text(json.dumps(frame, separators=(",", ":")))

    async def _protocol_error(self, error_text: str, request_id: str | None = None) -> None:
        if self.protocol == "B":
            frame: dict[str, Any] = {"type": "error", "errorText": error_text}
            if request_id is not None:
                frame["requestId"] = request_id
            await self._send_json(frame)
        else:
            # An `error` chunk outside the UI stream's turn flow: the turn, if any, goes on.
            await self._send_text(sse_frame(_error_chunk(error_text)).decode())

    async def _emit(self, chunks: list[UIChunk]) -> None:
        turn = self.turn
        if not chunks or turn is None:
            return
        encoded = [encode_chunk(chunk) for chunk in chunks]
        frames = [b"data: " + data + b"\n\n" for data in encoded]
        turn.recorder.append(b"".join(frames))  # for `GET {api}/{id}/stream` and `resume`
        if self.protocol == "A":
            for frame in frames:
                await self._send_text(frame.decode())
            return
        for listener in list(turn.listeners):
            for data in encoded:
                await self._send_text(_chunk_frame(listener, data))

    # -- upstream: socket -> inbox / queue -----------------------------------------

    def _admit(self, size: int) -> None:
        """Frame size and rate limits: raise to close the connection."""
        limits = self.limits
        if size > limits.max_frame_bytes:
            raise self._close_with(CLOSE_TOO_BIG,
                                   f"Frames are limited to {limits.max_frame_bytes} bytes.")
        now = asyncio.get_running_loop().time()
        self._tokens = min(float(limits.frame_burst),
                           self._tokens + (now - self._refilled) * limits.frames_per_second)
        self._refilled = now
        self._tokens -= 1
        if self._tokens < 0:
            raise self._close_with(CLOSE_POLICY, "Too many frames; slow down.")

    async def _upstream(self) -> None:
        first = True
        while True:
            message = await self._next_message()
            if message["type"] != "websocket.receive":
                raise _ClientGone  # websocket.disconnect
            text = message.get("text")
            data = message.get("bytes")
            self._admit(len(text) if text is not None else len(data or b""))
            try:
                if text is None:
                    if first:
                        self.protocol = "A"
                        first = False
                    if data and self.protocol == "A":
                        await self._audio(AudioChunk(data))
                    continue
                frame = parse_json(text)
                if first:
                    self.protocol = detect(frame)
                    first = False
                command = decode_a(frame) if self.protocol == "A" else decode_b(frame)
                await self._command(command)
            except RequestError as error:
                request_id = None
                if self.protocol == "B" and text is not None:
                    with contextlib.suppress(Exception):
                        value = json.loads(text)
                        candidate = value.get("requestId") if isinstance(value, dict) else None
                        request_id = candidate if isinstance(candidate, str) else None
                await self._protocol_error(error.message, request_id)

    async def _next_message(self) -> dict[str, Any]:
        message = await self._receive()
        self._last_activity = self._loop.time()
        return dict(message)

    async def _command(self, command: ClientFrame) -> None:
        if isinstance(command, Ping):
            pong: dict[str, Any] = {"type": "pong", "version": "1.0"}
            if command.timestamp is not None:
                pong["timestamp"] = command.timestamp
            await self._send_json(pong)
        elif isinstance(command, AudioChunk):
            await self._audio(command)
        elif isinstance(command, AudioControl):
            await self._begin()
            if command.action == "start":
                self.queue.send_activity_start()
            else:
                self.queue.send_activity_end()
        elif isinstance(command, Interrupt):
            # Barge-in: manual activity start interrupts the model's turn; the
            # turn then ends with its `interrupted` turn_complete (and `finish`).
            self.queue.send_activity_start()
            self.queue.send_activity_end()
        elif isinstance(command, MessageFrame):
            await self._message(command.messages, command.chat_id, None)
        elif isinstance(command, ToolResult):
            await self.inbox.put(_Answers(tool_result=command))
        elif isinstance(command, SendSend):
            await self._message(command.messages, command.chat_id, command.request_id)
        elif isinstance(command, SendResume):
            await self.inbox.put(_Resume(command.request_id, command.chat_id))
        elif isinstance(command, SendAbort):
            await self.inbox.put(_Abort(command.request_id))

    async def _begin(self) -> None:
        if self._pump is None:
            await self.inbox.put(_Begin(self.chat_id or f"live-{uuid.uuid4().hex[:16]}"))

    async def _audio(self, chunk: AudioChunk) -> None:
        await self._begin()
        self.queue.send_realtime(types.Blob(mime_type=chunk.mime_type, data=chunk.pcm))

    async def _message(self, messages: list[UIMessage], chat_id: str | None,
                       request_id: str | None) -> None:
        check_limits(messages, self.limits)
        last = messages[-1]
        chat = chat_id or self.chat_id or f"live-{uuid.uuid4().hex[:16]}"
        if not valid_chat_id(chat):
            raise RequestError(404, "chat_not_found", NOT_FOUND)
        if last.role == "user":
            await self.inbox.put(_UserTurn(chat, user_content(last, self.limits.max_file_bytes),
                                           request_id))
        elif last.role == "assistant":
            await self.inbox.put(_Answers(messages=messages, request_id=request_id))
        else:
            raise RequestError(422, "invalid_last_message",
                               "The last message must be a user or an assistant message.")

    # -- the run ------------------------------------------------------------------

    async def _start_run(self, chat_id: str) -> str | None:
        """Start the live run of ``chat_id``; the reason it cannot be started, else None."""
        if self._pump is not None:
            return None if chat_id == self.chat_id else "This connection serves another chat."
        if not await self.store.claim(chat_id, self.user_id):
            return NOT_FOUND
        runtime = self.endpoint.runtime
        service = runtime.session_service
        session = await service.get_session(app_name=runtime.app_name, user_id=self.user_id,
                                            session_id=chat_id)
        if session is None:
            await service.create_session(app_name=runtime.app_name, user_id=self.user_id,
                                         session_id=chat_id)
        self.chat_id = chat_id
        self._pump = asyncio.create_task(self._run_pump(), name="adk-asgi-live-pump")
        return None

    async def _run_pump(self) -> None:
        runtime = self.endpoint.runtime
        plugin = self.endpoint.plugin
        config = self.endpoint.live_run_config(self.audio)
        restarts = 0
        while True:
            queue = self.queue
            plugin.attach(queue, self.gate)
            try:
                run = runtime.runner.run_live(user_id=self.user_id, session_id=self.chat_id,
                                              live_request_queue=queue, run_config=config)
                async with contextlib.aclosing(run) as events:
                    async for event in events:
                        await self.inbox.put(event)
                await self.inbox.put(_RunEnded())
                return
            except Exception as exc:
                logger.exception("Live run failed in chat %r", self.chat_id)
                plugin.detach(queue)
                await self.inbox.put(_RunFailed(exc))
                restarts += 1
                if restarts > _MAX_RESTARTS or self._closed:
                    await self.inbox.put(_RunEnded())
                    return
                # A fresh queue and run: the connection stays usable after a model error.
                self.queue = LiveRequestQueue()
                await self._close_failed_exchange()

    async def _close_failed_exchange(self) -> None:
        """Record that the last answer failed, so the restarted run's history does not
        end on the user's message (the model would answer it again, and fail again)."""
        runtime = self.endpoint.runtime
        assert self.chat_id is not None
        session = await runtime.session_service.get_session(
            app_name=runtime.app_name, user_id=self.user_id, session_id=self.chat_id)
        if session is None or not session.events or session.events[-1].author != "user":
            return
        await runtime.session_service.append_event(session, Event(
            invocation_id=session.events[-1].invocation_id,
            author=runtime.agent_name,
            content=types.Content(role="model", parts=[types.Part(text=FAILED_ANSWER)]),
            custom_metadata={"adk_asgi": {"liveError": True}},
        ))

    # -- downstream: inbox -> socket -------------------------------------------------

    async def _downstream(self) -> None:
        while True:
            item = await self.inbox.get()
            if isinstance(item, Event):
                await self._event(item)
            elif isinstance(item, ApprovalNotice):
                await self._approval(item)
            elif isinstance(item, WaitNotice):
                if self.turn is not None:
                    self.turn.waiting.add(item.call_id)
                    await self._maybe_suspend()
            elif isinstance(item, SettledNotice):
                if self.turn is not None:
                    self.turn.settled.add(item.call_id)
                    await self._maybe_suspend()
            elif isinstance(item, ResolvedNotice):
                await self._resolved(item)
            elif isinstance(item, _Begin):
                await self._start_run(item.chat_id)
            elif isinstance(item, _UserTurn):
                await self._user_turn(item)
            elif isinstance(item, _Answers):
                await self._answers(item)
            elif isinstance(item, _Resume):
                await self._resume(item)
            elif isinstance(item, _Abort):
                await self._abort(item)
            elif isinstance(item, _RunFailed):
                await self._run_failed(item.error)
            elif isinstance(item, _RunEnded):
                self._close_code = CLOSE_ERROR
                return
            elif isinstance(item, _Shutdown):
                if self.turn is not None:
                    await self._emit(self.turn.translator.fail(SHUTDOWN_ERROR))
                    await self._end_turn()
                self._close_code, self._close_reason = CLOSE_RESTART, "The server is restarting."
                return

    async def _open_turn(self, request_id: str | None) -> _LiveTurn:
        assert self.chat_id is not None
        turn = _LiveTurn(LiveTranslator(new_message_id(),
                                        confirmation_style=self.options.confirmation_style),
                         await self.store.record(self.chat_id))
        if request_id is not None:
            turn.listeners.append(_Listener(request_id))
        self.turn = turn
        return turn

    async def _user_turn(self, item: _UserTurn) -> None:
        if self._draining:
            await self._protocol_error(SHUTDOWN_ERROR, item.request_id)
            return
        problem = await self._start_run(item.chat_id)
        if problem is not None:
            await self._protocol_error(problem, item.request_id)
            return
        if self.turn is not None:
            self.pending_turns.append(item)  # one turn at a time; the next waits its turn
            return
        turn = await self._open_turn(item.request_id)
        await self._emit(turn.translator.start())
        self.queue.send_content(item.content)

    async def _end_turn(self) -> None:
        turn = self.turn
        if turn is None:
            return
        await self._emit(turn.translator.finish())
        turn.recorder.append(DONE_FRAME)
        await turn.recorder.end(resumable=False)
        self._last_activity = self._loop.time()  # idleness counts from the end of a turn
        if self.protocol == "A":
            await self._send_text(DONE_FRAME.decode())
        else:
            for listener in turn.listeners:
                await self._send_json({"type": "end", "requestId": listener.request_id})
        self.turn = None
        if self.pending_turns:
            await self._user_turn(self.pending_turns.popleft())

    async def _event(self, event: Event) -> None:
        turn = self.turn
        if turn is None:
            meaningful = (event.content is not None or event.input_transcription is not None
                          or event.output_transcription is not None or event.error_code)
            if not meaningful:
                return  # a control event between turns
            # The model speaks unprompted (voice input, proactive audio): a new message.
            turn = await self._open_turn(None)
            await self._emit(turn.translator.start())
        translator = turn.translator
        out: list[UIChunk] = []
        translator.translate(event, out)
        calls = [c.id for c in event.get_function_calls() if c.id] if not event.partial else []
        if calls:
            turn.step_calls = set(calls)
            turn.waiting.clear()
            turn.settled.clear()
            for call_id in calls:
                self.gate.know_call(call_id)
        await self._emit(out)
        if turn.deferred:
            ready = [n for n in turn.deferred if n.call_id in translator.emitted_calls]
            turn.deferred = [n for n in turn.deferred if n not in ready]
            for notice in ready:
                await self._approval(notice)
        if event.turn_complete:
            if event.interrupted or translator.errored or not translator.model_called_tools:
                await self._end_turn()
            else:
                # Tool results go back to the model, which answers in this message.
                translator.end_model_turn()

    async def _approval(self, notice: ApprovalNotice) -> None:
        turn = self.turn
        if turn is None:
            return
        if notice.call_id not in turn.translator.emitted_calls:
            turn.deferred.append(notice)  # its tool call has not reached the client yet
            return
        out: list[UIChunk] = []
        turn.translator.approval_request(notice, out)
        turn.waiting.add(notice.call_id)
        await self._emit(out)
        await self._maybe_suspend()

    async def _maybe_suspend(self) -> None:
        """Protocol B: once every call of the step is settled or waits for the client,
        end the request (``finish`` + ``end``); the client's next ``send`` resumes it."""
        turn = self.turn
        if (self.protocol != "B" or turn is None or turn.suspended or not turn.waiting
                or turn.deferred or not turn.step_calls
                or not turn.step_calls <= turn.waiting | turn.settled):
            return
        await self._emit(turn.translator.suspend(turn.waiting))
        turn.recorder.append(DONE_FRAME)
        await turn.recorder.end(resumable=False)
        for listener in turn.listeners:
            await self._send_json({"type": "end", "requestId": listener.request_id})
        turn.listeners.clear()
        turn.suspended = True

    async def _resolved(self, notice: ResolvedNotice) -> None:
        turn = self.turn
        if turn is None:
            return
        turn.waiting.discard(notice.call_id)
        out: list[UIChunk] = []
        turn.translator.resolved(notice, out)
        await self._emit(out)

    async def _answers(self, item: _Answers) -> None:
        try:
            notices = self._apply_answers(item)
        except (GateError, RequestError) as error:
            text = error.message if isinstance(error, RequestError) else str(error)
            await self._protocol_error(text, item.request_id)
            return
        turn = self.turn
        if turn is not None and item.request_id is not None:
            # Protocol B: the request that carried the answers streams the rest.
            old = turn.translator
            if turn.suspended:
                fresh = LiveTranslator(old.message_id,
                                       confirmation_style=self.options.confirmation_style,
                                       denied_call_ids=old.denied)
                fresh.emitted_calls = old.emitted_calls
                fresh.model_called_tools = old.model_called_tools
                turn.translator = fresh
                turn.suspended = False
                assert self.chat_id is not None
                turn.recorder = await self.store.record(self.chat_id)
            else:
                for listener in turn.listeners:
                    await self._send_json({"type": "end", "requestId": listener.request_id})
            turn.listeners = [_Listener(item.request_id)]
            await self._emit(turn.translator.start())
        for notice in notices:
            await self._resolved(notice)

    def _apply_answers(self, item: _Answers) -> list[ResolvedNotice]:
        """Validate every answer first, then resolve them all (all or nothing)."""
        gate = self.gate
        planned: list[tuple[str, Any, bool | None]] = []
        if item.tool_result is not None:
            planned.append((item.tool_result.tool_call_id, item.tool_result.result, None))
        elif item.messages:
            waiting = gate.waiting_keys
            for part in item.messages[-1].parts:
                approval = part.approval
                approved_here = False
                if (part.state != "approval-responded" and isinstance(approval, Approval)
                        and isinstance(approval.approved, bool) and approval.id in waiting):
                    # A browser tool approved and run on the page: approval and result
                    # come together (the result waits as an early result).
                    planned.append((approval.id, {"confirmed": approval.approved}, True))
                    approved_here = True
                answer = _client_answer(part)
                if answer is None:
                    continue
                if answer.call_id not in waiting:
                    # An echo is a result the client re-sends with its whole message; a
                    # result that comes with the approval answered right now is new.
                    if not answer.fresh and not approved_here and gate.is_known(answer.call_id):
                        continue
                    gate.check(answer.call_id, answer.is_approval)  # raises: unknown/replayed
                planned.append((answer.call_id, answer.response, answer.is_approval))
            if not planned:
                raise RequestError(422, "nothing_to_continue",
                                   "The assistant message carries no new answer to a pending "
                                   "tool call.")
        for key, _result, is_approval in planned:
            gate.check(key, is_approval)
        return [gate.answer(key, result, approval=is_approval)
                for key, result, is_approval in planned]

    async def _resume(self, item: _Resume) -> None:
        """Replay the chat's active stream (recorded in the stream store, so it may run on
        this connection, another one or an HTTP request on any worker) from its start,
        then follow it (``resumeStreamIsReplay``)."""
        owner = await self.store.owner(item.chat_id) if valid_chat_id(item.chat_id) else None
        follow = await self.store.follow(item.chat_id) if owner == self.user_id else None
        if follow is None:
            await self._send_json({"type": "no-active", "requestId": item.request_id})
            return
        await self._send_json({"type": "start", "requestId": item.request_id})
        task = asyncio.create_task(self._follow(item.request_id, follow),
                                   name="adk-asgi-live-resume")
        self._followers.add(task)
        task.add_done_callback(self._followers.discard)

    async def _follow(self, request_id: str, follow: AsyncGenerator[bytes, None]) -> None:
        listener = _Listener(request_id)
        try:
            async for blob in follow:
                for data in split_frames(blob):
                    await self._send_text(_chunk_frame(listener, data))
            await self._send_json({"type": "end", "requestId": request_id})
        except _ClientGone:
            pass
        finally:
            await follow.aclose()

    async def _abort(self, item: _Abort) -> None:
        turn = self.turn
        if turn is None or all(x.request_id != item.request_id for x in turn.listeners):
            return
        turn.listeners = [x for x in turn.listeners if x.request_id != item.request_id]
        # Stop the model; its interrupted turn_complete then ends the turn.
        self.queue.send_activity_start()
        self.queue.send_activity_end()

    async def _run_failed(self, error: BaseException) -> None:
        if self.turn is None:
            await self._open_turn(None)
            assert self.turn is not None
            await self._emit(self.turn.translator.start())
        assert self.turn is not None
        await self._emit(self.turn.translator.fail(
            f"{GENERIC_ERROR} ({type(error).__name__})"))
        await self._end_turn()


def _error_chunk(text: str) -> UIChunk:
    return Error(error_text=text)


_encode: Final = msgspec.json.Encoder().encode


def _chunk_frame(listener: _Listener, chunk: bytes) -> str:
    frame = (b'{"type":"chunk","requestId":' + _encode(listener.request_id)
             + b',"sequence":' + str(listener.sequence).encode()
             + b',"chunk":' + chunk + b"}")
    listener.sequence += 1
    return frame.decode()
