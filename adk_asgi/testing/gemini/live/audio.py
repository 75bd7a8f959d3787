"""The emulator's voice: output audio is a quiet tone, 16-bit PCM at 24 kHz.

"Audio output always uses a sample rate of 24kHz" and is raw little-endian 16-bit PCM
(https://ai.google.dev/gemini-api/docs/live-api/capabilities, "Audio formats").
"""

from __future__ import annotations

import math
import struct
from functools import cache

__all__ = ("OUTPUT_MIME_TYPE", "speech")

OUTPUT_MIME_TYPE = "audio/pcm;rate=24000"
_RATE = 24_000
_PERIOD = 60  # samples of one 400 Hz period at 24 kHz: chunks join without clicks


@cache
def speech(seconds: float) -> bytes:
    """``seconds`` of the tone (rounded to whole periods, at least one)."""
    periods = max(1, round(seconds * _RATE / _PERIOD))
    amplitude = 0.2 * 32767
    one = struct.pack(
        f"<{_PERIOD}h",
        *(round(amplitude * math.sin(2 * math.pi * i / _PERIOD)) for i in range(_PERIOD)),
    )
    return one * periods
