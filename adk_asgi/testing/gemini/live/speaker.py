"""The model's side of a Live API connection: one turn at a time from the script
(text, or audio with its transcription), function calls, interruptions, the context
window and resumption handles."""

from __future__ import annotations

import asyncio
import logging
import secrets

from google.genai import types

from ..errors import ApiError, close_reason
from ..rest.chunks import Chunk, ask, chunks_of
from ..script.exchange import Reply, Request
from ..settings import EmulatorSettings
from ..tokens import text_tokens
from .audio import OUTPUT_MIME_TYPE, speech
from .sessions import Entry, LiveSession
from .setup import LiveSetup
from .socket import Closed
from .state import LiveState

__all__ = ("Speaker",)

logger = logging.getLogger("adk_asgi.testing.gemini")


class Speaker:
    """Answers the turns the client completes, in order; one turn speaks at a time."""

    def __init__(self, state: LiveState) -> None:
        self._state = state
        self._turns: asyncio.Queue[str | None] = asyncio.Queue()
        self._speaking: asyncio.Task[None] | None = None
        self._turn_calls: list[str] = []
        self._spoken: list[Chunk] = []
        self._interrupted = False
        self._recorded = False
        self._turn_open = False

    def queue(self, heard: str | None) -> None:
        """A completed user turn to answer (``heard``: the transcript of a voice turn)."""
        self._turns.put_nowait(heard)

    def interrupt_for_user(self) -> None:
        if self._state.setup.interrupts:
            self.interrupt()

    def interrupt(self) -> None:
        """Stop the turn being generated; its spoken part stays in the history."""
        task = self._speaking
        if task is None or task.done() or self._interrupted or not self._turn_open:
            return
        self._interrupted = True
        session = self._state.session
        said = "".join(c.text for c in self._spoken if not c.thought)
        if said and not self._recorded:
            content = types.Content(role="model", parts=[types.Part(text=said)])
            tokens = self._state.output_tokens(len(self._spoken), said)
            session.entries.append(Entry(content, tokens))
        for call_id in self._turn_calls:
            if session.pending_calls.pop(call_id, None) is not None:
                session.cancelled_calls.add(call_id)
        task.cancel()

    async def run(self) -> None:
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
                if self._state.setup.resumption and self._idle():
                    await self.offer_handle()
            elif (error := task.exception()) is not None:
                if isinstance(error, Closed):
                    await self._state.socket.close(error)
                    return
                logger.error("emulated live turn failed", exc_info=error)
                await self._state.socket.close(
                    Closed.of(ApiError(500, "Internal error encountered."))
                )
                return

    def _idle(self) -> bool:
        """Nothing to resume in the middle of: no call waits for its result, and no turn
        waits to be answered (a tool's result or the user's turn that came in while this
        one ended). "It might be not possible to resume session at some points ... Example
        of such case could be model executing function calls or just generating."
        (LiveServerSessionResumptionUpdate.resumable): a handle offered then would name a
        session that never answers what it was sent."""
        return not self._state.session.pending_calls and self._turns.empty()

    async def offer_handle(self) -> None:
        handle = self._state.store.issue(self._state.session)
        await self._state.socket.send(
            types.LiveServerMessage(
                session_resumption_update=types.LiveServerSessionResumptionUpdate(
                    new_handle=handle, resumable=True
                )
            )
        )

    async def _report_interruption(self) -> None:
        cancelled = [c for c in self._turn_calls if c in self._state.session.cancelled_calls]
        send = self._state.socket.send
        if cancelled:
            # "This message occurs only in cases where the clients interrupt server
            # turns" (LiveServerToolCallCancellation).
            await send(
                types.LiveServerMessage(
                    tool_call_cancellation=types.LiveServerToolCallCancellation(ids=cancelled)
                )
            )
        # "When model is interrupted while generating there will be no
        # generation_complete message in interrupted turn, it will go through
        # interrupted > turn_complete" (LiveServerContent.generation_complete).
        await send(
            types.LiveServerMessage(server_content=types.LiveServerContent(interrupted=True))
        )
        await send(
            types.LiveServerMessage(server_content=types.LiveServerContent(turn_complete=True))
        )

    async def _turn(self, heard: str | None) -> None:
        state = self._state
        setup, session, settings = state.setup, state.session, state.settings
        send = state.socket.send
        if heard is not None and setup.transcribe_input:
            await send(
                types.LiveServerMessage(
                    server_content=types.LiveServerContent(
                        input_transcription=types.Transcription(text=heard, finished=True)
                    )
                )
            )
        fit_context(state)
        prompt_tokens = session.tokens + setup.instruction_tokens
        request = Request(
            model=setup.model,
            contents=session.contents(),
            system_instruction=setup.system_instruction,
            declarations=setup.declarations,
            live=True,
        )
        reply = ask(state.script, request)
        if reply.error is not None and reply.fail_after is None:
            raise Closed.of(reply.error)
        if setup.resumption and settings.send_unresumable_updates:
            # "It might be not possible to resume session at some points. In that case
            # we send update empty new_handle and resumable=false. Example of such case
            # could be model executing function calls or just generating."
            # (LiveServerSessionResumptionUpdate.resumable)
            await send(
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
            for message in speech_messages(chunk, setup, settings):
                await send(message)
        if reply.fail_after is not None:
            raise Closed.of(reply.error or ApiError(500, "Internal error encountered."))
        if reply.finish_reason != "STOP" and not reply.text and not reply.calls:
            # The Live API has no finish reasons: a failed generation ends the
            # connection (1011 with the message; the emulator's choice).
            raise Closed(1011, close_reason(reply.finish_message or reply.finish_reason))
        # The turn enters the history before its calls go out, so a tool response
        # that comes back at once lands after it.
        calls = issue_calls(reply, session)
        self._turn_calls.extend(call.id or "" for call in calls)
        said = "".join(c.text for c in self._spoken if not c.thought)
        response_tokens = state.output_tokens(len(self._spoken), said)
        parts = [types.Part(text=said)] if said else []
        call_parts = [types.Part(function_call=call) for call in calls]
        if parts or call_parts:
            calls_tokens = state.tokens(types.Content(role="model", parts=call_parts))
            content = types.Content(role="model", parts=parts + call_parts)
            session.entries.append(Entry(content, response_tokens + calls_tokens))
        self._recorded = True
        if calls:
            await send(
                types.LiveServerMessage(tool_call=types.LiveServerToolCall(function_calls=calls))
            )
            # Finishing the turn after a call takes a chunk's time: a client can still
            # interrupt it, which cancels the calls (toolCallCancellation).
            await asyncio.sleep(settings.chunk_delay)
        await send(
            types.LiveServerMessage(
                server_content=types.LiveServerContent(
                    generation_complete=True, grounding_metadata=reply.grounding
                )
            )
        )
        thought_tokens = text_tokens(reply.thought)
        # Once turnComplete is on its way the turn is over: nothing can interrupt it.
        self._turn_open = False
        await send(
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


def speech_messages(
    chunk: Chunk, setup: LiveSetup, settings: EmulatorSettings
) -> list[types.LiveServerMessage]:
    """One streamed chunk as the server says it: text, or audio and its transcription."""
    if not setup.audio_out:
        part = types.Part(text=chunk.text, thought=True if chunk.thought else None)
        return [
            types.LiveServerMessage(
                server_content=types.LiveServerContent(
                    model_turn=types.Content(role="model", parts=[part])
                )
            )
        ]
    audio = types.Blob(mime_type=OUTPUT_MIME_TYPE, data=speech(settings.audio_seconds_per_chunk))
    messages = [
        types.LiveServerMessage(
            server_content=types.LiveServerContent(
                model_turn=types.Content(role="model", parts=[types.Part(inline_data=audio)])
            )
        )
    ]
    if setup.transcribe_output:
        messages.append(
            types.LiveServerMessage(
                server_content=types.LiveServerContent(
                    output_transcription=types.Transcription(text=chunk.text)
                )
            )
        )
    return messages


def issue_calls(reply: Reply, session: LiveSession) -> list[types.FunctionCall]:
    """The reply's calls with fresh ids, now pending."""
    calls = []
    for call in reply.calls:
        call_id = f"function-call-{secrets.randbelow(10**19):019d}"
        issued = types.FunctionCall(id=call_id, name=call.name, args=dict(call.args or {}))
        session.pending_calls[call_id] = issued
        calls.append(issued)
    return calls


def fit_context(state: LiveState) -> None:
    """Apply the sliding window, or end a session without compression that overflows."""
    setup, session, settings = state.setup, state.session, state.settings
    total = session.tokens + setup.instruction_tokens
    if setup.compression:
        if total <= setup.trigger_tokens:
            return
        # The sliding window drops the oldest turns down to the target size.
        while len(session.entries) > 1 and total > setup.target_tokens:
            total -= session.entries.pop(0).tokens
        return
    if total > settings.context_window:
        # "Without compression, audio-only sessions are limited to 15 minutes ...
        # Exceeding these limits will terminate the session (and therefore, the
        # connection)" (https://ai.google.dev/gemini-api/docs/live-api/session-management;
        # the window is 128k tokens, https://firebase.google.com/docs/ai-logic/live-api/limits-and-specs).
        # The close code and text are not documented: 1011 is this emulator's choice.
        state.store.terminate(session)
        raise Closed(
            1011,
            close_reason(
                f"The session's context window is full ({total} > "
                f"{settings.context_window} tokens); enable contextWindowCompression."
            ),
        )
