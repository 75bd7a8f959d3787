"""ASGI types, in one place."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ("ASGIApp", "Message", "Receive", "Scope", "Send", "UserIdResolver")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Returns the ADK user id of a request (HTTP or WebSocket scope).
UserIdResolver = Callable[[Scope], "str | Awaitable[str]"]
