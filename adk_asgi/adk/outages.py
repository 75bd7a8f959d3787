"""Outages: a service a request or connection needs failed — the stream store
(``StoreUnavailable``: Redis down), ADK's session service (its database down, locked,
read-only) or its artifact service. Each one is one log line and one count of
``adk_asgi.store_errors{store, operation}``, written by ``report_outage`` whichever side met
it: HTTP answers it 503 (``http/errors.py``), a WebSocket closes 1013 (``live/``). A worker
at capacity (``AtCapacity``: its store healthy, its connections to it all busy) is no
outage: one warning and one count of ``adk_asgi.at_capacity{resource}``, answered ``503
at_capacity``.

Operators alert on these lines and labels: the texts below, and the ``action`` each caller
names (the ``operation`` label: ``turn``, ``prepare``, ``resume``, ``stop``, ``list``,
``delete``, ``chat``, ``artifacts``, ``connect``, ``live``), stay as they are.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Literal

from ..observability.metrics import METRICS
from ..stores import AtCapacity, StoreUnavailable
from .sessions import failure

__all__ = ("Outage", "Service", "report_outage")

logger = logging.getLogger("adk_asgi")

Service = Literal["streams", "sessions", "artifacts"]
"""Which service failed: the stream store, ADK's session service, ADK's artifact service."""


class Outage(Exception):
    """``service`` failed (``error``) while a request or connection on ``chat_id`` did
    ``action``: the ``operation`` label it is counted under (None: not counted; the
    artifact service is never counted). It keeps the context it was raised in (the chat
    and user of the log line, the turn's span): it is reported where it is answered."""

    def __init__(
        self, service: Service, action: str | None, chat_id: str | None, error: BaseException
    ) -> None:
        super().__init__(f"{service} unavailable")
        self.service: Service = service
        self.action = action
        self.chat_id = chat_id
        self.error = error
        self.context = contextvars.copy_context()

    @classmethod
    def of(cls, error: BaseException, action: str | None, chat_id: str | None) -> Outage:
        """The stream store's outage for a ``StoreUnavailable``, else the session
        service's."""
        service: Service = "streams" if isinstance(error, StoreUnavailable) else "sessions"
        return cls(service, action, chat_id, error)


def report_outage(outage: Outage) -> None:
    """The outage's one log line (never a text that can quote user content; a turn's
    session failure with its traceback at DEBUG) and its count, in the context it was
    raised in."""
    outage.context.run(_report, outage)


def _report(outage: Outage) -> None:
    service, action, chat_id, error = outage.service, outage.action, outage.chat_id, outage.error
    if isinstance(error, AtCapacity):  # no dependency failed: not an outage
        logger.warning("At capacity (%s): chat %r refused, to retry", error.resource, chat_id)
        METRICS.at_capacity(error.resource)
        return
    args: tuple[object, ...] = (chat_id, failure(error))
    # Only a turn's session failure carries its traceback, and only at DEBUG.
    trace = error if action == "prepare" and logger.isEnabledFor(logging.DEBUG) else None
    if action == "live":
        line = "Live connection of chat %r closed: %s"
    elif service == "streams":
        # The store's own text names its backend's error, never what a request carried.
        line, args = "Stream store unavailable for chat %r: %s", (chat_id, error)
    elif service == "artifacts":
        line = "Artifact service failed for chat %r: %s"
    elif action == "list":
        line, args = "Session store failed listing chats: %s", args[1:]
    elif action == "delete":
        line = "Could not delete chat %r: %s"
    else:
        line = "Session store failed for chat %r: %s"
    logger.error(line, *args, exc_info=trace)
    if action is not None and service != "artifacts":
        METRICS.store_error(service, action)
