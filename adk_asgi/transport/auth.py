"""Who is asking: the ``authenticate`` hook, one callable for HTTP and WebSocket scopes.

    async def authenticate(scope) -> str:          # the ADK user id
        token = bearer_token(scope) or cookie(scope, "session")
        if token is None:
            raise AuthError(401, "Sign in first.")
        return await users.verify(token)           # raise AuthError(403, ...) to refuse

HTTP: ``AuthError`` becomes its status (401/403) with a JSON error body.
WebSocket: the handshake is accepted and closed at once with 1008 and the message
as the reason (browsers see close codes, not handshake statuses). Browsers cannot
set headers on a WebSocket handshake: use a cookie or a query parameter
(``WebSocketChatTransport({params: {token}})``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

from .asgi import Scope

__all__ = ("AuthError", "Authenticate", "anonymous", "bearer_token", "resolve_user")

Authenticate = Callable[[Scope], "str | Awaitable[str]"]
MAX_USER_ID_LENGTH = 256


class AuthError(Exception):
    """Raised by ``authenticate`` to refuse a request: ``status`` 401 or 403."""

    def __init__(self, status: int = 401, message: str = "Not authenticated.") -> None:
        if status not in (401, 403):
            raise ValueError("AuthError status is 401 or 403")
        super().__init__(message)
        self.status = status
        self.message = message


def anonymous(scope: Scope) -> str:
    """The default: everyone is the same anonymous user (a single-user or demo setup)."""
    return "anonymous"


def bearer_token(scope: Scope) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, if any."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            kind, _, token = str(value.decode("latin-1")).partition(" ")
            if kind.lower() == "bearer" and token.strip():
                return token.strip()
    return None


async def resolve_user(authenticate: Authenticate, scope: Scope) -> str:
    """Run the hook; a user id that is empty or not a short printable string is a bug
    in the hook, reported as a refusal rather than stored as an ADK user id."""
    user = authenticate(scope)
    if inspect.isawaitable(user):
        user = await user
    if (
        not isinstance(user, str)
        or not user
        or len(user) > MAX_USER_ID_LENGTH
        or not user.isprintable()
    ):
        raise AuthError(403, "The authenticate hook returned no valid user id.")
    return user
