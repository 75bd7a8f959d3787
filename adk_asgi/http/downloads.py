"""An artifact's bytes to the client, bounded in memory and in time.

Where the artifact service keeps each version in a file (ADK's ``FileArtifactService``: the
version's ``canonical_uri`` names it, under the service's root) the bytes are read from the
file a slice at a time, only those a range asks for: a download holds one slice
(``SLICE``) besides what the server and the kernel buffer for the client. The other services
return an artifact whole (``load_artifact`` gives a ``Part``): it is sent in slices of that
one copy, which the download holds until it ends.

Every download goes through an ``Outbox`` (``transport/outbox.py``) with the chat streams'
rules: the next slice is read only once the client took the last one, and a client that
takes nothing for ``StreamingOptions.send_timeout`` is dropped (its connection reset).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final, Protocol
from urllib.parse import urlsplit
from urllib.request import url2pathname

from google.adk.artifacts import BaseArtifactService, FileArtifactService
from google.adk.artifacts.base_artifact_service import ArtifactVersion

from ..transport.asgi import Send
from ..transport.outbox import Outbox

__all__ = ("SLICE", "FilePayload", "InMemoryPayload", "Payload", "file_payload", "send_payload")

SLICE: Final = 256 * 1024
"""Bytes per body message, and per read of a file."""


class Payload(Protocol):
    """An artifact version's bytes."""

    size: int

    async def read(self, start: int, stop: int) -> bytes: ...


class InMemoryPayload:
    """The bytes a service loaded whole."""

    __slots__ = ("_view", "size")

    def __init__(self, data: bytes) -> None:
        self._view = memoryview(data)
        self.size = len(data)

    async def read(self, start: int, stop: int) -> bytes:
        return bytes(self._view[start:stop])


class FilePayload:
    """A version's file, read a slice at a time off the event loop."""

    __slots__ = ("path", "size")

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = size

    async def read(self, start: int, stop: int) -> bytes:
        return await asyncio.to_thread(_read, self.path, start, stop)


def _read(path: Path, start: int, stop: int) -> bytes:
    with path.open("rb") as file:
        file.seek(start)
        return file.read(stop - start)


def file_payload(service: BaseArtifactService, found: ArtifactVersion) -> FilePayload | None:
    """The version's file, when ``service`` keeps one under its root; None otherwise (the
    service loads it)."""
    uri = found.canonical_uri or ""
    if not isinstance(service, FileArtifactService) or not uri.startswith("file://"):
        return None
    path = Path(url2pathname(urlsplit(uri).path)).resolve()
    if not path.is_relative_to(service.root_dir):
        return None
    try:
        size = path.stat().st_size
    except OSError:  # deleted meanwhile: the service answers for it
        return None
    return FilePayload(path, size)


async def send_payload(
    send: Send,
    payload: Payload,
    start: int,
    end: int,
    *,
    send_timeout: float | None,
    max_queued: int,
) -> None:
    """Send ``payload[start:end]`` as the response's body (its start was sent), a slice at a
    time, each once the client took the one before; a stalled client is reset."""
    outbox = Outbox(send, max_bytes=max_queued)
    outbox.tune()
    dropped = False

    def stall() -> None:
        nonlocal dropped
        dropped = True
        outbox.abort()

    outbox.watch(send_timeout, stall)
    try:
        while start < end and not dropped:
            stop = min(start + SLICE, end)
            body = await payload.read(start, stop)
            more = stop < end
            await outbox.send({"type": "http.response.body", "body": body, "more_body": more})
            await outbox.flushed()
            if outbox.error is not None:
                return  # the client went away
            start = stop
    except OSError:  # the server's word for a client that went away
        return
    finally:
        await outbox.close()
