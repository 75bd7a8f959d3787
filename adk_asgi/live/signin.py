"""OAuth2 sign-ins asked for inside a live run: the run waits in its tool (``live/gate.py``)
until the sign-in's callback (``http/oauth.py``) hands over the authorization response.

The wait lives in the process that holds the connection, so the callback must reach that
process: one worker, or a proxy that sends ``{api}/oauth2/callback`` to the worker of the
live connection (docs/human-in-the-loop.md). A callback that finds no waiting connection
tells the popup so; the connection's call then times out like any unanswered wait.
"""

from __future__ import annotations

import asyncio
from typing import Final

from ..core.signin import SignInTicket

__all__ = ("LIVE_SIGN_INS", "LiveSignIns")


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
