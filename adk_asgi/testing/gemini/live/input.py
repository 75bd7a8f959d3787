"""What a Live API client sends after ``setup``: ``clientContent``, ``realtimeInput``
(text, audio and video, activity signals, ``audioStreamEnd``), ``toolResponse`` and
``contextUpdate``, into the session's history and the speaker's turns, with the rules the
service enforces on them."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from google.genai import types

from .. import wire
from ..api import function_declarations, instruction_text
from ..errors import ApiError
from ..tokens import FRAME_TOKENS, audio_seconds, pcm_rate, text_tokens
from .images import image_problem
from .sessions import Entry
from .socket import Closed, invalid
from .speaker import Speaker
from .state import LiveState
from .voice import VoiceActivity, is_voiced

__all__ = ("LiveInput",)


class LiveInput:
    def __init__(self, state: LiveState, speaker: Speaker) -> None:
        self._state = state
        self._speaker = speaker
        self._voice = VoiceActivity(state.setup.silence_gap)
        self._silence_watch: asyncio.Task[None] | None = None

    def cancel(self) -> None:
        if self._silence_watch is not None:
            self._silence_watch.cancel()

    async def handle(self, kind: str, body: Any) -> None:
        if kind == "setup":
            # Setup comes "only in the first client message" (https://ai.google.dev/api/live).
            raise invalid("setup may only be sent once, as the first message.")
        if not isinstance(body, dict):
            raise invalid()
        try:
            if kind == "client_content":
                self._client_content(body)
            elif kind == "realtime_input":
                self._realtime_input(body)
            elif kind == "tool_response":
                self._tool_response(body)
            elif kind == "context_update":
                self._context_update(body)
        except wire.WireError as error:
            raise invalid(str(error)) from None

    def _context_update(self, body: dict[str, Any]) -> None:
        # "Updates to the context of the current session ... Only fields that are set
        # will be updated" (AsyncSession.send_context_update in google-genai).
        changes: dict[str, Any] = {}
        if (instruction := wire.get(body, "system_instruction")) is not None:
            changes["system_instruction"] = instruction_text(instruction)
        if (tools := wire.get(body, "tools")) is not None:
            changes["declarations"] = function_declarations(wire.get(tools, "tools") or ())
        self._state.current_setup = dataclasses.replace(self._state.setup, **changes)

    def _client_content(self, body: dict[str, Any]) -> None:
        turns = wire.content_list(wire.get(body, "turns"), "clientContent.turns")
        # "A message here will interrupt any current model generation"
        # (BidiGenerateContentClientContent, https://ai.google.dev/api/live).
        self._speaker.interrupt()
        session = self._state.session
        for turn in turns:
            role = turn.role or "user"
            content = types.Content(role=role, parts=turn.parts)
            session.entries.append(Entry(content, self._state.tokens(content)))
        if wire.get(body, "turn_complete"):
            self._speaker.queue(None)

    def _realtime_input(self, body: dict[str, Any]) -> None:
        setup = self._state.setup
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
            raise invalid(
                "activityStart and activityEnd can only be sent when automatic "
                "activity detection is disabled."
            )
        if starts:
            self._voice.start(time.monotonic())
            self._speaker.interrupt_for_user()
        for index, blob in enumerate(blobs):
            self._media(blob, f"realtimeInput.mediaChunks[{index}]")
        if (text := wire.get(body, "text")) is not None:
            self._speaker.interrupt_for_user()
            content = types.Content(role="user", parts=[types.Part(text=str(text))])
            self._state.session.entries.append(Entry(content, text_tokens(str(text))))
            self._speaker.queue(None)
        if ends:
            self._end_of_speech()
        if wire.get(body, "audio_stream_end") and not setup.manual_activity:
            # "audioStreamEnd ... should only be sent when automatic activity detection
            # is enabled" (LiveClientRealtimeInput): it ends the open voice turn. Sent
            # with manual detection it is ignored.
            self._end_of_speech()

    def _media(self, blob: Any, where: str) -> None:
        setup = self._state.setup
        mime = str(wire.get(blob, "mime_type") or "")
        data = wire.bytes_field(wire.get(blob, "data", ""), f"{where}.data")
        if mime.lower().startswith("image/") and (problem := image_problem(mime, data)):
            raise invalid(problem)
        if mime.lower().startswith("image/") or mime.lower().startswith("video/"):
            # Video frames fill the context (258 tokens each); they never start a turn.
            # Scripts see them as the image parts they are.
            blob = types.Blob(mime_type=mime, data=data)
            frame = types.Content(role="user", parts=[types.Part(inline_data=blob)])
            self._state.session.entries.append(Entry(frame, FRAME_TOKENS))
            return
        rate = pcm_rate(mime)
        # "Audio data in the Live API is always raw, little-endian, 16-bit PCM ... set
        # the MIME type of each audio-containing Blob to a value like
        # audio/pcm;rate=16000" (https://ai.google.dev/gemini-api/docs/live-api/capabilities,
        # "Audio formats"). Anything else is refused.
        if not rate or len(data) % 2:
            raise invalid(
                f"Unsupported audio input {mime or '(no mime type)'}: send raw "
                "16-bit little-endian PCM as audio/pcm;rate=16000."
            )
        now = time.monotonic()
        seconds = audio_seconds(data, mime)
        voiced = is_voiced(data, self._state.settings.voice_threshold)
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
            self._speaker.interrupt_for_user()
            self._watch_silence()
        if self._voice.audio(seconds, voiced, now):
            self._end_of_speech()

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
        settings = self._state.settings
        heard = settings.heard_text
        content = types.Content(role="user", parts=[types.Part(text=heard)])
        tokens = round(seconds * settings.audio_tokens_per_second)
        self._state.session.entries.append(Entry(content, tokens))
        self._speaker.queue(heard)

    def _tool_response(self, body: dict[str, Any]) -> None:
        session = self._state.session
        raw = wire.get(body, "function_responses") or ()
        if not isinstance(raw, list) or not raw:
            raise invalid()
        responses = [
            wire.parse_model(types.FunctionResponse, item, f"toolResponse.functionResponses[{i}]")
            for i, item in enumerate(raw)
        ]
        answered: list[types.FunctionResponse] = []
        for response in responses:
            if not response.id:
                raise invalid("FunctionResponse.id is required.")
            if response.id in session.cancelled_calls:
                continue  # the call was cancelled (toolCallCancellation): ignored
            if response.id in session.finished_calls:
                # A NON_BLOCKING call's response without willContinue ended it: "If set
                # to false, future responses will not be considered" (FunctionResponse.
                # will_continue, https://ai.google.dev/api/caching#FunctionResponse).
                continue
            if response.id not in session.pending_calls | session.continuing_calls:
                # Only answers to pending calls: a response for an id the session does
                # not know closes with 1008 "Requested entity was not found."
                # (google-gemini/deprecated-generative-ai-js#487).
                raise Closed.of(ApiError(404))
            answered.append(response)
        prompts = False
        for response in answered:
            call_id = response.id or ""
            call = session.pending_calls.pop(call_id, None) or session.continuing_calls[call_id]
            response.name = response.name or call.name
            if not self._non_blocking(call):
                # "willContinue ... Is only applicable to NON_BLOCKING function calls, is
                # ignored otherwise": a BLOCKING call's first response is its only one.
                prompts = True
                continue
            if response.will_continue:
                # "Signals that function call continues, and more responses will be
                # returned, turning the function call into a generator."
                session.continuing_calls[call_id] = call
            else:
                session.continuing_calls.pop(call_id, None)
                session.finished_calls.add(call_id)
            # SILENT: "Only add the result to the conversation context, do not interrupt
            # or trigger generation"; WHEN_IDLE (the default) and INTERRUPT prompt it
            # (FunctionResponseScheduling).
            prompts |= response.scheduling != types.FunctionResponseScheduling.SILENT
        if answered:
            content = types.Content(
                role="user", parts=[types.Part(function_response=r) for r in answered]
            )
            session.entries.append(Entry(content, self._state.tokens(content)))
        waiting = any(not self._non_blocking(c) for c in session.pending_calls.values())
        if prompts and not waiting:
            self._speaker.queue(None)

    def _non_blocking(self, call: types.FunctionCall) -> bool:
        """The call's declaration says NON_BLOCKING ("the system will not wait to receive
        the function response", FunctionDeclaration.behavior)."""
        for declaration in self._state.setup.declarations:
            if declaration.name == call.name:
                return declaration.behavior == types.Behavior.NON_BLOCKING
        return False
