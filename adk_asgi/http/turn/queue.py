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
    notice = _Notice(channel)
    timer = asyncio.get_running_loop().call_later(NOTICE_AFTER, notice.start)
    try:
        # Taken in this task, not one of its own: a free lock of the memory store is taken
        # without a round through the event loop, and under load every round is a turn of
        # every other stream's work before this one's first byte (a helper task and
        # ``asyncio.wait`` cost three).
        await held.__aenter__()
    except BaseException as exc:
        timer.cancel()
        left = notice.gave_up(exc)
        await notice.close()
        if left:
            raise ClientGone from None
        raise
    timer.cancel()
    try:
        opened = await notice.sent()
    except BaseException:
        await held.__aexit__(None, None, None)
        await notice.close()
        raise
    try:
        yield opened
    finally:
        await held.__aexit__(None, None, None)


class _Notice:
    """The queued notice of one waiting turn: a timer starts it (``start``) when the lock
    was not taken within ``NOTICE_AFTER``; a task of its own opens the response and writes
    it while the turn's task waits for the lock. A client that leaves meanwhile cancels
    that wait."""

    __slots__ = ("_channel", "_task", "_waiter", "channel", "left", "waiting")

    def __init__(self, channel: Callable[[], SSEChannel]) -> None:
        self._channel = channel
        self._waiter = asyncio.current_task()
        self._task: asyncio.Task[None] | None = None
        self.channel: SSEChannel | None = None
        self.left = False
        self.waiting = True

    def start(self) -> None:
        if not self.waiting:
            return
        self.channel = opened = self._channel()
        opened.on_gone(self._gone)
        self._task = asyncio.create_task(self._send(opened), name="adk-asgi-queued-notice")

    async def _send(self, opened: SSEChannel) -> None:
        try:
            await opened.open()
            await opened.write(_NOTICE)
        except Exception:  # a server that raises on a closed socket: the client is gone
            self._gone("client")

    def _gone(self, _reason: object) -> None:
        if self.waiting and not self.left:
            self.left = True
            if self._waiter is not None:
                self._waiter.cancel()

    def gave_up(self, exc: BaseException) -> bool:
        """Taking the lock raised ``exc``: whether that is the cancellation ``_gone`` asked
        for (absorbed: the caller raises ``ClientGone``)."""
        self.waiting = False
        task = self._waiter
        if not (self.left and isinstance(exc, asyncio.CancelledError) and task is not None):
            return False
        return task.uncancel() == 0  # else someone else cancels it too: let it

    async def sent(self) -> SSEChannel | None:
        """The lock is held: the open response once its notice went out (None: never
        opened), written by this task from now on."""
        self.waiting = False
        if self._task is not None:
            await self._task
        opened = self.channel
        if opened is not None:
            opened.adopt()
        return opened

    async def close(self) -> None:
        task, opened = self._task, self.channel
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        if opened is not None:
            await opened.close()


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
