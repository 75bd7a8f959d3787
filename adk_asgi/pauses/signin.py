"""OAuth2 sign-ins waiting for their callback: a ticket per sign-in, kept in the stream
store under the ``state`` ADK generated for it (unguessable, sent to the chat's owner only),
so the callback on any worker finds the call it answers — once, until it expires. Its
deadline is fixed when it is issued (``expires``, read at every take besides the store's
own expiry), and a callback is its one use: one with the code continues the turn, one with
an error or a cancel at the provider ends it.

A sign-in asked for inside a live run is waited for in its tool (``live/gate/gate.py``),
in the process that holds the connection (``LIVE_SIGN_INS``): the callback must reach that
process — one worker, or a proxy that sends ``{api}/oauth2/callback`` to the worker of the
live connection (docs/human-in-the-loop.md). A callback that finds no waiting connection
tells the popup so; the connection's call then times out like any unanswered wait.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any, Final

import msgspec

from ..stores import StoreUnavailable, StreamStore
from .credentials import CredentialRequest

__all__ = (
    "LIVE_SIGN_INS",
    "LiveSignIns",
    "SignInTicket",
    "callback_url",
    "register_sign_ins",
    "take_sign_in",
)

logger = logging.getLogger("adk_asgi")

CALLBACK_PATH: Final = "/oauth2/callback"


class SignInTicket(msgspec.Struct, frozen=True):
    """Which call a sign-in answers, in whose chat, and where it returned to."""

    chat_id: str
    user_id: str
    call_id: str
    message_id: str
    redirect_uri: str
    transport: str = "sse"
    """``sse``: the callback continues the turn; ``live``: the connection waiting for it
    (in this process) does."""
    expires: float = 0.0
    """When the sign-in ends (seconds since the epoch), fixed when it is issued; 0: a
    ticket from before deadlines were kept (the store's expiry alone)."""


def _key(state: str) -> str:
    return f"oauth2:{state}"


def callback_url(scope: Mapping[str, Any], configured: str | None) -> str:
    """The callback's absolute URL as the browser reaches it: ``configured``
    (``PauseOptions.oauth_redirect_uri``), else the request's scheme, ``Host`` and mount
    path."""
    if configured:
        return configured
    scheme = str(scope.get("scheme") or "http")
    scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    host = ""
    for name, value in scope.get("headers") or ():
        if name == b"host":
            host = value.decode("latin-1")
            break
    if not host:
        server = scope.get("server")
        host = f"{server[0]}:{server[1]}" if isinstance(server, tuple | list) else "localhost"
    return f"{scheme}://{host}{scope.get('root_path') or ''}{CALLBACK_PATH}"


async def register_sign_ins(
    store: StreamStore,
    requests: Iterable[CredentialRequest],
    *,
    chat_id: str,
    user_id: str,
    message_id: str,
    redirect_uri: str,
    ttl: float,
    transport: str = "sse",
) -> None:
    """Keep a ticket for each sign-in a turn asked for (before the page can open it)."""
    for request in requests:
        if request.state is None:
            continue
        ticket = SignInTicket(
            chat_id,
            user_id,
            request.call_id,
            message_id,
            redirect_uri,
            transport,
            expires=time.time() + ttl,
        )
        try:
            await store.put_ticket(_key(request.state), msgspec.json.encode(ticket), ttl)
        except (StoreUnavailable, NotImplementedError) as exc:
            logger.error(
                "Could not keep the sign-in of call %r in chat %r (%s): its "
                "callback will not find it",
                request.call_id,
                chat_id,
                type(exc).__name__,
            )


async def take_sign_in(store: StreamStore, state: str) -> SignInTicket | None:
    """The sign-in ``state`` belongs to, unless it expired (it is gone from the store after
    this, whatever the callback then does)."""
    value = await store.take_ticket(_key(state))
    if value is None:
        return None
    try:
        ticket = msgspec.json.decode(value, type=SignInTicket)
    except msgspec.DecodeError:
        return None
    if ticket.expires and time.time() >= ticket.expires:
        return None
    return ticket


class LiveSignIns:
    """This process's live runs waiting for a sign-in: (chat, call) -> its future."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str], asyncio.Future[str]] = {}

    def wait(self, chat_id: str, call_id: str) -> asyncio.Future[str]:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting[(chat_id, call_id)] = future
        return future

    def forget(self, chat_id: str, call_id: str) -> None:
        self._waiting.pop((chat_id, call_id), None)

    def answer(self, ticket: SignInTicket, response_uri: str) -> bool:
        """Hand the authorization response to the run waiting for it; False: none here."""
        future = self._waiting.pop((ticket.chat_id, ticket.call_id), None)
        if future is None or future.done():
            return False
        future.set_result(response_uri)
        return True


LIVE_SIGN_INS: Final = LiveSignIns()
