"""``translate/files.py`` case by case: what the resolver may answer, which URIs a browser
opens, the WAV header for each PCM type (tests/translate/test_files.py runs the whole path
with the real clients)."""

from __future__ import annotations

import base64
import io
import wave
from typing import Any

import pytest
from google.genai import types

from adk_asgi.options import FileResolver
from adk_asgi.translate.files import file_chunk


def ref(uri: str) -> types.Part:
    return types.Part(file_data=types.FileData(file_uri=uri, mime_type="image/png"))


def boom(_: types.FileData) -> str:
    raise RuntimeError("no signer")


@pytest.mark.parametrize(
    ("uri", "resolve", "url"),
    [
        ("https://x.test/a.png", None, "https://x.test/a.png"),
        ("data:image/png;base64,AA==", None, "data:image/png;base64,AA=="),
        ("gs://b/a.png", None, None),
        ("s3://b/a.png", None, None),
        ("file:///etc/passwd", None, None),
        ("https://generativelanguage.googleapis.com/v1beta/files/abc", None, None),
        ("gs://b/a.png", lambda f: "https://signed.test/a.png", "https://signed.test/a.png"),
        ("gs://b/a.png", lambda f: None, None),
        ("gs://b/a.png", lambda f: "gs://b/a.png", None),  # still not a browser's
        ("gs://b/a.png", boom, None),
    ],
)
def test_which_urls_are_sent(uri: str, resolve: FileResolver | None, url: str | None) -> None:
    chunk = file_chunk(ref(uri), resolve)
    assert (chunk.url if chunk is not None else None) == url


@pytest.mark.parametrize(
    ("mime", "rate", "channels"),
    [
        ("audio/pcm", 24000, 1),
        ("audio/pcm;rate=16000", 16000, 1),
        ("audio/L16;rate=8000;channels=2", 8000, 2),
    ],
)
def test_pcm_is_wav(mime: str, rate: int, channels: int) -> None:
    pcm = bytes(range(200)) * 4
    chunk = file_chunk(types.Part(inline_data=types.Blob(data=pcm, mime_type=mime)), None)
    assert chunk is not None and chunk.media_type == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(chunk.url.split(",", 1)[1]))) as read:
        got: Any = (read.getframerate(), read.getnchannels(), read.getsampwidth())
        assert got == (rate, channels, 2)
        assert read.readframes(read.getnframes()) == pcm


def test_other_audio_is_left_as_it_is() -> None:
    part = types.Part(inline_data=types.Blob(data=b"ID3", mime_type="audio/mpeg"))
    chunk = file_chunk(part, None)
    assert chunk is not None and chunk.url == "data:audio/mpeg;base64,SUQz"
