"""StreamStore: the per-chat state that every worker must agree on (the interface).

- **owners**: a chat id belongs to the user who created it; other users get 404;
- **turn locks**: one turn of a chat at a time (ADK interleaves concurrent runs on a
  session), across workers when the store is shared;
- **streams**: the frames of each chat's active stream, recorded as they are sent,
  so ``GET {api}/{chatId}/stream`` (and protocol B's ``resume``) can replay it from
  the start and follow it to its end — on any worker that shares the store;
- **tickets**: small single-use values with an expiry (an OAuth2 sign-in's ``state`` ->
  the call it answers, ``http/oauth.py``), taken once by whichever worker gets the callback.

``MemoryStreamStore`` (the default) serves one process; ``RedisStreamStore``
(``stores/redis.py``) serves several workers or replicas.

A recorded stream is a list of *blobs*: the SSE bytes of one write
(``data: {json}\\n\\n`` frames, ``data: [DONE]\\n\\n`` last). When the stream ends with a
client attached that received it all, it is dropped at once; when it ends while no
client was attached (a reload in progress, a dropped connection), it stays
resumable for ``retention`` seconds.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Final

from ..wire.chunks import DONE_FRAME, Error, sse_frame
from ..wire.errors import INTERRUPTED_ERROR, RECORDING_CUT_ERROR, STREAM_LOST_ERROR

__all__ = (
    "INTERRUPTED_BLOB",
    "RECORDING_CUT_BLOB",
    "STREAM_LOST_BLOB",
    "AtCapacity",
    "StoreUnavailable",
    "StreamRecorder",
    "StreamStore",
    "recording_cut",
    "split_frames",
)

logger = logging.getLogger("adk_asgi")

INTERRUPTED_BLOB: Final = sse_frame(Error(error_text=INTERRUPTED_ERROR)) + DONE_FRAME
"""How a stream ends for its followers when its producer is gone (a worker killed
mid-turn): an ``error`` chunk and ``[DONE]``."""
STREAM_LOST_BLOB: Final = sse_frame(Error(error_text=STREAM_LOST_ERROR)) + DONE_FRAME
"""How a stream ends for a follower that lost the store mid-stream (Redis down): the
producer may well go on, unrecorded, and its answer reach the session."""
RECORDING_CUT_BLOB: Final = sse_frame(Error(error_text=RECORDING_CUT_ERROR)) + DONE_FRAME
"""How a recording cut at the store's ``max_stream_bytes`` ends for a resume and for its
followers: the turn goes on for its own client, and the session gets the whole answer."""


def recording_cut(chat_id: str, max_bytes: int) -> bytes:
    """A recording reached ``max_bytes``: one log line, and the blob that ends it."""
    logger.warning(
        "Stopped recording chat %r's stream at %d bytes (max_stream_bytes): a resume ends "
        "there with recording_cut; the turn goes on",
        chat_id,
        max_bytes,
    )
    return RECORDING_CUT_BLOB


class StoreUnavailable(Exception):
    """The stream store cannot be reached (e.g. Redis is down). Requests get
    ``503 store_unavailable`` with ``Retry-After``, WebSockets close 1013; the store recovers
    by itself when its backend is back."""


class AtCapacity(StoreUnavailable):
    """The store is healthy, but every connection this worker may open to it stayed busy
    for the bounded wait: the worker is at capacity. Answered ``503 at_capacity`` with
    ``Retry-After`` and counted in ``adk_asgi.at_capacity``, never as an outage."""

    def __init__(self, resource: str) -> None:
        super().__init__(f"at capacity: {resource}")
        self.resource = resource


def split_frames(blob: bytes) -> list[bytes]:
    """The chunk JSON of each ``data: ...`` frame of a blob (``[DONE]`` and comments dropped)."""
    out: list[bytes] = []
    for frame in blob.split(b"\n\n"):
        if frame.startswith(b"data: ") and frame != b"data: [DONE]":
            out.append(frame[6:])
    return out


class StreamRecorder(ABC):
    """Records one stream. ``append`` is on the hot path: it must not block. No method
    raises when the store's backend fails mid-stream: the turn goes on unrecorded."""

    stream_id: str

    @abstractmethod
    def append(self, blob: bytes) -> None:
        """Record the bytes of one write (in order)."""

    @abstractmethod
    async def end(self, *, resumable: bool) -> None:
        """The stream is complete. ``resumable``: no client received its end (it ran on
        detached after a disconnect), so it stays resumable for a while; otherwise there
        is nothing left to resume and it is dropped."""

    @abstractmethod
    async def has_followers(self) -> bool:
        """Somebody (on any worker) is following this stream right now."""

    @abstractmethod
    def on_stop(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (once) when ``StreamStore.stop`` is asked for this stream,
        from any worker."""


class StreamStore(ABC):
    """Per-chat coordination shared by the workers serving one app.

    The coroutines below raise ``StoreUnavailable`` (and nothing else) when the store's
    backend cannot be reached."""

    timeout: float | None = None
    """Seconds one call may wait for the store's backend (None: it has none to wait for);
    the readiness check (``/readyz``) waits as long."""

    @abstractmethod
    async def claim(self, chat_id: str, user_id: str) -> bool:
        """Make ``user_id`` the owner of ``chat_id`` unless somebody else is.
        True when ``user_id`` owns the chat (now or before)."""

    @abstractmethod
    async def owner(self, chat_id: str) -> str | None:
        """The user who owns ``chat_id``, if it is known."""

    @abstractmethod
    def lock(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        """Hold the turn lock of ``chat_id`` (turns of one chat run one at a time).
        Taking it may raise ``StoreUnavailable``; releasing it never raises."""

    @abstractmethod
    async def record(self, chat_id: str) -> StreamRecorder:
        """Start recording a new stream; it becomes the chat's active stream."""

    @abstractmethod
    async def follow(self, chat_id: str) -> AsyncGenerator[bytes, None] | None:
        """The chat's active (or recently undelivered) stream from its first blob,
        following it until it ends; None when there is nothing to resume."""

    @abstractmethod
    async def stop(self, chat_id: str) -> bool:
        """Ask the producer of the chat's running stream (on any worker) to stop.
        True when there was a running stream."""

    async def forget(self, chat_id: str) -> None:  # noqa: B027 - a store may keep nothing
        """Drop what the store keeps of ``chat_id``'s streams (the chat was deleted; its
        turn lock is held by the caller) and count the deletion (``deletions``). The
        chat's owner stays, so its id is never handed to another user."""

    async def deletions(self, chat_id: str) -> int:
        """How many times ``chat_id`` was deleted (``forget``): a turn that reads another
        count after waiting for the turn lock than before waits for a deleted chat (its
        message is refused, ``404 chat_not_found``). 0 for a store that counts nothing."""
        return 0

    async def put_ticket(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds, for one ``take_ticket``."""
        raise NotImplementedError(f"{type(self).__name__} keeps no tickets (OAuth2 sign-ins)")

    async def take_ticket(self, key: str) -> bytes | None:
        """The value kept under ``key`` (it is gone after this), or None when there is none
        or it expired."""
        raise NotImplementedError(f"{type(self).__name__} keeps no tickets (OAuth2 sign-ins)")

    async def ping(self) -> None:  # noqa: B027 - nothing to reach by default
        """Raise when the store cannot serve requests now (``GET /readyz`` asks)."""

    async def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections (called at the app's shutdown)."""
