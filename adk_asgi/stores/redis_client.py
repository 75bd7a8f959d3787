"""One worker's connections to Redis (``RedisStreamStore``'s): how many, how long a call
waits for one, and what a failed call raises.

The connections are a blocking pool of ``max_connections``: a call that finds them all busy
waits for one, up to ``pool_wait``, instead of failing as though Redis were down; one still
waiting then raises ``AtCapacity`` (the worker is at capacity, Redis is healthy). A call
that reaches Redis and fails (down, hung past ``timeout``, refusing writes) raises
``StoreUnavailable``. Redis-py's default retries for about 10 s; here only a refused or
reset connection is retried (twice, within ~0.2 s: a refused connect fails in
microseconds), a timeout already took ``timeout``, so a request gets its 503 within it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Final

try:
    from redis.asyncio import BlockingConnectionPool, Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialWithJitterBackoff
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import RedisError
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "RedisStreamStore needs the redis package: pip install 'adk-asgi[redis]'"
    ) from exc

from .base import AtCapacity, StoreUnavailable

__all__ = (
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_POOL_WAIT",
    "DEFAULT_TIMEOUT",
    "ERRORS",
    "Redis",
    "connect",
    "reachable",
)

DEFAULT_TIMEOUT: Final = 2.0
"""Seconds one call to Redis may take (connect, read, the readiness check)."""
DEFAULT_MAX_CONNECTIONS: Final = 256
"""Connections one worker opens to Redis at most."""
DEFAULT_POOL_WAIT: Final = 5.0
"""Seconds a call waits for a free connection before the worker answers ``at_capacity``."""
ERRORS: Final = (RedisError, OSError)
"""What a call to Redis raises when it fails."""
_NO_CONNECTION: Final = "No connection available."


def connect(url: str, timeout: float, max_connections: int, pool_wait: float) -> Redis:
    """A client on a blocking pool of ``max_connections`` (see the module docstring)."""
    if max_connections < 1 or pool_wait <= 0:
        raise ValueError("RedisStreamStore: max_connections must be >= 1, pool_wait > 0")
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=pool_wait,
        socket_connect_timeout=timeout,
        socket_timeout=timeout,
        retry=Retry(
            ExponentialWithJitterBackoff(base=0.01, cap=0.2),
            2,
            supported_errors=(RedisConnectionError,),
        ),
    )
    return Redis.from_pool(pool)


@contextlib.contextmanager
def reachable() -> Iterator[None]:
    """Redis errors (down, timed out, refusing writes) as ``StoreUnavailable``; every
    connection busy past the pool's wait as ``AtCapacity``."""
    try:
        yield
    except RedisConnectionError as exc:
        if exhausted(exc):
            raise AtCapacity("redis_connections") from exc
        raise StoreUnavailable(f"Redis: {type(exc).__name__}: {exc}") from exc
    except ERRORS as exc:
        raise StoreUnavailable(f"Redis: {type(exc).__name__}: {exc}") from exc


def exhausted(exc: BaseException) -> bool:
    """The pool's wait ran out (redis-py raises a ``ConnectionError`` for it, from the
    ``TimeoutError`` of its wait): no connection failed."""
    return str(exc) == _NO_CONNECTION and isinstance(exc.__cause__, TimeoutError)
