"""MemoryStreamStore: one process's owners, turn locks and resumable streams, in memory."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from .base import StreamRecorder, StreamStore, recording_cut
from .locks import ChatLocks

__all__ = ("MemoryStreamStore",)


@dataclass(slots=True)
class _MemoryStream:
    chat_id: str
    stream_id: str
    blobs: list[bytes] = field(default_factory=list)
    size: int = 0
    done: bool = False
    expires: float | None = None
    on_stop: Callable[[], None] | None = None
    waiters: set[asyncio.Event] = field(default_factory=set)

    def wake(self) -> None:
        for waiter in self.waiters:
            waiter.set()


class _MemoryRecorder(StreamRecorder):
    __slots__ = ("_max_bytes", "_store", "_stream", "stream_id")

    def __init__(self, store: MemoryStreamStore, stream: _MemoryStream, max_bytes: int) -> None:
        self._store = store
        self._stream = stream
        self._max_bytes = max_bytes
        self.stream_id = stream.stream_id

    def append(self, blob: bytes) -> None:
        stream = self._stream
        if stream.done:
            return
        stream.size += len(blob)
        if stream.size > self._max_bytes:
            # Too big to keep for a replay: stop recording. A resume then gets the
            # start of the stream (the blobs must stay a prefix) and an error saying so.
            stream.blobs.append(recording_cut(stream.chat_id, self._max_bytes))
            stream.done = True
        else:
            stream.blobs.append(blob)
        if stream.waiters:
            stream.wake()

    async def end(self, *, resumable: bool) -> None:
        self._store._ended(self._stream, resumable)

    async def has_followers(self) -> bool:
        return bool(self._stream.waiters)

    def on_stop(self, callback: Callable[[], None]) -> None:
        self._stream.on_stop = callback


class MemoryStreamStore(StreamStore):
    """One process's store: owners (most recent ``max_chats``), locks and streams in memory.

    ``max_stream_bytes`` caps what one stream keeps for a replay; ``retention`` is how long
    an undelivered stream stays resumable after it ended, and ``max_held_bytes`` what all
    such ended streams may hold together (the oldest go first).
    """

    def __init__(
        self,
        *,
        max_chats: int = 100_000,
        max_stream_bytes: int = 8 * 1024 * 1024,
        retention: float = 300.0,
        max_held_bytes: int = 256 * 1024 * 1024,
    ) -> None:
        self._owners: OrderedDict[str, str] = OrderedDict()
        self._max_chats = max_chats
        self._max_stream_bytes = max_stream_bytes
        self._retention = retention
        self._max_held_bytes = max_held_bytes
        self._streams: dict[str, _MemoryStream] = {}
        # Ended, resumable streams, oldest first, and their bytes.
        self._held: OrderedDict[str, _MemoryStream] = OrderedDict()
        self._held_bytes = 0
        self._locks = ChatLocks()
        self._swept = time.monotonic()
        self._tickets: dict[str, tuple[bytes, float]] = {}
        self._deleted: OrderedDict[str, int] = OrderedDict()

    async def claim(self, chat_id: str, user_id: str) -> bool:
        owner = self._owners.get(chat_id)
        if owner is None:
            self._owners[chat_id] = user_id
            if len(self._owners) > self._max_chats:
                self._owners.popitem(last=False)
            return True
        self._owners.move_to_end(chat_id)
        return owner == user_id

    async def owner(self, chat_id: str) -> str | None:
        return self._owners.get(chat_id)

    def lock(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        return self._locks.hold("", chat_id)

    @property
    def held_locks(self) -> int:
        return len(self._locks)

    async def record(self, chat_id: str) -> StreamRecorder:
        self._sweep()
        previous = self._streams.get(chat_id)
        if previous is not None and not previous.done:
            previous.done = True  # superseded: its followers end
            previous.wake()
        self._unhold(chat_id)
        stream = _MemoryStream(chat_id, uuid.uuid4().hex)
        self._streams[chat_id] = stream
        return _MemoryRecorder(self, stream, self._max_stream_bytes)

    def _ended(self, stream: _MemoryStream, resumable: bool) -> None:
        stream.done = True
        stream.on_stop = None
        stream.wake()
        if self._streams.get(stream.chat_id) is not stream:
            return
        if not resumable:
            del self._streams[stream.chat_id]  # followers keep reading what they hold
            return
        stream.expires = time.monotonic() + self._retention
        self._held[stream.chat_id] = stream
        self._held_bytes += stream.size
        while self._held_bytes > self._max_held_bytes:
            chat_id, oldest = self._held.popitem(last=False)
            self._held_bytes -= oldest.size
            del self._streams[chat_id]

    def _unhold(self, chat_id: str) -> None:
        held = self._held.pop(chat_id, None)
        if held is not None:
            self._held_bytes -= held.size

    def _sweep(self) -> None:
        """Drop expired streams of chats nobody asks about any more (at most once a minute)."""
        now = time.monotonic()
        if now - self._swept < 60:
            return
        self._swept = now
        for chat_id in [
            c for c, s in self._streams.items() if s.expires is not None and now > s.expires
        ]:
            del self._streams[chat_id]
            self._unhold(chat_id)

    @property
    def streams(self) -> int:
        """Streams held (running, or resumable for a while)."""
        return len(self._streams)

    def _active(self, chat_id: str) -> _MemoryStream | None:
        stream = self._streams.get(chat_id)
        if stream is None:
            return None
        if stream.expires is not None and time.monotonic() > stream.expires:
            del self._streams[chat_id]
            self._unhold(chat_id)
            return None
        return stream

    async def follow(self, chat_id: str) -> AsyncGenerator[bytes, None] | None:
        stream = self._active(chat_id)
        if stream is None:
            return None
        return self._follow(stream)

    async def _follow(self, stream: _MemoryStream) -> AsyncGenerator[bytes, None]:
        waiter = asyncio.Event()
        stream.waiters.add(waiter)
        index = 0
        try:
            while True:
                blobs = stream.blobs
                while index < len(blobs):
                    yield blobs[index]
                    index += 1
                if stream.done:
                    return
                waiter.clear()
                await waiter.wait()
        finally:
            stream.waiters.discard(waiter)

    async def forget(self, chat_id: str) -> None:
        self._deleted[chat_id] = self._deleted.pop(chat_id, 0) + 1
        if len(self._deleted) > self._max_chats:
            self._deleted.popitem(last=False)
        stream = self._streams.pop(chat_id, None)
        self._unhold(chat_id)
        if stream is not None and not stream.done:
            stream.done = True  # its followers end
            stream.wake()

    async def deletions(self, chat_id: str) -> int:
        return self._deleted.get(chat_id, 0)

    async def put_ticket(self, key: str, value: bytes, ttl: float) -> None:
        now = time.monotonic()
        if len(self._tickets) >= 10_000:
            self._tickets = {k: v for k, v in self._tickets.items() if v[1] > now}
        self._tickets[key] = (value, now + ttl)

    async def take_ticket(self, key: str) -> bytes | None:
        ticket = self._tickets.pop(key, None)
        return ticket[0] if ticket is not None and ticket[1] > time.monotonic() else None

    async def stop(self, chat_id: str) -> bool:
        stream = self._active(chat_id)
        if stream is None or stream.done:
            return False
        callback, stream.on_stop = stream.on_stop, None
        if callback is not None:
            callback()
        return True
