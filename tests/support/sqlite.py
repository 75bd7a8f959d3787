"""Waiting for sqlite's threads."""

from __future__ import annotations

import asyncio
import threading
import time


async def sqlite_threads_done(within: float = 10.0) -> None:
    """Wait for aiosqlite's worker threads (one per connection) to end: the thread of a
    failed connect reports its end to the test's loop, and raises "Event loop is closed"
    (in whichever test runs next) if that loop is gone by then."""
    deadline = time.monotonic() + within
    while any("_connection_worker_thread" in t.name for t in threading.enumerate()):
        assert time.monotonic() < deadline, "aiosqlite threads still running"
        await asyncio.sleep(0.02)
