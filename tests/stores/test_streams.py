"""The StreamStore contract, for the in-memory store and for Redis (a real redis-server)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adk_asgi import MemoryStreamStore, RedisStreamStore, StreamStore
from adk_asgi.stores import split_frames
from adk_asgi.stores.base import RECORDING_CUT_BLOB


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[StreamStore]:
    if request.param == "memory":
        made: StreamStore = MemoryStreamStore(max_stream_bytes=1000, retention=0.5)
    else:
        url = request.getfixturevalue("redis_url")
        made = RedisStreamStore(
            url,
            prefix=f"t-{uuid.uuid4().hex[:8]}",
            max_stream_bytes=1000,
            retention=1,
            heartbeat=0.1,
            lock_ttl=0.6,
        )
    yield made
    await made.close()


async def _collect(follow: Any, limit: float = 5.0) -> list[bytes]:
    out: list[bytes] = []

    async def run() -> None:
        async for blob in follow:
            out.append(blob)

    await asyncio.wait_for(run(), limit)
    return out


async def test_owners(store: StreamStore) -> None:
    assert await store.owner("c1") is None
    assert await store.claim("c1", "alice") is True
    assert await store.claim("c1", "alice") is True
    assert await store.claim("c1", "bob") is False
    assert await store.owner("c1") == "alice"


async def test_lock_serializes_turns_of_one_chat(store: StreamStore) -> None:
    order: list[str] = []

    async def turn(name: str, chat: str) -> None:
        async with store.lock(chat):
            order.append(f"{name}+")
            await asyncio.sleep(0.2)
            order.append(f"{name}-")

    await asyncio.gather(turn("a", "chat"), turn("b", "chat"), turn("c", "other"))
    chat = [x for x in order if x[0] in "ab"]
    assert chat in (["a+", "a-", "b+", "b-"], ["b+", "b-", "a+", "a-"])
    assert order.index("c+") < order.index("c-") < max(order.index("a-"), order.index("b-"))


async def test_lock_outlives_its_ttl_while_held(store: StreamStore) -> None:
    # The Redis lock's TTL is 0.6 s here: holding it for 1.5 s needs the renewal.
    entered = asyncio.Event()
    second_in = False

    async def long_turn() -> None:
        async with store.lock("long"):
            entered.set()
            await asyncio.sleep(1.5)

    async def second() -> None:
        nonlocal second_in
        await entered.wait()
        async with store.lock("long"):
            second_in = True

    first = asyncio.create_task(long_turn())
    other = asyncio.create_task(second())
    await asyncio.sleep(1.2)
    assert not second_in
    await asyncio.gather(first, other)
    assert second_in


async def test_follow_replays_then_follows_to_the_end(store: StreamStore) -> None:
    assert await store.follow("s1") is None
    recorder = await store.record("s1")
    recorder.append(b'data: {"a":1}\n\n')
    recorder.append(b'data: {"a":2}\n\n')
    follow = await store.follow("s1")
    assert follow is not None
    collected = asyncio.create_task(_collect(follow))
    await asyncio.sleep(0.2)
    assert await recorder.has_followers()
    recorder.append(b'data: {"a":3}\n\ndata: [DONE]\n\n')
    await recorder.end(resumable=False)
    blobs = await collected
    assert b"".join(blobs) == (
        b'data: {"a":1}\n\ndata: {"a":2}\n\ndata: {"a":3}\n\ndata: [DONE]\n\n'
    )
    assert await store.follow("s1") is None  # delivered: nothing to resume


async def test_undelivered_streams_stay_resumable_for_the_retention(store: StreamStore) -> None:
    recorder = await store.record("s2")
    recorder.append(b"data: 1\n\n")
    await recorder.end(resumable=True)
    follow = await store.follow("s2")
    assert follow is not None and await _collect(follow) == [b"data: 1\n\n"]
    await asyncio.sleep(1.6)
    assert await store.follow("s2") is None


async def test_stop_reaches_the_producer(store: StreamStore) -> None:
    assert await store.stop("s3") is False
    recorder = await store.record("s3")
    stopped = asyncio.Event()
    recorder.on_stop(stopped.set)
    assert await store.stop("s3") is True
    await asyncio.wait_for(stopped.wait(), 3)
    await recorder.end(resumable=False)
    assert await store.stop("s3") is False


async def test_a_stream_over_the_size_cap_keeps_its_start(store: StreamStore) -> None:
    recorder = await store.record("big")
    for i in range(30):
        recorder.append(f"data: {i:050d}\n\n".encode())
    await recorder.end(resumable=True)
    follow = await store.follow("big")
    assert follow is not None
    replay = b"".join(await _collect(follow))
    assert 0 < len(replay) - len(RECORDING_CUT_BLOB) <= 1000
    assert replay.startswith(b"data: " + b"0" * 50)
    # Every stream that ends has a final chunk: the cut one ends with an error saying so.
    assert replay.endswith(RECORDING_CUT_BLOB)
    assert replay.count(b"[DONE]") == 1


async def test_a_follower_of_a_stream_cut_at_the_size_cap_gets_an_error_and_done(
    store: StreamStore, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = await store.record("cut")
    recorder.append(b'data: {"type":"start"}\n\n')
    follow = await store.follow("cut")
    assert follow is not None
    collected = asyncio.create_task(_collect(follow))
    await asyncio.sleep(0.2)
    with caplog.at_level("WARNING", logger="adk_asgi"):
        for i in range(30):  # the turn goes on past the cap: its client gets it all
            recorder.append(f"data: {i:050d}\n\n".encode())
    await recorder.end(resumable=True)
    followed = b"".join(await collected)
    assert followed.startswith(b'data: {"type":"start"}\n\n')
    assert followed.endswith(RECORDING_CUT_BLOB)
    assert b"(recording_cut)" in RECORDING_CUT_BLOB and b'"type":"error"' in RECORDING_CUT_BLOB
    assert [r.getMessage() for r in caplog.records].count(
        "Stopped recording chat 'cut''s stream at 1000 bytes (max_stream_bytes): a resume "
        "ends there with recording_cut; the turn goes on"
    ) == 1


def test_split_frames() -> None:
    assert split_frames(b'data: {"x":1}\n\n: ping\n\ndata: {}\n\ndata: [DONE]\n\n') == [
        b'{"x":1}',
        b"{}",
    ]


async def test_memory_store_sweeps_expired_streams() -> None:
    store = MemoryStreamStore(retention=0.0)
    for i in range(3):
        recorder = await store.record(f"chat-{i}")
        await recorder.end(resumable=True)
    assert store.streams == 3
    store._swept -= 61  # a minute later, the next recording sweeps
    await store.record("next")
    assert store.streams == 1


@pytest.fixture
async def redis_store(redis_url: str) -> AsyncIterator[RedisStreamStore]:
    made = RedisStreamStore(
        redis_url, prefix=f"t-{uuid.uuid4().hex[:8]}", heartbeat=0.1, lock_ttl=0.6, retention=2
    )
    yield made
    await made.close()


async def test_redis_a_dead_producers_stream_ends_with_an_error(
    redis_store: RedisStreamStore, caplog: pytest.LogCaptureFixture
) -> None:
    from adk_asgi.stores import INTERRUPTED_BLOB

    recorder = await redis_store.record("dead")
    recorder.append(b'data: {"a":1}\n\n')
    follow = await redis_store.follow("dead")
    assert follow is not None
    collected = asyncio.create_task(_collect(follow, limit=10))
    await asyncio.sleep(0.3)
    recorder._flusher.cancel()  # type: ignore[attr-defined]  # the producer dies: no end
    blobs = await collected
    assert blobs == [b'data: {"a":1}\n\n', INTERRUPTED_BLOB]
    again = await redis_store.follow("dead")  # a later resume: the same ending, once
    assert again is not None and await _collect(again) == blobs
    said = [r.getMessage() for r in caplog.records if "stopped mid-turn" in r.getMessage()]
    assert len(said) == 1 and "'dead'" in said[0]


async def test_redis_a_finished_stream_whose_end_was_lost_gets_no_error(
    redis_store: RedisStreamStore,
) -> None:
    recorder = await redis_store.record("done")
    recorder.append(b'data: {"a":1}\n\ndata: [DONE]\n\n')
    await asyncio.sleep(0.3)  # flushed
    recorder._flusher.cancel()  # type: ignore[attr-defined]
    await asyncio.sleep(3.2)  # the lease lapses
    follow = await redis_store.follow("done")
    assert follow is not None
    assert await _collect(follow) == [b'data: {"a":1}\n\ndata: [DONE]\n\n']


async def test_redis_a_dead_workers_lock_lapses(redis_store: RedisStreamStore) -> None:
    # A worker that died holding the lock: its key stays until the lease (0.6 s) ends.
    await redis_store.redis.set(redis_store.key("lock", "held"), "dead-host:1:x", px=600)
    started = asyncio.get_running_loop().time()
    async with redis_store.lock("held"):
        waited = asyncio.get_running_loop().time() - started
    assert 0.3 < waited < 3, waited
