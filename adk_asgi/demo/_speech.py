"""How the demo live model says a reply: text chunks, or (AUDIO modality) PCM chunks with
output transcriptions, in the shapes of ``google.adk.models.gemini_llm_connection``; and how
an interrupted reply is reported."""

from __future__ import annotations

import asyncio
import math
import struct
from collections.abc import Callable

from google.adk.models import LlmResponse
from google.genai import types

from ._reply import ERROR_CODE, DemoModelError, Reply, usage_for

__all__ = ("AUDIO_CHUNK", "AUDIO_MIME_TYPE", "Speaker")

AUDIO_MIME_TYPE = "audio/pcm;rate=24000"


def _tone(frequency: int = 400, rate: int = 24_000, samples: int = 240) -> bytes:
    """10 ms of a quiet sine wave, 16-bit little-endian mono PCM.

    400 Hz fits exactly four periods into 240 samples, so chunks join without clicks.
    """
    amplitude = 0.2 * 32767
    values = (
        round(amplitude * math.sin(2 * math.pi * frequency * i / rate)) for i in range(samples)
    )
    return struct.pack(f"<{samples}h", *values)


AUDIO_CHUNK = _tone()


class Speaker:
    """Renders replies as the responses a live connection yields (through ``put``)."""

    def __init__(
        self,
        put: Callable[[LlmResponse], None],
        *,
        model_version: str,
        audio: bool,
        transcribe_output: bool,
        token_delay: float,
    ) -> None:
        self._put = put
        self._model_version = model_version
        self.audio = audio
        self._transcribe_output = transcribe_output
        self._token_delay = token_delay
        self.spoken: list[str] = []
        """The tokens of the current reply said so far (an interruption reports them)."""

    async def speak(self, reply: Reply, history: list[types.Content]) -> None:
        """Say ``reply`` (planned from ``history``), token by token; the model's part of the
        conversation is appended to ``history`` at the end."""
        self.spoken = []
        usage = usage_for(history, reply)
        if reply.error is not None:
            self._put(
                LlmResponse(
                    model_version=self._model_version,
                    error_code=ERROR_CODE,
                    error_message=reply.error,
                )
            )
            self._put(
                LlmResponse(
                    model_version=self._model_version, turn_complete=True, usage_metadata=usage
                )
            )
            return
        if reply.thought_tokens and not self.audio:
            for token in reply.thought_tokens:
                await asyncio.sleep(self._token_delay)
                self._put(self._text(token, partial=True, thought=True))
            self._put(self._text(reply.thought, partial=False, thought=True))
        for index, token in enumerate(reply.text_tokens):
            if reply.raise_after is not None and index >= reply.raise_after:
                break
            # Always suspend, so ADK (and an interruption) can run in between.
            await asyncio.sleep(self._token_delay)
            self.spoken.append(token)
            if not self.audio:
                self._put(self._text(token, partial=True))
                continue
            if self._transcribe_output:
                self._put(
                    LlmResponse(
                        model_version=self._model_version,
                        output_transcription=types.Transcription(text=token, finished=False),
                        partial=True,
                    )
                )
            blob = types.Blob(mime_type=AUDIO_MIME_TYPE, data=AUDIO_CHUNK)
            self._put(
                LlmResponse(
                    model_version=self._model_version,
                    content=types.Content(role="model", parts=[types.Part(inline_data=blob)]),
                )
            )
        if reply.raise_after is not None:
            raise DemoModelError('The demo live model raised on purpose ("please raise").')
        if reply.text:
            if not self.audio:
                self._put(self._text(reply.text, partial=False))
            elif self._transcribe_output:
                self._put(
                    LlmResponse(
                        model_version=self._model_version,
                        output_transcription=types.Transcription(text=reply.text, finished=True),
                        partial=False,
                    )
                )
        if reply.calls:
            parts = [types.Part(function_call=call) for call in reply.calls]
            self._put(
                LlmResponse(
                    model_version=self._model_version,
                    content=types.Content(role="model", parts=parts),
                )
            )
        self._put(
            LlmResponse(model_version=self._model_version, turn_complete=True, usage_metadata=usage)
        )
        said = [types.Part(text=reply.text)] if reply.text else []
        said += [types.Part(function_call=call) for call in reply.calls]
        if said:
            history.append(types.Content(role="model", parts=said))

    def _text(
        self, text: str, *, partial: bool, thought: bool = False, interrupted: bool | None = None
    ) -> LlmResponse:
        part = types.Part(text=text, thought=True) if thought else types.Part(text=text)
        return LlmResponse(
            content=types.Content(role="model", parts=[part]),
            partial=partial,
            interrupted=interrupted,
            model_version=self._model_version,
        )

    def interrupted(self, history: list[types.Content]) -> None:
        """The reply was cut off: what was said, then an interrupted ``turn_complete``."""
        said = "".join(self.spoken)
        if said and not self.audio:
            self._put(self._text(said, partial=False, interrupted=True))
        else:
            if said and self._transcribe_output:
                self._put(
                    LlmResponse(
                        model_version=self._model_version,
                        output_transcription=types.Transcription(text=said, finished=True),
                        partial=False,
                    )
                )
            self._put(LlmResponse(model_version=self._model_version, interrupted=True))
        self._put(
            LlmResponse(model_version=self._model_version, turn_complete=True, interrupted=True)
        )
        if said:
            history.append(types.Content(role="model", parts=[types.Part(text=said)]))
