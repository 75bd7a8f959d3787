"""A turn that waits for its chat's turn lock, told to its client at once.

Two tabs on one chat take turns (the chat's turn lock). A ``POST`` whose chat is answering
another request would otherwise get nothing — no status, no bytes — until that turn ends:
the page cannot tell it is queued. So when the lock is not free within ``NOTICE_AFTER``,
the response starts at once (200, SSE) with one transient chunk, ``data-queued``, and the
turn's own stream follows on the same response when the lock is taken. A client that
leaves meanwhile gives up its place (nothing runs). A refusal found once the lock is held
(a bad edit, a session store down) can no longer be a 4xx: it ends that stream with an
``error`` chunk and ``[DONE]`` (``refused``).

The notice is never recorded: a resume replays the turn's stream, which starts once the
turn does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Final

from ...adk.outages import Outage, report_outage
from ...stores import StreamStore
from ...transport.asgi import ClientGone
from ...wire.chunks import DONE_FRAME, DataChunk, Error, sse_frame
from ...wire.errors import (
    RequestError,
    artifact_unavailable,
    session_unavailable,
    store_unavailable,
)
from .sse import SSEChannel

__all__ = ("NOTICE_AFTER", "QUEUED_CHUNK_TYPE", "queued_turn", "refused")

logger = logging.getLogger("adk_asgi")

NOTICE_AFTER: Final = 0.05
"""Seconds a turn waits for a free lock before its client is told it is queued (a free
lock is taken in one store round trip)."""
QUEUED_CHUNK_TYPE: Final = "data-queued"
_NOTICE: Final = sse_frame(
    DataChunk(type=QUEUED_CHUNK_TYPE, data={"reason": "chat-busy"}, transient=True)
)


@asynccontextmanager
async def queued_turn(
    store: StreamStore, chat_id: str, channel: Callable[[], SSEChannel]
) -> AsyncIterator[SSEChannel | None]:
    """Hold ``chat_id``'s turn lock. When it is busy, open ``channel()``'s response, send the
    notice and yield the open channel (the turn streams on it); else yield None. Raises
    ``ClientGone`` when the client leaves while it waits."""
    held: AbstractAsyncContextManager[None] = store.lock(chat_id)
    taking = asyncio.ensure_future(held.__aenter__())
    opened: SSEChannel | None = None
    try:
        done, _ = await asyncio.wait({taking}, timeout=NOTICE_AFTER)
        if not done:
            opened = channel()
            left = asyncio.Event()
            opened.on_gone(lambda _reason: left.set())
            await opened.open()
            await opened.write(_NOTICE)
            leaving = asyncio.ensure_future(left.wait())
            try:
                await asyncio.wait({taking, leaving}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                leaving.cancel()
            if not taking.done():
                raise ClientGone
        taking.result()  # the store's failure, if taking it failed
    except BaseException:
        if not taking.done():
            taking.cancel()
            with contextlib.suppress(BaseException):
                await taking
        elif not taking.cancelled() and taking.exception() is None:
            await held.__aexit__(None, None, None)
        if opened is not None:
            await opened.close()
        raise
    try:
        yield opened
    finally:
        await held.__aexit__(None, None, None)


async def refused(channel: SSEChannel, exc: RequestError | Outage) -> None:
    """End a queued turn's response refused once its lock was held: the answer a 4xx or
    503 would have given, as its ``error`` chunk (the code in brackets), then ``[DONE]``."""
    if isinstance(exc, Outage):
        report_outage(exc)
        exc = _UNAVAILABLE[exc.service]()
    else:
        logger.info("Queued turn refused: %s", exc.code)
    text = f"{exc.message} ({exc.code})"
    await channel.write(sse_frame(Error(error_text=text)) + DONE_FRAME)
    await channel.close()


_UNAVAILABLE: Final = {
    "streams": store_unavailable,
    "sessions": session_unavailable,
    "artifacts": artifact_unavailable,
}
