"""The chat API's HTTP routes, with Starlette's ``Router``: a path, its handlers by method.

Handlers are plain ASGI callables; a path's parameters are in ``scope["path_params"]``.
A handler raises what it refuses or fails on, and ``http/errors.py`` answers it (``answer``).
Every answer is JSON, a mismatch too: ``404 not_found`` for an unknown path and ``405
method_not_allowed`` (with ``Allow``) for a known path asked with another method, never
Starlette's plain-text defaults (a host app's exception handlers never see them either).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from starlette.routing import Route, Router

from ..transport.asgi import ASGIApp, Receive, Scope, Send, route_path, send_json_error
from .errors import answer

__all__ = ("MethodTable", "api_router", "route_methods")


class MethodTable:
    """One path's handlers by HTTP method (``GET`` also answers ``HEAD`` unless given)."""

    __slots__ = ("_allow", "_handlers")

    def __init__(self, handlers: Mapping[str, ASGIApp]) -> None:
        table = {method.upper(): handler for method, handler in handlers.items()}
        if "GET" in table:
            table.setdefault("HEAD", table["GET"])
        self._handlers = table
        self._allow = ", ".join(table).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = self._handlers.get(scope["method"])
        if handler is None:
            await send_json_error(
                send,
                405,
                "method_not_allowed",
                f"{scope['method']} is not allowed here.",
                headers=[(b"allow", self._allow)],
            )
            return
        await answer(handler, scope, receive, send)

    @property
    def methods(self) -> tuple[str, ...]:
        """The methods this path answers (``HEAD`` included where ``GET`` is)."""
        return tuple(self._handlers)


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await send_json_error(send, 404, "not_found", f"No route for {route_path(scope)!r}.")


def api_router(routes: Sequence[tuple[str, Mapping[str, ASGIApp] | MethodTable]]) -> Router:
    """A router of ``(path, {method: handler})``, matched in order (Starlette's path
    syntax: ``/{chat_id:path}/stream``); no trailing-slash redirects (a redirected POST
    loses its body in some clients)."""
    made = [
        Route(path, table if isinstance(table, MethodTable) else MethodTable(table))
        for path, table in routes
    ]
    for route in made:
        # A parameter matches every character, a newline too (an artifact's name may
        # hold one): Starlette's patterns stop at one.
        # ("$" would also match before a final newline: "\Z" ends at the end.)
        pattern = route.path_regex.pattern.removesuffix("$") + r"\Z"
        route.path_regex = re.compile(pattern, re.DOTALL)
    return Router(made, redirect_slashes=False, default=_not_found)


def route_methods(router: Router) -> dict[str, tuple[str, ...]]:
    """Each route's path (Starlette's syntax) → the methods it answers, in match order."""
    return {
        route.path: route.endpoint.methods
        for route in router.routes
        if isinstance(route, Route) and isinstance(route.endpoint, MethodTable)
    }
