"""The live input rules alone (``adk_asgi/live/media.py``, protocol A's ``image_frame`` and
``audio_chunk`` decoding): what is PCM, which images pass, the image rate at the default
limits on a controlled clock. The same rules over a real server, with the model stack on
the Gemini emulator: tests/gemini/test_gemini_live_images.py."""

from __future__ import annotations

import base64
import math
import struct
from typing import Any, Final

import pytest

from adk_asgi import Limits
from adk_asgi.live.protocol.commands import Audio, Image
from adk_asgi.live.protocol.media import ImageAdmission, InputRefused, check_pcm, file_type
from adk_asgi.live.protocol.protocol_a import ProtocolA

from support import FIXTURES

IMAGES: Final = FIXTURES / "images"
JPEG: Final = (IMAGES / "frame.jpg").read_bytes()
PNG: Final = (IMAGES / "frame.png").read_bytes()


def _tone(seconds: float, hz: float = 440, amplitude: int = 8000) -> bytes:
    count = int(seconds * 16_000)
    return struct.pack(
        f"<{count}h",
        *(round(amplitude * math.sin(2 * math.pi * hz * i / 16_000)) for i in range(count)),
    )


# -- what is PCM ------------------------------------------------------------------------

FILES: Final = [
    ("JPEG", JPEG),
    ("PNG", PNG),
    ("GIF", b"GIF89a" + bytes(10)),
    ("WebP", b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(8)),
    ("WAV", b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(8)),
    ("WebM", bytes.fromhex("1a45dfa39f4286810142f7810142f2810442f381084282847765626d")),
    ("Ogg", b"OggS\x00\x02" + bytes(20)),
    ("FLAC", b"fLaC\x00\x00\x00\x22" + bytes(8)),
    ("MP3", b"ID3\x04\x00\x00" + bytes(10)),
    ("MP4", b"\x00\x00\x00\x20ftypisom" + bytes(8)),
]


@pytest.mark.parametrize(("kind", "data"), FILES, ids=[k for k, _ in FILES])
def test_files_are_not_pcm(kind: str, data: bytes) -> None:
    assert file_type(data) == kind
    with pytest.raises(InputRefused) as caught:
        check_pcm(data if len(data) % 2 == 0 else data + b"\x00")
    assert (caught.value.status, caught.value.code) == (400, "not_pcm_audio")
    assert kind in caught.value.message


def test_pcm_passes() -> None:
    for pcm in (
        bytes(3200),
        _tone(0.1),
        _tone(0.1, hz=97, amplitude=32_000),
        b"\xff\xd8" + bytes(2),
        b"RIFF" + bytes(12),
    ):
        assert file_type(pcm) is None
        check_pcm(pcm)


def test_an_odd_byte_count_is_not_pcm() -> None:
    with pytest.raises(InputRefused) as caught:
        check_pcm(_tone(0.1) + b"\x00")
    assert caught.value.code == "not_pcm_audio" and "even number" in caught.value.message


# -- images ------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _codes(admission: ImageAdmission, images: list[Image]) -> list[str | None]:
    out: list[str | None] = []
    for image in images:
        try:
            admission.admit(image)
            out.append(None)
        except InputRefused as refused:
            out.append(refused.code)
    return out


def test_the_default_rate_is_one_frame_a_second_with_a_burst_of_two() -> None:
    clock = Clock()
    admission = ImageAdmission(Limits(), clock)
    frame = Image(JPEG, "image/jpeg")
    assert _codes(admission, [frame] * 3) == [None, None, "image_rate_exceeded"]
    clock.now += 0.5
    assert _codes(admission, [frame]) == ["image_rate_exceeded"]
    clock.now += 0.5
    assert _codes(admission, [frame, frame]) == [None, "image_rate_exceeded"]
    # a page's 1-second timer whose ticks come a little early or late is never refused
    steady = ImageAdmission(Limits(), clock)
    for step in (0.0, *(0.97, 1.03, 0.96, 1.04, 0.99, 1.01) * 20):
        clock.now += step
        assert _codes(steady, [frame]) == [None]
    clock.now += 3600  # an hour without frames saves no more than the burst
    assert _codes(admission, [frame] * 3) == [None, None, "image_rate_exceeded"]


def test_refused_frames_take_no_token() -> None:
    admission = ImageAdmission(Limits(image_burst=1), Clock())
    codes = _codes(
        admission,
        [Image(PNG, "image/jpeg"), Image(b"GIF89a", "image/gif"), Image(JPEG, "image/jpeg")],
    )
    assert codes == ["unsupported_image_type", "unsupported_image_type", None]


def test_type_and_size() -> None:
    limits = Limits(max_image_bytes=len(JPEG))
    admission = ImageAdmission(limits, Clock())
    cases = [
        (Image(JPEG, "image/jpeg"), None),
        (Image(JPEG + b"\x00", "image/jpeg"), "image_too_large"),
        (Image(PNG, "image/png"), None),
        (Image(JPEG, "image/png"), "unsupported_image_type"),
        (Image(b"\x00" * 10, "image/png"), "unsupported_image_type"),
        (Image(JPEG, "image/webp"), "unsupported_image_type"),
    ]
    for image, code in cases:
        limits_ok = ImageAdmission(limits, Clock())
        assert _codes(limits_ok, [image]) == [code], image.mime_type
    assert _codes(admission, [Image(JPEG, "image/jpeg")]) == [None]
    assert Limits().max_image_bytes == 7_000_000 and Limits().images_per_second == 1.0


@pytest.mark.parametrize("field", ["images_per_second", "max_image_bytes", "image_burst"])
def test_image_limits_must_be_positive(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Limits(**{field: 0})


# -- protocol A decoding -------------------------------------------------------------------


def _frame(kind: str, nested: bool = True, **fields: Any) -> dict[str, Any]:
    return (
        {"type": kind, "version": "1.0", "data": fields}
        if nested
        else {"type": kind, "version": "1.0", **fields}
    )


@pytest.mark.parametrize("nested", [True, False])
def test_image_frame_decodes(nested: bool) -> None:
    encoded = base64.b64encode(JPEG).decode()
    command = ProtocolA.decode(_frame("image_frame", nested, mimeType="Image/JPEG", chunk=encoded))
    assert command == Image(JPEG, "image/jpeg")


@pytest.mark.parametrize(
    "fields",
    [
        {"mimeType": "image/jpeg"},
        {"chunk": base64.b64encode(JPEG).decode()},
        {"mimeType": 1, "chunk": "AAAA"},
        {"mimeType": "image/jpeg", "chunk": "not base64!"},
    ],
)
def test_a_malformed_image_frame_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(InputRefused) as caught:
        ProtocolA.decode(_frame("image_frame", **fields))
    assert (caught.value.status, caught.value.code) == (400, "invalid_frame")


def test_audio_chunk_rates() -> None:
    pcm = base64.b64encode(bytes(640)).decode()
    assert ProtocolA.decode(_frame("audio_chunk", chunk=pcm)) == Audio(bytes(640))
    assert ProtocolA.decode(_frame("audio_chunk", chunk=pcm, sampleRate=48_000)) == Audio(
        bytes(640), "audio/pcm;rate=48000"
    )
    for rate in (0, -1, True, 2**40, "16000", 16000.5):
        with pytest.raises(InputRefused) as caught:
            ProtocolA.decode(_frame("audio_chunk", chunk=pcm, sampleRate=rate))
        assert caught.value.code == "invalid_frame"


def test_the_error_frame() -> None:
    frame = ProtocolA.input_error(InputRefused(400, "image_too_large", "Too big."))
    assert frame == (
        '{"type":"error","version":"1.0","code":"image_too_large","message":"Too big."}'
    )
