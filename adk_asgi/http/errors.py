"""The HTTP side's one error path: handlers raise, ``answer`` (which runs every handler the
routes name, ``http/routes.py``) turns what they raise into the answer:

    RequestError      its status and ``{"error": {"code", "message"}}`` (``Retry-After``
                      when it has one)
    AuthError         401 ``unauthorized`` / 403 ``forbidden``
    Outage            its log line and count (``adk/outages.py``), then 503
                      ``store_unavailable``, ``session_unavailable`` or
                      ``artifact_unavailable`` with ``Retry-After`` (``at_capacity``
                      when the store is healthy but the worker's connections to it
                      are all busy: ``AtCapacity``); a bare
                      ``StoreUnavailable``/``SessionUnavailable`` the same, not counted
    ClientGone        nothing: nobody is left to read it

``failing`` is how a handler names what it was doing when a service fails (the ``operation``
label operators alert on). Once a response started (a stream runs), a failure is the
stream's own business, ended with its ``error`` chunk: nothing here sends a second response.
The OAuth2 callback answers its popup with pages of its own (``http/oauth.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

from ..adk.outages import Outage, Service, report_outage
from ..adk.sessions import SessionUnavailable
from ..stores import AtCapacity, StoreUnavailable
from ..transport.asgi import ASGIApp, ClientGone, Message, Receive, Scope, Send, send_error
from ..transport.auth import AuthError
from ..wire.errors import (
    RequestError,
    artifact_unavailable,
    at_capacity,
    session_unavailable,
    store_unavailable,
)

__all__ = ("answer", "failing")

logger = logging.getLogger("adk_asgi")

_UNAVAILABLE: Final[dict[Service, Callable[[], RequestError]]] = {
    "streams": store_unavailable,
    "sessions": session_unavailable,
    "artifacts": artifact_unavailable,
}


@contextmanager
def failing(
    action: str | None, chat_id: str | None, service: Service | None = None
) -> Iterator[None]:
    """Inside, the stream store's failure (``StoreUnavailable``) is an ``Outage`` of
    ``action`` (the metric's ``operation``; None: not counted) on ``chat_id``; so is, with
    ``service``, any other exception but a refusal (that service's outage)."""
    try:
        yield
    except StoreUnavailable as exc:
        raise Outage("streams", action, chat_id, exc) from exc
    except (RequestError, AuthError, Outage, ClientGone):
        raise
    except Exception as exc:
        if service is None:
            raise
        raise Outage(service, action, chat_id, exc) from exc


class _Response:
    """``send``, noting whether the response started. It keeps the server's transport in
    reach (``transport``), where the slow-client rule reads the client's progress
    (``transport/outbox.py``'s ``transport_of``)."""

    __slots__ = ("_send", "started")

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False

    @property
    def transport(self) -> object:
        """The server's transport behind the wrapped ``send`` (None when there is none)."""
        return getattr(getattr(self._send, "__self__", None), "transport", None)

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)


async def answer(handler: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """Run ``handler``; answer what it raised, unless its response started."""
    response = _Response(send)
    try:
        await handler(scope, receive, response.send)
        return
    except ClientGone:
        return
    except Outage as exc:
        error = _unavailable(exc)
    except (StoreUnavailable, SessionUnavailable) as exc:  # not named: reported, not counted
        error = _unavailable(Outage.of(exc, None, scope.get("path_params", {}).get("chat_id")))
    except AuthError as exc:
        code = "unauthorized" if exc.status == 401 else "forbidden"
        error = RequestError(exc.status, code, exc.message)
    except RequestError as exc:
        error = exc
    if response.started:
        logger.debug("%s after the response started: not answered", error.code)
        return
    await send_error(send, error)


def _unavailable(outage: Outage) -> RequestError:
    """The outage reported (its log line and count); the answer it gets."""
    report_outage(outage)
    if isinstance(outage.error, AtCapacity):
        return at_capacity()
    return _UNAVAILABLE[outage.service]()
