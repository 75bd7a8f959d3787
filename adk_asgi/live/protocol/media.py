"""What a live connection sends the model besides messages — microphone audio and camera or
screen frames — and the rules it must meet first (protocol A only; protocol B has no frames
for realtime input).

- Audio is raw 16-bit PCM (the Live API takes nothing else as realtime audio). PCM has no
  header, so what starts with a file signature (a JPEG, a PNG, a WebM or Ogg stream from
  ``MediaRecorder``, a WAV or MP3 file, ...) or has an odd byte count is not PCM: the model
  would hear it as noise.
- Images are ``image/jpeg`` or ``image/png`` frames, checked to be what they say they are,
  within ``Limits.max_image_bytes`` (the Live API's inline image limit, 7 MB) and
  ``Limits.images_per_second`` (it takes video as image frames at 1 frame per second; see
  https://firebase.google.com/docs/ai-logic/live-api/limits-and-specs, "Image formats" and
  "Video formats").

A refusal is an ``InputRefused`` (a ``RequestError`` with a stable code); protocol A
answers it with an ``error`` control frame and the connection goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from ...options import Limits
from ...wire.errors import RequestError
from .commands import Image

__all__ = (
    "IMAGE_TYPES",
    "ImageAdmission",
    "InputRefused",
    "check_pcm",
    "file_type",
    "refused",
)

IMAGE_TYPES: Final = ("image/jpeg", "image/png")
"""The mime types of ``image_frame``: what browsers encode a canvas to, and the Live API takes."""


class InputRefused(RequestError):
    """A realtime input frame (audio or image) that does not reach the model."""


def refused(code: str, message: str) -> InputRefused:
    return InputRefused(400, code, message)


# -- what the bytes are -----------------------------------------------------------------


def _riff(kind: bytes) -> Callable[[bytes], bool]:
    return lambda data: data[:4] == b"RIFF" and data[8:12] == kind


_SIGNATURES: Final[tuple[tuple[str, Callable[[bytes], bool]], ...]] = (
    # Prefixes of 3 to 8 bytes, and structure where a prefix alone is short: a PCM frame
    # starts with them by chance about once in 2**24 frames or less.
    ("JPEG", lambda d: d[:3] == b"\xff\xd8\xff"),
    ("PNG", lambda d: d[:8] == b"\x89PNG\r\n\x1a\n"),
    ("GIF", lambda d: d[:6] in (b"GIF87a", b"GIF89a")),
    ("WebP", _riff(b"WEBP")),
    ("WAV", _riff(b"WAVE")),
    ("WebM", lambda d: d[:4] == b"\x1a\x45\xdf\xa3"),  # EBML: WebM and Matroska
    ("Ogg", lambda d: d[:5] == b"OggS\x00"),
    ("FLAC", lambda d: d[:4] == b"fLaC"),
    ("MP3", lambda d: d[:3] == b"ID3" and d[3:4] in (b"\x02", b"\x03", b"\x04")),
    ("MP4", lambda d: d[4:8] == b"ftyp"),  # also M4A, HEIC and AVIF
)
_TYPE_NAMES: Final = {"image/jpeg": "JPEG", "image/png": "PNG"}


def file_type(data: bytes) -> str | None:
    """The name of the file format ``data`` starts with (``"JPEG"``, ``"WebM"``, ...)."""
    for name, matches in _SIGNATURES:
        if matches(data):
            return name
    return None


def check_pcm(data: bytes) -> None:
    """Refuse audio that is not raw 16-bit PCM."""
    kind = file_type(data)
    if kind is not None:
        raise refused(
            "not_pcm_audio",
            f"Audio must be raw 16-bit PCM; this is {kind} data. Send camera and "
            "screen frames as `image_frame`.",
        )
    if len(data) % 2:
        raise refused("not_pcm_audio", "Audio must be raw 16-bit PCM: an even number of bytes.")


# -- images -------------------------------------------------------------------------------


class ImageAdmission:
    """One connection's image frames: their type and size, and a token bucket for their
    rate (``Limits.images_per_second``, bursts up to ``Limits.image_burst``). Refused frames
    take no token."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._clock = clock
        self._tokens = float(limits.image_burst)
        self._refilled = clock()

    def admit(self, image: Image) -> None:
        check_image(image, self._limits)
        limits = self._limits
        now = self._clock()
        self._tokens = min(
            float(limits.image_burst),
            self._tokens + (now - self._refilled) * limits.images_per_second,
        )
        self._refilled = now
        if self._tokens < 1:
            raise refused(
                "image_rate_exceeded",
                f"Image frames are limited to {limits.images_per_second:g} per "
                "second; this one was dropped.",
            )
        self._tokens -= 1


def check_image(image: Image, limits: Limits) -> None:
    """Refuse a frame that is not a JPEG or PNG of at most ``limits.max_image_bytes``."""
    expected = _TYPE_NAMES.get(image.mime_type)
    if expected is None:
        raise refused(
            "unsupported_image_type",
            f"Image frames are {' or '.join(IMAGE_TYPES)}, not {image.mime_type!r}.",
        )
    if len(image.data) > limits.max_image_bytes:
        raise refused(
            "image_too_large",
            f"An image frame is limited to {limits.max_image_bytes} bytes; this one "
            f"has {len(image.data)}.",
        )
    actual = file_type(image.data)
    if actual != expected:
        raise refused(
            "unsupported_image_type",
            f"The frame says {image.mime_type} but holds "
            f"{actual + ' data' if actual else 'no image'}.",
        )
