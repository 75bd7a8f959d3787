"""RedisStreamStore: the stream store shared by several workers or replicas.

Needs the ``redis`` package (``pip install 'adk-asgi[redis]'``). Keys, under a
prefix (default ``adk-asgi``):

=========================  ===================================================
``{p}:owner:{chat}``       the chat's owner (``SET NX``), kept ``owner_ttl``
``{p}:lock:{chat}``        the turn lock: a random token, ``PX lock_ttl``,
                           renewed while held, released only by its holder
``{p}:active:{chat}``      the id of the chat's current stream
``{p}:stream:{id}``        a Redis stream: one entry per flushed batch of
                           blobs (field ``b``), then an ``end`` entry
``{p}:alive:{id}``         the producer's heartbeat: a stream whose producer
                           died without its ``end`` is over for its followers
``{p}:followers:{id}``     followers on any worker (sorted set, by expiry)
``{p}:stop:{id}``          a stop request (``DELETE {api}/{chatId}/stream``)
=========================  ===================================================

``append`` never touches the network: blobs are batched by a per-stream flush
task (one ``XADD`` per batch), which also beats the heartbeat and looks for
stop requests every ``heartbeat`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

try:
    from redis.asyncio import Redis
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("RedisStreamStore needs the redis package: "
                      "pip install 'adk-asgi[redis]'") from exc

from .base import StreamRecorder, StreamStore

__all__ = ("RedisStreamStore",)

# Delete/renew a key only if it still holds our token (the lock may have expired
# and been taken by another worker meanwhile).
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisStreamStore(StreamStore):
    """Owners, turn locks and resumable streams in Redis, for any number of workers.

    >>> AdkApp(agent, session_db="sqlite:///chats.db",
    ...        stream_store=RedisStreamStore("redis://localhost:6379/0"))
    """

    def __init__(self, url: str = "redis://localhost:6379/0", *, prefix: str = "adk-asgi",
                 owner_ttl: float = 30 * 24 * 3600, lock_ttl: float = 30.0,
                 retention: float = 300.0, max_stream_bytes: int = 8 * 1024 * 1024,
                 heartbeat: float = 0.5, client: Redis | None = None) -> None:
        self.redis: Redis = client or Redis.from_url(url)
        self.prefix = prefix
        self.owner_ttl = int(owner_ttl)
        self.lock_ttl_ms = int(lock_ttl * 1000)
        self.retention = int(retention)
        self.max_stream_bytes = max_stream_bytes
        self.heartbeat = heartbeat
        self._release = self.redis.register_script(_RELEASE)
        self._renew = self.redis.register_script(_RENEW)

    def key(self, kind: str, name: str) -> str:
        return f"{self.prefix}:{kind}:{name}"

    # -- owners -------------------------------------------------------------------

    async def claim(self, chat_id: str, user_id: str) -> bool:
        key = self.key("owner", chat_id)
        if await self.redis.set(key, user_id, nx=True, ex=self.owner_ttl):
            return True
        owner = await self.redis.get(key)
        if owner is None:  # expired between the two calls
            return await self.claim(chat_id, user_id)
        if _text(owner) != user_id:
            return False
        await self.redis.expire(key, self.owner_ttl)
        return True

    async def owner(self, chat_id: str) -> str | None:
        owner = await self.redis.get(self.key("owner", chat_id))
        return _text(owner) if owner is not None else None

    # -- turn locks ------------------------------------------------------------------

    def lock(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        return self._lock(chat_id)

    @asynccontextmanager
    async def _lock(self, chat_id: str) -> AsyncIterator[None]:
        key = self.key("lock", chat_id)
        token = uuid.uuid4().hex
        delay = 0.01
        while not await self.redis.set(key, token, nx=True, px=self.lock_ttl_ms):
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.1)
        renew = asyncio.create_task(self._keep(key, token), name="adk-asgi-redis-lock")
        try:
            yield
        finally:
            renew.cancel()
            await asyncio.gather(renew, return_exceptions=True)
            await self._release(keys=[key], args=[token])

    async def _keep(self, key: str, token: str) -> None:
        while True:
            await asyncio.sleep(self.lock_ttl_ms / 3000)
            await self._renew(keys=[key], args=[token, self.lock_ttl_ms])

    # -- streams ----------------------------------------------------------------------

    async def record(self, chat_id: str) -> StreamRecorder:
        stream_id = uuid.uuid4().hex
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(self.key("alive", stream_id), 1, px=self._alive_ms)
            pipe.set(self.key("active", chat_id), stream_id, ex=24 * 3600)
            await pipe.execute()
        return _RedisRecorder(self, chat_id, stream_id)

    @property
    def _alive_ms(self) -> int:
        return int(max(self.heartbeat * 6, 3.0) * 1000)

    async def follow(self, chat_id: str) -> AsyncGenerator[bytes, None] | None:
        stream_id = await self.redis.get(self.key("active", chat_id))
        if stream_id is None:
            return None
        sid = _text(stream_id)
        alive, stored = await asyncio.gather(self.redis.exists(self.key("alive", sid)),
                                             self.redis.exists(self.key("stream", sid)))
        if not alive and not stored:
            return None
        return self._follow(sid)

    async def _follow(self, sid: str) -> AsyncGenerator[bytes, None]:
        redis = self.redis
        stream_key = self.key("stream", sid)
        followers = self.key("followers", sid)
        me = uuid.uuid4().hex
        ttl = max(self.heartbeat * 4, 2.0)
        await redis.zadd(followers, {me: time.time() + ttl})
        await redis.expire(followers, int(ttl) + 60)
        refreshed = time.monotonic()
        last = "0-0"
        try:
            while True:
                if time.monotonic() - refreshed > ttl / 2:
                    await redis.zadd(followers, {me: time.time() + ttl})
                    refreshed = time.monotonic()
                answer: Any = await redis.xread({stream_key: last}, count=256,
                                                block=int(self.heartbeat * 1000))
                if not answer:
                    if not await redis.exists(self.key("alive", sid)):
                        return  # the producer is gone without an end: so is the stream
                    continue
                for entry_id, fields in answer[0][1]:
                    last = entry_id
                    if b"end" in fields:
                        return
                    yield fields[b"b"]
        finally:
            with contextlib.suppress(Exception):
                await redis.zrem(followers, me)

    async def stop(self, chat_id: str) -> bool:
        stream_id = await self.redis.get(self.key("active", chat_id))
        if stream_id is None:
            return False
        sid = _text(stream_id)
        if not await self.redis.exists(self.key("alive", sid)):
            return False
        await self.redis.set(self.key("stop", sid), 1, ex=60)
        return True

    async def close(self) -> None:
        await self.redis.aclose()


class _RedisRecorder(StreamRecorder):
    def __init__(self, store: RedisStreamStore, chat_id: str, stream_id: str) -> None:
        self._store = store
        self._chat_id = chat_id
        self.stream_id = stream_id
        self._pending: list[bytes] = []
        self._size = 0
        self._full = False
        self._closing = False
        self._on_stop: Callable[[], None] | None = None
        self._wake = asyncio.Event()
        self._flusher = asyncio.create_task(self._flush_loop(), name="adk-asgi-redis-flush")

    def append(self, blob: bytes) -> None:
        if self._full or self._closing:
            return
        self._size += len(blob)
        if self._size > self._store.max_stream_bytes:
            self._full = True  # keep a prefix; a replay ends there (see MemoryStreamStore)
            return
        self._pending.append(blob)
        self._wake.set()

    def on_stop(self, callback: Callable[[], None]) -> None:
        self._on_stop = callback

    async def has_followers(self) -> bool:
        store = self._store
        count = await store.redis.zcount(store.key("followers", self.stream_id),
                                         time.time(), "+inf")
        return bool(count)

    async def _flush_loop(self) -> None:
        store = self._store
        redis = store.redis
        stream_key = store.key("stream", self.stream_id)
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), store.heartbeat)
            self._wake.clear()
            batch, self._pending = self._pending, []
            async with redis.pipeline(transaction=False) as pipe:
                if batch:
                    pipe.xadd(stream_key, {"b": b"".join(batch)})
                    # A producer that dies never writes its end: the stream expires anyway.
                    pipe.expire(stream_key, 24 * 3600)
                pipe.set(store.key("alive", self.stream_id), 1, px=store._alive_ms)
                pipe.get(store.key("stop", self.stream_id))
                results = await pipe.execute()
            if results[-1] is not None and self._on_stop is not None:
                callback, self._on_stop = self._on_stop, None
                callback()
            if self._closing and not self._pending:
                return

    async def end(self, *, resumable: bool) -> None:
        self._closing = True
        self._wake.set()
        try:
            await self._flusher
        except Exception:
            pass  # the end marker below still ends the followers
        store = self._store
        sid = self.stream_id
        active = store.key("active", self._chat_id)
        async with store.redis.pipeline(transaction=False) as pipe:
            pipe.xadd(store.key("stream", sid), {"end": 1})
            pipe.expire(store.key("stream", sid), store.retention if resumable else 30)
            pipe.delete(store.key("alive", sid), store.key("stop", sid))
            await pipe.execute()
        if resumable:
            await store.redis.expire(active, store.retention)
        else:
            await store._release(keys=[active], args=[sid])
