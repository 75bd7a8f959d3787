"""Inbox: what changes one live connection's turns, in the order it happened, for its
downstream (``connection.py``) to hand to the turn layer one item at a time.

The upstream's commands, the gate's notices and the run's events all go through it, so the
order the client sees is the order things happened: a `start` before the model's first
event, an approval request after its tool call, a denial marked before ADK's "rejected"
function response arrives. It is bounded: a slow socket holds the run's pump (and ADK)
back instead of buffering without limit.

One shortcut keeps that order by construction: a partial event of the open turn (the
model's streamed tokens, most of what a connection carries) is handled by the pump itself
when the queue is empty and the downstream waits in it — nothing came before the event
that is not handled yet, and whatever arrives while the pump handles it waits for the pump
(``next``). That saves a queue hop and a task switch per token; everything else, and every
event while anything waits, is queued. A failure there is the downstream's: ``next``
raises it, as if the downstream had handled the event.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from google.adk.events import Event

from .upstream import InboxItem, Wake

__all__ = ("Inbox",)


class Inbox:
    __slots__ = (
        "_after_direct",
        "_direct",
        "_failure",
        "_handle",
        "_parked",
        "_turn_open",
        "queue",
    )

    def __init__(
        self,
        size: int,
        handle: Callable[[Event], Awaitable[None]],
        turn_open: Callable[[], bool],
    ) -> None:
        """``handle``: the turn layer's handling of an event; ``turn_open``: whether a turn
        is open (a partial event of no turn opens one: the downstream's)."""
        self.queue: asyncio.Queue[InboxItem] = asyncio.Queue(size)
        self._handle = handle
        self._turn_open = turn_open
        self._parked = False  # the downstream waits in the queue
        self._direct = False  # the pump handles an event
        self._after_direct: asyncio.Future[None] | None = None  # the downstream's wait for it
        self._failure: Exception | None = None

    async def deliver(self, item: InboxItem) -> None:
        """``item`` in its turn: handled now (the shortcut) or queued."""
        if self._failure is not None:
            return
        if (
            self._parked
            and isinstance(item, Event)
            and item.partial
            and self._turn_open()
            and self.queue.empty()
        ):
            await self._handle_direct(item)
            return
        await self.queue.put(item)

    async def _handle_direct(self, event: Event) -> None:
        self._direct = True
        try:
            await self._handle(event)
        except Exception as exc:
            self._failure = exc
            with contextlib.suppress(asyncio.QueueFull):
                self.queue.put_nowait(Wake())  # a full queue wakes the downstream anyway
        finally:
            self._direct = False
            waiter, self._after_direct = self._after_direct, None
            if waiter is not None and not waiter.done():  # done: cancelled with its task
                waiter.set_result(None)

    async def next(self) -> InboxItem:
        """The next item, once the event the pump may be handling is done; raises what
        failed there."""
        self._parked = True
        try:
            item = await self.queue.get()
        finally:
            self._parked = False
        if self._direct:
            waiter = self._after_direct = asyncio.get_running_loop().create_future()
            await waiter
        if self._failure is not None:
            raise self._failure
        return item
