"""The files of a message as a browser can use them (``AssistantMessage.file``).

- Inline bytes are a ``data:`` URL. Raw PCM audio (``audio/pcm``, ``audio/L16``: what
  Gemini's audio output is) is wrapped in a WAV header first — 16-bit little-endian, the
  MIME type's ``rate`` and ``channels`` (24 kHz mono when it names none) — since no
  ``<audio>`` element plays raw PCM.
- A file reference (``file_data``) is sent by its URI when a browser can open it (``https``,
  ``http``, ``data``, ``blob``; not the Gemini Files API, which wants the API key). Any
  other URI (``gs://``, ``s3://``, ``file:``, the Files API) goes through the app's
  ``SurfaceOptions.resolve_file``; without one, or when it returns None or raises, the part
  is left out with one log line (the URI's scheme, never the URI).
- A part's ``display_name`` travels as ``providerMetadata.adk.filename``: the AI SDK's
  ``file`` chunk has no ``filename`` in ai 5, 6 or 7, and its strict schemas refuse one.
"""

from __future__ import annotations

import base64
import logging
import struct
from typing import Final
from urllib.parse import urlsplit

from google.genai import types

from ..options import FileResolver
from ..wire.chunks import File

__all__ = ("BROWSER_SCHEMES", "browser_url", "file_chunk", "wav")

BROWSER_SCHEMES: Final = frozenset({"https", "http", "data", "blob"})
"""URI schemes a browser fetches by itself."""
_FILES_API: Final = "generativelanguage.googleapis.com"
_PCM_TYPES: Final = ("audio/pcm", "audio/l16")
_PCM_RATE: Final = 24000  # Gemini's audio output

logger = logging.getLogger("adk_asgi")


def browser_url(uri: str) -> bool:
    """A browser can fetch ``uri`` as it is."""
    parts = urlsplit(uri)
    return parts.scheme.lower() in BROWSER_SCHEMES and parts.hostname != _FILES_API


def wav(pcm: bytes, mime_type: str) -> bytes:
    """``pcm`` (16-bit little-endian samples) in a WAV file, at the rate and channels
    ``mime_type`` names (``audio/pcm;rate=16000``)."""
    params = {}
    for item in mime_type.split(";")[1:]:
        key, _, value = item.partition("=")
        params[key.strip().lower()] = value.strip()
    rate = int(params["rate"]) if params.get("rate", "").isdigit() else _PCM_RATE
    channels = int(params["channels"]) if params.get("channels", "").isdigit() else 1
    align = 2 * channels
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF",
        36 + len(pcm),
        b"WAVE",
        b"fmt ",
        16,
        1,  # PCM
        channels,
        rate,
        rate * align,
        align,
        16,
        b"data",
        len(pcm),
    )
    return header + pcm


def file_chunk(part: types.Part, resolve: FileResolver | None) -> File | None:
    """The ``file`` chunk of an inline or referenced file part; None: none a browser could
    use (logged)."""
    blob, ref = part.inline_data, part.file_data
    name: str | None = None
    url: str | None
    if blob is not None and blob.data is not None:
        mime = blob.mime_type or "application/octet-stream"
        data = blob.data
        if mime.lower().startswith(_PCM_TYPES):
            data, mime = wav(data, mime), "audio/wav"
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        name = blob.display_name
    elif ref is not None and ref.file_uri:
        mime = ref.mime_type or "application/octet-stream"
        url = ref.file_uri if browser_url(ref.file_uri) else _resolved(ref, resolve)
        name = ref.display_name
    else:
        return None
    if url is None:
        return None
    metadata = {"adk": {"filename": name}} if name else None
    return File(url=url, media_type=mime, provider_metadata=metadata)


def _resolved(ref: types.FileData, resolve: FileResolver | None) -> str | None:
    scheme = urlsplit(ref.file_uri or "").scheme or "no scheme"
    url: str | None = None
    if resolve is not None:
        try:
            url = resolve(ref)
        except Exception:  # the app's hook must not end the answer
            logger.exception("resolve_file raised for a %s file; the part is left out", scheme)
            return None
    if url is None:
        logger.warning(
            "A file the browser cannot open (a %s URI, %s) was left out; "
            "SurfaceOptions.resolve_file can give its URL",
            scheme,
            ref.mime_type or "no media type",
        )
    elif not browser_url(url):
        logger.warning("resolve_file gave a %s URL; the part is left out", urlsplit(url).scheme)
        return None
    return url
