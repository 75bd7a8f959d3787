"""``DemoLiveConnection``: an offline stand-in for a Gemini Live session.

Output shapes follow ``google.adk.models.gemini_llm_connection`` (Gemini 2.x
style): text chunks as ``partial=True`` responses, then the aggregated text
(``partial=False``), then the turn's function calls, then a bare
``turn_complete=True`` response. In AUDIO modality the text is "spoken":
partial output transcriptions interleaved with 24 kHz PCM chunks, then the
finished transcription.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from google.adk.models import LlmRequest, LlmResponse
from google.adk.models.base_llm_connection import BaseLlmConnection, RealtimeInput
from google.genai import types

from ._rules import plan_reply
from ._speech import Speaker


@dataclass(frozen=True)
class _Turn:
    """A queued model turn."""

    content: types.Content | None = None
    """User input to add to the history before planning the reply."""
    heard: str | None = None
    """Input transcription to report first (voice turns)."""


# None on the output queue means "closed".
_Output = LlmResponse | BaseException | None


class DemoLiveConnection(BaseLlmConnection):
    """Scripted live connection returned by ``DemoModel.connect``.

    Turns run one at a time in a worker task. A new user message (text, or
    audio ended by ``ActivityEnd`` / ``audio_stream_end``) or an
    ``ActivityStart`` interrupts the running turn; function responses wait for
    it instead, since ADK sends them while the call's turn is finishing.
    """

    def __init__(
        self,
        llm_request: LlmRequest,
        *,
        model_version: str,
        token_delay: float = 0.0,
        voice_transcript: str = "What's the weather in Tokyo?",
    ) -> None:
        config = llm_request.live_connect_config
        modalities = list(config.response_modalities or []) if config else []
        self.audio = types.Modality.AUDIO in modalities
        """True when the model answers with audio instead of text."""
        self._transcribe_input = bool(config and config.input_audio_transcription is not None)
        self._transcribe_output = bool(config and config.output_audio_transcription is not None)
        self._model_version = model_version
        self._token_delay = token_delay
        self._voice_transcript = voice_transcript
        self.history: list[types.Content] = []
        """The conversation as this connection saw it (planning input)."""
        self._out: asyncio.Queue[_Output] = asyncio.Queue()
        self._pending: asyncio.Queue[_Turn] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._current: asyncio.Task[None] | None = None
        self._speaker = Speaker(
            self._put,
            model_version=model_version,
            audio=self.audio,
            transcribe_output=self._transcribe_output,
            token_delay=token_delay,
        )
        self._audio_bytes = 0
        self._last_frame: types.Content | None = None
        self._closed = False

    # ---- ADK -> model ------------------------------------------------------

    async def send_history(self, history: list[types.Content]) -> None:
        self.history = list(history)
        # Like Gemini: answer right away only if the user spoke last.
        if history and history[-1].role == "user":
            self._schedule(_Turn(), interrupt=False)

    async def send_content(self, content: types.Content) -> None:
        await self._send_content(content)

    async def _send_content(self, content: types.Content, *, partial: bool = False) -> None:
        if partial:  # progress update (e.g. streaming tools): no turn
            self.history.append(content)
            return
        is_tool_result = any(p.function_response for p in content.parts or ())
        self._schedule(_Turn(content=content), interrupt=not is_tool_result)

    async def send_realtime(self, blob: RealtimeInput) -> None:
        if isinstance(blob, types.ActivityStart):
            # Manual VAD: the user starts talking, which barges in on the model.
            self._audio_bytes = 0
            self._interrupt()
        elif isinstance(blob, types.ActivityEnd):
            self._end_of_speech()
        elif isinstance(blob, types.Blob):
            if (blob.mime_type or "").startswith("audio/"):
                self._audio_bytes += len(blob.data or b"")
            elif (blob.mime_type or "").startswith("image/"):
                self._see(blob)
        elif isinstance(blob, types.LiveClientRealtimeInput):
            if blob.audio is not None:
                self._audio_bytes += len(blob.audio.data or b"")
            if blob.text:
                await self.send_content(
                    types.Content(role="user", parts=[types.Part(text=blob.text)])
                )
            if blob.audio_stream_end:
                self._end_of_speech()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        tasks = [t for t in (self._current, self._worker) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        self._out.put_nowait(None)

    # ---- model -> ADK ------------------------------------------------------

    async def receive(self) -> AsyncGenerator[LlmResponse, None]:
        # ADK's contract: block until there is output, return after each
        # turn_complete (ADK calls again), and return without yielding only
        # once closed (that ends the live flow).
        while True:
            item = await self._out.get()
            if item is None:
                self._out.put_nowait(None)  # later receive() calls end too
                return
            if isinstance(item, BaseException):
                raise item
            yield item
            if item.turn_complete:
                return

    # ---- internals ---------------------------------------------------------

    def _schedule(self, turn: _Turn, *, interrupt: bool) -> None:
        if self._closed:
            return
        if interrupt:
            self._interrupt()
        self._pending.put_nowait(turn)
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="demo-live-turns")

    def _interrupt(self) -> None:
        # The worker notices the cancellation and reports the interruption, so
        # the outputs keep their order.
        if self._current is not None and not self._current.done():
            self._current.cancel()

    def _end_of_speech(self) -> None:
        heard_bytes, self._audio_bytes = self._audio_bytes, 0
        if not heard_bytes:
            return
        text = self._voice_transcript
        content = types.Content(role="user", parts=[types.Part(text=text)])
        self._schedule(_Turn(content=content, heard=text), interrupt=True)

    def _see(self, frame: types.Blob) -> None:
        """A camera or screen frame joins the context without starting a turn (as on the
        Live API). Only the newest frame keeps its bytes: at 1 frame a second, a long
        session would otherwise hold every one."""
        previous = self._last_frame
        for index in range(len(self.history) - 1, -1, -1):
            if previous is not None and self.history[index] is previous:
                old = (previous.parts or [types.Part()])[0].inline_data
                kept = types.Blob(mime_type=old.mime_type if old else None, data=b"")
                self.history[index] = types.Content(
                    role="user", parts=[types.Part(inline_data=kept)]
                )
                break
        self._last_frame = types.Content(role="user", parts=[types.Part(inline_data=frame)])
        self.history.append(self._last_frame)

    def _put(self, item: _Output) -> None:
        self._out.put_nowait(item)

    async def _work(self) -> None:
        while True:
            turn = await self._pending.get()
            if turn.heard is not None and self._transcribe_input:
                self._put(
                    LlmResponse(
                        model_version=self._model_version,
                        input_transcription=types.Transcription(text=turn.heard, finished=True),
                        partial=False,
                    )
                )
            if turn.content is not None:
                self.history.append(turn.content)
            task = asyncio.create_task(self._speaker.speak(plan_reply(self.history), self.history))
            self._current = task
            await asyncio.wait([task])
            self._current = None
            if task.cancelled():
                self._speaker.interrupted(self.history)
            elif (error := task.exception()) is not None:
                self._put(error)
