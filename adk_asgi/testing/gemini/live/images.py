"""What the Live API takes as a realtime image (a camera or screen frame).

"The Live API supports the following image input: maximum file size per file (inline
data): 7 MB; supported MIME types image/png, image/jpeg, image/webp, image/heic,
image/heif", and it "expects a sequence of discrete image frames and supports video frames
input at 1 frame per second" (https://firebase.google.com/docs/ai-logic/live-api/limits-and-specs,
"Image formats", "Video formats"). The service decodes each image; the emulator checks that
the bytes are of the stated type by their signature. How the service answers a bad image is
not documented: the emulator closes with 1007 (invalid argument), as for bad audio. Frames
faster than 1 per second are taken (the documents state a rate, not a refusal).
"""

from __future__ import annotations

from typing import Final

__all__ = ("IMAGE_MIME_TYPES", "MAX_IMAGE_BYTES", "image_problem")

MAX_IMAGE_BYTES: Final = 7_000_000
IMAGE_MIME_TYPES: Final = ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif")


def _matches(mime: str, data: bytes) -> bool:
    if mime == "image/png":
        return data[:8] == b"\x89PNG\r\n\x1a\n"
    if mime == "image/jpeg":
        return data[:3] == b"\xff\xd8\xff"
    if mime == "image/webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return data[4:8] == b"ftyp"  # HEIC / HEIF: an ISO base media file


def image_problem(mime_type: str, data: bytes) -> str | None:
    """Why the Live API would refuse this realtime image, or None."""
    mime = mime_type.split(";", 1)[0].strip().lower()
    if mime not in IMAGE_MIME_TYPES:
        return f"Unsupported image input {mime_type}: send one of {', '.join(IMAGE_MIME_TYPES)}."
    if len(data) > MAX_IMAGE_BYTES:
        return f"An inline image is limited to {MAX_IMAGE_BYTES} bytes; this one has {len(data)}."
    if not _matches(mime, data):
        return f"The image data is not {mime}."
    return None
