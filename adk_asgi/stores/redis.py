"""RedisStreamStore: the stream store shared by several workers or replicas.

Needs the ``redis`` package (``pip install 'adk-asgi[redis]'``). Keys, under a
prefix (default ``adk-asgi``):

=========================  ===================================================
``{p}:owner:{chat}``       the chat's owner (``SET NX``), kept ``owner_ttl``
``{p}:lock:{chat}``        the turn lock: ``host:pid:random``, ``PX lock_ttl``,
                           renewed while held, released only by its holder
``{p}:active:{chat}``      the id of the chat's current stream
``{p}:stream:{id}``        a Redis stream: one entry per flushed batch of
                           blobs (field ``b``), then an ``end`` entry
``{p}:alive:{id}``         the producer's lease (``PX``, renewed every
                           ``heartbeat``)
``{p}:followers:{id}``     followers on any worker (sorted set, by expiry)
``{p}:stop:{id}``          a stop request (``DELETE {api}/{chatId}/stream``)
``{p}:deleted:{chat}``     how many times the chat was deleted, kept
                           ``owner_ttl``
=========================  ===================================================

``append`` never touches the network: blobs are batched by a per-stream flush
task (one ``XADD`` per batch), which also renews the lease and looks for stop
requests every ``heartbeat`` seconds.

**A worker that dies mid-turn** (``kill -9``, a lost machine) leaves a stream without
its ``end`` and a held lock. Both are leases: the stream's lapses after ``3 s`` without
a heartbeat, the lock's after ``lock_ttl`` (5 s). The first follower or resume that
finds a lapsed stream *finalizes* it (atomically, in a script): an ``error`` chunk
("the server stopped while answering") and ``[DONE]`` are appended, the stream ends for
every follower and stays replayable for ``retention`` like any undelivered stream; that
follower logs it once, with the chat id.

**Redis down**: every call a request makes raises ``StoreUnavailable`` (the endpoints
answer 503 / close 1013); a running turn's recorder and lock release log one line and
go on without Redis; everything recovers by itself once Redis is back.

**Capacity**: the worker's connections to Redis are a pool of ``max_connections`` (256),
opened as needed. A call that finds every one busy waits for the next free one, up to
``pool_wait`` (5 s): under load calls queue, a healthy Redis is never reported down. A call
still waiting then raises ``AtCapacity`` (``503 at_capacity`` with ``Retry-After``, counted
in ``adk_asgi.at_capacity``, never as an outage). A call holds its connection only while
Redis answers it; a resume's follower holds one for each ``heartbeat`` it waits for new
entries (docs/reference/limits.md: what one worker was measured to carry).

**Redis hung** (a stopped process, a network partition: connections open, nothing
answers): ``timeout`` is the one setting for how long a call waits — the socket's
connect and read timeouts, and the readiness check (``/readyz``) — and a timed-out call
is not retried, so a request gets its 503 after ``timeout`` (2 s), like the probe. Only
refused or reset connections are retried (twice, within ~0.2 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from ..observability.metrics import METRICS
from .base import (
    INTERRUPTED_BLOB,
    STREAM_LOST_BLOB,
    StreamRecorder,
    StreamStore,
    recording_cut,
)
from .redis_client import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_POOL_WAIT,
    DEFAULT_TIMEOUT,
    ERRORS,
    Redis,
    connect,
    reachable,
)
from .redis_scripts import FINALIZE, RELEASE, RENEW

__all__ = ("DEFAULT_MAX_CONNECTIONS", "DEFAULT_POOL_WAIT", "DEFAULT_TIMEOUT", "RedisStreamStore")

logger = logging.getLogger("adk_asgi")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisStreamStore(StreamStore):
    """Owners, turn locks and resumable streams in Redis, for any number of workers.

    >>> AdkApp(agent, session_db="sqlite:///chats.db",
    ...        stream_store=RedisStreamStore("redis://localhost:6379/0"))
    """

    def __init__(
        self,
        url: str = "redis://localhost:6379/0",
        *,
        prefix: str = "adk-asgi",
        owner_ttl: float = 30 * 24 * 3600,
        lock_ttl: float = 5.0,
        retention: float = 300.0,
        max_stream_bytes: int = 8 * 1024 * 1024,
        heartbeat: float = 0.5,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        pool_wait: float = DEFAULT_POOL_WAIT,
        client: Redis | None = None,
    ) -> None:
        if timeout < 2 * heartbeat:
            # A follower's XREAD blocks for a heartbeat: a shorter read timeout cuts it.
            raise ValueError("RedisStreamStore: timeout must be at least twice the heartbeat")
        self.timeout = timeout
        self.max_connections = max_connections
        self.redis: Redis = client or connect(url, timeout, max_connections, pool_wait)
        self.prefix = prefix
        self.owner_ttl = int(owner_ttl)
        self.lock_ttl_ms = int(lock_ttl * 1000)
        self.retention = int(retention)
        self.max_stream_bytes = max_stream_bytes
        self.heartbeat = heartbeat
        self._release = self.redis.register_script(RELEASE)
        self._renew = self.redis.register_script(RENEW)
        self._finalize_script = self.redis.register_script(FINALIZE)
        self._holder = f"{socket.gethostname()}:{os.getpid()}"

    def key(self, kind: str, name: str) -> str:
        return f"{self.prefix}:{kind}:{name}"

    # -- owners -------------------------------------------------------------------

    async def claim(self, chat_id: str, user_id: str) -> bool:
        key = self.key("owner", chat_id)
        with reachable():
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
        with reachable():
            owner = await self.redis.get(self.key("owner", chat_id))
        return _text(owner) if owner is not None else None

    # -- turn locks ------------------------------------------------------------------

    def lock(self, chat_id: str) -> AbstractAsyncContextManager[None]:
        return self._lock(chat_id)

    @asynccontextmanager
    async def _lock(self, chat_id: str) -> AsyncIterator[None]:
        key = self.key("lock", chat_id)
        # Who holds it, for operators reading Redis: host:pid:random.
        token = f"{self._holder}:{uuid.uuid4().hex[:12]}"
        delay = 0.01
        with reachable():
            while not await self.redis.set(key, token, nx=True, px=self.lock_ttl_ms):
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.1)
        renew = asyncio.create_task(self._keep(key, token, chat_id), name="adk-asgi-redis-lock")
        try:
            yield
        finally:
            renew.cancel()
            await asyncio.gather(renew, return_exceptions=True)
            try:
                await self._release(keys=[key], args=[token])
            except ERRORS as exc:
                METRICS.store_error("streams", "lock_release")
                logger.warning(
                    "Could not release the turn lock of chat %r (Redis: %s); it lapses in %.0f s",
                    chat_id,
                    exc,
                    self.lock_ttl_ms / 1000,
                )

    async def _keep(self, key: str, token: str, chat_id: str) -> None:
        failing = False
        while True:
            await asyncio.sleep(self.lock_ttl_ms / 3000)
            try:
                kept = await self._renew(keys=[key], args=[token, self.lock_ttl_ms])
            except ERRORS as exc:
                METRICS.store_error("streams", "lock_renew")
                if not failing:
                    logger.warning(
                        "Could not renew the turn lock of chat %r (Redis: %s)", chat_id, exc
                    )
                failing = True
                continue
            failing = False
            if not kept:
                logger.warning(
                    "The turn lock of chat %r lapsed and was taken by another turn", chat_id
                )
                return

    # -- streams ----------------------------------------------------------------------

    async def record(self, chat_id: str) -> StreamRecorder:
        stream_id = uuid.uuid4().hex
        with reachable():
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.set(self.key("alive", stream_id), 1, px=self._alive_ms)
                pipe.set(self.key("active", chat_id), stream_id, ex=24 * 3600)
                await pipe.execute()
        return _RedisRecorder(self, chat_id, stream_id)

    @property
    def _alive_ms(self) -> int:
        return int(max(self.heartbeat * 6, 3.0) * 1000)

    async def follow(self, chat_id: str) -> AsyncGenerator[bytes, None] | None:
        with reachable():
            stream_id = await self.redis.get(self.key("active", chat_id))
            if stream_id is None:
                return None
            sid = _text(stream_id)
            alive, stored = await asyncio.gather(
                self.redis.exists(self.key("alive", sid)),
                self.redis.exists(self.key("stream", sid)),
            )
            if not alive:
                if not stored:
                    return None
                await self._finalize(chat_id, sid)
        return self._follow(chat_id, sid)

    async def _finalize(self, chat_id: str, sid: str) -> None:
        """End a stream whose producer's lease lapsed (see the module docstring)."""
        ended = await self._finalize_script(
            keys=[self.key("stream", sid), self.key("alive", sid), self.key("active", chat_id)],
            args=[INTERRUPTED_BLOB, self.retention, sid],
        )
        if ended:
            logger.warning(
                "The worker answering chat %r stopped mid-turn (its lease lapsed): "
                "its stream ends with an error",
                chat_id,
            )

    async def _follow(self, chat_id: str, sid: str) -> AsyncGenerator[bytes, None]:
        redis = self.redis
        stream_key = self.key("stream", sid)
        followers = self.key("followers", sid)
        me = uuid.uuid4().hex
        ttl = max(self.heartbeat * 4, 2.0)
        last = "0-0"
        try:
            await redis.zadd(followers, {me: time.time() + ttl})
            await redis.expire(followers, int(ttl) + 60)
            refreshed = time.monotonic()
            while True:
                if time.monotonic() - refreshed > ttl / 2:
                    await redis.zadd(followers, {me: time.time() + ttl})
                    refreshed = time.monotonic()
                answer: Any = await redis.xread(
                    {stream_key: last}, count=256, block=int(self.heartbeat * 1000)
                )
                if not answer:
                    if not await redis.exists(self.key("alive", sid)):
                        await self._finalize(chat_id, sid)  # then read its end
                    continue
                for entry_id, fields in answer[0][1]:
                    last = entry_id
                    if b"end" in fields:
                        return
                    yield fields[b"b"]
        except ERRORS as exc:
            METRICS.store_error("streams", "follow")
            logger.warning("Lost Redis while following chat %r's stream: %s", chat_id, exc)
            yield STREAM_LOST_BLOB
        finally:
            with contextlib.suppress(Exception):
                await redis.zrem(followers, me)

    async def stop(self, chat_id: str) -> bool:
        with reachable():
            stream_id = await self.redis.get(self.key("active", chat_id))
            if stream_id is None:
                return False
            sid = _text(stream_id)
            if not await self.redis.exists(self.key("alive", sid)):
                return False
            await self.redis.set(self.key("stop", sid), 1, ex=60)
            return True

    async def forget(self, chat_id: str) -> None:
        active = self.key("active", chat_id)
        with reachable():
            stream_id = await self.redis.get(active)
            keys = [active]
            if stream_id is not None:
                sid = _text(stream_id)
                keys += [self.key(kind, sid) for kind in ("stream", "alive", "followers", "stop")]
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.delete(*keys)
                pipe.incr(self.key("deleted", chat_id))
                pipe.expire(self.key("deleted", chat_id), self.owner_ttl)
                await pipe.execute()

    async def deletions(self, chat_id: str) -> int:
        with reachable():
            count = await self.redis.get(self.key("deleted", chat_id))
        return int(count) if count is not None else 0

    async def put_ticket(self, key: str, value: bytes, ttl: float) -> None:
        with reachable():
            await self.redis.set(self.key("ticket", key), value, px=max(1, int(ttl * 1000)))

    async def take_ticket(self, key: str) -> bytes | None:
        with reachable():
            value = await self.redis.getdel(self.key("ticket", key))
        return value.encode() if isinstance(value, str) else value

    async def ping(self) -> None:
        await self.redis.ping()  # the probe names the error's class (/readyz)

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
        self._failing = False
        self._on_stop: Callable[[], None] | None = None
        self._wake = asyncio.Event()
        self._flusher = asyncio.create_task(self._flush_loop(), name="adk-asgi-redis-flush")

    def append(self, blob: bytes) -> None:
        if self._full or self._closing:
            return
        self._size += len(blob)
        if self._size > self._store.max_stream_bytes:
            self._full = True  # keep a prefix; a replay ends there (see MemoryStreamStore)
            self._pending.append(recording_cut(self._chat_id, self._store.max_stream_bytes))
            self._wake.set()
            return
        self._pending.append(blob)
        self._wake.set()

    def on_stop(self, callback: Callable[[], None]) -> None:
        self._on_stop = callback

    async def has_followers(self) -> bool:
        store = self._store
        try:
            count = await store.redis.zcount(
                store.key("followers", self.stream_id), time.time(), "+inf"
            )
        except ERRORS:
            return False  # nobody can follow through a Redis that is down
        return bool(count)

    def _failed(self, what: str, exc: BaseException) -> None:
        """One log line per stream while Redis fails (the turn goes on unrecorded)."""
        METRICS.store_error("streams", what)
        if not self._failing:
            logger.warning(
                "Could not %s chat %r's stream (Redis: %s); the turn goes on",
                what,
                self._chat_id,
                exc,
            )
        self._failing = True

    async def _flush_loop(self) -> None:
        store = self._store
        redis = store.redis
        stream_key = store.key("stream", self.stream_id)
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), store.heartbeat)
            self._wake.clear()
            batch, self._pending = self._pending, []
            try:
                async with redis.pipeline(transaction=False) as pipe:
                    if batch:
                        pipe.xadd(stream_key, {"b": b"".join(batch)})
                        # A producer that dies never writes its end: the stream expires.
                        pipe.expire(stream_key, 24 * 3600)
                    pipe.set(store.key("alive", self.stream_id), 1, px=store._alive_ms)
                    pipe.get(store.key("stop", self.stream_id))
                    results = await pipe.execute()
            except ERRORS as exc:
                self._pending[:0] = batch  # in order, with the next beat (bounded by _full)
                self._failed("record", exc)
                if self._closing:
                    return
                continue
            self._failing = False
            if results[-1] is not None and self._on_stop is not None:
                callback, self._on_stop = self._on_stop, None
                callback()
            if self._closing and not self._pending:
                return

    async def end(self, *, resumable: bool) -> None:
        self._closing = True
        self._wake.set()
        await asyncio.gather(self._flusher, return_exceptions=True)
        store = self._store
        sid = self.stream_id
        stream_key = store.key("stream", sid)
        active = store.key("active", self._chat_id)
        try:
            async with store.redis.pipeline(transaction=False) as pipe:
                if self._pending:  # what the flusher could not write
                    pipe.xadd(stream_key, {"b": b"".join(self._pending)})
                pipe.xadd(stream_key, {"end": 1})
                pipe.expire(stream_key, store.retention if resumable else 30)
                pipe.delete(store.key("alive", sid), store.key("stop", sid))
                if resumable:
                    pipe.expire(active, store.retention)
                else:
                    await store._release(keys=[active], args=[sid], client=pipe)
                await pipe.execute()
        except ERRORS as exc:
            self._failing = False
            self._failed("end", exc)
