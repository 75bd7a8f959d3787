"""TurnStop: how an HTTP turn stops before its run ends, and what its stream then ends with.

=================  =========================================  ======================
cause              what happens                               last chunks
=================  =========================================  ======================
client gone        ADK run aborted at once (``abort_signal``); (nobody listens)
                   with ``resume_grace`` > 0 it keeps running
                   detached until it ends, or until nobody
                   resumed it within the grace
stuck client       took nothing for ``send_timeout``, or      ``abort``, ``[DONE]``
                   over ``max_queued_bytes`` waiting: reset,  (its followers; the
                   run aborted (``transport/outbox.py``)      history: sealed by ADK)
``DELETE`` stream  the owner asked to stop (any worker)       ``abort``, ``[DONE]``
turn ceiling       ran ``Limits.max_turn_seconds`` or streamed  ``error``, ``[DONE]``
                   ``max_turn_bytes``: run aborted
server shutdown    ``drain``: runs get ``shutdown_grace`` to  ``error``, ``[DONE]``
                   finish, then are aborted
=================  =========================================  ======================

A run that ends by itself ends with ``finish`` (or ``error``: ``stream.py``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final, Literal

from ...observability.metrics import Outcome
from ...options import Limits
from ...translate.message import AssistantMessage
from ...wire.chunks import UIChunk
from ...wire.errors import SHUTDOWN_ERROR, TURN_TOO_LARGE_ERROR, TURN_TOO_LONG_ERROR
from .sse import GoneReason

__all__ = ("StopReason", "TurnStop")

logger = logging.getLogger("adk_asgi")

StopReason = Literal["client", "stuck", "stopped", "shutdown", "too_long", "too_large"]

# What the client reads when the turn stops at a ceiling or for the server's shutdown.
_STOP_TEXTS: Final[dict[StopReason, str]] = {
    "shutdown": SHUTDOWN_ERROR,
    "too_long": TURN_TOO_LONG_ERROR,
    "too_large": TURN_TOO_LARGE_ERROR,
}
_STOPPED: Final[dict[StopReason, Outcome]] = {
    "client": "client_gone",
    "stuck": "stuck_client",
    "stopped": "stopped",
    "shutdown": "shutdown",
    "too_long": "limit",
    "too_large": "limit",
}


class TurnStop:
    """Why one turn stopped (the first reason wins), and the signal its ADK run reads."""

    __slots__ = ("_ceiling", "_chat_id", "_grace", "_grace_task", "_limits", "reason", "signal")

    def __init__(self, limits: Limits, resume_grace: float, chat_id: str) -> None:
        self._limits = limits
        self._grace = resume_grace
        self._chat_id = chat_id
        self._ceiling: asyncio.TimerHandle | None = None
        self._grace_task: asyncio.Task[None] | None = None
        self.signal = asyncio.Event()
        """Set once the run must stop (ADK's ``abort_signal``)."""
        self.reason: StopReason | None = None

    def stop(self, reason: StopReason) -> None:
        if self.reason is None:
            self.reason = reason
            if reason in ("too_long", "too_large"):
                limits = self._limits
                logger.warning(
                    "Stopped the turn of chat %r at its ceiling: %s",
                    self._chat_id,
                    f"{limits.max_turn_seconds:g} s (Limits.max_turn_seconds)"
                    if reason == "too_long"
                    else f"{limits.max_turn_bytes} bytes (Limits.max_turn_bytes)",
                )
        self.signal.set()

    def arm(self) -> None:
        """The turn's response started: its time ceiling runs from now."""
        ceiling = self._limits.max_turn_seconds
        if ceiling is not None:
            loop = asyncio.get_running_loop()
            self._ceiling = loop.call_later(ceiling, self.stop, "too_long")

    def streamed(self, size: int) -> None:
        """The turn's stream reached ``size`` bytes (``Limits.max_turn_bytes``)."""
        limit = self._limits.max_turn_bytes
        if limit is not None and size > limit:
            self.stop("too_large")

    def client_gone(self, reason: GoneReason, followed: Callable[[], Awaitable[bool]]) -> None:
        """The client left (or is stuck): stop, unless a reload may still resume the turn
        (``resume_grace``): then it runs on while ``followed()`` says someone follows it."""
        if reason != "client" or self._grace <= 0:
            self.stop(reason)
            return

        async def grace() -> None:
            while True:
                await asyncio.sleep(self._grace)
                if not await followed():
                    self.stop("client")
                    return

        self._grace_task = asyncio.create_task(grace(), name="adk-asgi-resume-grace")

    async def close(self) -> None:
        """The turn ended: no ceiling, no grace left running."""
        if self._ceiling is not None:
            self._ceiling.cancel()
        if self._grace_task is not None:
            self._grace_task.cancel()
            await asyncio.gather(self._grace_task, return_exceptions=True)

    def last_chunks(self, message: AssistantMessage) -> list[UIChunk]:
        """How the stream ends: the reason's text as ``error``, ``abort`` for a stop, else
        the message's ``finish``."""
        reason = self.reason
        if reason in _STOP_TEXTS:
            return message.fail(_STOP_TEXTS[reason])
        if reason is not None:
            return message.abort()
        return message.finish()

    def outcome(self, *, failed: bool, awaiting: bool) -> Outcome:
        """How the turn ended, for the metrics."""
        if self.reason is not None:
            return _STOPPED[self.reason]
        if failed:
            return "error"
        return "awaiting" if awaiting else "completed"
