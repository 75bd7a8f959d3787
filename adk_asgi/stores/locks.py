"""ChatLocks: the turn locks of one process, one per chat (``MemoryStreamStore.lock``; the
Redis store holds them in Redis for several workers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ("ChatLocks",)


class ChatLocks:
    """One lock per (user, session): ADK interleaves the events of concurrent runs on one
    session, so turns of one chat run one after another. Entries are dropped when no
    request holds or waits for them."""

    __slots__ = ("_locks",)

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, user_id: str, session_id: str) -> AsyncIterator[None]:
        key = (user_id, session_id)
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock_, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock_, users - 1)

    def __len__(self) -> int:
        return len(self._locks)
