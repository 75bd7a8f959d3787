"""``GET {api}/oauth2/callback``: where an OAuth2 sign-in returns (the ``redirect_uri`` adk-asgi
puts into every ``authUri`` it shows, ``pauses/credentials.py``).

The provider redirects the sign-in popup here with ``code`` and ``state``. The ``state``
(ADK's, unguessable, sent to the chat's owner only) names the ticket the turn that asked
kept in the stream store (``pauses/signin.py``): which chat, owner and call it answers, once,
until ``PauseOptions.sign_in_timeout``. The callback hands ADK the authorization response
(this URL; ADK exchanges the code for tokens itself, with the tool's client secret), runs
the turn on, detached and recorded, continuing the message that asked, and answers the
popup with a small page that tells the opener (``postMessage``:
``{type: "adk-asgi:oauth", ok, chatId, toolCallId}``) and closes itself; the page follows
the turn with ``resumeStream``.

The request needs no identity of its own (a popup carries no ``Authorization`` header):
the ticket is the capability, bound to the chat's owner, who the turn runs for. A callback
uses its ticket up, whatever it carries: a cancel at the provider (``error=access_denied``)
or an answer without a code ends the sign-in, and the deadline set when it was issued never
moves.
Every failure is a page too (never JSON): the popup shows it to the user.
"""

from __future__ import annotations

import base64
import hashlib
import html
import logging
from typing import Any, Final
from urllib.parse import parse_qs

import msgspec

from ..pauses.signin import SignInTicket, take_sign_in
from ..stores import StoreUnavailable
from ..transport.asgi import Receive, Scope, Send
from ..wire.errors import RequestError
from .completion import run_detached
from .endpoint import ChatEndpoint
from .turn.plan import plan_sign_in

__all__ = ("OAUTH_MESSAGE_TYPE", "oauth_callback")

logger = logging.getLogger("adk_asgi")

OAUTH_MESSAGE_TYPE: Final = "adk-asgi:oauth"
"""The ``type`` of the message the callback page posts to the page that opened it."""
_MAX_QUERY: Final = 8192


async def oauth_callback(chat: ChatEndpoint, scope: Scope, receive: Receive, send: Send) -> None:
    raw = bytes(scope.get("query_string") or b"")
    if len(raw) > _MAX_QUERY:
        await _page(send, 414, "This sign-in link is too long.", {"ok": False})
        return
    query = parse_qs(raw.decode("latin-1"), keep_blank_values=True)
    state = _one(query, "state")
    if not state:
        await _page(send, 400, "This is not a sign-in answer (it has no state).", {"ok": False})
        return
    try:
        ticket = await take_sign_in(chat.store, state)
    except StoreUnavailable:
        await _page(
            send,
            503,
            "The chat service is temporarily unavailable. Close this window and try again.",
            {"ok": False},
        )
        return
    if ticket is None:
        await _page(
            send,
            400,
            "This sign-in has expired or was already used. Close this "
            "window and start again from the chat.",
            {"ok": False},
        )
        return
    told: dict[str, Any] = {"chatId": ticket.chat_id, "toolCallId": ticket.call_id}
    error = _one(query, "error")
    if error is not None or not _one(query, "code"):  # cancelled or refused: it ends here
        await _page(
            send,
            400,
            "The sign-in was not completed. Close this window and start again from the chat.",
            {"ok": False, "error": (error or "no_code")[:64], **told},
        )
        return
    if ticket.transport == "live":
        from ..pauses.signin import LIVE_SIGN_INS

        if not LIVE_SIGN_INS.answer(ticket, _response_uri(ticket, raw)):
            await _page(
                send,
                409,
                "The chat that asked for this sign-in is no longer "
                "connected. Start again from the chat.",
                {"ok": False, **told},
            )
            return
        await _page(send, 200, "Signed in. You can close this window.", {"ok": True, **told})
        return
    try:
        await _continue(chat, ticket, _response_uri(ticket, raw))
    except RequestError as exc:
        logger.info("Sign-in callback for chat %r refused: %s", ticket.chat_id, exc.code)
        await _page(send, exc.status, _refused(exc), {"ok": False, **told})
        return
    await _page(send, 200, "Signed in. You can close this window.", {"ok": True, **told})


async def _continue(chat: ChatEndpoint, ticket: SignInTicket, response_uri: str) -> str:
    tools = chat.runtime.tools
    return await run_detached(
        chat,
        ticket.user_id,
        ticket.chat_id,
        lambda session: plan_sign_in(
            session, tools, ticket.call_id, ticket.message_id, response_uri, ticket.redirect_uri
        ),
    )


def _response_uri(ticket: SignInTicket, raw: bytes) -> str:
    """The authorization response as the provider sent it: the callback URL it was given,
    with the query it added (authlib checks the state and reads the code from it)."""
    return f"{ticket.redirect_uri}?{raw.decode('latin-1')}"


def _refused(error: RequestError) -> str:
    if error.code == "unknown_tool_call":
        return "This sign-in was already used. You can close this window."
    if error.status == 503:
        return "The chat service is temporarily unavailable. Try again in a moment."
    return "This sign-in cannot be used any more. Close this window and start again."


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


async def _page(send: Send, status: int, text: str, message: dict[str, Any]) -> None:
    """A page that tells its opener and closes itself (nothing secret in it)."""
    told = msgspec.json.encode({"type": OAUTH_MESSAGE_TYPE, **message}).decode()
    told = told.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    script = (
        "(function(){var m=" + told + ";try{if(window.opener){"
        "window.opener.postMessage(m,'*');}}catch(e){}"
        "if(m.ok){setTimeout(function(){window.close();},100);}})();"
    )
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    body = (
        '<!doctype html><html><head><meta charset="utf-8"><title>Sign-in</title>'
        '<meta name="viewport" content="width=device-width"></head>'
        '<body style="font-family:system-ui,sans-serif;margin:2em"><p id="status">'
        f"{html.escape(text)}</p><script>{script}</script></body></html>"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                # The URL holds the authorization code: never sent on as a Referer.
                (b"referrer-policy", b"no-referrer"),
                (
                    b"content-security-policy",
                    (
                        "default-src 'none'; style-src 'unsafe-inline'; "
                        f"script-src 'sha256-{digest}'"
                    ).encode(),
                ),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
