"""How the emulator counts tokens (usage metadata and the Live context window).

The counts follow the rules of thumb of https://ai.google.dev/gemini-api/docs/tokens:
"a token is equivalent to about 4 characters" and "Gemini represents each second of
audio as 32 tokens" (``EmulatorSettings.audio_tokens_per_second``); an image or video
frame is 258 tokens (the same page: images up to 384 px in both dimensions). So:

* text parts (and thoughts): ``ceil(characters / 4)``;
* function calls and responses: their JSON, counted as text;
* audio (``inlineData`` with an ``audio/pcm`` type, or realtime audio): 32 tokens per
  second of 16-bit PCM at the MIME type's rate (16 kHz unless ``rate=`` says otherwise);
* any other inline or file data: 258 tokens.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

from google.genai import types

__all__ = ("FRAME_TOKENS", "audio_seconds", "content_tokens", "pcm_rate", "text_tokens")

FRAME_TOKENS = 258
_DEFAULT_INPUT_RATE = 16_000


def text_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def pcm_rate(mime_type: str | None) -> int | None:
    """The sample rate of an ``audio/pcm`` MIME type; None if it is not ``audio/pcm``."""
    if not mime_type:
        return None
    kind, *params = (piece.strip() for piece in mime_type.split(";"))
    if kind.lower() != "audio/pcm":
        return None
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "rate":
            try:
                rate = int(value.strip())
            except ValueError:
                return 0
            return rate if rate > 0 else 0
    return _DEFAULT_INPUT_RATE


def audio_seconds(data: bytes, mime_type: str | None) -> float:
    """Duration of mono 16-bit PCM ``data``."""
    rate = pcm_rate(mime_type) or _DEFAULT_INPUT_RATE
    return len(data) / 2 / rate


def part_tokens(part: types.Part, audio_tokens_per_second: int) -> int:
    if part.text:
        return text_tokens(part.text)
    if part.function_call is not None:
        call = part.function_call
        return text_tokens(json.dumps({"name": call.name, "args": call.args or {}}))
    if part.function_response is not None:
        response = part.function_response
        return text_tokens(json.dumps({"name": response.name, "response": response.response}))
    if part.inline_data is not None:
        blob = part.inline_data
        if pcm_rate(blob.mime_type) is not None:
            seconds = audio_seconds(blob.data or b"", blob.mime_type)
            return math.ceil(seconds * audio_tokens_per_second)
        return FRAME_TOKENS
    if part.file_data is not None:
        return FRAME_TOKENS
    return 0


def content_tokens(contents: Iterable[types.Content], audio_tokens_per_second: int = 32) -> int:
    return sum(
        part_tokens(part, audio_tokens_per_second)
        for content in contents
        for part in content.parts or ()
    )
