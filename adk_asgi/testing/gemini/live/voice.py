"""Voice activity: when a user's spoken turn starts and ends.

With automatic activity detection (the Live API's default) the emulator detects speech
itself: a chunk whose peak sample exceeds ``voice_threshold`` is speech, and the turn
ends after ``silence_gap`` seconds without speech, counted both in received silent
audio and in wall-clock time since the last speech (so a client that stops sending
audio also ends its turn). ``audioStreamEnd`` ends it at once. With
``automaticActivityDetection.disabled`` the client marks turns with ``activityStart``
and ``activityEnd`` instead (https://ai.google.dev/gemini-api/docs/live-api/capabilities,
"Voice Activity Detection").
"""

from __future__ import annotations

import array
import sys

__all__ = ("VoiceActivity", "is_voiced")


def is_voiced(pcm: bytes, threshold: int) -> bool:
    """Whether 16-bit little-endian PCM ``pcm`` has a sample louder than ``threshold``."""
    samples = array.array("h")
    samples.frombytes(pcm[: len(pcm) - len(pcm) % 2])
    if sys.byteorder == "big":  # pragma: no cover - the wire format is little-endian
        samples.byteswap()
    return any(s > threshold or s < -threshold for s in samples)


class VoiceActivity:
    """Tracks one user's speech: whether a turn is open and how much audio it holds."""

    def __init__(self, silence_gap: float) -> None:
        self.silence_gap = silence_gap
        self.speaking = False
        """A turn is open (speech heard, or ``activityStart`` received)."""
        self.seconds = 0.0
        """Seconds of audio received in the open turn."""
        self.last_voice = 0.0
        """Monotonic time of the last speech chunk."""
        self._silent_run = 0.0

    def start(self, now: float) -> None:
        self.speaking = True
        self.seconds = 0.0
        self.last_voice = now
        self._silent_run = 0.0

    def audio(self, seconds: float, voiced: bool, now: float) -> bool:
        """Count a chunk of an open turn; True when its silence ends the turn."""
        self.seconds += seconds
        if voiced:
            self.last_voice = now
            self._silent_run = 0.0
            return False
        self._silent_run += seconds
        return self._silent_run >= self.silence_gap

    def end(self) -> float:
        """Close the turn; returns the seconds of audio it held."""
        seconds, self.seconds = self.seconds, 0.0
        self.speaking = False
        self._silent_run = 0.0
        return seconds
